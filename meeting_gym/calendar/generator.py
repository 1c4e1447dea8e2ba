"""Seeded, deterministic scenario generation.

``generate(rng, difficulty)`` draws one :class:`Scenario` from a ``random.Random``
and nothing else (never the global ``random`` module, never the machine's time
zone), so the same seed gives the same scenario in any process on any machine.

The ``easy`` / ``medium`` / ``hard`` distribution reproduces the predecessor's:

* a solvable case picks a cluster of colleagues, computes the valid starts of
  their working hours alone (15-minute UTC grid) and, except for 55% of easy
  cases, *plants* one of the first few of them: every other working date is
  fully booked and the target date is booked around the slot, so the answer is
  not simply the start of a working day;
* a NONE case is either a pair of zones whose working hours never overlap
  (sometimes also fully booked) or a fully booked cluster.

``expert`` adds what the predecessor lacked: zones with 30/45-minute offsets and
odd daylight-saving rules, windows that straddle real transitions (both
hemispheres), night shifts across the switch, weekend workers, and traps that
only an exact gap/fold treatment gets right (a free stretch that looks long
enough on the wall clock but loses an hour to spring-forward, or one that looks
too short but gains an hour from fall-back), and scattered calendars whose
blocks often sit inside a gap or fold.

Everything is on a 15-minute grid; a window spans at most ``MAX_WINDOW_DAYS``
days and a scenario has at most ``MAX_ATTENDEES`` attendees.
"""

from __future__ import annotations

import hashlib
import itertools
import random
from datetime import date
from functools import lru_cache

from meeting_gym.calendar import zones
from meeting_gym.calendar.scenario import Attendee, Block, Scenario
from meeting_gym.calendar.solver import Solution, solve
from meeting_gym.calendar.timeutil import DAY, day_number, from_day_number

DIFFICULTIES = ("easy", "medium", "hard", "expert")
MAX_ATTENDEES = 4
MAX_WINDOW_DAYS = 5
GRID = 15
"""Minutes: every time in a generated scenario is a multiple of this."""

MIX = (("easy", 0.40), ("medium", 0.35), ("hard", 0.25))
"""The default mix drawn when ``difficulty`` is None (expert is never drawn)."""

PEOPLE = {
    "Ava": "America/New_York",
    "Ben": "America/Los_Angeles",
    "Chen": "Asia/Shanghai",
    "Diya": "Asia/Kolkata",
    "Elena": "Europe/Berlin",
    "Farid": "Europe/London",
    "Gita": "Asia/Tokyo",
    "Hugo": "Australia/Sydney",
    "Ines": "America/Sao_Paulo",
    "Jules": "UTC",
}
CLUSTERS = {
    "us": ("Ava", "Ben", "Ines"),
    "eu": ("Elena", "Farid", "Jules"),
    "asia": ("Chen", "Gita", "Diya"),
    "atlantic": ("Ava", "Farid", "Elena", "Jules"),
}
EASY_CLUSTERS = ("us", "eu", "asia")
ALL_CLUSTERS = ("us", "eu", "asia", "atlantic")
NO_OVERLAP_PAIRS = (
    ("Ava", "Diya"),
    ("Ava", "Gita"),
    ("Hugo", "Ava"),
    ("Ben", "Gita"),
    ("Hugo", "Ben"),
)
HOURS: tuple[Block, ...] = ((540, 1020), (480, 960), (600, 1080), (540, 1080))
EASY_HOURS: Block = (540, 1020)
WORKWEEK = (0, 1, 2, 3, 4)
DURATIONS = {
    "easy": (30, 60),
    "medium": (30, 45, 60),
    "hard": (15, 30, 60),
    "expert": (15, 30, 45, 60, 90),
}
NONE_RATE = {"easy": 0.08, "medium": 0.10, "hard": 0.14, "expert": 0.10}
TARGET_CAP = {"easy": 6, "medium": 6, "hard": 12, "expert": 6}
FIRST_MONDAY = date(2024, 1, 8)
MONDAY_WEEKS = 90
DST_FRIDAYS = (date(2024, 3, 8), date(2024, 3, 29), date(2024, 10, 25), date(2024, 11, 1))
SOLVABLE_TRIES = 24
PAD_DAYS = 2
"""Local dates this far outside the UTC window are booked too (the solver looks there)."""

# ----------------------------------------------------------------------------- expert

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

