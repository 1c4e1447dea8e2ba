"""The verifiers taskset (v1 API, verifiers 0.4+) for every env of the family.

One parametrised taskset, :class:`MeetingGymTaskset`, plays any registered text env
(``--env.taskset.env CalendarMath-v0``); ``vf-eval meeting-gym-verifiers`` finds it
through the ``meeting_gym_verifiers`` package, whose ``__all__`` exports it.

* **Tasks** are the items of a split (``split``, ``n``, ``split_seed``, ``difficulty``
  and the task's own ``settings``, as ``load_split`` takes them): the prompt is the
  env's question, the system prompt the env's, and the task data carries the reset
  options that address the item, so any process can rebuild it.
* **Tools**: a task with tools (MeetingSlot's four) gets :class:`MeetingGymToolset`,
  a per-rollout MCP server whose tools have the task's names, typed arguments and
  descriptions and run the task's own tool functions on the rollout's hidden item
  (through :meth:`~meeting_gym.core.episode.Episode.call`, as ``env.step`` does). A
  single-turn task has none: the model's one reply is the answer.
* **Rewards**: one weighted reward per rubric term (``exact_match`` 1.0, ``format`` 0.2,
  ``partial_credit`` 0.2 for MeetingSlot and CalendarMath), weights from the task's
  ``rubric_for(item)`` (recorded in the task data). Their values come from one
  :func:`~meeting_gym.adapters.verifiers.replay` of the rollout's assistant messages
  through ``gymnasium.make(env, mode="text")``, so each term is the env's own final
  ``info`` entry and their weighted sum is the env's reward. The item's turn bound
  (``task.turns_for(item)``: the env's ``max_turns``, or a TimetablePlanner scenario's
  step budget) is a ``@vf.stop`` condition too, so a model that keeps calling tools after
  the episode ended cannot run on. The replay's outcome (gold, answer, every term and the
  env's ``reward``) is kept in ``trace.info["meeting_gym"]``.
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Iterable, Iterator
from typing import Annotated, Any, Literal

import gymnasium as gym

from meeting_gym.adapters import verifiers as common
from meeting_gym.core.curriculum import Curriculum, Draw
from meeting_gym.core.registry import make_task

common.require_verifiers(v1=True)

import verifiers.v1 as vf  # noqa: E402
from pydantic import Field, model_validator  # noqa: E402

INFO_KEY = "meeting_gym"


class MeetingGymData(vf.TaskData):
    """One item of a meeting_gym env: where it lives (``env``, reset ``options``) and its id."""

    env: str
    """The registered env id, e.g. ``MeetingSlot-v0``."""
    options: dict[str, Any]
    """The reset options that address the item (``split``, ``index``, ``split_seed`` ...)."""
    answer: str
    """The gold answer, for reading traces (the rewards replay the rollout through the env)."""
    rubric: dict[str, float]
    """The rubric's terms and weights for this item, in the rubric's order."""
    max_turns: int
    """The env's turn budget."""
    settings: dict[str, Any] = Field(default_factory=dict)
    """The task's own ``gym.make`` settings (e.g. CalendarMath's ``task``)."""


class MeetingGymToolsetConfig(vf.ToolsetConfig):
    """Where the tool server runs (a local subprocess by default)."""


class MeetingGymTaskConfig(vf.TaskConfig):
    """Run-time knobs of every task; ``env`` is copied from the taskset's ``env``."""

    env: str = ""
    tools: MeetingGymToolsetConfig = MeetingGymToolsetConfig()


