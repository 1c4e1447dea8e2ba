"""TRL's GRPOTrainer on any env of the family (``pip install "meeting-gym[trl]"``).

* :func:`dataset` builds the training rows: a conversational ``prompt`` (the env's system
  prompt and question) plus the reset options that address the item (``split``,
  ``index``, ``split_seed``), so every row is one item of :mod:`meeting_gym.core.splits`.
* For a task with tools, :func:`environment_factory` gives ``GRPOTrainer(...,
  environment_factory=...)`` what it calls: ``reset(**row)``, one method per tool (same
  name, typed arguments and docstring as the task's tool, so TRL renders the same schema),
  an ``answer`` method that submits the final answer (for tasks that end with one; a
  TimetablePlanner episode ends with its ``submit_timetable`` tool), and ``get_reward()``:
  the env's return for the episode (a terminal rubric: 0 until answered; a dense reward:
  the sum of the step rewards so far, as the env pays them).
* For a single-turn task, :func:`reward_function` grades each completion through the env
  (reset to the row's item, one ``step`` with the completion): the rubric as reward.
* With a :class:`~meeting_gym.core.curriculum.Curriculum`, :func:`curriculum_dataset`
  streams rows the curriculum draws as the trainer asks for them, and
  :func:`curriculum_reward` wraps any reward function so that each group's rewards go back
  to the curriculum (groups with no spread counted), which moves the next draws.

Every call goes through ``gymnasium.make(env_id, mode="text")``, so the trainer's reward
is the env's reward; TRL itself is imported only by :func:`dataset`.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, ClassVar

import gymnasium as gym

from meeting_gym.core.curriculum import Draw
from meeting_gym.core.registry import task_class
from meeting_gym.core.splits import DEFAULT_SEED, load_split

if TYPE_CHECKING:
    from meeting_gym.core.curriculum import Curriculum

INSTALL_HINT = 'the TRL adapter needs trl and datasets: pip install "meeting-gym[trl]"'
ROW_KEYS = ("split", "index", "split_seed", "difficulty")


def rows(
    env_id: str,
    split: str = "train",
    n: int | None = None,
    seed: int = DEFAULT_SEED,
    difficulty: str | None = None,
    system_prompt: str | None = None,
    **task_options: Any,
) -> list[dict[str, Any]]:
    """Training rows: ``prompt`` (system prompt and question) and the item's reset options.

    ``system_prompt`` replaces the env's own in every prompt (None keeps the env's); the
    rubric that grades the completions is the same either way.
    """
    env = gym.make(env_id, mode="text", disable_env_checker=True, **task_options)
    items = load_split(split, n, seed, difficulty, env=env_id, **task_options)
    out = []
    for index in range(len(items)):
        options: dict[str, Any] = {"split": split, "index": index, "split_seed": seed}
        if difficulty is not None:
            options["difficulty"] = difficulty
        out.append(_row(env, options, system_prompt))
    env.close()
    return out


def _row(env: gym.Env, options: dict[str, Any], system_prompt: str | None) -> dict[str, Any]:
    """The training row of the item ``options`` address: its prompt and the options."""
    question, info = env.reset(options=options)
    prompt = [
        {"role": "system", "content": system_prompt or info["system_prompt"]},
        {"role": "user", "content": question},
    ]
    return {"prompt": prompt, **options}


def dataset(env_id: str, split: str = "train", n: int | None = None, **kwargs: Any) -> Any:
    """:func:`rows` as a ``datasets.Dataset`` (what GRPOTrainer's ``train_dataset`` takes)."""
    try:
        from datasets import Dataset
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ImportError(INSTALL_HINT) from exc
    return Dataset.from_list(rows(env_id, split, n, **kwargs))


def curriculum_rows(
    env_id: str,
    curriculum: Curriculum,
    n: int,
    system_prompt: str | None = None,
    **task_options: Any,
) -> Iterator[dict[str, Any]]:
    """``n`` training rows, each drawn from ``curriculum`` only when it is asked for.

    Rows have the shape of :func:`rows`' (with the item's ``difficulty``): whatever
    grades a row replays its item from its reset options.
    """
    env = gym.make(env_id, mode="text", disable_env_checker=True, **task_options)
    try:
        for _ in range(n):
            yield _row(env, curriculum.next().options, system_prompt)
    finally:
        env.close()


def curriculum_dataset(
    env_id: str,
    curriculum: Curriculum,
    n: int,
    system_prompt: str | None = None,
    **task_options: Any,
) -> Any:
    """:func:`curriculum_rows` as a ``datasets.IterableDataset`` for GRPOTrainer.

    The trainer must read it in order, one generation batch at a time: pass
    ``GRPOConfig(shuffle_dataset=False, max_steps=...)`` (a shuffle buffer would draw
    rows long before the outcomes that should choose them come back). Accelerate reads
    one batch ahead, so a move shows in the draws one generation batch later.
    """
    try:
        from datasets import IterableDataset
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ImportError(INSTALL_HINT) from exc

    def generate() -> Iterator[dict[str, Any]]:
        yield from curriculum_rows(env_id, curriculum, n, system_prompt, **task_options)

    return IterableDataset.from_generator(generate)


def curriculum_draws(
    env_id: str,
    curriculum: Curriculum,
    system_prompt: str | None = None,
    **task_options: Any,
) -> Callable[[int], list[dict[str, Any]]]:
    """A function giving the next ``n`` rows ``curriculum`` draws (the shape of
    :func:`rows`'): the fresh groups of :func:`~meeting_gym.adapters.trl_spread.keep_spread`.

    Each call makes the env it reads the questions with and closes it (a call is one
    generation batch: the env's few milliseconds are nothing beside it), so no env is
    left open for the trainer's lifetime.
    """
    gym.make(env_id, mode="text", disable_env_checker=True, **task_options).close()  # checked now

    def draws(n: int) -> list[dict[str, Any]]:
        env = gym.make(env_id, mode="text", disable_env_checker=True, **task_options)
        try:
            return [_row(env, curriculum.next().options, system_prompt) for _ in range(n)]
        finally:
            env.close()

    return draws


def curriculum_reward(
    reward: Callable[..., list[float]], curriculum: Curriculum
) -> Callable[..., list[float]]:
    """``reward`` (any TRL reward function), reporting each group's rewards to ``curriculum``.

    TRL calls a reward function with every completion of a generation batch and the rows'
    columns; the completions of one item (same ``difficulty``, ``index`` and ``split_seed``)
    are its group. The rewards are returned unchanged.
    """

    def reported(*args: Any, **columns: Any) -> list[float]:
        values = reward(*args, **columns)
        groups: dict[tuple[Any, ...], list[float]] = {}
        keys = zip(columns["difficulty"], columns["index"], columns["split_seed"], strict=True)
        for key, value in zip(keys, values, strict=True):
            groups.setdefault(key, []).append(float(value))
        for (level, index, seed), group in groups.items():
            curriculum.report(Draw(level, int(index), int(seed)), group)
        return values

    reported.__name__ = getattr(reward, "__name__", "reward")
    return reported


def _options(row: dict[str, Any]) -> dict[str, Any]:
    """The reset options in a dataset row (TRL passes the whole row, prompt included)."""
    return {key: row[key] for key in ROW_KEYS if key in row and row[key] is not None}


class EnvTools:
    """One rollout's env, seen the way TRL's environment_factory wants it.

    Subclassed per env by :func:`environment_factory`, which adds one method per tool.
    """

    env_id: str = ""
    env_kwargs: ClassVar[dict[str, Any]] = {}

    def __init__(self) -> None:
        self._env = gym.make(self.env_id, mode="text", disable_env_checker=True, **self.env_kwargs)
        self._reward = 0.0
        self._done = False
        self._last = ""

    def reset(self, **row: Any) -> None:
        """Start the episode of the dataset row's item (its prompt already holds the question)."""
        self._env.reset(options=_options(row) or None)
        self._reward, self._done, self._last = 0.0, False, ""
        return None

    def _act(self, action: str) -> str:
        if self._done:
            return "error: the episode is over"
        observation, reward, terminated, truncated, _ = self._env.step(action)
        self._done = bool(terminated or truncated)
        # the return: a terminal rubric pays once at the end; a dense task (TimetablePlanner)
        # pays every step, and its rewards sum to the episode's info["reward"]
        self._reward += float(reward)
        self._last = observation
        return observation

    def get_reward(self) -> float:
        """The env's return for this episode so far (its rubric reward once it ended)."""
        return self._reward

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        return self._act(json.dumps({"name": name, "arguments": arguments}))

    def _answer(self, answer: str) -> str:
        tag = task_class(self.env_id).answer_tag
        return self._act(f"<{tag}>{answer}</{tag}>")


class RemoteEnvTools(EnvTools):
    """:class:`EnvTools` over a served env (``meeting-gym serve``): TRL's OpenEnv
    integration. Each instance holds one WebSocket session of the server at ``base_url``;
    a tool method is OpenEnv's ``CallToolAction``, the answer the env's own action, and
    the reward the server's, which is the env's.

    Subclassed per env by :func:`environment_factory` when given ``base_url``. No public
    method but the tools, ``reset`` and ``get_reward``: TRL offers every other one to the
    model as a tool. The session ends when the instance is collected (the client closes
    it), or when the server's idle timeout reaps it.
    """

    base_url: str = ""

    def __init__(self) -> None:
        from meeting_gym.adapters.openenv import client

        self._remote = client(self.env_id, self.base_url).sync()
        self._remote.connect()
        self._reward = 0.0
        self._done = False
        self._last = ""

    def reset(self, **row: Any) -> None:
        """Start the episode of the dataset row's item on the server."""
        self._remote.reset(**_options(row))
        self._reward, self._done, self._last = 0.0, False, ""
        return None

    def _step(self, action: Any) -> str:
        if self._done:
            return "error: the episode is over"
        result = self._remote.step(action)
        observation = result.observation
        self._done = bool(result.done)
        self._reward += float(result.reward or 0.0)
        text = observation.result if hasattr(observation, "tool_name") else observation.text
        self._last = text
        return text

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        from openenv.core.env_server.mcp_types import CallToolAction

        return self._step(CallToolAction(tool_name=name, arguments=arguments))

    def _answer(self, answer: str) -> str:
        return self._step({"answer": answer})


def answer(self, answer: str) -> str:  # self unannotated: TRL renders annotated arguments
    """Submit your final answer, which ends the episode; the system prompt says its format.

    Args:
        answer: The final answer, exactly as it would go inside the answer tags.
    """
    return self._answer(answer)


def _tool_method(tool: Any) -> Callable[..., str]:
    """A method with the tool's name, typed arguments and docstring that runs the tool."""
    signature = inspect.signature(tool.function)
    parameters = list(signature.parameters.values())[1:]  # drop `world`
    name = tool.name

    def method(self: EnvTools, *args: Any, **kwargs: Any) -> str:
        bound = method.__signature__.bind(self, *args, **kwargs)
        arguments = dict(bound.arguments)
        arguments.pop("self")
        return self._call(name, arguments)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = tool.function.__doc__
    method.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD), *parameters]
    )
    method.__annotations__ = {
        key: value
        for key, value in inspect.get_annotations(tool.function, eval_str=True).items()
        if key != "world"
    }
    return method


