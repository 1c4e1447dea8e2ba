"""CalendarMath-v0's task: single-turn date arithmetic behind the family's seam (no gymnasium).

Everything else (the env, splits, evaluation, CLI) is the family's generic code.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any, ClassVar

from meeting_gym.core.rubric import Grade, Rubric, Term
from meeting_gym.core.task import Setting, Task
from meeting_gym.envs.calendar_math.answers import extract, score
from meeting_gym.envs.calendar_math.curated import CURATED
from meeting_gym.envs.calendar_math.dates import SYSTEM_PROMPT, TASK_TYPES
from meeting_gym.envs.calendar_math.generator import DIFFICULTIES, generate
from meeting_gym.envs.calendar_math.items import Item

RUBRIC = Rubric(
    Term("exact_match", 1.0, "exact"), Term("format", 0.2), Term("partial_credit", 0.2, "partial")
)


@cache
def _grade(exact: float, fmt: float, partial: float) -> Grade:
    """The weighted grade; a Grade is immutable and there are only a few, so each is built once."""
    return RUBRIC.grade(exact_match=exact, format=fmt, partial_credit=partial)


_POLICIES = "meeting_gym.envs.calendar_math.policies"


class CalendarMathTask(Task[Item, str]):
    """Single-turn date arithmetic, a corrected successor of devtechedge/calendar-math.

    ## Description
    One question per episode, of one of three task types: ``add_days`` (what date is
    ``n`` days after or before ``start``), ``days_between`` (how many midnights from
    ``start`` to ``end``, negative when ``end`` is earlier) and ``weekday`` (the English
    weekday name of ``start``). Dates are proleptic Gregorian, as Python's ``date``: the
    Gregorian leap rule for every year 1..9999, no days dropped in October 1582. The
    observation is the question; the one action is the reply; the episode ends with it.

    ## Answer and rubric
    The answer is the content of the FIRST ``<answer>...</answer>`` block (tags in any
    letter case, no whitespace inside the angle brackets, content stripped): an ISO date
    ``YYYY-MM-DD``, a decimal integer, or a weekday name with a capital first letter
    (case-sensitive: ``thursday`` is not ``Thursday``). Reward ``1.0*exact_match +
    0.2*format + 0.2*partial_credit``: 1.2 for the gold, 0.3 for a date or count off by
    one, 0.26 for an adjacent weekday (Sunday and Monday are adjacent), 0.2 for another
    well-formed block, 0 without a block. Partial credit is paid only for canonical
    answers (ASCII digits, zero-padded dates, integers without ``+`` or leading zeros);
    several answers in a block, extra words or other date formats are never exact.
    See :mod:`.answers` for the rule and the defects it fixes in
    ``devtechedge/calendar-math``, the env this one succeeds.

    ## Difficulties and settings
    ``difficulty``: ``easy`` / ``medium`` / ``hard`` (calendar-math's distributions;
    None draws its 40/35/25 mix) or ``expert`` (years 1..9999, century and 400-year
    boundaries, spans of thousands of days, negative offsets across 1582; see
    :mod:`.generator`). ``task``: pin one task type (None: uniform over the three).

    ## Information
    Reset info carries ``item_id``, ``difficulty``, ``task_type`` and ``inputs``
    (``start`` and ``n`` or ``end``); the final info every rubric term, ``reward``,
    ``gold`` and ``answer`` (the block's content, None without one).

    ## Splits
    ``curated``: calendar-math's 15 edge cases. ``eval``: those 15, then generated
    questions from seed + 1 without repeats. ``train``: generated from the seed, never
    a question of ``eval`` (calendar-math's train split held 4 of its eval questions).
    """

    summary = "single-turn date arithmetic: add days, count days between dates, name a weekday"
    difficulties = DIFFICULTIES
    rubric: ClassVar[Rubric] = RUBRIC
    max_reward = 1.2
    max_turns = 1
    policies: ClassVar[Mapping[str, str]] = {
        "gold": f"{_POLICIES}:GoldPolicy",
        "naive": f"{_POLICIES}:NaivePolicy",
        "random": f"{_POLICIES}:RandomPolicy",
    }
    settings = (
        Setting("task", "pin one task type (default: all three)", choices=(None, *TASK_TYPES)),
    )
    bench = "meeting_gym.bench.calendar_math:plan"

    def __init__(self, difficulty: str | None = None, task: str | None = None) -> None:
        super().__init__(difficulty)
        self.task_type = self.check_setting("task", task)

    def config(self) -> dict[str, Any]:
        return {**super().config(), "task": self.task_type}

    # ------------------------------------------------------------------ items

    def generate(self, rng: random.Random, difficulty: str | None) -> Item:
        return generate(rng, difficulty, self.task_type)

    def curated(self) -> Sequence[Item]:
        return CURATED

    def key(self, item: Item) -> str:
        # the question text decides identity (as calendar-math's dedup did), so a
        # generated question equal to a curated one is recognised as the same item
        return item.question

    def item_id(self, item: Item) -> str:
        return item.id

    def groups(self, item: Item) -> tuple[str, ...]:
        return (*super().groups(item), f"task {item.task_type}")

    def accepts(self, item: Item, difficulty: str | None) -> bool:
        pinned = self.task_type is None or item.task_type == self.task_type
        return pinned and super().accepts(item, difficulty)

    def load_item(self, value: Any) -> Item:
        return value if isinstance(value, Item) else Item.from_dict(value)

    # ------------------------------------------------------------------ truth and grading

    def truth(self, item: Item) -> str:
        return item.gold

    def gold(self, item: Item, truth: str) -> str:
        return truth

    def grade(self, item: Item, truth: str, text: str) -> tuple[Grade, str | None]:
        content = extract(text)
        return _grade(*score(content, truth, item.task_type)), content

    # ------------------------------------------------------------------ what the agent sees

    def question(self, item: Item) -> str:
        return item.question

    def system_prompt(self) -> str:
        return SYSTEM_PROMPT

    short_system_prompt = (
        "Answer the calendar question. Reply with the answer alone inside <answer></answer> tags."
    )

    def reset_info(self, item: Item) -> dict[str, Any]:
        return {"task_type": item.task_type, "inputs": dict(item.inputs)}

    def row_info(self, item: Item) -> dict[str, Any]:
        # calendar-math's row info: task type, difficulty, the inputs and the gold
        return {
            "task_type": item.task_type,
            "difficulty": item.difficulty,
            **item.inputs,
            "gold": item.gold,
        }
