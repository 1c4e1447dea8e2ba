"""Seeded CronSchedule tasks: ``generate(rng, level, kind, num_times)`` -> (item, truth).

Every draw comes from the ``random.Random`` passed in (never the global ``random``), in a
fixed order: the level (only when not given), the kind (only for ``mixed``), the
schedule, then for a write task its wording, for a read task the count and the start.

Levels add constructs and keep everything below them (each row is the one above plus
what it names; read tasks draw their schedule the same way):

=====  ==================================================================================
level  what the schedules hold (and, for read tasks, the count and the start)
=====  ==================================================================================
1      minute: one value, a list, ``*/N`` (N divides 60), every minute of one hour; hour:
       ``*``, one value, a list, a range, ``*/N``; every day. Read: 3 run times, the start
       is never a run time.
2      + one day field restricted: days of the month (one, a list, a range) or weekdays
       (one, a list, a range, ``MON-FRI``-style names, Sunday as 0); months: one, a list,
       a range, quarterly ``*/3``, names; a tenth stay daily. Read: as level 1.
3      + **both day fields restricted** (the OR rule), in half the tasks; minute ``a/N``,
       ``a-b/N`` and ranges; hour ``a-b/N`` and ``a/N``; Sunday as 7. Read: half the
       starts are exactly on a run time (which must not be listed).
4      + the AND rule through ``*/N`` day fields; the 29th-31st in months that lack them;
       Feb 29 in leap and common years; weekday ``N/STEP`` and mixed names (``1-FRI``,
       ``MON-7``); macros; schedules that fire rarely (Feb 29 on given weekdays, ``*/31``
       AND a weekday); odd days alone; level 3's schedules in three tasks of ten. Read:
       5-10 run times; starts in the last days of a month, late February of leap and
       common years (2100 included) and year ends; three starts in ten on a run time.
=====  ==================================================================================

Every reference expression fires (a never-firing one is redrawn). ``num_times`` given
explicitly wins over the level's count. Write descriptions come from
:func:`~.english.describe`; the truth of a write task is the parsed reference, of a read
task its run times.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TypeVar

from meeting_gym.envs.cron_schedule.english import describe
from meeting_gym.envs.cron_schedule.expression import (
    DOW_NAMES,
    FULL,
    MONTH_NAMES,
    Cron,
    from_fields,
    parse,
)
from meeting_gym.envs.cron_schedule.items import LEVELS, CronItem
from meeting_gym.envs.cron_schedule.schedule import (
    day_key,
    fires,
    format_time,
    next_times,
    parse_time,
)

__all__ = ["LEVELS", "generate", "schedule"]

T = TypeVar("T")

_MINUTE_STEPS = (2, 3, 4, 5, 6, 10, 12, 15, 20, 30)
_COMMON_STEPS = (5, 10, 15, 20, 30)
_HOUR_STEPS = (2, 3, 4, 6, 8, 12)
_DOW_WORDS = list(DOW_NAMES)
_MONTH_WORDS = list(MONTH_NAMES)
_LEAP_AND_COMMON = (2023, 2024, 2025, 2027, 2028, 2100)
_MACROS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")


def _int(rng: random.Random, lo: int, hi: int) -> int:
    """A uniform integer in lo..hi (``randint`` costs ten times as much)."""
    return lo + int(rng.random() * (hi - lo + 1))


def _pick(rng: random.Random, options: Sequence[T]) -> T:
    """A uniform element of ``options`` (``rng.choice`` costs several times as much)."""
    return options[int(rng.random() * len(options))]


def _values(rng: random.Random, lo: int, hi: int, k: int) -> list[int]:
    """``k`` distinct values of lo..hi, ascending."""
    chosen: set[int] = set()
    while len(chosen) < k:
        chosen.add(lo + int(rng.random() * (hi - lo + 1)))
    return sorted(chosen)


def _join(values: list[int]) -> str:
    return ",".join(map(str, values))


def _range(rng: random.Random, lo: int, hi: int, min_len: int = 2) -> tuple[int, int]:
    a = _int(rng, lo, hi - min_len + 1)
    return a, _int(rng, a + min_len - 1, hi)


def _minute(rng: random.Random, level: int, hour_is_star: bool) -> str:
    if level >= 3 and rng.random() < 0.3:
        kind = rng.random()
        if kind < 0.4:  # an offset step: a/N or a-59/N
            n = _pick(rng, _COMMON_STEPS)
            a = _int(rng, 1, n - 1)
            return f"{a}/{n}" if rng.random() < 0.6 else f"{a}-59/{n}"
        if kind < 0.75:  # a stepped range a-b/N that ends on a value
            n = _pick(rng, (5, 10, 15, 20))
            a = _int(rng, 0, 59 - 2 * n)
            b = a + n * _int(rng, 2, (59 - a) // n)
            return f"{a}-{b}/{n}"
        a, b = _range(rng, 0, 59, 2)
        return f"{a}-{b}"
    roll = rng.random()
    if roll < 0.55:  # on the hour or half past in a third of these, as real schedules are
        return str(_pick(rng, (0, 0, 30)) if rng.random() < 0.35 else _int(rng, 0, 59))
    if roll < 0.7:
        return _join(_values(rng, 0, 59, _int(rng, 2, 4)))
    if roll < 0.95 or hour_is_star:
        return f"*/{_pick(rng, _MINUTE_STEPS)}"
    return "*"


def _hour(rng: random.Random, level: int) -> str:
    if level >= 3 and rng.random() < 0.2:
        n = _pick(rng, (2, 3, 4))
        a = _int(rng, 0, 8)
        if rng.random() < 0.5:
            return f"{a}/{n}"
        b = a + n * _int(rng, 2, (23 - a) // n)
        return f"{a}-{b}/{n}"
    roll = rng.random()
    if roll < 0.15:
        return "*"
    if roll < 0.5:
        return str(_int(rng, 0, 23))
    if roll < 0.65:
        return _join(_values(rng, 0, 23, _int(rng, 2, 3)))
    if roll < 0.9:
        a, b = _range(rng, 0, 23, 2)
        return f"{a}-{b}"
    return f"*/{_pick(rng, _HOUR_STEPS)}"


def _dom(rng: random.Random, level: int) -> str:
    roll = rng.random()
    top = 31 if level >= 4 else 28
    if roll < 0.4:
        return str(_int(rng, 1, top))
    if roll < 0.75:
        return _join(_values(rng, 1, top, _int(rng, 2, 3)))
    a, b = _range(rng, 1, top, 3)
    return f"{a}-{b}"


def _dow_name(rng: random.Random, value: int) -> str:
    word = _DOW_WORDS[value % 7]
    return _pick(rng, (word, word.lower(), word.title()))


def _dow(rng: random.Random, level: int) -> str:
    """A restricted weekday field that does not begin with ``*``."""
    roll = rng.random()
    named = rng.random() < 0.4
    sunday = 7 if level >= 3 and rng.random() < 0.5 else 0
    if roll < 0.15:
        return _pick(rng, ("MON-FRI", "mon-fri", "1-5")) if named or rng.random() < 0.5 else "1-5"
    if roll < 0.25:
        return _pick(rng, ("SAT,SUN", "sat,sun", f"6,{sunday}" if sunday else "0,6"))
    if roll < 0.6:
        value = _int(rng, 0, 6)
        if named:
            return _dow_name(rng, value)
        return str(sunday if value == 0 else value)
    if roll < 0.85:
        values = _values(rng, 0, 6, _int(rng, 2, 3))
        if named:
            return ",".join(_dow_name(rng, v) for v in values)
        return _join(sorted(sunday if v == 0 else v for v in values))
    a, b = _range(rng, 1, 6, 3)
    if sunday == 7 and rng.random() < 0.5:
        b = 7  # up to Sunday
    if named and b < 7:
        return f"{_dow_name(rng, a)}-{_dow_name(rng, b)}"
    return f"{a}-{b}"


def _month(rng: random.Random, level: int) -> str:
    roll = rng.random()
    named = rng.random() < 0.3

    def word(value: int) -> str:
        if not named:
            return str(value)
        name = _MONTH_WORDS[value - 1]
        return _pick(rng, (name, name.lower(), name.title()))

    if roll < 0.25:
        return word(_int(rng, 1, 12))
    if roll < 0.5:
        return ",".join(word(v) for v in _values(rng, 1, 12, _int(rng, 2, 4)))
    if roll < 0.75:
        a, b = _range(rng, 1, 12, 3)
        return f"{word(a)}-{word(b)}"
    return _pick(rng, ("*/3", "1-12/3", "JAN-DEC/3", "*/3", "2-12/3", "*/6", "*/4"))


def _days_level_2(rng: random.Random, level: int) -> tuple[str, str, str]:
    """(dom, month, dow) with at most one day field restricted."""
    roll = rng.random()
    month = _month(rng, level) if rng.random() < 0.35 else "*"
    if roll < 0.1:  # level 1's daily schedules stay in the mix
        return "*", "*", "*"
    if roll < 0.25:
        return "*", month if month != "*" else _month(rng, level), "*"
    if roll < 0.55:
        return _dom(rng, level), month, "*"
    return "*", month, _dow(rng, level)


def _days_level_4(rng: random.Random) -> tuple[str, str, str] | str:
    """The constructs level 4 adds: (dom, month, dow), or a whole macro."""
    roll = rng.random()
    if roll < 0.1:
        return _pick(rng, _MACROS)
    if roll < 0.3:  # AND through a '*/N' day-of-month field
        dom = f"*/{_pick(rng, (2, 2, 3, 5, 7, 10, 14, 16, 31))}"
        return dom, "*" if rng.random() < 0.7 else _month(rng, 4), _dow(rng, 4)
    if roll < 0.45:  # AND through a '*/N' weekday field
        dow = f"*/{_pick(rng, (2, 3, 4, 5, 6, 7))}"
        return _dom(rng, 4), "*" if rng.random() < 0.7 else _month(rng, 4), dow
    if roll < 0.7:  # the 29th to the 31st, in months that may lack them
        dom = _pick(rng, ("29", "30", "31", "29,30", "30,31", "28-31", "29-31", "1,31", "15,30"))
        month = _pick(rng, ("*", "2", "2,3", "1-6", "*/2", "FEB", "4,6,9,11", "*"))
        dow = "*" if rng.random() < 0.6 else _dow(rng, 4)
        return dom, month, dow
    if roll < 0.8:  # rare: Feb 29, alone or on given weekdays; the 1st on a weekday
        return _pick(
            rng,
            (
                ("29", "2", "*"),
                ("29", "FEB", "*/7"),
                ("29", "2", f"*/{_int(rng, 2, 7)}"),
                ("*/31", "*", str(_int(rng, 0, 7))),
                ("*/31", _pick(rng, ("1-6", "*/2", "JAN")), _dow_name(rng, _int(rng, 0, 6))),
            ),
        )
    if roll < 0.83:  # weekday N/STEP and mixed names
        dow = _pick(
            rng,
            (
                f"{_int(rng, 1, 5)}/{_int(rng, 2, 3)}",
                "1-FRI",
                "MON-7",
                f"{_int(rng, 0, 3)}/2",
                "tue-7",
            ),
        )
        return "*" if rng.random() < 0.6 else _dom(rng, 4), "*", dow
    if roll < 0.9:  # odd days, alone
        return (
            _pick(rng, ("*/2", "1-31/2", "1/2")),
            "*" if rng.random() < 0.7 else _month(rng, 4),
            "*",
        )
    return _dom(rng, 4), _month(rng, 4) if rng.random() < 0.3 else "*", _dow(rng, 4)


def schedule(rng: random.Random, level: int) -> str:
    """One reference expression of ``level`` (1-4) that fires."""
    return _schedule(rng, level)[0]


def _schedule(rng: random.Random, level: int) -> tuple[str, Cron]:
    while True:
        hour = _hour(rng, level)
        minute = _minute(rng, level, hour == "*")
        if level == 1:
            days: tuple[str, str, str] | str = ("*", "*", "*")
        elif level == 2:
            days = _days_level_2(rng, level)
        elif level == 3 or rng.random() < 0.3:
            if rng.random() < 0.5:
                days = (
                    _dom(rng, level),
                    _month(rng, level) if rng.random() < 0.3 else "*",
                    _dow(rng, level),
                )
            else:
                days = _days_level_2(rng, level)
        else:
            days = _days_level_4(rng)
        if isinstance(days, str):
            text = days
            cron = parse(text)
        else:
            dom, month, dow = days
            text = f"{minute} {hour} {dom} {month} {dow}"
            cron = from_fields((minute, hour, dom, month, dow), text)
        every_minute = cron.minutes == FULL[0] and cron.hours == FULL[1]  # no start avoids it
        if day_key(cron) != 0 and not every_minute:
            return text, cron


def _start_level(rng: random.Random, level: int) -> datetime:
    if level >= 4 and rng.random() < 0.8:
        kind = rng.random()
        if kind < 0.4:  # late February of a leap or a common year
            year = _pick(rng, _LEAP_AND_COMMON)
            day = _int(rng, 25, 28)
        elif kind < 0.7:  # the last days of any month
            year, month = _int(rng, 2023, 2030), _int(rng, 1, 12)
            first = datetime(year + (month == 12), month % 12 + 1, 1)
            back = first - timedelta(days=_int(rng, 1, 3))
            return back.replace(hour=_int(rng, 0, 23), minute=_int(rng, 0, 59))
        else:  # a year end
            return datetime(
                _pick(rng, _LEAP_AND_COMMON),
                12,
                _int(rng, 29, 31),
                _int(rng, 0, 23),
                _int(rng, 0, 59),
            )
        return datetime(year, 2, day, _int(rng, 0, 23), _int(rng, 0, 59))
    minutes = _int(rng, 0, 6 * 365 * 1440)
    return datetime(2024, 1, 1) + timedelta(minutes=minutes)


def _start(rng: random.Random, level: int, cron: Cron) -> datetime:
    start = _start_level(rng, level)
    if level >= 3 and rng.random() < (0.5 if level == 3 else 0.3):
        # exactly on a run time: it must not be counted
        return parse_time(next_times(cron, start, 1)[0])
    if level <= 2:
        while fires(cron, start):  # levels 1-2 never start on a run time
            start += timedelta(minutes=1)
    return start


def generate(
    rng: random.Random,
    level: str | None = None,
    kind: str = "mixed",
    num_times: int | None = None,
) -> tuple[CronItem, Cron | tuple[str, ...]]:
    """One task and its truth (write: the parsed reference; read: the run times)."""
    if level is None:
        level = _pick(rng, LEVELS)
    number = int(level)
    if kind == "mixed":
        kind = "write" if rng.random() < 0.5 else "read"
    text, cron = _schedule(rng, number)
    if kind == "write":
        item = CronItem._computed("write", level, text, describe(cron, rng), "", 0, text, None)
        item.__dict__["cron"] = cron  # parsed already
        return item, cron
    n = num_times if num_times is not None else (3 if number <= 3 else _int(rng, 5, 10))
    start = _start(rng, number, cron)
    times = tuple(next_times(cron, start, n))
    item = CronItem._computed(
        "read", level, text, "", format_time(start), n, "\n".join(times), None
    )
    item.__dict__["cron"] = cron
    return item, times
