"""An independent minute-by-minute reference for the solver.

It shares nothing with ``meeting_gym.envs.meeting_slot.domain.solver`` or ``zones``: the wall clock
of every UTC minute comes straight from ``zoneinfo`` (zone files read from the
``tzdata`` package, the same data the library uses), and validity is the literal
definition:

* a UTC minute is labelled with an attendee's *local date* when, on that
  attendee's wall clock, the date's weekday is a working day, the time of day is
  inside the working hours and outside every busy block of that date; otherwise
  it is unlabelled;
* a start ``s`` (a whole minute of the UTC window) is valid iff, for every
  attendee, the minutes ``s .. s + duration - 1`` all carry the same label.

Only minutes from the window start to the window end plus the duration can
affect a start in the window, so only those are labelled.

``exact=True`` asks ``zoneinfo`` about every single minute. The default asks once
per UTC hour boundary and minute by minute inside any hour whose two ends
disagree; that is exact unless a zone changes offset twice within one hour and
back again, which no real zone does. Offsets are cached per zone and hour.
"""

from __future__ import annotations

from datetime import date, datetime, timezone
from functools import cache, lru_cache
from importlib import resources
from zoneinfo import ZoneInfo

import numpy as np

from meeting_gym.envs.meeting_slot.domain.scenario import Attendee, Scenario

NONE = np.int64(-(1 << 40))
_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()


@cache
def tz(name: str) -> ZoneInfo:
    with resources.files("tzdata.zoneinfo").joinpath(*name.split("/")).open("rb") as handle:
        return ZoneInfo.from_file(handle, key=name)


def wall_minute(zone: ZoneInfo, minute: int) -> int:
    """Minutes since 1970-01-01 00:00 on the zone's wall clock at UTC minute ``minute``."""
    local = datetime.fromtimestamp(minute * 60, zone)
    days = local.toordinal() - _EPOCH_ORDINAL
    return days * 1440 + local.hour * 60 + local.minute


@lru_cache(maxsize=200_000)
def _hour_shift(name: str, hour: int) -> int:
    """Wall minus UTC (minutes) at the start of UTC hour ``hour``."""
    return wall_minute(tz(name), hour * 60) - hour * 60


@lru_cache(maxsize=200_000)
def _hour_walls(name: str, hour: int) -> np.ndarray:
    """Wall minutes of the 60 UTC minutes of ``hour``."""
    base = hour * 60
    a, b = _hour_shift(name, hour), _hour_shift(name, hour + 1)
    if a == b:
        return np.arange(base + a, base + a + 60, dtype=np.int64)
    zone = tz(name)
    return np.array([wall_minute(zone, base + i) for i in range(60)], dtype=np.int64)


def walls(name: str, lo: int, hi: int, exact: bool = False) -> np.ndarray:
    """Wall minutes (since the local epoch) of UTC minutes [lo, hi)."""
    if exact:
        zone = tz(name)
        return np.array([wall_minute(zone, m) for m in range(lo, hi)], dtype=np.int64)
    first, last = lo // 60, (hi - 1) // 60
    chunks = [_hour_walls(name, h) for h in range(first, last + 1)]
    joined = np.concatenate(chunks)
    return joined[lo - first * 60 : hi - first * 60]


def labels(person: Attendee, lo: int, hi: int, exact: bool = False) -> np.ndarray:
    """The local-date label of each UTC minute in [lo, hi), or ``NONE``."""
    wall = walls(person.timezone, lo, hi, exact)
    day = wall // 1440
    clock = wall % 1440
    weekday = (day + 3) % 7  # 1970-01-01 was a Thursday
    ok = np.isin(weekday, np.array(person.weekdays, dtype=np.int64))
    ok &= (clock >= person.work_start) & (clock < person.work_end)
    for busy_day, blocks in person.busy.items():
        number = busy_day.toordinal() - _EPOCH_ORDINAL
        on_day = day == number
        if not on_day.any():
            continue
        for start, end in blocks:
            ok &= ~(on_day & (clock >= start) & (clock < end))
    return np.where(ok, day, NONE)


def run_ok(label: np.ndarray, duration: int, count: int) -> np.ndarray:
    """For the first ``count`` minutes: do ``duration`` minutes share one non-NONE label?"""
    breaks = np.zeros(label.shape, dtype=np.int64)
    breaks[1:] = (label[1:] != label[:-1]) | (label[1:] == NONE)
    total = np.cumsum(breaks)
    starts = np.arange(count)
    return (label[:count] != NONE) & (total[starts + duration - 1] - total[starts] == 0)


def brute(scenario: Scenario, exact: bool = False) -> tuple[int | None, np.ndarray]:
    """(gold start or None, sorted valid starts), both in epoch seconds."""
    lo = (scenario.window_start.toordinal() - _EPOCH_ORDINAL) * 1440
    count = scenario.window_days * 1440
    duration = scenario.duration_minutes
    hi = lo + count + duration
    ok = np.ones(count, dtype=bool)
    for person in scenario.attendees:
        ok &= run_ok(labels(person, lo, hi, exact), duration, count)
        if not ok.any():
            break
    valid = (np.flatnonzero(ok) + lo) * 60
    gold = int(valid[0]) if valid.size else None
    return gold, valid


def utc_text(instant: int | None) -> str:
    if instant is None:
        return "NONE"
    return datetime.fromtimestamp(instant, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