def environment_factory(
    env_id: str, *, base_url: str | None = None, answer_tool: bool = True, **env_kwargs: Any
) -> type:
    """A class for ``GRPOTrainer(environment_factory=...)``: the env's tools as methods.

    Only for envs whose task has tools; a single-turn env trains with
    :func:`reward_function` instead. With ``base_url`` (a ``meeting-gym serve`` of
    ``env_id``), each instance plays on that server through OpenEnv's client
    (:class:`RemoteEnvTools`: its tools as MCP ``CallToolAction`` steps), else in process;
    ``env_kwargs`` are the in-process env's (a server has its own). ``answer_tool=False``
    leaves out the ``answer`` method: the model is offered exactly the env's own tools (the
    ``tools`` of an OpenAI-format export) and answers in its reply's text, which the caller
    submits (``meeting_gym.training.trl_tools.submit_replies``), as the native tool
    protocol does.
    """
    if base_url is not None and env_kwargs:
        raise ValueError(
            f"env_kwargs are the server's to set, not the client's: {sorted(env_kwargs)}"
        )
    cls = task_class(env_id)
    if cls.toolset is None:
        raise ValueError(f"{env_id} has no tools: train it with reward_function({env_id!r})")
    methods: dict[str, Any] = {tool.name: _tool_method(tool) for tool in cls.toolset}
    # a task whose tools end the episode (submit_timetable) has no answer
    if cls.episode_class.answers and answer_tool:
        methods["answer"] = answer
    stem = "".join(ch for ch in env_id.rsplit("-v", 1)[0] if ch.isalnum())
    remote = {} if base_url is None else {"base_url": base_url.rstrip("/")}
    return type(
        f"{stem}Tools",
        (EnvTools,) if base_url is None else (RemoteEnvTools,),
        {
            **methods,
            **remote,
            "env_id": env_id,
            "env_kwargs": dict(env_kwargs),
            "__doc__": f"{env_id} for TRL: its tools, reset(**row) and get_reward()"
            + (", and answer()" if "answer" in methods else "")
            + ".",
        },
    )


