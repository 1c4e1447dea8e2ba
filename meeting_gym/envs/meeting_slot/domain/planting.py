"""Building blocks shared by the scenario generator's tiers.

A draft scenario is a list of mutable :data:`Spec` lists (one per attendee) plus
a duration and a UTC window of whole days; :func:`build` turns it into a
:class:`~meeting_gym.envs.meeting_slot.domain.scenario.Scenario`.

*Planting* a UTC slot (:func:`plant`) leaves only that slot free for everyone:
every other working date is fully booked and the target date is booked around
the slot, so the answer is not simply the start of a working day. Booking covers
local dates ``PAD_DAYS`` either side of the UTC window, since the solver looks
there too.

Everything is on a ``GRID``-minute grid; a window spans at most
``MAX_WINDOW_DAYS`` days and a scenario has at most ``MAX_ATTENDEES`` attendees.
"""

from __future__ import annotations

from datetime import date
from functools import lru_cache

from meeting_gym.envs.meeting_slot.domain import zones
from meeting_gym.envs.meeting_slot.domain.scenario import Attendee, Block, Scenario
from meeting_gym.envs.meeting_slot.domain.solver import Solution, solve
from meeting_gym.envs.meeting_slot.domain.timeutil import DAY, from_day_number

MAX_ATTENDEES = 4
MAX_WINDOW_DAYS = 5
GRID = 15
"""Minutes: every time in a generated scenario is a multiple of this."""

HOURS: tuple[Block, ...] = ((540, 1020), (480, 960), (600, 1080), (540, 1080))
WORKWEEK = (0, 1, 2, 3, 4)
DURATIONS = {
    "easy": (30, 60),
    "medium": (30, 45, 60),
    "hard": (15, 30, 60),
    "expert": (15, 30, 45, 60, 90),
}
NONE_RATE = {"easy": 0.08, "medium": 0.10, "hard": 0.14, "expert": 0.10}
TARGET_CAP = {"easy": 6, "medium": 6, "hard": 12, "expert": 6}
SOLVABLE_TRIES = 24
PAD_DAYS = 2
"""Local dates this far outside the UTC window are booked too (the solver looks there)."""

Spec = list  # [name, zone, work_start, work_end, weekdays, busy]
NAME, ZONE, WS, WE, WD, BUSY = range(6)
Draft = tuple[int, int, int, list[Spec], Solution | None]
"""(duration, first day, days, specs, the Solution of exactly these specs if one was computed)."""


def build(
    duration: int, first: int, days: int, specs: list[Spec], difficulty: str | None = None
) -> Scenario:
    attendees = tuple(
        Attendee(
            name=s[NAME],
            timezone=s[ZONE],
            work_start=s[WS],
            work_end=s[WE],
            weekdays=s[WD],
            busy=s[BUSY],
        )
        for s in specs
    )
    return Scenario(
        duration_minutes=duration,
        window_start=from_day_number(first),
        window_days=days,
        attendees=attendees,
        difficulty=difficulty,
    )


def weekday_of(number: int) -> int:
    return (number + 3) % 7  # 1970-01-01 was a Thursday


@lru_cache(maxsize=4096)
def dates(first: int, last: int) -> tuple[tuple[int, date, int], ...]:
    """(day number, date, weekday) for every day in [first, last]."""
    return tuple((n, from_day_number(n), weekday_of(n)) for n in range(first, last + 1))


def padded(first: int, days: int) -> tuple[int, int]:
    """Day numbers of the local dates to book: two days either side of the UTC window."""
    return first - PAD_DAYS, first + days - 1 + PAD_DAYS


def _booked(
    first: int, days: int, weekdays: tuple[int, ...], block: Block, skip: int | None = None
) -> dict[date, tuple[Block, ...]]:
    """Busy blocks covering the whole working interval on every working padded date."""
    lo, hi = padded(first, days)
    blocks = (block,)
    return {d: blocks for n, d, wd in dates(lo, hi) if wd in weekdays and n != skip}


