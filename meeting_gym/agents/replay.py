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
    """Play ``row``'s logged actions on ``env`` (default: a new text env of ``row["env"]``)."""
    import gymnasium as gym

    if env is None:
        kwargs = dict(row.get("env_kwargs") or {})
        if row.get("max_turns") is not None:
            kwargs["max_turns"] = row["max_turns"]
        env = gym.make(row["env"], mode="text", disable_env_checker=True, **kwargs)
    observation, info = env.reset(seed=row.get("seed"), options=row["options"])
    messages = row["transcript"]
    protocol = row["tool_protocol"]
    answer_tag = info.get("answer_tag", "answer")
    result = Replay(reward=0.0, terms={}, steps=0, done=False)
    first_user = next((m for m in messages if m.get("role") == "user"), None)
    if first_user is None or first_user.get("content") != observation:
        result.mismatches.append("the first user message is not the env's first observation")
    names = env.unwrapped.task.rubric_for(env.unwrapped.episode.item).names
    for index, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        if result.done:
            result.mismatches.append(f"message {index}: an assistant turn after the episode ended")
            break
        turn = assistant_turn(message, protocol, answer_tag=answer_tag)
        observation, reward, terminated, truncated, info = env.step(turn.action)
        result.steps += 1
        result.reward += float(reward)
        result.done = bool(terminated or truncated)
        told, _ = _told(messages, index, len(turn.tool_call_ids))
        if told is not None:
            expected: Any = observation
            if isinstance(told, list):
                expected = split_results(observation, len(turn.tool_call_ids))
            if told != expected:
                result.mismatches.append(f"message {index}: the env's observation differs")
    if result.done:
        result.terms = {name: float(info[name]) for name in names}
    return result
