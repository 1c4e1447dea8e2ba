"""Time-zone math on integer seconds: offset pieces and local -> UTC mapping.

A zone's UTC offset is piecewise constant. :func:`pieces` returns the pieces
that cover a UTC range, as ``(start, end, offset)`` triples in epoch seconds.
Everything else follows from them exactly:

* the wall clock at UTC instant ``t`` is ``t + offset(t)``;
* the UTC instants whose wall clock lies in a local range ``[a, b)`` are, per
  piece, ``[a - offset, b - offset)`` clipped to the piece. A local time in a
  spring-forward gap is then covered by no piece, and a local time in a
  fall-back fold by two.

Zone data come from the ``tzdata`` package (not the machine's own zone files), so
results are the same on every machine. Transitions are found by sampling
``zoneinfo`` every few hours and bisecting each change to the exact second, once
per zone and year, then cached.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from datetime import date, datetime
from functools import lru_cache
from importlib import resources
from zoneinfo import ZoneInfo

from meeting_gym.envs.meeting_slot.domain.timeutil import DAY, from_day_number, utc_midnight

Piece = tuple[int, int, int]
"""``(utc_start, utc_end, offset_seconds)``: the offset holds on [start, end)."""

SAMPLE_STEP = 6 * 3600
_KEY = re.compile(r"[A-Za-z0-9_+\-]+(/[A-Za-z0-9_+\-]+)*")


@lru_cache(maxsize=1024)
def zone(name: str) -> ZoneInfo:
    """The ``ZoneInfo`` for ``name`` read from the tzdata package."""
    if not isinstance(name, str) or not _KEY.fullmatch(name):
        raise KeyError(name)
    path = resources.files("tzdata.zoneinfo").joinpath(*name.split("/"))
    try:
        with path.open("rb") as handle:
            return ZoneInfo.from_file(handle, key=name)
    except (OSError, ValueError):
        raise KeyError(name) from None


def is_known(name: str) -> bool:
    try:
        zone(name)
    except KeyError:
        return False
    return True


def offset_at(name: str, instant: int) -> int:
    """UTC offset in seconds at a UTC instant, straight from zoneinfo."""
    delta = datetime.fromtimestamp(instant, zone(name)).utcoffset()
    assert delta is not None
    return int(delta.total_seconds())


@lru_cache(maxsize=4096)
def _year(name: str, year: int) -> tuple[int, tuple[tuple[int, int], ...]]:
    """(offset at the start of ``year``, ((transition instant, new offset), ...))."""
    start = utc_midnight(date(year, 1, 1))
    end = utc_midnight(date(year + 1, 1, 1))
    first = previous = offset_at(name, start)
    changes: list[tuple[int, int]] = []
    lo = start
    while lo < end:
        hi = min(lo + SAMPLE_STEP, end)
        value = offset_at(name, hi)
        if value != previous:
            a, b = lo, hi  # offset(a) == previous != offset(b)
            while b - a > 1:
                mid = (a + b) // 2
                if offset_at(name, mid) == previous:
                    a = mid
                else:
                    b = mid
            changes.append((b, value))
            previous = value
        lo = hi
    return first, tuple(changes)


def _year_of(instant: int) -> int:
    return from_day_number(instant // DAY).year


def pieces(name: str, start: int, end: int) -> list[Piece]:
    """The constant-offset pieces covering the UTC range [start, end)."""
    first_year, last_year = _year_of(start), _year_of(end - 1)
    current, _ = _year(name, first_year)
    cursor = start
    out: list[Piece] = []
    for year in range(first_year, last_year + 1):
        for instant, offset in _year(name, year)[1]:
            if instant <= start:
                current = offset
                continue
            if instant >= end:
                break
            if offset != current:
                out.append((cursor, instant, current))
                cursor, current = instant, offset
    out.append((cursor, end, current))
    return out


def offset_in(parts: list[Piece], instant: int) -> int:
    """Offset at ``instant`` from a piece list that covers it."""
    index = bisect_right(parts, (instant, 1 << 62, 0)) - 1
    p_start, p_end, offset = parts[index]
    if not p_start <= instant < p_end:
        raise ValueError("instant outside the pieces")
    return offset


def local_to_utc(parts: list[Piece], local_start: int, local_end: int) -> list[tuple[int, int]]:
    """UTC intervals whose wall clock lies in the local range [local_start, local_end).

    ``local_*`` are wall-clock readings expressed as epoch seconds (a wall time
    of day D at m minutes is ``utc_midnight(D) + 60*m``). The result is sorted,
    disjoint and merged where pieces touch.
    """
    out: list[tuple[int, int]] = []
    for p_start, p_end, offset in parts:
        lo = max(p_start, local_start - offset)
        hi = min(p_end, local_end - offset)
        if lo < hi:
            if out and out[-1][1] == lo:
                out[-1] = (out[-1][0], hi)
            else:
                out.append((lo, hi))
    return out
