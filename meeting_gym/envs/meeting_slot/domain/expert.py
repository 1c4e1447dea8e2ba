"""The ``expert`` tier: what meeting-slot, the verifiers environment MeetingSlot succeeds, lacked.

Zones with 30/45-minute offsets and odd daylight-saving rules, windows that
straddle real transitions (both hemispheres), night shifts across the switch,
weekend workers, and traps that only an exact gap/fold treatment gets right (a
free stretch that looks long enough on the wall clock but loses an hour to
spring-forward, or one that looks too short but gains an hour from fall-back),
and scattered calendars whose blocks often sit inside a gap or fold.
"""

from __future__ import annotations

import itertools
import random
from datetime import date
from functools import lru_cache

from meeting_gym.envs.meeting_slot.domain import zones
from meeting_gym.envs.meeting_slot.domain.planting import (
    BUSY,
    DURATIONS,
    GRID,
    HOURS,
    MAX_ATTENDEES,
    MAX_WINDOW_DAYS,
    NONE_RATE,
    SOLVABLE_TRIES,
    TARGET_CAP,
    WD,
    WE,
    WORKWEEK,
    WS,
    ZONE,
    Draft,
    Spec,
    book_all,
    candidates,
    dates,
    make_spec,
    padded,
    plant,
    plant_local,
    solve_specs,
    wall_cover,
    weekday_of,
    zone_parts,
)
from meeting_gym.envs.meeting_slot.domain.scenario import Block
from meeting_gym.envs.meeting_slot.domain.timeutil import DAY, day_number

EXPERT_ODD = (
    ("Kiran", "Asia/Kathmandu"),  # +5:45, no DST
    ("Lorna", "Australia/Lord_Howe"),  # +10:30 / +11, a 30-minute DST shift
    ("Mere", "Pacific/Chatham"),  # +12:45 / +13:45, switches at 02:45 local
    ("Niall", "America/St_Johns"),  # -3:30 / -2:30
    ("Oskar", "Australia/Adelaide"),  # +9:30 / +10:30, southern hemisphere
    ("Paz", "America/Santiago"),  # switches at local midnight, southern hemisphere
    ("Roya", "Asia/Tehran"),  # +3:30, no DST since 2022
)
EXPERT_STANDARD = (
    ("Sam", "America/New_York"),
    ("Tove", "Europe/Berlin"),
    ("Uma", "Australia/Sydney"),
    ("Wes", "America/Los_Angeles"),
    ("Yara", "Europe/London"),
    ("Zhi", "Asia/Shanghai"),
    ("Vik", "Asia/Kolkata"),
)
EXPERT_DAY_HOURS: tuple[Block, ...] = (
    *HOURS,
    (420, 900),  # 07:00-15:00
    (660, 1140),  # 11:00-19:00
    (510, 1020),  # 08:30-17:00
    (555, 1035),  # 09:15-17:15
    (780, 1260),  # 13:00-21:00
)
EXPERT_NIGHT_HOURS: tuple[Block, ...] = (
    (0, 360),  # 00:00-06:00
    (0, 240),  # 00:00-04:00
    (60, 300),  # 01:00-05:00
    (1320, 1440),  # 22:00-24:00
    (1200, 1440),  # 20:00-24:00
    (1080, 1440),  # 18:00-24:00
    (120, 480),  # 02:00-08:00
    (0, 1440),  # round the clock
)
WEEKDAY_SETS: tuple[tuple[int, ...], ...] = (
    WORKWEEK,
    WORKWEEK,
    (0, 1, 2, 3, 4, 5),  # Monday to Saturday
    (0, 1, 2, 5, 6),  # Saturday to Wednesday
    (0, 1, 2, 3, 6),  # Sunday to Thursday
    (0, 1, 2, 3, 4, 5, 6),  # every day
    (3, 4, 5, 6),  # Thursday to Sunday
    (4, 5, 6),  # weekend shift
)
COVER_LENGTHS = (240, 360, 480, 600)
EXPERT_FIRST_DAY = day_number(date(2024, 1, 1))
EXPERT_LAST_DAY = day_number(date(2025, 12, 31)) - MAX_WINDOW_DAYS
EXPERT_TRANSITION_SHARE = 0.85
EXPERT_EMPTY_SHARE = 0.25
EXPERT_NONE_GAP_TRAP = 0.5
EXPERT_FOLD_STRETCH = 0.35
EXPERT_SCATTER = 0.4