_Spec = list  # [name, zone, work_start, work_end, weekdays, busy]
_NAME, _ZONE, _WS, _WE, _WD, _BUSY = range(6)
_Draft = tuple[int, int, int, list[_Spec], Solution | None]
"""(duration, first day, days, specs, the Solution of exactly these specs if one was computed)."""


# ----------------------------------------------------------------------------- public API


def generate(rng: random.Random, difficulty: str | None = None) -> Scenario:
    """One scenario drawn from ``rng``; ``None`` draws the default easy/medium/hard mix."""
    return _generate(rng, difficulty)[0]


def generate_solved(rng: random.Random, difficulty: str | None = None) -> tuple[Scenario, Solution]:
    """:func:`generate` and the scenario's :func:`~meeting_gym.calendar.solver.solve`.

    Draws exactly the scenario :func:`generate` would. Generation already solves its
    final draft in most cases (to check a planted slot, for instance); that Solution is
    handed back instead of solving the scenario again.
    """
    scenario, solution = _generate(rng, difficulty)
    return scenario, solve(scenario) if solution is None else solution


def _generate(rng: random.Random, difficulty: str | None) -> tuple[Scenario, Solution | None]:
    if difficulty is None:
        difficulty = _draw_mix(rng)
    elif difficulty not in DIFFICULTIES:
        raise ValueError(
            f"unknown difficulty {difficulty!r}; choose None (the default mix) "
            f"or one of {', '.join(DIFFICULTIES)}"
        )
    if difficulty == "expert":
        duration, first, days, specs, solution = _expert(rng)
    else:
        duration, first, days, specs, solution = _standard(rng, difficulty)
    return _finish(duration, first, days, specs, difficulty), solution


def generate_seeded(seed: int, difficulty: str | None = None) -> Scenario:
    """``generate(random.Random(seed), difficulty)``."""
    return generate(random.Random(seed), difficulty)


def scenario_id(scenario: Scenario) -> str:
    """``gen-`` + 8 uppercase hex digits of the SHA-256 of the scenario's content.

    The content is everything but the id, written as the ``ascii()`` of nested tuples
    of strings and integers (dates as ordinals, busy dates in order): the same text in
    every process and on every machine, whatever ``PYTHONHASHSEED``, and a few times
    cheaper than a sorted JSON dump (every reset computes it).
    """
    content = (
        scenario.difficulty,
        scenario.duration_minutes,
        scenario.window_start.toordinal(),
        scenario.window_days,
        tuple(
            (
                person.name,
                person.timezone,
                person.work_start,
                person.work_end,
                tuple(person.weekdays),
                tuple((day.toordinal(), blocks) for day, blocks in sorted(person.busy.items())),
            )
            for person in scenario.attendees
        ),
    )
    digest = hashlib.sha256(ascii(content).encode("ascii")).hexdigest()
    return f"gen-{digest[:8].upper()}"


# ----------------------------------------------------------------------------- helpers


def _draw_mix(rng: random.Random) -> str:
    u = rng.random()
    for name, share in MIX:
        if u < share:
            return name
        u -= share
    return MIX[-1][0]


def _finish(duration: int, first: int, days: int, specs: list[_Spec], difficulty: str) -> Scenario:
    scenario = _build(duration, first, days, specs, difficulty=difficulty)
    return Scenario(
        duration_minutes=scenario.duration_minutes,
        window_start=scenario.window_start,
        window_days=scenario.window_days,
        attendees=scenario.attendees,
        id=scenario_id(scenario),
        difficulty=difficulty,
    )