class MeetingGymConfig(vf.TasksetConfig):
    """Which env and which of its items: ``--env.taskset.env``, ``--env.taskset.split`` ..."""

    env: str = common.DEFAULT_ENV
    """A registered env id (``meeting-gym envs`` lists them)."""
    split: Literal["train", "eval", "curated"] = "eval"
    """The split the tasks come from: curated first in ``eval``, then held-out items."""
    n: int | None = Field(None, ge=0)
    """How many items (default: 500 train, 100 eval, every curated item)."""
    split_seed: int = common.DEFAULT_SEED
    """The split's seed, as ``load_split(seed=...)``."""
    difficulty: str | None = None
    """Pin one difficulty level (default: the env's mix)."""
    settings: dict[str, Any] = Field(default_factory=dict)
    """The task's own settings, e.g. ``{"task": "weekday"}`` for CalendarMath-v0."""
    curriculum: bool | dict[str, Any] | None = None
    """Draw train items from a curriculum instead of a split: true, or an object with any of
    ``up_to``, ``seed`` and the curriculum rules' fields (as the server's ``curriculum``
    reset option). The tasks are then drawn one by one as they are read, and each scored
    rollout's reward goes back to the curriculum; ``n`` bounds them (None: no end)."""
    task: MeetingGymTaskConfig = MeetingGymTaskConfig()

    @model_validator(mode="after")
    def _env_to_task(self) -> MeetingGymConfig:
        common.check_env(self.env)
        # unknown settings and difficulties are refused here, naming what is allowed
        make_task(self.env, **self.settings).check_difficulty(self.difficulty)
        if self.curriculum is not None and self.curriculum is not False:
            if self.split != "train" or self.difficulty is not None:
                raise ValueError(
                    "curriculum draws train items at its own levels: give split 'train' and "
                    "no difficulty with it"
                )
            Curriculum.from_option(self.env, self.curriculum)  # refuses bad fields here
        if self.task.env and self.task.env != self.env:
            raise ValueError(f"task.env {self.task.env!r} differs from env {self.env!r}")
        self.task = self.task.model_copy(update={"env": self.env})
        return self


def _make_env(data: MeetingGymData) -> gym.Env:
    return common.make_env(data.env, data.settings)


class MeetingGymTask(vf.Task[MeetingGymData, vf.State, MeetingGymTaskConfig]):
    """One item; its rewards are the env's rubric terms, read from a replay through the env."""

    @classmethod
    def toolsets(cls, config: MeetingGymTaskConfig) -> list[vf.Toolset]:
        if not config.env or common.toolset(config.env) is None:
            return []
        return [MeetingGymToolset(config.tools)]

    curriculum: Curriculum | None = None
    """The curriculum this task was drawn from (a curriculum taskset's), told its rewards."""

    def outcome(self, trace: vf.Trace) -> dict[str, Any]:
        """The env's final info for this rollout (replayed once, then kept in ``trace.info``)."""
        kept = trace.info.get(INFO_KEY)
        if kept is None:
            env = _make_env(self.data)
            kept = common.replay(env, self.data.options, trace.assistant_messages)
            env.close()
            trace.info[INFO_KEY] = kept
            if self.curriculum is not None:
                options = self.data.options
                draw = Draw(options["difficulty"], options["index"], options["split_seed"])
                self.curriculum.report(draw, float(kept["reward"]))
        return kept

    def hooks(self, attr: str) -> list[Any]:
        """The task's hooks plus, for rewards, one weighted function per rubric term."""
        hooks = super().hooks(attr)
        if attr != "reward":
            return hooks
        taken = {fn.__name__ for fn in hooks}  # a plugged reward of the same name wins
        terms = [self._term_reward(name, weight) for name, weight in self.data.rubric.items()]
        hooks += [fn for fn in terms if fn.__name__ not in taken]
        hooks.sort(key=lambda fn: (-getattr(fn, "reward_priority", 0), fn.__name__))
        return hooks

    def _term_reward(self, name: str, weight: float) -> Any:
        async def term(trace: vf.Trace) -> float:
            return float(self.outcome(trace)[name])

        term.__name__ = term.__qualname__ = name
        term.reward = True  # type: ignore[attr-defined]
        term.reward_priority = 0  # type: ignore[attr-defined]
        term._vf_weight = weight  # type: ignore[attr-defined]
        return term

    @vf.stop
    def turn_budget(self, trace: vf.Trace) -> bool:
        """The item's turn bound: no episode of the item lasts longer (``Task.turns_for``)."""
        return len(trace.assistant_messages) >= self.data.max_turns