@lru_cache(maxsize=64)
def _transitions(zone: str) -> tuple[tuple[int, int, int], ...]:
    """(instant, old offset, new offset) of every offset change in 2024-2025."""
    parts = zones.pieces(zone, EXPERT_FIRST_DAY * DAY, (EXPERT_LAST_DAY + MAX_WINDOW_DAYS) * DAY)
    return tuple((b[0], a[2], b[2]) for a, b in itertools.pairwise(parts) if a[2] != b[2])


def _wall(instant: int, offset: int) -> tuple[int, int]:
    """(local day number, minute of day) of the wall clock ``instant + offset``."""
    number, rest = divmod(instant + offset, DAY)
    return number, rest // 60


def _snap_up(minutes: int) -> int:
    return -(-minutes // GRID) * GRID


def _snap_down(minutes: int) -> int:
    return minutes // GRID * GRID


def _cover_hours(rng: random.Random, lo: int, hi: int) -> Block:
    """Working hours (on the grid, within one day) that contain wall-clock [lo, hi)."""
    if rng.random() < 0.12:
        return 0, 1440
    length = rng.choice(COVER_LENGTHS)
    earliest = _snap_up(max(0, hi - length))
    latest = _snap_down(min(lo, 1440 - length))
    if earliest > latest:
        return 0, 1440
    start = earliest + GRID * rng.randint(0, (latest - earliest) // GRID)
    return start, start + length


def _random_hours(rng: random.Random) -> Block:
    return rng.choice(EXPERT_NIGHT_HOURS if rng.random() < 0.3 else EXPERT_DAY_HOURS)


def _with_day(weekdays: tuple[int, ...], weekday: int) -> tuple[int, ...]:
    return weekdays if weekday in weekdays else tuple(sorted((*weekdays, weekday)))


def _expert_people(rng: random.Random) -> list[tuple[str, str]]:
    n = rng.randint(2, MAX_ATTENDEES)
    odd = rng.randint(1, n)
    people = rng.sample(EXPERT_ODD, odd) + rng.sample(EXPERT_STANDARD, n - odd)
    rng.shuffle(people)
    return people


def draft(rng: random.Random) -> Draft:
    for _ in range(SOLVABLE_TRIES):
        drawn = _expert_draw(rng)
        if drawn is not None:
            return drawn
    everyday = (0, 1, 2, 3, 4, 5, 6)
    specs = [
        make_spec("Kiran", "Asia/Kathmandu", (0, 1440), everyday),
        make_spec("Niall", "America/St_Johns", (0, 1440), everyday),
    ]
    return 30, day_number(date(2024, 3, 9)), 2, specs, None


def _expert_draw(rng: random.Random) -> Draft | None:
    people = _expert_people(rng)
    duration = rng.choice(DURATIONS["expert"])
    outcome = rng.random()
    anchor: int | None = None
    switch: tuple[int, int, int] | None = None
    if rng.random() < EXPERT_TRANSITION_SHARE:
        movers = [i for i, (_, zone) in enumerate(people) if _transitions(zone)]
        if not movers:
            name, zone = rng.choice([p for p in EXPERT_ODD if _transitions(p[1])])
            if any(name == p[0] for p in people):
                return None
            people[0] = (name, zone)
            movers = [0]
        anchor = rng.choice(movers)
        switch = rng.choice(_transitions(people[anchor][1]))
        back = rng.randint(1, 2)
        first = switch[0] // DAY - back
        days = rng.randint(back + 1, MAX_WINDOW_DAYS)
        specs = _switch_specs(rng, people, anchor, switch)
    else:
        first = rng.randint(EXPERT_FIRST_DAY, EXPERT_LAST_DAY)
        days = rng.randint(1, MAX_WINDOW_DAYS)
        specs = [
            make_spec(name, zone, _random_hours(rng), rng.choice(WEEKDAY_SETS))
            for name, zone in people
        ]
    starts, solution = candidates(duration, first, days, specs)
    if not starts:
        return None
    if outcome < NONE_RATE["expert"]:
        return _expert_none(rng, duration, first, days, specs, anchor, switch)
    if outcome < NONE_RATE["expert"] + EXPERT_EMPTY_SHARE:
        return duration, first, days, specs, solution
    return _expert_planted(rng, (duration, first, days, specs, solution), starts, anchor, switch)


def _switch_specs(
    rng: random.Random, people: list[tuple[str, str]], anchor: int, switch: tuple[int, int, int]
) -> list[Spec]:
    """Hours that put the anchor's gap/fold inside its working day, and others around it."""
    instant, old, new = switch
    number, lo = _wall(instant, min(old, new))
    hi = lo + abs(new - old) // 60
    specs: list[Spec] = []
    for i, (name, zone) in enumerate(people):
        weekdays = rng.choice(WEEKDAY_SETS)
        if i == anchor:
            if rng.random() < 0.88:
                hours = _cover_hours(rng, lo, min(hi, 1440))
                weekdays = _with_day(weekdays, weekday_of(number))
            else:
                hours = _random_hours(rng)
        elif rng.random() < 0.65:
            parts = zone_parts(zone, instant // DAY - 1, instant // DAY + 1)
            here_day, here = _wall(instant, zones.offset_in(list(parts), instant))
            hours = _cover_hours(rng, max(0, here - 60), min(1440, here + 60))
            weekdays = _with_day(weekdays, weekday_of(here_day))
        else:
            hours = _random_hours(rng)
        specs.append(make_spec(name, zone, hours, weekdays))
    return specs


def _expert_planted(
    rng: random.Random,
    draft: Draft,
    starts: list[int],
    anchor: int | None,
    switch: tuple[int, int, int] | None,
) -> Draft:
    """A planted variant of ``draft`` (its unplanted self if three tries fail)."""
    duration, first, days, specs, _ = draft
    if switch is not None and anchor is not None:
        if switch[2] < switch[1] and rng.random() < EXPERT_FOLD_STRETCH:
            stretched = _fold_stretch(rng, first, days, specs, anchor, switch)
            if stretched is not None:
                return stretched
        if rng.random() < 0.6:
            middle = switch[0] - duration * 30
            starts = sorted(starts, key=lambda s: (abs(s - middle), s))[:3]
    cap = TARGET_CAP["expert"]
    scatter = rng.random() < EXPERT_SCATTER
    for _ in range(3):
        target = starts[rng.randint(0, min(cap, len(starts) - 1))]
        trial = [[*spec[:BUSY], {}] for spec in specs]
        if scatter:
            planted = _scatter(rng, duration, first, days, trial, target, switch)
        else:
            planted = plant(trial, target, target + duration * 60, first, days)
        if planted:
            solution = solve_specs(duration, first, days, trial)
            if solution.gold is not None:
                return duration, first, days, trial, solution
    return draft


def _random_blocks(rng: random.Random, ws: int, we: int, count: int) -> list[Block]:
    blocks = []
    for _ in range(count):
        start = ws + GRID * rng.randrange((we - ws) // GRID)
        blocks.append((start, min(we, start + GRID * rng.randint(1, 8))))
    return blocks


def _merge(blocks: list[Block]) -> tuple[Block, ...]:
    out: list[Block] = []
    for start, end in sorted(blocks):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return tuple(out)


def _scatter(
    rng: random.Random,
    duration: int,
    first: int,
    days: int,
    specs: list[Spec],
    target: int,
    switch: tuple[int, int, int] | None,
) -> bool:
    """Scattered meetings, like a real calendar, around the target's local date.

    Other working dates are mostly booked solid; the target's date gets a few
    random blocks, and where the date has a gap or fold, often a block inside it
    (free time on both sides of a block in a fold comes back twice).
    """
    pad_lo, pad_hi = padded(first, days)
    for spec in specs:
        cover = wall_cover(spec[ZONE], target, target + duration * 60, first, days)
        if cover is None:
            return False
        focus = cover[0]
        ws, we, weekdays = spec[WS], spec[WE], spec[WD]
        odd = _odd_minutes(spec[ZONE], focus, first, days) if switch is not None else None
        busy: dict[date, tuple[Block, ...]] = {}
        for number, day, weekday in dates(pad_lo, pad_hi):
            if weekday not in weekdays:
                continue
            if number != focus and rng.random() < 0.7:
                busy[day] = ((ws, we),)
                continue
            blocks = _random_blocks(rng, ws, we, rng.randint(0, 2))
            if number == focus and odd is not None and rng.random() < 0.75:
                lo, hi = max(odd[0], ws), min(odd[1], we)
                if lo < hi:
                    start = lo + GRID * rng.randrange((hi - lo) // GRID)
                    blocks.append((start, start + GRID * rng.randint(1, (hi - start) // GRID)))
            if blocks:
                busy[day] = _merge(blocks)
        spec[BUSY] = busy
    return True


def _odd_minutes(zone: str, number: int, first: int, days: int) -> Block | None:
    """The wall-clock gap or fold on local date ``number`` of ``zone``, if it has one."""
    parts = zone_parts(zone, first - 3, first + days + 3)
    for left, right in itertools.pairwise(parts):
        old, new = left[2], right[2]
        wall_day, lo = _wall(right[0], min(old, new))
        if wall_day == number and old != new:
            return lo, min(1440, lo + abs(new - old) // 60)
    return None


def _fold_stretch(
    rng: random.Random,
    first: int,
    days: int,
    specs: list[Spec],
    anchor: int,
    switch: tuple[int, int, int],
) -> Draft | None:
    """The anchor's free wall-clock stretch is shorter than the meeting; the fold makes it fit.

    With a fold of F minutes, wall clock [f0 - x, f1 + y) lasts x + 2F + y real
    minutes; the meeting takes more than the x + F + y the clock shows.
    """
    instant, old, new = switch
    fold = (old - new) // 60
    options = [
        (d, r)
        for d in DURATIONS["expert"]
        for r in range(0, 2 * fold + 1, GRID)
        if r + fold < d <= r + 2 * fold
    ]
    if not options:
        return None
    duration, spare = rng.choice(options)
    x = GRID * rng.randint(0, spare // GRID)
    start = instant - fold * 60 - x * 60
    end = instant + fold * 60 + (spare - x) * 60
    trial = [[*spec[:BUSY], {}] for spec in specs]
    if not plant(trial, start, end, first, days):
        return None
    solution = solve_specs(duration, first, days, trial)
    if solution.gold != start:
        return None
    return duration, first, days, trial, solution


def _expert_none(
    rng: random.Random,
    duration: int,
    first: int,
    days: int,
    specs: list[Spec],
    anchor: int | None,
    switch: tuple[int, int, int] | None,
) -> Draft:
    if (
        switch is not None
        and anchor is not None
        and switch[2] > switch[1]
        and rng.random() < EXPERT_NONE_GAP_TRAP
    ):
        trapped = _gap_trap(rng, first, days, specs, anchor, switch)
        if trapped is not None:
            return trapped
    if rng.random() < 0.5:
        victim = rng.randrange(len(specs))
        book_all([specs[victim]], first, days)
        solution = solve_specs(duration, first, days, specs)
        if solution.gold is None:
            return duration, first, days, specs, solution
    return duration, first, days, book_all(specs, first, days), None


def _gap_trap(
    rng: random.Random,
    first: int,
    days: int,
    specs: list[Spec],
    anchor: int,
    switch: tuple[int, int, int],
) -> Draft | None:
    """A free wall-clock stretch around the gap that looks long enough but is not.

    Wall clock [g0 - x, g1 + y) around a gap of G minutes lasts only x + y real
    minutes; the meeting needs more than that but no more than x + G + y.
    """
    instant, old, new = switch
    gap = (new - old) // 60
    options = [
        (d, r) for d in DURATIONS["expert"] for r in range(GRID, d, GRID) if r < d <= r + gap
    ]
    if not options:
        return None
    duration, real = rng.choice(options)
    x = GRID * rng.randint(0, real // GRID)
    number, g0 = _wall(instant, old)
    trial = [[*spec[:BUSY], {}] for spec in specs]
    anchor_ok = plant_local(trial[anchor], number, g0 - x, g0 + gap + real - x, first, days)
    others = [s for i, s in enumerate(trial) if i != anchor]
    start, end = instant - x * 60, instant + (real - x) * 60
    if not (anchor_ok and plant(others, start, end, first, days)):
        return None
    solution = solve_specs(duration, first, days, trial)
    if solution.gold is not None:
        return None
    return duration, first, days, trial, solution
