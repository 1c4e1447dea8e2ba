"""The one definition of a valid meeting start, and the gold answer built on it.

For each attendee and each local date whose weekday is listed, the free local
time is the working interval minus that date's busy blocks; it is mapped to UTC
through the zone's offset pieces (gap times vanish, fold times count twice) and
merged *within that date only*. A meeting ``[s, s + d)`` fits an attendee iff it
lies inside one such merged interval ``[x, y)``, i.e. ``x <= s <= y - d``.

:func:`solve` intersects those closed start ranges over attendees and the
window. :class:`Solution` then answers both questions the task asks, from the
same ranges, so gold and partial-credit validity can never disagree:

* ``gold``: the earliest whole UTC minute in the ranges (or ``None``);
* ``is_valid(s)``: ``s`` is a whole minute inside the ranges.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from meeting_gym.envs.meeting_slot.domain import zones
from meeting_gym.envs.meeting_slot.domain.scenario import Attendee, Block, Scenario
from meeting_gym.envs.meeting_slot.domain.timeutil import DAY, from_day_number, utc_midnight

MARGIN_DAYS = 1
"""Local dates this far beyond the UTC window can still hold a start inside it.

A meeting lies in the local date of its start, and that date is the UTC date of
``start + offset``; zone offsets are under 24 hours in magnitude (zoneinfo refuses
larger ones), so it is within one day of the start's UTC date."""

Span = tuple[int, int]
"""A closed range ``[lo, hi]`` of UTC start instants, epoch seconds."""


@dataclass(frozen=True)
class Solution:
    """The valid start ranges of a scenario and the gold answer derived from them."""

    starts: tuple[Span, ...]
    gold: int | None

    def is_valid(self, instant: int) -> bool:
        if instant % 60:
            return False
        index = bisect_right(self.starts, (instant, 1 << 62)) - 1
        return index >= 0 and self.starts[index][0] <= instant <= self.starts[index][1]

    def valid_minutes(self, lo: int, hi: int, step: int = 60) -> list[int]:
        """Every valid start in [lo, hi) on a grid of ``step`` seconds (from epoch)."""
        out: list[int] = []
        for a, b in self.starts:
            first = max(a, lo)
            first += -first % step
            out.extend(range(first, min(b + 1, hi), step))
        return out


def subtract(work: Block, busy: Iterable[Block]) -> list[Block]:
    """Local free intervals: ``work`` minus the (sorted) busy blocks."""
    free: list[Block] = []
    cursor, end = work
    for b_start, b_end in sorted(busy):
        if b_end <= cursor:
            continue
        if b_start >= end:
            break
        if b_start > cursor:
            free.append((cursor, b_start))
        cursor = max(cursor, b_end)
        if cursor >= end:
            break
    if cursor < end:
        free.append((cursor, end))
    return free


def window_bounds(scenario: Scenario) -> tuple[int, int]:
    """UTC window [start, end) in epoch seconds."""
    start = utc_midnight(scenario.window_start)
    return start, start + scenario.window_days * DAY


def free_intervals(person: Attendee, lo: int, hi: int) -> list[tuple[int, list[Span]]]:
    """Per local date near [lo, hi): (day number, merged UTC free intervals [x, y))."""
    first_day = lo // DAY - MARGIN_DAYS
    last_day = (hi - 1) // DAY + MARGIN_DAYS
    parts = _day_pieces(person.timezone, first_day - 2, last_day + 3)
    weekdays = person.weekdays
    out: list[tuple[int, list[Span]]] = []
    for number in range(first_day, last_day + 1):
        if (number + 3) % 7 not in weekdays:  # 1970-01-01 was a Thursday (3)
            continue
        midnight = number * DAY
        busy = person.busy.get(from_day_number(number), ()) if person.busy else ()
        # In a fall-back fold one local interval maps to two UTC pieces, so the pieces of
        # different free intervals interleave in UTC: sort before merging.
        pieces = [
            span
            for f_start, f_end in subtract((person.work_start, person.work_end), busy)
            for span in zones.local_to_utc(parts, midnight + f_start * 60, midnight + f_end * 60)
        ]
        if pieces:
            out.append((number, _union(pieces)))
    return out


@lru_cache(maxsize=8192)
def _day_pieces(zone: str, first_day: int, end_day: int) -> tuple[zones.Piece, ...]:
    """Offset pieces of ``zone`` over UTC days [first_day, end_day), cached: every solve
    of a scenario in the same weeks asks for the same ones."""
    return tuple(zones.pieces(zone, first_day * DAY, end_day * DAY))


def start_ranges(person: Attendee, duration: int, lo: int, hi: int) -> list[Span]:
    """Closed ranges of starts ``s`` such that [s, s + duration) fits one local date."""
    spans = [
        (a, b - duration)
        for _, intervals in free_intervals(person, lo, hi)
        for a, b in intervals
        if b - a >= duration
    ]
    return _union(spans)


def _union(spans: list[Span]) -> list[Span]:
    spans.sort()
    out: list[Span] = []
    for a, b in spans:
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _intersect(left: list[Span], right: list[Span]) -> list[Span]:
    out: list[Span] = []
    i = j = 0
    while i < len(left) and j < len(right):
        a = max(left[i][0], right[j][0])
        b = min(left[i][1], right[j][1])
        if a <= b:
            out.append((a, b))
        if left[i][1] < right[j][1]:
            i += 1
        else:
            j += 1
    return out


def solve(scenario: Scenario) -> Solution:
    lo, hi = window_bounds(scenario)
    duration = scenario.duration_minutes * 60
    ranges: list[Span] = [(lo, hi - 1)]
    for person in scenario.attendees:
        ranges = _intersect(ranges, start_ranges(person, duration, lo, hi))
        if not ranges:
            break
    gold = None
    for a, b in ranges:
        first = a + (-a % 60)
        if first <= b:
            gold = first
            break
    return Solution(starts=tuple(ranges), gold=gold)
