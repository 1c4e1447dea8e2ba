"""``load_environment`` for the verifiers 0.3.x line, the API the original envs' users are on.

``vf-eval meeting-gym-verifiers -a '{"env": "CalendarMath-v0"}'`` (verifiers 0.3.x) calls
:func:`load_environment`, which builds, from the same rows and the same scoring as the
0.4 taskset (:mod:`meeting_gym.adapters.verifiers`):

* a ``SingleTurnEnv`` for a single-turn task, a ``StatefulToolEnv`` for a task with
  tools, whose tool definitions are the env's own schemas and whose calls run the
  task's tool functions on the rollout's hidden item (``Episode.call``, as ``env.step``
  does), with the largest turn bound of its items (``Task.turns_for``);
* a ``Rubric`` with one reward function per rubric term, weighted as the env's rubric,
  each read from one :func:`~meeting_gym.adapters.verifiers.replay` of the completion
  through ``gymnasium.make(env, mode="text")`` (kept in ``state["meeting_gym"]``).

``dataset`` is the ``train`` split (``num_train_examples`` items), ``eval_dataset`` the
``eval`` split (``num_eval_examples``: the curated items first, then held-out ones),
both from ``seed`` as ``load_split`` draws them; each row's ``info`` carries the env id,
the item id and the reset options that address the item.
"""

from __future__ import annotations

from typing import Any

from meeting_gym.adapters import verifiers as common

INFO_KEY = "meeting_gym"


def _dataset(rows: list[dict[str, Any]]) -> Any:
    from datasets import Dataset

    return Dataset.from_list(
        [
            {
                "question": row["prompt"],
                "answer": row["answer"],
                "info": {"env": row["env"], "item_id": row["id"], "options": row["options"]},
            }
            for row in rows
        ]
    )


def _outcome(settings: dict[str, Any], completion: list[Any], info: dict, state: dict) -> dict:
    """The env's final info for a rollout (replayed once, then kept in the state)."""
    kept = state.get(INFO_KEY)
    if kept is None:
        env = common.make_env(info["env"], settings)
        kept = common.replay(env, info["options"], completion)
        env.close()
        state[INFO_KEY] = kept
    return kept


def _term_reward(name: str, settings: dict[str, Any]) -> Any:
    async def term(completion: list[Any], info: dict, state: dict) -> float:
        return float(_outcome(settings, completion, info, state)[name])

    term.__name__ = term.__qualname__ = name
    return term


def load_environment(
    env: str = common.DEFAULT_ENV,
    num_train_examples: int = 500,
    num_eval_examples: int = 100,
    seed: int = common.DEFAULT_SEED,
    difficulty: str | None = None,
    **settings: Any,
) -> Any:
    """The verifiers 0.3.x environment of the registered env ``env`` (see the module doc).

    ``settings`` are the task's own (``task="weekday"`` for CalendarMath-v0, as
    calendar-math's own ``load_environment(task=...)``).
    """
    common.require_verifiers(v1=False)
    import verifiers as vf

    train = common.task_rows(env, "train", num_train_examples, seed, difficulty, settings)
    evals = common.task_rows(env, "eval", num_eval_examples, seed, difficulty, settings)
    first = (evals or train)[0]
    weights = first["rubric"]
    if any(row["rubric"] != weights for row in train + evals):
        raise ValueError(f"{env} weighs its rubric per item; verifiers 0.3's Rubric cannot")
    rubric = vf.Rubric(
        funcs=[_term_reward(name, settings) for name in weights], weights=list(weights.values())
    )
    common_args: dict[str, Any] = {
        "dataset": _dataset(train),
        "eval_dataset": _dataset(evals),
        "system_prompt": first["system_prompt"],
        "rubric": rubric,
    }
    toolset = common.toolset(env)
    if toolset is None:
        return vf.SingleTurnEnv(**common_args)
    return _tool_env_class(vf)(
        toolset=toolset,
        settings=settings,
        max_turns=max(row["max_turns"] for row in train + evals),
        **common_args,
    )


def _tool_env_class(vf: Any) -> type:
    """A ``StatefulToolEnv`` whose tools are the task's, run on each rollout's item."""

    class MeetingGymToolEnv(vf.StatefulToolEnv):
        def __init__(self, toolset: Any, settings: dict[str, Any], **kwargs: Any) -> None:
            super().__init__(tools=[], **kwargs)
            self.settings = settings
            self.episodes: dict[str, Any] = {}
            self.tool_defs = [
                vf.Tool(name=tool.name, description=tool.description, parameters=tool.parameters)
                for tool in toolset
            ]
            self.tool_map = {tool.name: self._runner(tool.name) for tool in toolset}

        def _runner(self, name: str) -> Any:
            def run(_episode: Any, **arguments: Any) -> str:
                return _episode.call(name, arguments)

            run.__name__ = name
            return run

        async def setup_state(self, state: Any) -> Any:
            info = state["info"]
            env = common.make_env(info["env"], self.settings)
            env.reset(options=info["options"])
            self.episodes[state["trajectory_id"]] = env.unwrapped.episode
            return await super().setup_state(state)

        def update_tool_args(
            self, tool_name: str, tool_args: dict, messages: Any, state: Any, **kwargs: Any
        ) -> dict:
            return {**tool_args, "_episode": self.episodes[state["trajectory_id"]]}

        @vf.cleanup
        async def drop_episode(self, state: Any) -> None:
            self.episodes.pop(state["trajectory_id"], None)

    return MeetingGymToolEnv
