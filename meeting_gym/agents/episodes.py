"""Expert episodes as chat data: the reference policy's whole episodes, replay-checked.

A multi-turn env (MeetingSlot-v0, CronSchedule-Tools-v0, TimetablePlanner-v0) is learnt
from whole episodes, not from a question and its answer: the system prompt, the question,
each assistant turn (tool calls in the text protocol, then the final answer) and each
tool result. :func:`expert_episode` plays the env's reference policy on one item and
writes the conversation exactly as :class:`~meeting_gym.agentkit.llm.LLMAgent` writes a
model's in the ``text`` tool protocol (the protocol of a chat template that renders no
tools, SmolLM2's): assistant messages whose content is the action, tool results as
``user`` messages. So a model fine-tuned on these rows is shown, token for token, the
conversations it is evaluated on.

Every episode is replayed on a fresh env before it is kept (:func:`replay_messages`): the
observations must be the recorded ones and the return the recorded one, and it must be
the env's best (``Task.max_reward_for``, where the env documents one for the item). A
wrong episode raises ``ValueError``: no wrong target is ever written.

Rows are TRL's conversational shape (``messages``) plus what replays them: ``env``,
``env_kwargs``, ``options`` (the item's reset options), ``seed``, ``id``, ``reward``,
``turns`` and ``tool_calls``. Nothing here imports torch or TRL.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from meeting_gym.agentkit.messages import assistant_turn, initial_messages, observation_messages
from meeting_gym.core.loop import ScriptedAgent, play
from meeting_gym.core.protocol import ToolCallsAction, parse_action

__all__ = ["episode_rows", "expert_episode", "export_episodes", "replay_messages"]

MULTI_TURN_HINT = "expert episodes are for tool envs; a single-turn env exports its items"


def _make_env(env_id: str, env_kwargs: dict[str, Any]) -> Any:
    import gymnasium as gym

    import meeting_gym  # noqa: F401  (registers the env ids)

    return gym.make(env_id, mode="text", disable_env_checker=True, **env_kwargs)


class _Recorder:
    """An expert whose turns are written down as :class:`~meeting_gym.agentkit.llm.LLMAgent`
    writes a model's (text protocol): the conversation a model is trained on."""

    def __init__(self, expert: Any, system_prompt: str | None) -> None:
        self.expert, self.system_prompt = expert, system_prompt
        self.name = getattr(expert, "name", "expert")

    def reset(self, observation: Any, info: dict[str, Any], *, env: Any, seed: int | None) -> None:
        self.messages = initial_messages(observation, info, self.system_prompt)
        self.answer_tag = info.get("answer_tag", "answer")
        self.calls, self.turn = 0, None
        self.expert.reset(observation, info, env=env, seed=seed)

    def act(self, observation: Any, info: dict[str, Any]) -> Any:
        if self.turn is not None:  # the observation answers the previous turn
            self.messages.extend(observation_messages(observation, self.turn))
        action = self.expert.act(observation, info)
        self.turn = assistant_turn({"role": "assistant", "content": action}, "text")
        self.messages.append(self.turn.message)
        parsed = parse_action(action, answer_tag=self.answer_tag)
        if isinstance(parsed, ToolCallsAction):
            self.calls += len(parsed.calls)
        return self.turn.action


def expert_episode(
    env: Any,
    options: dict[str, Any],
    *,
    seed: int | None = None,
    system_prompt: str | None = None,
    policy: str | None = None,
) -> dict[str, Any]:
    """Play the reference policy (or ``policy``) on the item ``options`` address.

    ``env`` is a text-mode env; ``system_prompt`` None keeps the env's own. Returns the
    row (see the module doc); nothing is checked here (:func:`replay_messages` checks).
    """
    from meeting_gym.agents.policies import make_policy

    task = env.unwrapped.task
    env_id = env.spec.id if env.spec is not None else task.env_id
    expert = make_policy(policy or task.reference_policy, seed=seed, env=env_id)
    recorder = _Recorder(expert, system_prompt)
    rollout = play(env, recorder, seed=seed, options=options)
    return {
        "id": rollout.reset_info.get(task.id_key),
        "env": env_id,
        "env_kwargs": {
            k: v for k, v in task.config().items() if v is not None and k != "difficulty"
        },
        "options": dict(options),
        "seed": seed,
        "messages": recorder.messages,
        "reward": rollout.total_reward,
        "turns": rollout.turns,
        "tool_calls": recorder.calls,
    }


