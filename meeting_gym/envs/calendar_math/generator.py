"""Seeded CalendarMath items: ``generate(rng, difficulty, task_type)``.

Every draw comes from the ``random.Random`` passed in (never the global ``random``), in a
fixed order, so the same rng state gives the same item. For ``easy`` / ``medium`` / ``hard``
the draws are those of ``devtechedge/calendar-math`` (the env this one succeeds), call for
call (RULES section 4): the same rng state gives the same question as its
``generate_example``.

Draw order: (1) the difficulty, one ``rng.choices`` over :data:`MIX`, only when not given;
(2) the task type, one ``rng.choice`` over ``TASK_TYPES``, only when not given; (3) the
inputs, as below. ``n`` and ``delta`` draw their magnitude first, then a sign from
``rng.choice((-1, 1))``.

==================  ===============  ==============  =======================  ==============
                    easy             medium          hard                     expert
==================  ===============  ==============  =======================  ==============
random date years   2018-2026        1995-2035       1890-2110                0001-9999
add_days start      random           random          boundary p=0.45          see below
add_days n          +-(1-7)          +-(8-60)        +-(60-400)               +-(400-9999)
days_between start  random           random          random                   see below
days_between delta  0-12 (never <0)  +-(13-90)       +-(90-450)               +-(450-9999)
weekday date        random           random          boundary p=0.5           expert
                                                                              boundary p=0.6
==================  ===============  ==============  =======================  ==============

A random date is uniform over every day from Jan 1 of the first year to Dec 31 of the last.
A *boundary* date (hard) takes a year uniformly from :data:`BOUNDARY_YEARS`, then a day
uniformly from Jan 1, Dec 31, Feb 28, Mar 1, Jan 31 (and Feb 29 in a leap year): the 32
dates of :data:`BOUNDARY_DATES`. ``days_between`` end dates may leave the year range.

Expert, designed here (calendar-math had no such level). The calendar is proleptic
Gregorian, as Python's ``date``: the Gregorian leap rule for every year 1..9999, no Julian
calendar, no ten dropped days in October 1582 (1582-10-05 .. 1582-10-14 exist). That is the
trap: a solver that "knows" the 1582 reform, or uses the Julian leap rule, or a
year-2000-centred shortcut, is wrong here.

=================  ==========================================================================
expert draw        rule
=================  ==========================================================================
expert boundary    year uniform from :data:`EXPERT_YEARS` (1, 100, 200, 300, 400, 1582, 1600,
date               1700, 1800, 1900, 2000, 2100, 2400, 9999), then a day uniform from Jan 1,
                   Jan 31, Feb 28, Mar 1, Dec 31, Feb 29 in a leap year (400, 1600, 2000,
                   2400), and in 1582 also Oct 4, 5, 14, 15: :data:`EXPERT_BOUNDARY_DATES`
add_days,          ``mode = rng.random()``; mode < 0.2: *across 1582*: start random in
days_between       1582-10-15..1600-12-31, the result (end) random in 1570-01-01..1582-10-14,
                   so the offset is negative and spans 1 to about 11,300 days;
                   0.2 <= mode < 0.6: start is an expert boundary date; otherwise a random
                   date in 0001..9999. Outside *across 1582*, the magnitude is uniform in
                   400-9999 (add_days) or 450-9999 (days_between), then a sign; if that sign
                   would leave 0001-01-01..9999-12-31 it is flipped (the other side always
                   fits: 3.65 million days leave room for 9999 on one side of any date),
                   so an expert result never leaves years 1..9999 and the number of draws
                   stays fixed.
weekday            expert boundary date with probability 0.6, else a random date in 0001..9999
=================  ==========================================================================

The magnitude ranges touch the level below at 400 and 450, as calendar-math's touch at 60
and 90. ``n`` is never 0 at any level.
"""

from __future__ import annotations

import random
from datetime import date, timedelta

from meeting_gym.envs.calendar_math import dates
from meeting_gym.envs.calendar_math.items import DIFFICULTIES, Item

__all__ = [
    "BOUNDARY_DATES",
    "BOUNDARY_YEARS",
    "DIFFICULTIES",
    "EXPERT_BOUNDARY_DATES",
    "EXPERT_YEARS",
    "MIX",
    "generate",
]

MIX = (("easy", 0.40), ("medium", 0.35), ("hard", 0.25))
"""The default mix drawn when ``difficulty`` is None (expert is never drawn)."""

# (first year, last year) of random dates, n magnitude range, days_between delta range
_YEARS = {"easy": (2018, 2026), "medium": (1995, 2035), "hard": (1890, 2110), "expert": (1, 9999)}
_N = {"easy": (1, 7), "medium": (8, 60), "hard": (60, 400), "expert": (400, 9999)}
_DELTA = {"easy": (0, 12), "medium": (13, 90), "hard": (90, 450), "expert": (450, 9999)}

BOUNDARY_YEARS = (1900, 2000, 2023, 2024, 2025, 2100)
# calendar-math's order: rng.choice over this list picks the same day for the same rng
_BOUNDARY_DAYS = ((1, 1), (12, 31), (2, 28), (3, 1), (1, 31))

EXPERT_YEARS = (1, 100, 200, 300, 400, 1582, 1600, 1700, 1800, 1900, 2000, 2100, 2400, 9999)
_EXPERT_DAYS = ((1, 1), (1, 31), (2, 28), (3, 1), (12, 31))
# the last Julian day, the first two of the ten days the 1582 reform dropped, the first
# Gregorian day: all ordinary consecutive days in the proleptic calendar
_REFORM_DAYS = ((10, 4), (10, 5), (10, 14), (10, 15))

