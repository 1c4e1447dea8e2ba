"""When a :class:`~.expression.Cron` fires: the day rule, exact equivalence, next run times.

* **Day rule** (RULES 3.4, Vixie): a day passes when its month is in the month set and,
  if a day field's text begins with ``*``, its day of month AND its weekday are in their
  sets, otherwise its day of month OR its weekday is. Days a month lacks never match.
* **Equivalence** (RULES 4): two expressions fire at exactly the same minutes forever iff
  their minute sets and hour sets are equal and they pass the day rule on the same
  (month, day of month, weekday) triples, taken over every real (month, day) pair, Feb 29
  included, and all seven weekdays; or if neither ever fires. This is exact because every
  real date falls on every weekday within the 400-year Gregorian cycle (the tests prove it
  by walking the cycle). :func:`day_key` packs the triple set into one integer: per month,
  seven 32-bit rows (one per weekday) of the days that pass.
* **Next run times** (RULES 5): :func:`next_times` jumps month by month and, inside a month,
  straight to the days that pass (bit masks), then lists the times of day; it never walks
  minutes. Searching stops after year 9999.

Time is naive wall-clock time at minute resolution: no zones, no DST.
"""

from __future__ import annotations

import hashlib
import re
from bisect import bisect_right
from datetime import date, datetime
from functools import lru_cache

from meeting_gym.envs.cron_schedule.expression import Cron, bits

__all__ = [
    "MAX_YEAR",
    "day_key",
    "day_passes",
    "days_in_month",
    "equivalent",
    "fires",
    "fires_ever",
    "format_time",
    "next_times",
    "parse_time",
    "schedule_id",
]

MAX_YEAR = 9999
_LONGEST = (0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)  # Feb 29 counts
_DAYS_UP_TO = tuple(((1 << (n + 1)) - 1) ^ 1 for n in range(32))  # bits 1..n
_ROW = 32  # bits per weekday row in a month's key
_MONTH = 7 * _ROW  # bits per month in the key
_ALL_ROWS = sum(1 << (_ROW * w) for w in range(7))


def _rows(dows: int) -> int:
    """1 in the row of each weekday in ``dows``: multiplying a day mask by it copies it there."""
    return sum(1 << (_ROW * w) for w in bits(dows))


@lru_cache(maxsize=8192)
def _day_key(doms: int, months: int, dows: int, and_rule: bool) -> int:
    rows = _rows(dows)
    key = 0
    for month in bits(months):
        days = _DAYS_UP_TO[_LONGEST[month]]
        dom = doms & days
        # AND: the rows of the weekdays in dows hold the dom days, the others nothing;
        # OR: the rows of the weekdays in dows hold every day, the others the dom days
        part = dom * rows if and_rule else dom * _ALL_ROWS + (days ^ dom) * rows
        key |= part << (_MONTH * (month - 1))
    return key


def day_key(cron: Cron) -> int:
    """The (month, day, weekday) triples on which ``cron``'s day rule and month pass, as bits.

    Bit ``224 * (month - 1) + 32 * weekday + day`` is set when a date with that month, day
    of month and weekday (Sunday 0) passes. Zero means the expression never fires.
    """
    return _day_key(cron.doms, cron.months, cron.dows, cron.and_rule)


def fires_ever(cron: Cron) -> bool:
    """Whether ``cron`` fires at all (``0 0 30 2 *`` never does; it is still valid)."""
    return day_key(cron) != 0


def equivalent(a: Cron, b: Cron) -> bool:
    """Whether ``a`` and ``b`` fire at exactly the same minutes, forever (RULES 4)."""
    key = day_key(a)
    if key != day_key(b):
        return False
    return key == 0 or (a.minutes == b.minutes and a.hours == b.hours)