def replay_messages(row: dict[str, Any], env: Any | None = None) -> float:
    """Replay ``row``'s assistant turns on a fresh env; the return, checked.

    The turns are played through the one episode loop (:func:`~meeting_gym.core.loop.play`)
    by a :class:`~meeting_gym.core.loop.ScriptedAgent`. Raises ``ValueError`` naming the
    row if an observation differs from the recorded one, the episode does not end on its
    last turn, the return differs from the row's, or it is not the env's best for the item
    (where the env documents one).
    """
    own = env is None
    if env is None:
        env = _make_env(row["env"], row.get("env_kwargs") or {})
    try:
        messages = row["messages"]
        user = [m for m in messages if m["role"] == "user"]
        actions = [m["content"] for m in messages if m["role"] == "assistant"]
        name = f"episode {row.get('id')!r} ({row['env']} {row['options']})"
        wrong: list[int] = []

        def observed(k: int, observation: Any) -> None:
            if k + 1 >= len(user) or user[k + 1]["content"] != observation:
                wrong.append(k)

        agent = ScriptedAgent(actions, observed)
        rollout = play(env, agent, seed=row.get("seed"), options=row["options"])
        if not user or user[0]["content"] != agent.first:
            raise ValueError(f"{name}: the env's question is not the recorded one")
        if wrong:
            raise ValueError(f"{name}: turn {wrong[0] + 1}'s result is not the recorded one")
        if agent.left:
            raise ValueError(f"{name}: the episode ended before turn {agent.played + 1}")
        if not rollout.done:
            raise ValueError(f"{name}: the episode has not ended after its last turn")
        total = rollout.total_reward
        if not math.isclose(total, row["reward"], abs_tol=1e-9):
            raise ValueError(f"{name}: replayed return {total} is not the recorded {row['reward']}")
        task = env.unwrapped.task
        best = task.max_reward_for(env.unwrapped.episode.item)
        if best is not None and not math.isclose(total, best, abs_tol=1e-9):
            raise ValueError(f"{name}: the expert earns {total}, not the env's best {best}")
        return total
    finally:
        if own:
            env.close()


def episode_rows(
    env_id: str,
    split: str = "train",
    n: int = 100,
    *,
    split_seed: int | None = None,
    difficulty: str | None = None,
    system_prompt: str | None = None,
    start: int = 0,
    policy: str | None = None,
    **env_kwargs: Any,
) -> Iterator[dict[str, Any]]:
    """Expert episodes of items ``start`` to ``start + n - 1`` of ``split``, each replayed.

    ``policy`` names the expert (default: the env's reference policy; MeetingSlot's
    ``gold-worked`` writes a worked solution before its answer). ``env_kwargs`` are the
    env's settings (``gym.make`` keywords). Raises ``ValueError`` for a single-turn env,
    or at the first episode that does not replay to the env's best.
    """
    from meeting_gym.core.registry import task_class

    if task_class(env_id).toolset is None:
        raise ValueError(f"{env_id}: {MULTI_TURN_HINT}")
    play_env = _make_env(env_id, env_kwargs)
    check_env = _make_env(env_id, env_kwargs)
    try:
        for index in range(start, start + n):
            options: dict[str, Any] = {"split": split, "index": index}
            if split_seed is not None:
                options["split_seed"] = split_seed
            if difficulty is not None:
                options["difficulty"] = difficulty
            row = expert_episode(
                play_env, options, seed=index, system_prompt=system_prompt, policy=policy
            )
            replay_messages(row, check_env)
            yield row
    finally:
        play_env.close()
        check_env.close()


def export_episodes(
    path: str | Path, env_id: str, split: str = "train", n: int = 100, **kw: Any
) -> int:
    """Write :func:`episode_rows` as JSONL to ``path``; the number written.

    The file is written whole or not at all: a wrong episode stops the export before
    ``path`` is touched.
    """
    rows = list(episode_rows(env_id, split, n, **kw))
    target = Path(path)
    with open(target, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return len(rows)
