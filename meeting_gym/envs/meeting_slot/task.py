"""MeetingSlot's task: scenarios, the four tools, the question and the rubric, behind the seam.

The env (:mod:`.env`) adds the discrete interface and the pictures; everything a text
agent meets is here. No gymnasium.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from meeting_gym.core.protocol import extract_answer
from meeting_gym.core.rubric import Grade, Rubric
from meeting_gym.core.task import Task
from meeting_gym.envs.meeting_slot.domain.curated import CURATED, CURATED_BY_ID
from meeting_gym.envs.meeting_slot.domain.generator import (
    DIFFICULTIES,
    generate,
    generate_solved,
    scenario_id,
)
from meeting_gym.envs.meeting_slot.domain.scenario import Scenario
from meeting_gym.envs.meeting_slot.domain.solver import Solution, solve
from meeting_gym.envs.meeting_slot.domain.timeutil import format_utc
from meeting_gym.envs.meeting_slot.prompts import SHORT_SYSTEM_PROMPT, SYSTEM_PROMPT, question
from meeting_gym.envs.meeting_slot.rubric import NONE, RUBRIC, grade_content
from meeting_gym.envs.meeting_slot.tools import TOOLSET

_POLICIES = "meeting_gym.envs.meeting_slot.policies"


class MeetingSlotTask(Task[Scenario, Solution]):
    """Find the earliest UTC start for a meeting that fits every attendee.

    Items are :class:`~.domain.scenario.Scenario` objects; the truth is the solver's
    :class:`~.domain.solver.Solution`, which gives both the gold start and the validity
    check behind partial credit. The answer is read from the FIRST ``<answer>`` block
    (tags case-insensitive, whitespace allowed inside the brackets); rubric
    ``1.0*exact_match + 0.2*format + 0.2*partial_credit`` (see :mod:`.rubric`).
    Reset options: ``{"scenario": dict}`` (a scenario of your own) or
    ``{"scenario_id": "dst_eu_monday"}`` (a curated case).
    """

    summary = "find the earliest UTC start that fits every attendee, via four calendar tools"
    difficulties = DIFFICULTIES
    rubric: ClassVar[Rubric] = RUBRIC
    max_reward = 1.2
    toolset = TOOLSET
    max_turns = 40
    id_key = "scenario_id"
    policies: ClassVar[Mapping[str, str]] = {
        "gold": f"{_POLICIES}:GoldPolicy",
        "gold-worked": f"{_POLICIES}:WorkedGoldPolicy",
        "naive": f"{_POLICIES}:NaivePolicy",
        "random": f"{_POLICIES}:RandomPolicy",
    }
    reset_options = frozenset({"scenario", "scenario_id"})
    bench = "meeting_gym.bench.meeting_slot:plan"

    def generate(self, rng: random.Random, difficulty: str | None) -> Scenario:
        return generate(rng, difficulty)

    def generate_solved(
        self, rng: random.Random, difficulty: str | None
    ) -> tuple[Scenario, Solution]:
        return generate_solved(rng, difficulty)

    def curated(self) -> Sequence[Scenario]:
        return CURATED

    def key(self, item: Scenario) -> str:
        return item.id if item.id is not None else scenario_id(item)

    def load_item(self, value: Any) -> Scenario:
        return value if isinstance(value, Scenario) else Scenario.from_dict(value)

    def item_from_options(self, options: Mapping[str, Any]) -> Scenario | None:
        if "scenario" in options and "scenario_id" in options:
            raise ValueError('give reset option "scenario" or "scenario_id", not both')
        if "scenario" in options:
            return self.load_item(options["scenario"])
        if "scenario_id" in options:
            key = options["scenario_id"]
            if not isinstance(key, str) or key not in CURATED_BY_ID:
                raise ValueError(
                    f"unknown curated scenario_id {key!r}; known: {', '.join(CURATED_BY_ID)}"
                )
            return CURATED_BY_ID[key]
        return None

    def truth(self, item: Scenario) -> Solution:
        return solve(item)

    def gold(self, item: Scenario, truth: Solution) -> str:
        return NONE if truth.gold is None else format_utc(truth.gold)

    def grade(self, item: Scenario, truth: Solution, text: str) -> tuple[Grade, str | None]:
        content = extract_answer(text)
        return grade_content(content, truth), content

    def question(self, item: Scenario) -> str:
        return question(item)

    def system_prompt(self) -> str:
        return SYSTEM_PROMPT

    short_system_prompt = SHORT_SYSTEM_PROMPT

    def reset_info(self, item: Scenario) -> dict[str, Any]:
        return {
            "request": {
                "duration_minutes": item.duration_minutes,
                "window_start": item.window_start.isoformat(),
                "window_days": item.window_days,
            }
        }

    def row_info(self, item: Scenario) -> dict[str, Any]:
        return item.to_dict()
