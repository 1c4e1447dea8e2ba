"""The text interface: string actions (tool calls as JSON, answers in tags), string observations.

Generic over any episode object with ``call(name, arguments) -> str`` and
``submit(text)``: sibling environments reuse it unchanged.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from meeting_gym.agentkit import AnswerAction, InvalidAction, parse_action
from meeting_gym.core.spaces import AnyText

MAX_ACTION_CHARS = 1 << 20
MAX_OBSERVATION_CHARS = 1 << 16
MAX_CALLS_PER_TURN = 32


class ToolEpisode(Protocol):
    def call(self, name: str, arguments: Any) -> str: ...
    def submit(self, text: str) -> Any: ...


class TextInterface:
    """Turns one string action into tool calls or a final answer on an episode."""

    def __init__(self) -> None:
        self.action_space = AnyText(MAX_ACTION_CHARS)
        self.observation_space = AnyText(MAX_OBSERVATION_CHARS)

    def apply(self, episode: ToolEpisode, action: Any) -> tuple[str, bool]:
        """Run ``action``; returns (observation, terminated)."""
        parsed = parse_action(action, max_calls=MAX_CALLS_PER_TURN)
        if isinstance(parsed, AnswerAction):
            episode.submit(parsed.text)
            return "Answer received.", True
        if isinstance(parsed, InvalidAction):
            return _clip(f"error: {parsed.reason}"), False
        results = [episode.call(call.name, call.arguments) for call in parsed.calls]
        text = results[0] if len(results) == 1 else json.dumps(results, ensure_ascii=False)
        return _clip(text), False


def _clip(text: str) -> str:
    if len(text) <= MAX_OBSERVATION_CHARS:
        return text
    note = "... [truncated]"
    return text[: MAX_OBSERVATION_CHARS - len(note)] + note
