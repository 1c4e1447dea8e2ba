"""TRL's GRPOTrainer over whole tool-env episodes, every rollout written down and replayable.

The TRL engine of the multi-turn pipeline (:mod:`meeting_gym.training.trl_tool_run`) trains
with ``GRPOTrainer(environment_factory=...)``. Three pieces make its rollouts the episodes the
model is evaluated on, and its logged rewards the env's own:

* :func:`recorded_factory`: the adapter's class (``meeting_gym.adapters.trl``) with exactly the
  env's tools (no ``answer`` tool: the model answers in its reply's text, as it was taught by
  the OpenAI-format export and as the native tool protocol plays it), recording every action
  that reaches the env and its observation; its ``get_reward`` writes the rollout's row (the
  item's reset options, the actions, the observations, the reward TRL logs) to a sink.
* :func:`submit_replies`: a reward function run before the env's own ``get_reward``: a
  rollout's last reply, when it has no tool call, is submitted to its env as the native
  protocol submits it (the env grades an answer block); it returns no reward of its own.
* :func:`replay_rollouts`: each written row replayed on a fresh env, its actions stepped in
  order; the observations must be the recorded ones and the return the logged reward.

:func:`render_env_schemas` makes the trainer render the env's own JSON schemas (the export's
``tools``), not the schemas transformers derives from the methods' docstrings, so a GRPO
prompt is token for token the SFT and evaluation prompt.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

__all__ = [
    "read_rollouts",
    "recorded_factory",
    "render_env_schemas",
    "replay_rollouts",
    "submit_replies",
]


def recorded_factory(env_id: str, sink: Callable[[dict[str, Any]], None]) -> type:
    """The adapter's ``environment_factory`` class for ``env_id`` without the answer tool,
    recording each rollout; ``sink`` receives the rollout's row when TRL asks its reward."""
    from meeting_gym.adapters.trl import ROW_KEYS, environment_factory

    base = environment_factory(env_id, answer_tool=False)

    class Recorded(base):  # type: ignore[misc, valid-type]
        """The adapter's class, writing down each action TRL's tool calls send to the env."""

        def reset(self, **row: Any) -> None:
            super().reset(**row)
            self._options = {k: row[k] for k in ROW_KEYS if row.get(k) is not None}
            self._actions: list[str] = []
            self._observations: list[str] = []
            self._reply: str | None = None
            self._submitted = False
            self._step: int | None = None
            return None

        def _act(self, action: str) -> str:
            if self._done:  # the env is not stepped: nothing to replay
                return super()._act(action)
            observation = super()._act(action)
            self._actions.append(action)
            self._observations.append(observation)
            return observation

        def get_reward(self) -> float:
            """The env's return, after :func:`submit_replies` has submitted the last reply."""
            if self._step is None:
                raise RuntimeError("submit_replies must run before get_reward (reward_funcs)")
            reward = super().get_reward()
            sink(
                {
                    "step": self._step,
                    "env": self.env_id,
                    "options": self._options,
                    "actions": self._actions,
                    "observations": self._observations,
                    "reply": None if self._reply is None else self._reply[:500],
                    "answered": self._done,
                    "tool_calls": len(self._actions) - self._submitted,
                    "reward": reward,
                }
            )
            return reward

    Recorded.__name__ = Recorded.__qualname__ = base.__name__
    return Recorded


def _last_reply(completion: Any) -> str | None:
    """The text of a rollout's last message if it is an assistant reply without tool calls."""
    if not isinstance(completion, list) or not completion:
        return None
    last = completion[-1]
    if last.get("role") != "assistant" or last.get("tool_calls"):
        return None
    content = last.get("content")
    return content if isinstance(content, str) and content.strip() else None


def submit_replies(
    completions: list[Any], environments: list[Any], trainer_state: Any = None, **_: Any
) -> list[None]:
    """A reward function that submits each rollout's last reply to its env; no reward.

    TRL ends a rollout at a reply without tool calls; the native protocol sends such a
    reply to the env as the action (an answer block is graded; other text is refused), and
    so does this. Returns ``None`` for every rollout (TRL: not this function's to score);
    the env's ``get_reward``, called after it, is the reward.
    """
    step = trainer_state.global_step + 1 if trainer_state is not None else 0
    for completion, env in zip(completions, environments, strict=True):
        reply = _last_reply(completion)
        submitted = reply is not None and not env._done
        if submitted:
            env._act(reply)
        env._reply, env._submitted, env._step = reply, submitted, step
    return [None] * len(completions)


def render_env_schemas(trainer: Any, env_id: str) -> None:
    """Make ``trainer`` render and parse with the env's own tool schemas.

    GRPOTrainer renders an environment's methods through transformers' ``get_json_schema``
    (whole docstrings, a ``return`` entry), which is not the text the SFT model was trained
    on nor the one it is evaluated with. Its per-environment tool list (``_env_tools``, TRL
    1.x) only renders and parses; the calls run on each instance's methods, so the env's
    schemas replace it. A TRL without that list stops here, named.
    """
    from meeting_gym.core.registry import task_class

    tools = getattr(trainer, "_env_tools", None)
    if not isinstance(tools, dict) or list(tools) != [None]:
        raise RuntimeError("this TRL release keeps no _env_tools list: the schemas cannot be set")
    schemas = task_class(env_id).toolset.schemas()
    names = sorted(s["function"]["name"] for s in schemas)
    if sorted(t.__name__ for t in tools[None]) != names:
        raise RuntimeError(f"the trainer's tools are not {env_id}'s: {names}")
    tools[None] = schemas


def replay_rollouts(rows: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Replay each rollout row on a fresh env; a summary: rows, replayed, and the mismatches.

    A row replays when every action, stepped in order after ``reset(options=...)``, gets its
    recorded observation, and the summed reward equals the logged ``reward``.
    """
    import gymnasium as gym

    import meeting_gym  # noqa: F401  (registers the env ids)

    envs: dict[str, Any] = {}
    count, mismatches = 0, []
    try:
        for k, row in enumerate(rows):
            count += 1
            env = envs.get(row["env"])
            if env is None:
                env = envs[row["env"]] = gym.make(row["env"], mode="text", disable_env_checker=True)
            env.reset(options=row["options"] or None)
            total, why = 0.0, None
            for t, (action, recorded) in enumerate(
                zip(row["actions"], row["observations"], strict=True)
            ):
                observation, reward, _, _, _ = env.step(action)
                total += float(reward)
                if observation != recorded:
                    why = f"action {t + 1}'s observation is not the recorded one"
                    break
            if why is None and not math.isclose(total, row["reward"], abs_tol=1e-9):
                why = f"replayed return {total} is not the logged reward {row['reward']}"
            if why is not None:
                mismatches.append({"row": k, "step": row.get("step"), "why": why})
    finally:
        for env in envs.values():
            env.close()
    return {"rows": count, "replayed": count - len(mismatches), "mismatches": mismatches}


def read_rollouts(path: Path) -> list[dict[str, Any]]:
    """The rollout rows of ``path`` (JSONL)."""
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    return [json.loads(line) for line in text.splitlines() if line.strip()]
