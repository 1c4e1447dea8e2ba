"""A worked solution: the steps from the tools' answers to the earliest start, in UTC.

A model that is shown only the answer must compute it silently in one go; shown the steps,
it can write them down one at a time. :func:`worked_solution` writes, for a scenario (as the
tools reveal it), each attendee's working hours and busy blocks converted to UTC for the
local dates that matter (through the attendee's time zone, daylight-saving changes
included), their free time (working hours minus busy blocks), the starts that fit everyone,
and the earliest of them. Every figure comes from the solver's
own intervals (:mod:`~meeting_gym.envs.meeting_slot.domain.solver`), so the steps and the gold
answer cannot disagree; the tests re-derive the answer from the written steps alone and
compare it with a brute-force oracle.

The text holds no ``<answer>`` block: the answer follows it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from meeting_gym.envs.meeting_slot.domain import zones
from meeting_gym.envs.meeting_slot.domain.scenario import Attendee, Block, Scenario
from meeting_gym.envs.meeting_slot.domain.solver import (
    MARGIN_DAYS,
    Span,
    free_intervals,
    solve,
    window_bounds,
)
from meeting_gym.envs.meeting_slot.domain.timeutil import DAY, format_utc, from_day_number

MAX_SPANS = 12
"""Free intervals written per attendee at most: the earliest ones, where the answer lies."""


def _instant(seconds: int) -> str:
    """``YYYY-MM-DD HH:MM`` (UTC)."""
    text = format_utc(seconds)
    return f"{text[:10]} {text[11:16]}"


def _span(start: int, end: int) -> str:
    """``YYYY-MM-DD HH:MM-HH:MM``, the end's date written only when it differs.

    ``end`` is an instant; a free interval ending at midnight is written 24:00.
    """
    first = _instant(start)
    if end == (start // DAY + 1) * DAY:
        return f"{first}-24:00"
    last = _instant(end)
    return f"{first}-{last[11:]}" if last[:10] == first[:10] else f"{first}-{last}"


def _listed(spans: list[str]) -> str:
    if not spans:
        return "never"
    if len(spans) > MAX_SPANS:
        return ", ".join(spans[:MAX_SPANS]) + f", and {len(spans) - MAX_SPANS} later"
    return ", ".join(spans)


def _in_utc(
    person: Attendee, blocks_of: Callable[[int], Iterable[Block]], lo: int, hi: int
) -> list[Span]:
    """UTC pieces of local blocks on each worked local date near the window, in order."""
    first_day, last_day = lo // DAY - MARGIN_DAYS, (hi - 1) // DAY + MARGIN_DAYS
    parts = zones.pieces(person.timezone, (first_day - 2) * DAY, (last_day + 3) * DAY)
    out: list[Span] = []
    for number in range(first_day, last_day + 1):
        if (number + 3) % 7 not in person.weekdays:  # 1970-01-01 was a Thursday (3)
            continue
        midnight = number * DAY
        for start, end in blocks_of(number):
            out += zones.local_to_utc(parts, midnight + start * 60, midnight + end * 60)
    return sorted(out)


def _near(spans: list[Span], lo: int, hi: int) -> list[Span]:
    return [(a, b) for a, b in spans if b > lo and a < hi]


def worked_solution(scenario: Scenario) -> str:
    """The steps to the earliest valid start, one line each (see the module doc)."""
    lo, hi = window_bounds(scenario)
    duration = scenario.duration_minutes * 60
    end = hi + duration  # a meeting starting in the window may end after it
    lines = ["In UTC, for the local dates that matter:"]
    for person in scenario.attendees:
        hours = [(person.work_start, person.work_end)]
        work = _in_utc(person, lambda _, hours=hours: hours, lo, end)
        busy = _in_utc(person, lambda n, p=person: p.busy.get(from_day_number(n), ()), lo, end)
        free: list[Span] = sorted(
            (a, b) for _, intervals in free_intervals(person, lo, hi) for a, b in intervals
        )
        lines.append(
            f"- {person.name} ({person.timezone}): works "
            f"{_listed([_span(a, b) for a, b in _near(work, lo, end)])}; busy "
            f"{_listed([_span(a, b) for a, b in _near(busy, lo, end)]).replace('never', 'none')}; "
            f"free {_listed([_span(a, b) for a, b in _near(free, lo, end)])}"
        )
    solution = solve(scenario)
    starts = [_span(a, b) if a < b else _instant(a) for a, b in solution.starts]
    lines.append(f"A {scenario.duration_minutes}-minute meeting can start: {_listed(starts)}")
    if solution.gold is None:
        lines.append("No start fits everyone inside the window.")
    else:
        lines.append(f"The earliest start: {format_utc(solution.gold)}")
    return "\n".join(lines)
