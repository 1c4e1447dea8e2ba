"""Replay a logged LLM episode on a fresh env: is the logged reward the env's grade of it?

An ``--out`` row of ``meeting-gym eval --policy openai|local`` carries the env id, the
reset ``seed`` and ``options`` that replay its item, the tool protocol and the whole
conversation. :func:`replay_row` turns each assistant message back into the env action it
was (:func:`~meeting_gym.agentkit.messages.assistant_turn`, the function the loop used),
plays those actions on a new env, and reports the env's own return and rubric terms, and
every place where the env's observation differs from what the conversation shows the
model was told. A row whose logged breakdown differs from its replay was graded or logged
wrongly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from meeting_gym.agentkit.messages import assistant_turn, split_results
from meeting_gym.core.loop import ScriptedAgent, play


@dataclass
class Replay:
    """What replaying one row gave: the env's return and terms, and any mismatches."""

    reward: float
    terms: dict[str, float]
    steps: int
    done: bool
    mismatches: list[str] = field(default_factory=list)

    def breakdown(self) -> dict[str, float]:
        """The terms and the reward, in the shape of a row's ``breakdown``."""
        return {**self.terms, "reward": self.reward}


def _told(messages: list[dict[str, Any]], start: int, calls: int) -> tuple[str | None, int]:
    """What the conversation shows as the observation after an assistant message at ``start``.

    Returns the observation (tool results joined as the env would join them for several
    calls) and the index of the next assistant message.
    """
    index = start + 1
    parts: list[str] = []
    while index < len(messages) and messages[index].get("role") != "assistant":
        parts.append(str(messages[index].get("content")))
        index += 1
    if not parts:
        return None, index
    return (parts[0] if calls <= 1 or len(parts) == 1 else parts), index  # type: ignore[return-value]


def replay_row(row: dict[str, Any], env: Any = None) -> Replay:
    """Play ``row``'s logged actions on ``env`` (default: a new text env of ``row["env"]``).

    The actions are played through the one episode loop (:func:`~meeting_gym.core.loop.play`)
    by a :class:`~meeting_gym.core.loop.ScriptedAgent`.
    """
    import gymnasium as gym

    if env is None:
        kwargs = dict(row.get("env_kwargs") or {})
        if row.get("max_turns") is not None:
            kwargs["max_turns"] = row["max_turns"]
        env = gym.make(row["env"], mode="text", disable_env_checker=True, **kwargs)
    messages = row["transcript"]
    protocol = row["tool_protocol"]
    answer_tag = env.unwrapped.task.answer_tag
    turns = [
        (index, assistant_turn(message, protocol, answer_tag=answer_tag))
        for index, message in enumerate(messages)
        if message.get("role") == "assistant"
    ]
    mismatches: list[str] = []

    def observed(k: int, observation: Any) -> None:
        index, turn = turns[k]
        told, _ = _told(messages, index, len(turn.tool_call_ids))
        if told is not None:
            expected: Any = observation
            if isinstance(told, list):
                expected = split_results(observation, len(turn.tool_call_ids))
            if told != expected:
                mismatches.append(f"message {index}: the env's observation differs")

    agent = ScriptedAgent([turn.action for _, turn in turns], observed)
    rollout = play(env, agent, seed=row.get("seed"), options=row["options"])
    if rollout.done and agent.played:
        observed(agent.played - 1, rollout.observation)
    if rollout.done and agent.left:
        index = turns[agent.played][0]
        mismatches.append(f"message {index}: an assistant turn after the episode ended")
    first_user = next((m for m in messages if m.get("role") == "user"), None)
    if first_user is None or first_user.get("content") != agent.first:
        mismatches.insert(0, "the first user message is not the env's first observation")
    result = Replay(
        reward=rollout.total_reward,
        terms={},
        steps=rollout.turns,
        done=rollout.done,
        mismatches=mismatches,
    )
    if result.done:
        names = env.unwrapped.task.rubric_for(env.unwrapped.episode.item).names
        result.terms = {name: float(rollout.info[name]) for name in names}
    return result
