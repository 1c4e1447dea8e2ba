"""Text policies acting through MeetingSlot's discrete actions.

:class:`TextPolicyAdapter` runs any text-mode :class:`~meeting_gym.agents.policies.Policy`
(gold, naive, random) on the discrete interface: each tool call of a text action
becomes one discrete action (one turn each), and the results are handed back to
the policy as the text interface would (a JSON array for several calls). The
adapter reads the attendee order and window from the episode's scenario only to
translate names and dates into slots, exactly what ``list_attendees`` and the
question tell any agent. A call or answer no discrete action expresses (an
unknown name, a date outside the table) is sent as an out-of-range index, which
gets an ``error:`` result and uses the turn. An answer between grid starts (the
naive policy's, which counts a busy block's end minute as busy) is moved to the
next grid start, the nearest later answer a discrete agent can give.
"""

from __future__ import annotations

import json
from typing import Any

from meeting_gym.core.policy import DiscreteAdapter
from meeting_gym.core.protocol import AnswerAction, InvalidAction, extract_answer, parse_action
from meeting_gym.envs.meeting_slot.domain.scenario import Scenario
from meeting_gym.envs.meeting_slot.domain.timeutil import format_utc
from meeting_gym.envs.meeting_slot.prompts import question
from meeting_gym.envs.meeting_slot.rubric import parse_answer


class TextPolicyAdapter(DiscreteAdapter):
    """Drives a text-mode policy through discrete actions."""

    def begin(self, info: dict[str, Any]) -> str:
        self.scenario: Scenario = self.episode.item
        self.results: list[str] = []
        self.waiting = 0
        self.first = True
        return question(self.scenario)

    def policy_info(self, info: dict[str, Any]) -> dict[str, Any]:
        return {"request": dict(info["request"])}

    def observe(self, info: dict[str, Any]) -> None:
        if self.waiting:
            self.results.append(str(info.get("result")))
            self.waiting -= 1

    def text(self) -> str:
        if self.first:
            self.first = False
            text = question(self.scenario)
        elif len(self.results) == 1:
            text = self.results[0]
        else:
            text = json.dumps(self.results, ensure_ascii=False)
        self.results = []
        return text

    def translate(self, action: str) -> list[int]:
        indices = self._translate(action)
        self.waiting = len(indices)
        return indices

    def _translate(self, text: str) -> list[int]:
        invalid = self.table.n  # out of range: an error result, one turn
        parsed = parse_action(text)
        if isinstance(parsed, AnswerAction):
            content = extract_answer(parsed.text) or ""
            index = self.table.encode_answer(content, self.scenario)
            instant = parse_answer(content)
            if index is None and isinstance(instant, int):
                step = self.table.grid_seconds
                index = self.table.encode_answer(
                    format_utc(instant + -instant % step), self.scenario
                )
            return [invalid if index is None else index]
        if isinstance(parsed, InvalidAction):
            return [invalid]
        out = []
        for call in parsed.calls:
            index = self.table.encode_call(call.name, call.arguments, self.scenario)
            out.append(invalid if index is None else index)
        return out or [invalid]