def reward_function(env_id: str, **env_kwargs: Any) -> Callable[..., list[float]]:
    """A TRL reward function: each completion graded by the env on its row's item.

    TRL calls it with the completions and the dataset columns (``split``, ``index`` ...).
    A conversational completion is graded by its last assistant message.
    """
    env = gym.make(env_id, mode="text", disable_env_checker=True, **env_kwargs)
    task = env.unwrapped.task
    if task.toolset is not None:
        raise ValueError(f"{env_id} has tools: train it with environment_factory({env_id!r})")

    def rubric_reward(completions: list[Any], **columns: Any) -> list[float]:
        rewards = []
        for k, completion in enumerate(completions):
            row = {key: columns[key][k] for key in ROW_KEYS if key in columns}
            env.reset(options=_options(row) or None)
            text = completion
            if isinstance(completion, list):  # conversational: the last assistant turn
                text = next(
                    (m["content"] for m in reversed(completion) if m.get("role") == "assistant"), ""
                )
            _, reward, _, _, _ = env.step(text if isinstance(text, str) else str(text))
            rewards.append(float(reward))
        return rewards

    rubric_reward.__name__ = f"{env_id}_rubric"
    return rubric_reward


__all__ = [
    "ROW_KEYS",
    "EnvTools",
    "curriculum_dataset",
    "curriculum_draws",
    "curriculum_reward",
    "curriculum_rows",
    "dataset",
    "environment_factory",
    "reward_function",
    "rows",
]
