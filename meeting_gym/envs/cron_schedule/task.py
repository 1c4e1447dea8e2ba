"""CronSchedule-v0 and CronSchedule-Tools-v0: cron tasks behind the family's seam (no gymnasium).

Everything else (the env, splits, evaluation, CLI) is the family's generic code.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, ClassVar

from meeting_gym.core.protocol import protocol_instructions
from meeting_gym.core.rubric import Grade, Rubric, Term
from meeting_gym.core.task import Setting, Task
from meeting_gym.envs.cron_schedule.answers import TAGS, extract, score_read, score_write
from meeting_gym.envs.cron_schedule.curated import CURATED
from meeting_gym.envs.cron_schedule.expression import Cron
from meeting_gym.envs.cron_schedule.generator import generate
from meeting_gym.envs.cron_schedule.items import LEVELS, MAX_TIMES, SYSTEM_PROMPT, CronItem
from meeting_gym.envs.cron_schedule.schedule import schedule_id
from meeting_gym.envs.cron_schedule.tools import TOOLSET

RUBRIC = Rubric(Term("correct", 1.0), Term("formatted", 0.0))
"""``correct`` (weight 1) and ``formatted`` (weight 0: reported, never paid)."""

KIND_SETTINGS = (None, "write", "read", "mixed")


@lru_cache(maxsize=1024)
def _grade(correct: float, formatted: float) -> Grade:
    """The grade of these term values (immutable, so each is built once)."""
    return RUBRIC.grade(correct=correct, formatted=formatted)


_POLICIES = "meeting_gym.envs.cron_schedule.policies"

Truth = Cron | tuple[str, ...]
"""A write task's parsed reference, or a read task's run times."""


class CronScheduleTask(Task[CronItem, Truth]):
    """Write cron expressions from English, and read their next run times (Vixie cron).

    ## Description
    One task per episode, single turn. **write**: an English schedule ("Every 15 minutes
    between 07:00 and 11:59 on weekdays (Monday through Friday).") -> one 5-field cron
    expression in a ``<cron>`` block; correct when it fires at exactly the reference's
    minutes (``*/30 * * * *``, ``0,30 * * * *`` and ``0-59/30 * * * *`` are all correct
    for "every 30 minutes"). **read**: an expression and a start time -> the next N run
    times strictly after the start, one ``YYYY-MM-DD HH:MM`` per line in a ``<times>``
    block. Semantics are Vixie cron / cronie as ``RULES.md`` makes them precise (the
    day-of-month / day-of-week OR rule unless a day field begins with ``*``, 0 and 7 both
    Sunday, ``N/STEP`` = ``N-max/STEP``, the lowercase macros); see :mod:`.expression`
    and :mod:`.schedule`.

    ## Rubric
    ``1.0*correct + 0.0*formatted``. The LAST block of the task's tag counts (tags in any
    case, whitespace allowed inside the brackets). write: ``correct`` is 1 or 0. read:
    ``correct`` = the lines that equal the true run time at their position / max(N, lines
    given) (``T`` for the space and ``:00`` seconds accepted; bullets, weekday names or
    AM/PM make a line match nothing). ``formatted``: a block of the right tag exists.
    See :mod:`.answers`.

    ## Levels and settings
    ``difficulty``: ``"1"``-``"4"`` (the ints 1-4 are accepted too; None draws the four
    evenly); the constructs of each level are in :mod:`.generator`. ``task``: ``write``,
    ``read`` or ``mixed`` (default, half each). ``num_times``: the run times a read task
    asks for (default 3 on levels 1-3, 5-10 on level 4; curated tasks keep their own).

    ## Information
    Reset info: ``item_id``, ``difficulty``, ``kind``, ``answer_tag``, ``num_times``
    (read; 0 for write), ``both_days_restricted``; read tasks also ``expression`` and
    ``start`` (both in the question). Never the reference of a write task. The final info
    adds ``correct``, ``formatted``, ``reward``, ``gold`` and ``answer`` (the last block's
    content, stripped; None without one).

    ## Splits
    ``curated``: hand-picked traps (OR and AND rules, Feb 29 across 2100, the 31st, 7 as
    Sunday, names, macros, starts on a run time). ``eval``: those, then held-out draws.
    ``train``: never an eval item; write tasks are identified by their schedule (the set
    of minutes they fire at), so train never holds an eval schedule in any wording.
    """

    summary = "write cron expressions from English and list their next run times (Vixie cron)"
    difficulties = LEVELS
    rubric: ClassVar[Rubric] = RUBRIC
    max_reward = 1.0
    max_turns = 1
    policies: ClassVar[Mapping[str, str]] = {
        "gold": f"{_POLICIES}:GoldPolicy",
        "naive": f"{_POLICIES}:NaivePolicy",
        "noop": f"{_POLICIES}:NoopPolicy",
        "random": f"{_POLICIES}:RandomPolicy",
    }
    settings = (
        Setting("task", "task kind: write, read or mixed (default)", choices=KIND_SETTINGS),
        Setting(
            "num_times", f"run times per read task, 1-{MAX_TIMES} (default by level)", kind=int
        ),
    )
    bench = "meeting_gym.bench.cron_schedule:plan"
    fixed_kind: ClassVar[str | None] = None
    """A subclass that plays one task kind only (no ``task`` setting) names it here."""

    def __init__(
        self,
        difficulty: str | int | None = None,
        task: str | None = "mixed",
        num_times: int | None = None,
    ) -> None:
        super().__init__(difficulty)
        self.kind = self.fixed_kind or self.check_setting("task", task) or "mixed"
        if num_times is not None and (
            isinstance(num_times, bool)
            or not isinstance(num_times, int)
            or not 1 <= num_times <= MAX_TIMES
        ):
            raise ValueError(
                f"num_times must be an integer from 1 to {MAX_TIMES}, got {num_times!r}"
            )
        self.num_times = num_times

    def check_difficulty(self, difficulty: Any) -> str | None:
        """The level as a string: ``3`` and ``"3"`` are the same level."""
        if isinstance(difficulty, int) and not isinstance(difficulty, bool):
            difficulty = str(difficulty) if 1 <= difficulty <= 4 else difficulty
        return super().check_difficulty(difficulty)

    def config(self) -> dict[str, Any]:
        return {**super().config(), "task": self.kind, "num_times": self.num_times}

    # ------------------------------------------------------------------ items

    def generate(self, rng: random.Random, difficulty: str | None) -> CronItem:
        return self.generate_solved(rng, difficulty)[0]

    def generate_solved(self, rng: random.Random, difficulty: str | None) -> tuple[CronItem, Truth]:
        return generate(rng, difficulty, self.kind, self.num_times)

    def curated(self) -> Sequence[CronItem]:
        if self.kind == "mixed":
            return CURATED
        return tuple(item for item in CURATED if item.kind == self.kind)

    def key(self, item: CronItem) -> str:
        if item.kind == "write":  # the schedule, whatever the wording
            return "write:" + schedule_id(item.cron)
        return f"read:{item.expression}|{item.start}|{item.num_times}"

    def item_id(self, item: CronItem) -> str:
        return item.id

    def groups(self, item: CronItem) -> tuple[str, ...]:
        labels = (*super().groups(item), f"task {item.kind}")
        if item.both_days_restricted:
            labels += ("both day fields restricted",)
        return labels

    def load_item(self, value: Any) -> CronItem:
        return value if isinstance(value, CronItem) else CronItem.from_dict(value)

    # ------------------------------------------------------------------ truth and grading

    def truth(self, item: CronItem) -> Truth:
        return item.cron if item.kind == "write" else item.times

    def gold(self, item: CronItem, truth: Truth) -> str:
        return item.gold

    def grade(self, item: CronItem, truth: Truth, text: str) -> tuple[Grade, str | None]:
        content = extract(text, TAGS[item.kind])
        if item.kind == "write":
            correct, formatted = score_write(content, truth)  # type: ignore[arg-type]
        else:
            correct, formatted = score_read(content, truth)  # type: ignore[arg-type]
        answer = None if content is None else content.strip()
        return _grade(correct, formatted), answer

    # ------------------------------------------------------------------ what the agent sees

    def question(self, item: CronItem) -> str:
        return item.question

    def system_prompt(self) -> str:
        return SYSTEM_PROMPT

    short_system_prompt: ClassVar[str | None] = (
        "You read and write standard cron schedules. Reply with the expression inside "
        "<cron></cron> tags, or with the run times, one per line, inside <times></times> tags."
    )

    def reset_info(self, item: CronItem) -> dict[str, Any]:
        info: dict[str, Any] = {
            "kind": item.kind,
            "answer_tag": TAGS[item.kind],
            "num_times": item.num_times,
            "both_days_restricted": item.both_days_restricted,
        }
        if item.kind == "read":
            info.update(expression=item.expression, start=item.start)
        return info

    def row_info(self, item: CronItem) -> dict[str, Any]:
        row = item.to_dict()
        del row["question"], row["gold"]
        return row


TOOLS_PROMPT = (
    f"{SYSTEM_PROMPT}\n\n"
    "Here you write expressions. Before you answer you can run any candidate with the "
    "next_runs tool and compare its run times with the schedule you were given.\n\n"
    f"{protocol_instructions(TOOLSET, answer_tag='cron')}"
)


class CronScheduleToolsTask(CronScheduleTask):
    """Write tasks of CronSchedule-v0 with one tool, ``next_runs(expression, after, count)``.

    The tool returns the run times of any candidate (or an ``error:`` naming what is
    invalid), so an agent can test its expression before it commits. The episode ends
    with a ``<cron>`` block (the same rubric: the last block counts); ``max_turns`` 10.
    Difficulty as CronSchedule-v0; no other settings. Reset info adds ``tools``.
    """

    summary = "write cron expressions from English, testing candidates with a next_runs tool"
    toolset = TOOLSET
    answer_tag = "cron"
    max_turns = 10
    settings = ()
    fixed_kind: ClassVar[str | None] = "write"
    short_system_prompt: ClassVar[str | None] = None  # the tool's use is the prompt's point

    def __init__(self, difficulty: str | int | None = None) -> None:
        super().__init__(difficulty)

    def config(self) -> dict[str, Any]:
        return {"difficulty": self.difficulty}

    def system_prompt(self) -> str:
        return TOOLS_PROMPT