@lru_cache(maxsize=8192)
def zone_parts(zone: str, lo_day: int, hi_day: int) -> tuple[zones.Piece, ...]:
    """Offset pieces of ``zone`` over whole UTC days [lo_day, hi_day]."""
    return tuple(zones.pieces(zone, lo_day * DAY, (hi_day + 1) * DAY))


def wall_cover(
    zone: str, start: int, end: int, first: int, days: int
) -> tuple[int, int, int] | None:
    """The local date and wall-clock range [lo, hi) (minutes) of the UTC slot [start, end).

    The range is the smallest one holding every wall-clock reading of the slot, so
    a slot across a gap or fold gets the whole stretch of clock time it spans.
    ``None`` if the slot does not stay on one local date (ending at 24:00 is fine).
    """
    lo_w = hi_w = None
    for p_start, p_end, offset in zone_parts(zone, first - 3, first + days + 3):
        a = max(p_start, start)
        b = min(p_end, end)
        if a < b:
            if lo_w is None or a + offset < lo_w:
                lo_w = a + offset
            if hi_w is None or b + offset > hi_w:
                hi_w = b + offset
    if lo_w is None or hi_w is None:
        return None
    number = lo_w // DAY
    lo = (lo_w - number * DAY) // 60
    hi = (hi_w - number * DAY) // 60
    if hi > 1440 or lo >= hi:
        return None
    return number, lo, hi


def plant_local(spec: Spec, number: int, lo: int, hi: int, first: int, days: int) -> bool:
    """Book ``spec`` fully except wall-clock [lo, hi) on local date ``number``."""
    ws, we, weekdays = spec[WS], spec[WE], spec[WD]
    pad_lo, pad_hi = padded(first, days)
    if not (pad_lo <= number <= pad_hi and weekday_of(number) in weekdays and ws <= lo < hi <= we):
        return False
    busy = _booked(first, days, weekdays, (ws, we), skip=number)
    blocks = tuple(b for b in ((ws, lo), (hi, we)) if b[0] < b[1])
    if blocks:
        busy[from_day_number(number)] = blocks
    spec[BUSY] = busy
    return True


def plant(specs: list[Spec], start: int, end: int, first: int, days: int) -> bool:
    """Leave only the UTC slot [start, end) free for everyone (see the module doc)."""
    planted: list[tuple[int, int, int]] = []
    for spec in specs:
        cover = wall_cover(spec[ZONE], start, end, first, days)
        if cover is None:
            return False
        number, lo, hi = cover
        if not (spec[WS] <= lo and hi <= spec[WE] and weekday_of(number) in spec[WD]):
            return False
        planted.append(cover)
    return all(
        plant_local(spec, n, lo, hi, first, days)
        for spec, (n, lo, hi) in zip(specs, planted, strict=True)
    )


def make_spec(name: str, zone: str, hours: Block, weekdays: tuple[int, ...] = WORKWEEK) -> Spec:
    return [name, zone, hours[0], hours[1], weekdays, {}]


def candidates(
    duration: int, first: int, days: int, specs: list[Spec], enough: int | None = None
) -> tuple[list[int], Solution | None]:
    """Valid starts of the scenario as it stands, on the 15-minute UTC grid of the window,
    and its Solution if the whole window was solved (None otherwise).

    With ``enough``, only the first ``enough`` are needed: the first window day is
    tried alone (cheaper), which gives the same leading starts when it has enough.
    """
    lo = first * DAY
    if enough is not None and days > 1:
        starts = solve(build(duration, first, 1, specs)).valid_minutes(lo, lo + DAY, GRID * 60)
        if len(starts) >= enough:
            return starts, None
    solution = solve_specs(duration, first, days, specs)
    return solution.valid_minutes(lo, lo + days * DAY, GRID * 60), solution


def solve_specs(duration: int, first: int, days: int, specs: list[Spec]) -> Solution:
    return solve(build(duration, first, days, specs))


def book_all(specs: list[Spec], first: int, days: int) -> list[Spec]:
    for spec in specs:
        spec[BUSY] = _booked(first, days, spec[WD], (spec[WS], spec[WE]))
    return specs
