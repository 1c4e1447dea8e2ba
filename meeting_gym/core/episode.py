"""The episode engine shared by every interface of MeetingSlot (no gymnasium here).

An :class:`Episode` holds the hidden scenario, its solution, the tool calls made
so far and, once answered, the grade. Interfaces translate their actions into
:meth:`Episode.call` and :meth:`Episode.submit`; turns are counted by the env.
"""

from __future__ import annotations

from typing import Any

from meeting_gym.agentkit import extract_answer
from meeting_gym.envs.meeting_slot.domain.scenario import Scenario
from meeting_gym.envs.meeting_slot.domain.solver import Solution, solve
from meeting_gym.envs.meeting_slot.domain.timeutil import format_utc
from meeting_gym.envs.meeting_slot.rubric import ZERO, Grade, grade_content
from meeting_gym.envs.meeting_slot.tools import TOOLSET


class Episode:
    def __init__(self, scenario: Scenario, solution: Solution | None = None) -> None:
        self.scenario = scenario
        self.solution = solve(scenario) if solution is None else solution
        self.calls: list[tuple[str, Any, str]] = []
        self.answer_text: str | None = None
        self.answer: str | None = None
        self.grade: Grade | None = None

    @property
    def gold(self) -> str:
        gold = self.solution.gold
        return "NONE" if gold is None else format_utc(gold)

    @property
    def done(self) -> bool:
        return self.grade is not None

    def call(self, name: str, arguments: Any) -> str:
        """Run one tool on the hidden scenario; never raises for bad arguments."""
        result = TOOLSET.call(self.scenario, name, arguments)
        self.calls.append((name, arguments, result))
        return result

    def submit(self, text: str) -> Grade:
        """Grade a final message (the first ``<answer>`` block counts) and end.

        ``answer`` keeps the block's content (None without one), extracted once here.
        """
        self.answer_text = text
        self.answer = extract_answer(text)
        self.grade = grade_content(self.answer, self.solution)
        return self.grade

    def outcome(self) -> dict[str, Any]:
        """The end-of-episode ``info`` entries: rubric breakdown and gold."""
        result = (self.grade or ZERO).as_dict()
        result["gold"] = self.gold
        result["answered"] = self.grade is not None
        result["answer"] = self.answer
        return result