def _build(
    duration: int, first: int, days: int, specs: list[_Spec], difficulty: str | None = None
) -> Scenario:
    attendees = tuple(
        Attendee(
            name=s[_NAME],
            timezone=s[_ZONE],
            work_start=s[_WS],
            work_end=s[_WE],
            weekdays=s[_WD],
            busy=s[_BUSY],
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


def _weekday(number: int) -> int:
    return (number + 3) % 7  # 1970-01-01 was a Thursday


@lru_cache(maxsize=4096)
def _dates(first: int, last: int) -> tuple[tuple[int, date, int], ...]:
    """(day number, date, weekday) for every day in [first, last]."""
    return tuple((n, from_day_number(n), _weekday(n)) for n in range(first, last + 1))


def _padded(first: int, days: int) -> tuple[int, int]:
    """Day numbers of the local dates to book: two days either side of the UTC window."""
    return first - PAD_DAYS, first + days - 1 + PAD_DAYS


def _booked(
    first: int, days: int, weekdays: tuple[int, ...], block: Block, skip: int | None = None
) -> dict[date, tuple[Block, ...]]:
    """Busy blocks covering the whole working interval on every working padded date."""
    lo, hi = _padded(first, days)
    blocks = (block,)
    return {d: blocks for n, d, wd in _dates(lo, hi) if wd in weekdays and n != skip}


@lru_cache(maxsize=8192)
def _parts(zone: str, lo_day: int, hi_day: int) -> tuple[zones.Piece, ...]:
    """Offset pieces of ``zone`` over whole UTC days [lo_day, hi_day]."""
    return tuple(zones.pieces(zone, lo_day * DAY, (hi_day + 1) * DAY))


def _cover(zone: str, start: int, end: int, first: int, days: int) -> tuple[int, int, int] | None:
    """The local date and wall-clock range [lo, hi) (minutes) of the UTC slot [start, end).

    The range is the smallest one holding every wall-clock reading of the slot, so
    a slot across a gap or fold gets the whole stretch of clock time it spans.
    ``None`` if the slot does not stay on one local date (ending at 24:00 is fine).
    """
    lo_w = hi_w = None
    for p_start, p_end, offset in _parts(zone, first - 3, first + days + 3):
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


def _plant_local(spec: _Spec, number: int, lo: int, hi: int, first: int, days: int) -> bool:
    """Book ``spec`` fully except wall-clock [lo, hi) on local date ``number``."""
    ws, we, weekdays = spec[_WS], spec[_WE], spec[_WD]
    pad_lo, pad_hi = _padded(first, days)
    if not (pad_lo <= number <= pad_hi and _weekday(number) in weekdays and ws <= lo < hi <= we):
        return False
    busy = _booked(first, days, weekdays, (ws, we), skip=number)
    blocks = tuple(b for b in ((ws, lo), (hi, we)) if b[0] < b[1])
    if blocks:
        busy[from_day_number(number)] = blocks
    spec[_BUSY] = busy
    return True


def _plant(specs: list[_Spec], start: int, end: int, first: int, days: int) -> bool:
    """Leave only the UTC slot [start, end) free for everyone (see the module doc)."""
    planted: list[tuple[int, int, int]] = []
    for spec in specs:
        cover = _cover(spec[_ZONE], start, end, first, days)
        if cover is None:
            return False
        number, lo, hi = cover
        if not (spec[_WS] <= lo and hi <= spec[_WE] and _weekday(number) in spec[_WD]):
            return False
        planted.append(cover)
    return all(
        _plant_local(spec, n, lo, hi, first, days)
        for spec, (n, lo, hi) in zip(specs, planted, strict=True)
    )


def _spec(name: str, zone: str, hours: Block, weekdays: tuple[int, ...] = WORKWEEK) -> _Spec:
    return [name, zone, hours[0], hours[1], weekdays, {}]


def _candidates(
    duration: int, first: int, days: int, specs: list[_Spec], enough: int | None = None
) -> tuple[list[int], Solution | None]:
    """Valid starts of the scenario as it stands, on the 15-minute UTC grid of the window,
    and its Solution if the whole window was solved (None otherwise).

    With ``enough``, only the first ``enough`` are needed: the first window day is
    tried alone (cheaper), which gives the same leading starts when it has enough.
    """
    lo = first * DAY
    if enough is not None and days > 1:
        starts = solve(_build(duration, first, 1, specs)).valid_minutes(lo, lo + DAY, GRID * 60)
        if len(starts) >= enough:
            return starts, None
    solution = _solve(duration, first, days, specs)
    return solution.valid_minutes(lo, lo + days * DAY, GRID * 60), solution


def _solve(duration: int, first: int, days: int, specs: list[_Spec]) -> Solution:
    return solve(_build(duration, first, days, specs))


# ----------------------------------------------------------------------------- easy..hard


def _standard(rng: random.Random, difficulty: str) -> _Draft:
    duration = rng.choice(DURATIONS[difficulty])
    first, days = _standard_window(rng, difficulty)
    if rng.random() < NONE_RATE[difficulty]:
        specs, solution = _standard_none(rng, difficulty, duration, first, days)
    else:
        specs, solution = _standard_solvable(rng, difficulty, duration, first, days)
    return duration, first, days, specs, solution


def _standard_window(rng: random.Random, difficulty: str) -> tuple[int, int]:
    if difficulty == "hard" and rng.random() < 0.45:
        return day_number(rng.choice(DST_FRIDAYS)), rng.randint(3, 5)
    first = day_number(FIRST_MONDAY) + 7 * rng.randint(0, MONDAY_WEEKS)
    if difficulty == "easy":
        return first, 1
    if difficulty == "medium":
        return first, rng.randint(1, 3)
    return first, rng.randint(2, 4)


def _hours(rng: random.Random, difficulty: str) -> Block:
    return EASY_HOURS if difficulty == "easy" else rng.choice(HOURS)


def _group_size(rng: random.Random, difficulty: str) -> int:
    if difficulty == "easy":
        return 2
    if difficulty == "medium":
        return rng.randint(2, 3)
    return rng.randint(3, 4)


def _clusters(difficulty: str) -> tuple[str, ...]:
    return EASY_CLUSTERS if difficulty == "easy" else ALL_CLUSTERS


def _book_all(specs: list[_Spec], first: int, days: int) -> list[_Spec]:
    for spec in specs:
        spec[_BUSY] = _booked(first, days, spec[_WD], (spec[_WS], spec[_WE]))
    return specs


def _standard_none(
    rng: random.Random, difficulty: str, duration: int, first: int, days: int
) -> tuple[list[_Spec], Solution | None]:
    if rng.random() < 0.55:
        pair = rng.choice(NO_OVERLAP_PAIRS)
        specs = [_spec(name, PEOPLE[name], _hours(rng, difficulty)) for name in pair]
        if rng.random() < 0.40:
            return _book_all(specs, first, days), None
        solution = _solve(duration, first, days, specs)
        if solution.gold is not None:
            # Some hour choices do overlap by a little; booking makes the case NONE anyway.
            return _book_all(specs, first, days), None
        return specs, solution
    members = CLUSTERS[rng.choice(_clusters(difficulty))]
    names = rng.sample(members, min(_group_size(rng, difficulty), len(members)))
    specs = [_spec(name, PEOPLE[name], _hours(rng, difficulty)) for name in names]
    return _book_all(specs, first, days), None


def _standard_solvable(
    rng: random.Random, difficulty: str, duration: int, first: int, days: int
) -> tuple[list[_Spec], Solution | None]:
    cap = TARGET_CAP[difficulty]
    for _ in range(SOLVABLE_TRIES):
        members = CLUSTERS[rng.choice(_clusters(difficulty))]
        names = rng.sample(members, min(_group_size(rng, difficulty), len(members)))
        specs = [_spec(name, PEOPLE[name], _hours(rng, difficulty)) for name in names]
        starts, solution = _candidates(duration, first, days, specs, enough=cap + 1)
        if not starts:
            continue
        if difficulty == "easy" and rng.random() < 0.55:
            return specs, solution
        target = starts[rng.randint(0, min(cap, len(starts) - 1))]
        if not _plant(specs, target, target + duration * 60, first, days):
            continue
        solution = _solve(duration, first, days, specs)
        if solution.gold is not None:
            return specs, solution
    return _fallback(), None


def _fallback() -> list[_Spec]:
    return [
        _spec("Ava", "America/New_York", EASY_HOURS),
        _spec("Ben", "America/New_York", EASY_HOURS),
    ]


# ----------------------------------------------------------------------------- expert


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


def _expert(rng: random.Random) -> _Draft:
    for _ in range(SOLVABLE_TRIES):
        drawn = _expert_draw(rng)
        if drawn is not None:
            return drawn
    everyday = (0, 1, 2, 3, 4, 5, 6)
    specs = [
        _spec("Kiran", "Asia/Kathmandu", (0, 1440), everyday),
        _spec("Niall", "America/St_Johns", (0, 1440), everyday),
    ]
    return 30, day_number(date(2024, 3, 9)), 2, specs, None


def _expert_draw(rng: random.Random) -> _Draft | None:
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
            _spec(name, zone, _random_hours(rng), rng.choice(WEEKDAY_SETS)) for name, zone in people
        ]
    starts, solution = _candidates(duration, first, days, specs)
    if not starts:
        return None
    if outcome < NONE_RATE["expert"]:
        return _expert_none(rng, duration, first, days, specs, anchor, switch)
    if outcome < NONE_RATE["expert"] + EXPERT_EMPTY_SHARE:
        return duration, first, days, specs, solution
    return _expert_planted(rng, (duration, first, days, specs, solution), starts, anchor, switch)


def _switch_specs(
    rng: random.Random, people: list[tuple[str, str]], anchor: int, switch: tuple[int, int, int]
) -> list[_Spec]:
    """Hours that put the anchor's gap/fold inside its working day, and others around it."""
    instant, old, new = switch
    number, lo = _wall(instant, min(old, new))
    hi = lo + abs(new - old) // 60
    specs: list[_Spec] = []
    for i, (name, zone) in enumerate(people):
        weekdays = rng.choice(WEEKDAY_SETS)
        if i == anchor:
            if rng.random() < 0.88:
                hours = _cover_hours(rng, lo, min(hi, 1440))
                weekdays = _with_day(weekdays, _weekday(number))
            else:
                hours = _random_hours(rng)
        elif rng.random() < 0.65:
            parts = _parts(zone, instant // DAY - 1, instant // DAY + 1)
            here_day, here = _wall(instant, zones.offset_in(list(parts), instant))
            hours = _cover_hours(rng, max(0, here - 60), min(1440, here + 60))
            weekdays = _with_day(weekdays, _weekday(here_day))
        else:
            hours = _random_hours(rng)
        specs.append(_spec(name, zone, hours, weekdays))
    return specs


def _expert_planted(
    rng: random.Random,
    draft: _Draft,
    starts: list[int],
    anchor: int | None,
    switch: tuple[int, int, int] | None,
) -> _Draft:
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
        trial = [[*spec[:_BUSY], {}] for spec in specs]
        if scatter:
            planted = _scatter(rng, duration, first, days, trial, target, switch)
        else:
            planted = _plant(trial, target, target + duration * 60, first, days)
        if planted:
            solution = _solve(duration, first, days, trial)
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
    specs: list[_Spec],
    target: int,
    switch: tuple[int, int, int] | None,
) -> bool:
    """Scattered meetings, like a real calendar, around the target's local date.

    Other working dates are mostly booked solid; the target's date gets a few
    random blocks, and where the date has a gap or fold, often a block inside it
    (free time on both sides of a block in a fold comes back twice).
    """
    pad_lo, pad_hi = _padded(first, days)
    for spec in specs:
        cover = _cover(spec[_ZONE], target, target + duration * 60, first, days)
        if cover is None:
            return False
        focus = cover[0]
        ws, we, weekdays = spec[_WS], spec[_WE], spec[_WD]
        odd = _odd_minutes(spec[_ZONE], focus, first, days) if switch is not None else None
        busy: dict[date, tuple[Block, ...]] = {}
        for number, day, weekday in _dates(pad_lo, pad_hi):
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
        spec[_BUSY] = busy
    return True


def _odd_minutes(zone: str, number: int, first: int, days: int) -> Block | None:
    """The wall-clock gap or fold on local date ``number`` of ``zone``, if it has one."""
    parts = _parts(zone, first - 3, first + days + 3)
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
    specs: list[_Spec],
    anchor: int,
    switch: tuple[int, int, int],
) -> _Draft | None:
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
    trial = [[*spec[:_BUSY], {}] for spec in specs]
    if not _plant(trial, start, end, first, days):
        return None
    solution = _solve(duration, first, days, trial)
    if solution.gold != start:
        return None
    return duration, first, days, trial, solution


def _expert_none(
    rng: random.Random,
    duration: int,
    first: int,
    days: int,
    specs: list[_Spec],
    anchor: int | None,
    switch: tuple[int, int, int] | None,
) -> _Draft:
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
        _book_all([specs[victim]], first, days)
        solution = _solve(duration, first, days, specs)
        if solution.gold is None:
            return duration, first, days, specs, solution
    return duration, first, days, _book_all(specs, first, days), None


def _gap_trap(
    rng: random.Random,
    first: int,
    days: int,
    specs: list[_Spec],
    anchor: int,
    switch: tuple[int, int, int],
) -> _Draft | None:
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
    trial = [[*spec[:_BUSY], {}] for spec in specs]
    anchor_ok = _plant_local(trial[anchor], number, g0 - x, g0 + gap + real - x, first, days)
    others = [s for i, s in enumerate(trial) if i != anchor]
    start, end = instant - x * 60, instant + (real - x) * 60
    if not (anchor_ok and _plant(others, start, end, first, days)):
        return None
    solution = _solve(duration, first, days, trial)
    if solution.gold is not None:
        return None
    return duration, first, days, trial, solution