def schedule_id(cron: Cron) -> str:
    """A short text that is equal for two equivalent expressions (and, but for a SHA-256
    collision, only for them): minutes, hours and a digest of the day triples."""
    key = day_key(cron)
    if key == 0:
        return "never"
    digest = hashlib.sha256(key.to_bytes(_MONTH * 12 // 8, "little")).hexdigest()[:24]
    return f"{cron.minutes:x}.{cron.hours:x}.{digest}"


def days_in_month(year: int, month: int) -> int:
    if month == 2:
        leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
        return 29 if leap else 28
    return _LONGEST[month]


def _weekday(year: int, month: int, day: int) -> int:
    """Cron weekday numbering: Sunday 0 ... Saturday 6."""
    return (date(year, month, day).weekday() + 1) % 7


def day_passes(cron: Cron, year: int, month: int, day: int) -> bool:
    """Whether the date passes the month set and the day rule (RULES 3.1, 3.4)."""
    if not cron.months >> month & 1 or day > days_in_month(year, month):
        return False
    in_dom = bool(cron.doms >> day & 1)
    in_dow = bool(cron.dows >> _weekday(year, month, day) & 1)
    return (in_dom and in_dow) if cron.and_rule else (in_dom or in_dow)


def fires(cron: Cron, when: datetime) -> bool:
    """Whether ``cron`` fires in the minute of ``when`` (seconds ignored)."""
    return bool(
        cron.minutes >> when.minute & 1
        and cron.hours >> when.hour & 1
        and day_passes(cron, when.year, when.month, when.day)
    )


def _weekday_days() -> tuple[tuple[int, ...], ...]:
    """[first weekday][weekday set] -> mask of days 1..31 whose weekday is in the set."""
    table = []
    for first in range(7):
        single = [0] * 7
        for day in range(1, 32):
            single[(first + day - 1) % 7] |= 1 << day
        row = []
        for dows in range(128):
            mask = 0
            for weekday in bits(dows):
                mask |= single[weekday]
            row.append(mask)
        table.append(tuple(row))
    return tuple(table)


_WEEKDAY_DAYS = _weekday_days()


def _passing_days(cron: Cron, year: int, month: int) -> int:
    """Mask of the days of ``year``-``month`` that pass the day rule (month assumed in set)."""
    days = _DAYS_UP_TO[days_in_month(year, month)]
    dom = cron.doms & days
    dow = _WEEKDAY_DAYS[_weekday(year, month, 1)][cron.dows] & days
    return dom & dow if cron.and_rule else dom | dow


def next_times(cron: Cron, start: datetime, count: int) -> list[str]:
    """The first ``count`` firing minutes strictly after ``start``, as ``YYYY-MM-DD HH:MM``.

    ``start`` counts from its minute (seconds are ignored: after 09:00:30 comes 09:01).
    Fewer than ``count`` only if the expression never fires (an empty list) or the
    search reaches the end of year 9999.
    """
    if count <= 0 or day_key(cron) == 0:
        return []
    hours, minutes = bits(cron.hours), bits(cron.minutes)
    after_hour, after_minute = start.hour, start.minute
    year, month, first_day = start.year, start.month, start.day
    out: list[str] = []
    while year <= MAX_YEAR:
        if cron.months >> month & 1:
            passing = _passing_days(cron, year, month) & ~((1 << first_day) - 1)
            while passing:
                low = passing & -passing
                passing ^= low
                day = low.bit_length() - 1
                prefix = f"{year:04d}-{month:02d}-{day:02d} "
                for hour in hours:
                    if day == first_day and hour <= after_hour:
                        if hour < after_hour:
                            continue
                        later = minutes[bisect_right(minutes, after_minute) :]
                    else:
                        later = minutes
                    for minute in later:
                        out.append(f"{prefix}{hour:02d}:{minute:02d}")
                        if len(out) == count:
                            return out
        first_day = 0  # later months start from their first day
        month += 1
        if month == 13:
            month = 1
            year += 1
    return out


_TIME = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})[ T]([0-9]{2}):([0-9]{2})(?::([0-9]{2}))?")


def parse_time(text: str) -> datetime:
    """``YYYY-MM-DD HH:MM`` (or ``T`` for the space, optional ``:SS``) -> datetime.

    ``ValueError`` naming the problem for anything else.
    """
    match = _TIME.fullmatch(text.strip()) if isinstance(text, str) else None
    if match is None:
        raise ValueError(f"expected a time as YYYY-MM-DD HH:MM, got {text!r:.40}")
    year, month, day, hour, minute = (int(g) for g in match.groups()[:5])
    second = int(match.group(6) or 0)
    try:
        return datetime(year, month, day, hour, minute, second)
    except ValueError as exc:
        raise ValueError(f"not a real time: {text.strip()!r:.40} ({exc})") from None


def format_time(when: datetime) -> str:
    """``YYYY-MM-DD HH:MM``."""
    return f"{when.year:04d}-{when.month:02d}-{when.day:02d} {when.hour:02d}:{when.minute:02d}"
