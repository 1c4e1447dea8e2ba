"""Reference policies for CalendarMath, acting through the text interface.

Each reads the question's facts from the reset ``info`` (``task_type``, ``inputs``,
``difficulty``) and answers with one ``<answer>...</answer>`` block on its first turn.

* ``gold``: the right answer, from :func:`meeting_gym.envs.calendar_math.dates.gold`.
* ``naive``: the README baseline of ``devtechedge/calendar-math`` (the env this one
  succeeds) as reconstructed in RULES section 7: one
  calendar with the Julian leap rule (every year divisible by 4 is leap, 1900 and 2100
  included) for all three tasks; add_days counts n days under it (1900-02-28 + 1 gives the
  impossible ``1900-02-29``); days_between is the difference under it plus one
  ("inclusive", for negative differences too); weekday counts days under it from
  0001-01-01 taken as a Monday. On the 15 curated cases it scores reward 0.768.
* ``random``: a random answer of the right shape, from its own seeded ``random.Random``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Any

from meeting_gym.core.policy import Policy
from meeting_gym.core.policy import RandomPolicy as BaseRandomPolicy
from meeting_gym.envs.calendar_math import dates
from meeting_gym.envs.calendar_math.answers import format_answer

__all__ = [
    "POLICIES",
    "GoldPolicy",
    "NaivePolicy",
    "RandomPolicy",
    "julian_days",
    "julian_ymd",
    "naive_answer",
]

_MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_CYCLE = 4 * 365 + 1  # days in four years under the Julian rule


def _julian_leap(year: int) -> bool:
    return year % 4 == 0


def julian_days(year: int, month: int, day: int) -> int:
    """Days from 0001-01-01 (day 0) to year-month-day, counting every 4th year as leap."""
    before = year - 1
    days = 365 * before + before // 4
    days += sum(_MONTH_DAYS[: month - 1])
    if month > 2 and _julian_leap(year):
        days += 1
    return days + day - 1


def julian_ymd(days: int) -> tuple[int, int, int]:
    """The inverse of :func:`julian_days`: (year, month, day) of a day count from 0001-01-01."""
    cycles, rest = divmod(days, _CYCLE)
    # years 1, 2, 3 of a cycle have 365 days, year 4 has 366: rest // 365 can reach 4 only
    # on the cycle's last day (rest = 1460), which belongs to year 4
    in_cycle = min(rest // 365, 3)
    year = 4 * cycles + in_cycle + 1
    rest -= 365 * in_cycle
    for month, length in enumerate(_MONTH_DAYS, start=1):
        if month == 2 and _julian_leap(year):
            length = 29
        if rest < length:
            return year, month, rest + 1
        rest -= length
    raise AssertionError("unreachable: a year's months hold all its days")


def _label(text: str) -> tuple[int, int, int]:
    # the naive solver reads the date's digits, not a Gregorian date: no validation here
    return int(text[:4]), int(text[5:7]), int(text[8:10])


def naive_answer(task_type: str, inputs: Mapping[str, Any]) -> str:
    """The naive policy's answer text (without tags) for one question."""
    start = julian_days(*_label(inputs["start"]))
    if task_type == "add_days":
        year, month, day = julian_ymd(start + inputs["n"])
        return f"{year:04d}-{month:02d}-{day:02d}"
    if task_type == "days_between":
        return str(julian_days(*_label(inputs["end"])) - start + 1)
    return dates.WEEKDAYS[start % 7]


class GoldPolicy(Policy):
    """Answers the gold answer computed from the reset info."""

    name = "gold"

    def reset(
        self, observation: str, info: dict[str, Any], seed: int | None = None, *, env: Any = None
    ) -> None:
        """Compute the gold answer from ``info["task_type"]`` and ``info["inputs"]``."""
        self.answer = format_answer(dates.gold(info["task_type"], info["inputs"]))

    def act(self, observation: str, info: dict[str, Any] | None = None) -> str:
        """``<answer>gold</answer>``."""
        return self.answer


class NaivePolicy(Policy):
    """calendar-math's naive baseline: Julian leap rule everywhere, inclusive counts."""

    name = "naive"

    def reset(
        self, observation: str, info: dict[str, Any], seed: int | None = None, *, env: Any = None
    ) -> None:
        """Compute the naive answer from ``info["task_type"]`` and ``info["inputs"]``."""
        self.answer = format_answer(naive_answer(info["task_type"], info["inputs"]))

    def act(self, observation: str, info: dict[str, Any] | None = None) -> str:
        """``<answer>naive answer</answer>``."""
        return self.answer


class RandomPolicy(BaseRandomPolicy):
    """A random answer of the right shape, reproducible from ``seed``.

    add_days: a date within 400 days of ``start`` (kept inside 0001..9999); days_between:
    an integer in -450..450 (-9999..9999 for expert items); weekday: a weekday name. Each
    ``act`` draws anew; ``reset(seed=...)`` reseeds. Never touches the global ``random``.
    """

    def reset(
        self, observation: str, info: dict[str, Any], seed: int | None = None, *, env: Any = None
    ) -> None:
        """Remember the question's facts; a ``seed`` restarts the policy's own generator."""
        self.reseed(seed)
        self.task_type = info["task_type"]
        self.inputs = dict(info["inputs"])
        self.difficulty = info.get("difficulty")

    def act(self, observation: str, info: dict[str, Any] | None = None) -> str:
        """A fresh random answer of the question's shape, in one answer block."""
        if self.task_type == "add_days":
            start = dates.parse_date(self.inputs["start"]).toordinal()
            ordinal = min(max(start + self.rng.randint(-400, 400), 1), dates.MAX_ORDINAL)
            return format_answer(dates.format_date(date.fromordinal(ordinal)))
        if self.task_type == "days_between":
            bound = 9999 if self.difficulty == "expert" else 450
            return format_answer(str(self.rng.randint(-bound, bound)))
        return format_answer(self.rng.choice(dates.WEEKDAYS))


POLICIES: dict[str, type[Policy]] = {
    "gold": GoldPolicy,
    "naive": NaivePolicy,
    "random": RandomPolicy,
}