_SPANS = {
    level: (date(first, 1, 1).toordinal(), (date(last, 12, 31) - date(first, 1, 1)).days)
    for level, (first, last) in _YEARS.items()
}
"""(first ordinal, days after it) of each level's random dates, computed once."""
_MIX_NAMES = tuple(name for name, _ in MIX)
_MIX_WEIGHTS = tuple(weight for _, weight in MIX)

_ACROSS_1582_START = (date(1582, 10, 15), date(1600, 12, 31))
_ACROSS_1582_END = (date(1570, 1, 1), date(1582, 10, 14))


def _is_leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def _days_of(year: int, days: tuple[tuple[int, int], ...]) -> list[date]:
    out = [date(year, m, d) for m, d in days]
    if _is_leap(year):
        out.append(date(year, 2, 29))
    return out


def _expert_days_of(year: int) -> list[date]:
    out = _days_of(year, _EXPERT_DAYS)
    if year == 1582:
        out += [date(year, m, d) for m, d in _REFORM_DAYS]
    return out


BOUNDARY_DATES = tuple(
    sorted(dates.format_date(d) for y in BOUNDARY_YEARS for d in _days_of(y, _BOUNDARY_DAYS))
)
"""The 32 boundary dates a hard item can start from."""

EXPERT_BOUNDARY_DATES = tuple(
    sorted(dates.format_date(d) for y in EXPERT_YEARS for d in _expert_days_of(y))
)
"""The dates an expert item draws as a boundary start."""


def _random_between(rng: random.Random, first: date, last: date) -> date:
    return first + timedelta(days=rng.randint(0, (last - first).days))


def _random_date(rng: random.Random, difficulty: str) -> date:
    # one randint over the span, as _random_between draws: the same date for the same rng
    first, span = _SPANS[difficulty]
    return date.fromordinal(first + rng.randint(0, span))


_BOUNDARY_BY_YEAR = {year: tuple(_days_of(year, _BOUNDARY_DAYS)) for year in BOUNDARY_YEARS}
_EXPERT_BY_YEAR = {year: tuple(_expert_days_of(year)) for year in EXPERT_YEARS}


def _boundary_date(rng: random.Random) -> date:
    # the year, then a day of it: two choices, as calendar-math drew them
    return rng.choice(_BOUNDARY_BY_YEAR[rng.choice(BOUNDARY_YEARS)])


def _expert_boundary_date(rng: random.Random) -> date:
    return rng.choice(_EXPERT_BY_YEAR[rng.choice(EXPERT_YEARS)])


def _signed(rng: random.Random, low: int, high: int) -> int:
    # magnitude first, then the sign: calendar-math's order of draws
    return rng.randint(low, high) * rng.choice((-1, 1))


def _expert_pair(rng: random.Random, low: int, high: int) -> tuple[date, int]:
    """An expert (start, offset) whose result stays in 0001-01-01..9999-12-31."""
    mode = rng.random()
    if mode < 0.2:
        start = _random_between(rng, *_ACROSS_1582_START)
        end = _random_between(rng, *_ACROSS_1582_END)
        return start, (end - start).days
    start = _expert_boundary_date(rng) if mode < 0.6 else _random_date(rng, "expert")
    offset = _signed(rng, low, high)
    if not 1 <= start.toordinal() + offset <= dates.MAX_ORDINAL:
        offset = -offset
    return start, offset


def _inputs(rng: random.Random, difficulty: str, task_type: str) -> dict[str, object]:
    if difficulty == "expert":
        if task_type == "add_days":
            start, n = _expert_pair(rng, *_N["expert"])
            return {"start": dates.format_date(start), "n": n}
        if task_type == "days_between":
            start, delta = _expert_pair(rng, *_DELTA["expert"])
            end = start + timedelta(days=delta)
            return {"start": dates.format_date(start), "end": dates.format_date(end)}
        day = _expert_boundary_date(rng) if rng.random() < 0.6 else _random_date(rng, "expert")
        return {"start": dates.format_date(day)}

    hard = difficulty == "hard"
    if task_type == "add_days":
        # `hard and rng.random()`: calendar-math draws the coin only for hard items
        boundary = hard and rng.random() < 0.45
        start = _boundary_date(rng) if boundary else _random_date(rng, difficulty)
        return {"start": dates.format_date(start), "n": _signed(rng, *_N[difficulty])}
    if task_type == "days_between":
        start = _random_date(rng, difficulty)
        if difficulty == "easy":
            delta = rng.randint(*_DELTA["easy"])  # easy counts never go backwards
        else:
            delta = _signed(rng, *_DELTA[difficulty])
        end = start + timedelta(days=delta)
        return {"start": dates.format_date(start), "end": dates.format_date(end)}
    day = _boundary_date(rng) if hard and rng.random() < 0.5 else _random_date(rng, difficulty)
    return {"start": dates.format_date(day)}


def generate(
    rng: random.Random, difficulty: str | None = None, task_type: str | None = None
) -> Item:
    """Draw one item from ``rng`` (and nothing else): a pure function of the rng state.

    ``difficulty`` None draws one from :data:`MIX` (never ``expert``); ``task_type`` None
    draws one uniformly. Raises ValueError naming the allowed values for an unknown one.
    """
    if difficulty is not None and difficulty not in DIFFICULTIES:
        raise ValueError(f"unknown difficulty {difficulty!r}; expected one of {DIFFICULTIES}")
    if task_type is not None and task_type not in dates.TASK_TYPES:
        raise ValueError(f"unknown task_type {task_type!r}; expected one of {dates.TASK_TYPES}")
    if difficulty is None:
        difficulty = rng.choices(_MIX_NAMES, weights=_MIX_WEIGHTS, k=1)[0]
    if task_type is None:
        task_type = rng.choice(dates.TASK_TYPES)
    return Item._computed(task_type, _inputs(rng, difficulty, task_type), difficulty, None)