class MeetingGymTaskset(vf.Taskset[MeetingGymTask, MeetingGymConfig]):
    """The items of one meeting_gym env as verifiers tasks (see the module docstring)."""

    def __init__(self, config: MeetingGymConfig) -> None:
        super().__init__(config)
        option = config.curriculum
        self.curriculum = (
            None if option in (None, False) else Curriculum.from_option(config.env, option)
        )
        # a curriculum draws for as long as it is read, unless n bounds it
        self.INFINITE = self.curriculum is not None and config.n is None

    def load(self) -> Iterable[MeetingGymTask]:
        config = self.config
        if self.curriculum is not None:
            return self._drawn(self.curriculum)
        return [
            MeetingGymTask(MeetingGymData(**row), config.task)
            for row in common.task_rows(
                config.env,
                config.split,
                config.n,
                config.split_seed,
                config.difficulty,
                config.settings,
            )
        ]

    def _drawn(self, curriculum: Curriculum) -> Iterator[MeetingGymTask]:
        config = self.config
        count = itertools.count() if config.n is None else range(config.n)
        env_task = make_task(common.check_env(config.env), **config.settings)
        for k in count:
            draw = curriculum.next()  # drawn when read, so it follows the rewards told so far
            row = common.options_row(config.env, draw.options, config.settings, task=env_task)
            row["name"] = f"{config.env}/curriculum/{k}/{draw.level}/{draw.index}"
            task = MeetingGymTask(MeetingGymData(**row), config.task)
            task.curriculum = curriculum
            yield task


# ---------------------------------------------------------------------------- tools


class MeetingGymToolset(vf.Toolset[MeetingGymToolsetConfig]):
    """The task's tools on the rollout's hidden item, served over MCP (one per rollout).

    verifiers runs it as ``python -m meeting_gym.adapters.verifiers.taskset``; ``setup_task``
    receives the rollout's :class:`MeetingGymData` and rebuilds the item from its reset
    options; ``register`` adds one MCP tool per task tool, named as in the env.
    """

    TOOL_PREFIX = None  # the env's tool names, unprefixed
    episode: Any = None

    async def setup_task(self, task: MeetingGymData) -> None:
        env = _make_env(task)
        env.reset(options=task.options)
        self.episode = env.unwrapped.episode

    def register(self, mcp: Any) -> None:
        if self.episode is None:
            raise RuntimeError(
                "MeetingGymToolset serves one rollout's item: return it from Task.toolsets "
                "(a task-scoped server gets its task), not from Taskset.toolsets"
            )
        for tool in self.episode.task.toolset:
            mcp.add_tool(
                _mcp_function(tool, self.episode),
                name=tool.name,
                description=tool.description,
                structured_output=False,
            )


def _mcp_function(tool: Any, episode: Any) -> Any:
    """A function with the tool's typed, described arguments that runs it on the episode."""
    annotations = inspect.get_annotations(tool.function, eval_str=True)
    properties = tool.parameters["properties"]
    parameters = []
    for param in list(inspect.signature(tool.function).parameters.values())[1:]:  # no `world`
        described = Annotated[
            annotations[param.name], Field(description=properties[param.name]["description"])
        ]
        parameters.append(param.replace(annotation=described, kind=param.KEYWORD_ONLY))

    def run(**arguments: Any) -> str:
        return episode.call(tool.name, arguments)

    run.__name__ = tool.name
    run.__signature__ = inspect.Signature(parameters, return_annotation=str)  # type: ignore[attr-defined]
    return run


__all__ = [
    "MeetingGymConfig",
    "MeetingGymData",
    "MeetingGymTask",
    "MeetingGymTaskConfig",
    "MeetingGymTaskset",
    "MeetingGymToolset",
    "MeetingGymToolsetConfig",
]

if __name__ == "__main__":  # verifiers launches the tool server this way
    MeetingGymToolset.run()
