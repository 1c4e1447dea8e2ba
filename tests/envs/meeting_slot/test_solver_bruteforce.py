"""The interval solver against an independent minute-by-minute brute force.

Generated scenarios of every difficulty (the solver's gold and its whole set of
valid starts must equal the brute force's), then hand-written cases in awkward
zones: 45-minute offsets, 30-minute DST, switches at local midnight, the southern
hemisphere, night shifts across a switch, 23- and 25-hour days, weekend workers.
"""

from __future__ import annotations

import json
import random
from typing import Any

import numpy as np
import pytest
from bruteforce import brute, utc_text
from scenarios import utc

from meeting_gym.envs.meeting_slot.domain.curated import CURATED
from meeting_gym.envs.meeting_slot.domain.generator import DIFFICULTIES, generate
from meeting_gym.envs.meeting_slot.domain.scenario import Scenario
from meeting_gym.envs.meeting_slot.domain.solver import solve, window_bounds

CI_PER_DIFFICULTY = 2000
CI_PER_MINUTE = 200
SLOW_PER_DIFFICULTY = 5000


def _compare(scenario: Scenario, *, every_minute: bool, exact: bool = False) -> str | None:
    """None if the solver agrees with the brute force, else a description."""
    solution = solve(scenario)
    gold, valid = brute(scenario, exact=exact)
    lo, hi = window_bounds(scenario)
    listed = np.array(solution.valid_minutes(lo, hi, 60), dtype=np.int64)
    problems = []
    if solution.gold != gold:
        problems.append(f"gold solver={utc_text(solution.gold)} brute={utc_text(gold)}")
    if not np.array_equal(listed, valid):
        extra = np.setdiff1d(listed, valid)[:3]
        missing = np.setdiff1d(valid, listed)[:3]
        problems.append(
            f"valid starts differ: solver-only {[utc_text(int(x)) for x in extra]}, "
            f"brute-only {[utc_text(int(x)) for x in missing]}"
        )
    if solution.gold is not None:
        if not solution.is_valid(solution.gold):
            problems.append("is_valid(gold) is False")
        if solution.is_valid(solution.gold + 30):
            problems.append("a start off the whole minute is valid")
    if every_minute:
        wanted = np.zeros((hi - lo) // 60, dtype=bool)
        wanted[(valid - lo) // 60] = True
        is_valid = solution.is_valid
        got = np.fromiter((is_valid(t) for t in range(lo, hi, 60)), dtype=bool, count=wanted.size)
        if not np.array_equal(got, wanted):
            bad = lo + 60 * int(np.flatnonzero(got != wanted)[0])
            problems.append(f"is_valid({utc_text(bad)}) is {bool(solution.is_valid(bad))}")
        if solution.gold is not None and got[: (solution.gold - lo) // 60].any():
            problems.append("a minute before the gold is valid")
    if not problems:
        return None
    return "; ".join(problems) + "\n  " + json.dumps(scenario.to_dict(), sort_keys=True)


def _sweep(difficulty: str, count: int, per_minute: int, seed: str) -> None:
    rng = random.Random(seed)
    failures = []
    for index in range(count):
        scenario = generate(rng, difficulty)
        problem = _compare(scenario, every_minute=index < per_minute)
        if problem is not None:
            failures.append((len(problem), f"#{index}: {problem}"))
    failures.sort()
    report = "\n".join(text for _, text in failures[:3])
    assert not failures, f"{len(failures)} of {count} {difficulty} scenarios disagree:\n{report}"


@pytest.mark.parametrize("difficulty", DIFFICULTIES)
def test_generated_scenarios_match_brute_force(difficulty):
    _sweep(difficulty, CI_PER_DIFFICULTY, CI_PER_MINUTE, f"bruteforce:{difficulty}")


@pytest.mark.slow
@pytest.mark.parametrize("difficulty", DIFFICULTIES)
def test_many_generated_scenarios_match_brute_force(difficulty):
    _sweep(difficulty, SLOW_PER_DIFFICULTY, 500, f"bruteforce-slow:{difficulty}")


@pytest.mark.parametrize("scenario", CURATED, ids=lambda s: s.id)
def test_curated_scenarios_match_brute_force(scenario):
    assert _compare(scenario, every_minute=True, exact=True) is None


# ----------------------------------------------------------------------------- hand-written


def person(
    name: str,
    zone: str,
    start: str,
    end: str,
    weekdays: tuple[int, ...] = (0, 1, 2, 3, 4, 5, 6),
    busy: dict[str, list[tuple[str, str]]] | None = None,
) -> dict[str, Any]:
    return {
        "name": name,
        "timezone": zone,
        "working_hours": {"start": start, "end": end, "weekdays": list(weekdays)},
        "busy": {d: [{"start": s, "end": e} for s, e in b] for d, b in (busy or {}).items()},
    }


def case(window: str, days: int, duration: int, *people: dict[str, Any]) -> Scenario:
    return Scenario.from_dict(
        {
            "duration_minutes": duration,
            "window_start": window,
            "window_days": days,
            "world": {"attendees": list(people)},
        }
    )


SUN = (6,)

# (label, scenario, expected gold as UTC text or "NONE"); every one is also checked
# against the brute force minute by minute.
HAND = [
    # Kathmandu is +5:45.
    (
        "kathmandu day",
        case("2024-06-03", 1, 30, person("K", "Asia/Kathmandu", "09:00", "17:00")),
        "2024-06-03T03:15:00Z",
    ),
    (
        "kathmandu midnight",
        case("2024-06-03", 1, 60, person("K", "Asia/Kathmandu", "00:00", "01:00")),
        "2024-06-03T18:15:00Z",
    ),
    (
        "kathmandu + new york",
        case(
            "2024-06-03",
            2,
            45,
            person("K", "Asia/Kathmandu", "06:00", "10:00"),
            person("N", "America/New_York", "19:00", "23:00"),
        ),
        "2024-06-03T00:15:00Z",
    ),
    # New York night shift across the spring-forward gap (02:00-03:00): 5 real hours.
    (
        "ny night gap fits",
        case("2024-03-10", 1, 300, person("N", "America/New_York", "00:00", "06:00", SUN)),
        "2024-03-10T05:00:00Z",
    ),
    (
        "ny night gap too long",
        case("2024-03-10", 1, 315, person("N", "America/New_York", "00:00", "06:00", SUN)),
        "NONE",
    ),
    # ... and across the fall-back fold (01:00-02:00 twice): 7 real hours.
    (
        "ny night fold fits",
        case("2024-11-03", 1, 420, person("N", "America/New_York", "00:00", "06:00", SUN)),
        "2024-11-03T04:00:00Z",
    ),
    (
        "ny night fold too long",
        case("2024-11-03", 1, 435, person("N", "America/New_York", "00:00", "06:00", SUN)),
        "NONE",
    ),
    (
        "ny fold stretch",
        case("2024-11-03", 1, 90, person("N", "America/New_York", "01:00", "02:00", SUN)),
        "2024-11-03T05:00:00Z",
    ),
    (
        "ny gap swallows the hour",
        case("2024-03-10", 1, 15, person("N", "America/New_York", "02:00", "03:00", SUN)),
        "NONE",
    ),
    (
        "ny gap partial",
        case("2024-03-10", 1, 30, person("N", "America/New_York", "02:30", "03:30", SUN)),
        "2024-03-10T07:00:00Z",
    ),
    # 22:00-24:00 every evening; the meeting cannot run past local midnight.
    (
        "ny late evening",
        case(
            "2024-03-09",
            3,
            120,
            person(
                "N",
                "America/New_York",
                "22:00",
                "24:00",
                busy={"2024-03-08": [("22:00", "24:00")], "2024-03-09": [("22:00", "23:00")]},
            ),
        ),
        "2024-03-11T02:00:00Z",
    ),
    (
        "ny late evening no wrap",
        case("2024-03-09", 3, 135, person("N", "America/New_York", "22:00", "24:00")),
        "NONE",
    ),
    # Round the clock: the fold day has 25 hours, the gap day 23.
    (
        "ny 25-hour day",
        case("2024-11-03", 1, 1500, person("N", "America/New_York", "00:00", "24:00")),
        "2024-11-03T04:00:00Z",
    ),
    (
        "ny 23-hour day",
        case("2024-03-10", 1, 1380, person("N", "America/New_York", "00:00", "24:00")),
        "2024-03-10T05:00:00Z",
    ),
    (
        "ny 23-hour day too long",
        case("2024-03-10", 1, 1395, person("N", "America/New_York", "00:00", "24:00")),
        "NONE",
    ),
    (
        "london 25-hour day",
        case("2024-10-27", 1, 1500, person("L", "Europe/London", "00:00", "24:00")),
        "NONE",
    ),  # local 2024-10-27 starts at 2024-10-26T23:00Z, outside the window
    (
        "london 25-hour day in window",
        case("2024-10-26", 2, 1500, person("L", "Europe/London", "00:00", "24:00")),
        "2024-10-26T23:00:00Z",
    ),
    # Lord Howe: DST is 30 minutes (+11 -> +10:30 at 02:00 on 2024-04-07; back on 2024-10-06).
    (
        "lord howe fold",
        case("2024-04-06", 1, 390, person("L", "Australia/Lord_Howe", "00:00", "06:00", SUN)),
        "2024-04-06T13:00:00Z",
    ),
    (
        "lord howe fold too long",
        case("2024-04-06", 1, 405, person("L", "Australia/Lord_Howe", "00:00", "06:00", SUN)),
        "NONE",
    ),
    (
        "lord howe gap",
        case("2024-10-05", 1, 330, person("L", "Australia/Lord_Howe", "00:00", "06:00", SUN)),
        "2024-10-05T13:30:00Z",
    ),
    (
        "lord howe gap too long",
        case("2024-10-05", 1, 345, person("L", "Australia/Lord_Howe", "00:00", "06:00", SUN)),
        "NONE",
    ),
    (
        "lord howe fold stretch",
        case("2024-04-06", 1, 60, person("L", "Australia/Lord_Howe", "01:30", "02:00", SUN)),
        "2024-04-06T14:30:00Z",
    ),
    # Chatham: +13:45 -> +12:45 at 03:45 on 2024-04-07; +12:45 -> +13:45 at 02:45 on 2024-09-29.
    (
        "chatham fold",
        case("2024-04-06", 1, 420, person("C", "Pacific/Chatham", "00:00", "06:00", SUN)),
        "2024-04-06T10:15:00Z",
    ),
    (
        "chatham gap",
        case("2024-09-28", 1, 300, person("C", "Pacific/Chatham", "00:00", "06:00", SUN)),
        "2024-09-28T11:15:00Z",
    ),
    (
        "chatham gap too long",
        case("2024-09-28", 1, 315, person("C", "Pacific/Chatham", "00:00", "06:00", SUN)),
        "NONE",
    ),
    (
        "chatham gap only",
        case("2024-09-28", 1, 15, person("C", "Pacific/Chatham", "02:45", "03:45", SUN)),
        "NONE",
    ),
    # St John's: -3:30 / -2:30, switching at 02:00 local.
    (
        "st johns gap",
        case("2024-03-10", 1, 300, person("S", "America/St_Johns", "00:00", "06:00", SUN)),
        "2024-03-10T03:30:00Z",
    ),
    (
        "st johns fold",
        case("2024-11-03", 1, 420, person("S", "America/St_Johns", "00:00", "06:00", SUN)),
        "2024-11-03T02:30:00Z",
    ),
    (
        "st johns + kathmandu",
        case(
            "2024-03-10",
            1,
            60,
            person("S", "America/St_Johns", "01:00", "04:00", SUN),
            person("K", "Asia/Kathmandu", "11:00", "14:00"),
        ),
        "2024-03-10T05:15:00Z",
    ),
    # Southern hemisphere: Sydney and Adelaide fall back in April, spring forward in October.
    (
        "sydney fold",
        case("2024-04-06", 1, 420, person("S", "Australia/Sydney", "00:00", "06:00", SUN)),
        "2024-04-06T13:00:00Z",
    ),
    (
        "sydney gap",
        case("2024-10-05", 1, 300, person("S", "Australia/Sydney", "00:00", "06:00", SUN)),
        "2024-10-05T14:00:00Z",
    ),
    (
        "adelaide fold",
        case("2024-04-06", 1, 420, person("A", "Australia/Adelaide", "00:00", "06:00", SUN)),
        "2024-04-06T13:30:00Z",
    ),
    (
        "sydney + adelaide across the fold",
        case(
            "2024-04-06",
            1,
            120,
            person("S", "Australia/Sydney", "02:00", "04:00", SUN),
            person("A", "Australia/Adelaide", "01:30", "03:30", SUN),
        ),
        "2024-04-06T15:00:00Z",
    ),
    # Santiago switches at local midnight:
    # the fold is Saturday 23:00-24:00, the gap Sunday 00:00-01:00.
    (
        "santiago fold",
        case("2024-04-06", 2, 300, person("P", "America/Santiago", "20:00", "24:00", (5,))),
        "2024-04-06T23:00:00Z",
    ),
    (
        "santiago fold too long",
        case("2024-04-06", 2, 315, person("P", "America/Santiago", "20:00", "24:00", (5,))),
        "NONE",
    ),
    (
        "santiago gap",
        case("2024-09-07", 2, 180, person("P", "America/Santiago", "00:00", "04:00", SUN)),
        "2024-09-08T04:00:00Z",
    ),
    (
        "santiago gap too long",
        case("2024-09-07", 2, 195, person("P", "America/Santiago", "00:00", "04:00", SUN)),
        "NONE",
    ),
    (
        "santiago gap day",
        case("2024-09-07", 3, 1380, person("P", "America/Santiago", "00:00", "24:00", SUN)),
        "2024-09-08T04:00:00Z",
    ),
    # Weekend workers: a Tokyo Saturday is a Los Angeles Friday.
    (
        "tokyo weekend + la friday",
        case(
            "2024-06-07",
            3,
            60,
            person("G", "Asia/Tokyo", "09:00", "17:00", (5, 6)),
            person("B", "America/Los_Angeles", "16:00", "24:00", (4, 5)),
        ),
        "2024-06-08T00:00:00Z",
    ),
    (
        "tokyo weekend + la weekdays",
        case(
            "2024-06-07",
            3,
            60,
            person("G", "Asia/Tokyo", "09:00", "17:00", (5, 6)),
            person("B", "America/Los_Angeles", "16:00", "24:00", (0, 1, 2, 3)),
        ),
        "NONE",
    ),
    (
        "tehran saturday to wednesday",
        case("2024-06-07", 2, 30, person("R", "Asia/Tehran", "08:00", "16:00", (0, 1, 2, 5, 6))),
        "2024-06-08T04:30:00Z",
    ),
    # A busy block inside the fold, free time on both sides: 01:30-01:59 EDT then
    # 01:00-01:14 EST are one unbroken 45 minutes of the same local date.
    (
        "busy inside the fold",
        case(
            "2024-11-03",
            1,
            30,
            person(
                "N", "America/New_York", "01:00", "02:00", SUN, {"2024-11-03": [("01:15", "01:30")]}
            ),
        ),
        "2024-11-03T05:30:00Z",
    ),
    (
        "busy inside the lord howe fold",
        case(
            "2024-04-06",
            1,
            20,
            person(
                "L",
                "Australia/Lord_Howe",
                "01:30",
                "02:00",
                SUN,
                {"2024-04-07": [("01:40", "01:50")]},
            ),
        ),
        "2024-04-06T14:50:00Z",
    ),
]


@pytest.mark.parametrize(("label", "scenario", "expected"), HAND, ids=[h[0] for h in HAND])
def test_hand_written_against_brute_force(label, scenario, expected):
    gold, _ = brute(scenario, exact=True)
    assert utc_text(gold) == expected, "brute force disagrees with the hand-worked answer"
    assert utc_text(solve(scenario).gold) == expected
    assert _compare(scenario, every_minute=True, exact=True) is None


# Transitions (zone, local date of the switch, wall clock where the gap/fold starts).
SWITCHES = [
    ("America/New_York", "2024-03-10", "02:00"),
    ("America/New_York", "2024-11-03", "01:00"),
    ("Europe/Berlin", "2024-03-31", "02:00"),
    ("Europe/Berlin", "2024-10-27", "02:00"),
    ("Australia/Lord_Howe", "2024-04-07", "01:30"),
    ("Australia/Lord_Howe", "2024-10-06", "02:00"),
    ("Pacific/Chatham", "2024-04-07", "02:45"),
    ("Pacific/Chatham", "2024-09-29", "02:45"),
    ("America/St_Johns", "2024-03-10", "02:00"),
    ("America/St_Johns", "2024-11-03", "01:00"),
    ("Australia/Sydney", "2024-04-07", "02:00"),
    ("Australia/Sydney", "2024-10-06", "02:00"),
    ("Australia/Adelaide", "2024-04-07", "02:00"),
    ("America/Santiago", "2024-04-06", "23:00"),
    ("America/Santiago", "2024-09-08", "00:00"),
]


def _hm(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _switch_cases(zone: str, day: str, wall: str) -> list[Scenario]:
    from datetime import date, timedelta

    local = date.fromisoformat(day)
    window = (local - timedelta(days=1)).isoformat()
    at = int(wall[:2]) * 60 + int(wall[3:])
    hours = [
        (max(0, at - 120), min(1440, at + 180)),
        (0, 1440),
        (max(0, at - 30), min(1440, at + 90)),
    ]
    out = []
    for start, end in hours:
        blocks: list[tuple[int, int] | None] = [None]
        for a, b in ((0, 15), (15, 30), (0, 60), (-30, 15), (30, 75), (-60, 0), (45, 60)):
            lo, hi = max(start, at + a), min(end, at + b)
            if lo < hi:
                blocks.append((lo, hi))
        for block in blocks:
            busy = {day: [(_hm(block[0]), _hm(block[1]))]} if block else {}
            for duration in (15, 30, 45, 60, 90, 150):
                out.append(
                    case(window, 3, duration, person("X", zone, _hm(start), _hm(end), busy=busy))
                )
                out.append(
                    case(
                        window,
                        3,
                        duration,
                        person("X", zone, _hm(start), _hm(end), busy=busy),
                        person("Y", "UTC", "00:00", "24:00"),
                    )
                )
    return out


@pytest.mark.parametrize(
    ("zone", "day", "wall"), SWITCHES, ids=[f"{z}@{d}" for z, d, _ in SWITCHES]
)
def test_busy_blocks_around_switches_against_brute_force(zone, day, wall):
    failures = [p for s in _switch_cases(zone, day, wall) if (p := _compare(s, every_minute=False))]
    failures.sort(key=len)
    assert not failures, f"{len(failures)} disagree; shortest:\n" + "\n".join(failures[:2])


def test_brute_force_fast_mode_equals_exact_mode():
    rng = random.Random("fast-vs-exact")
    for _ in range(25):
        scenario = generate(rng, "expert")
        fast_gold, fast = brute(scenario)
        exact_gold, exact = brute(scenario, exact=True)
        assert fast_gold == exact_gold and np.array_equal(fast, exact)


def test_utc_helper_roundtrip():
    assert utc_text(utc("2024-03-10T07:00:00Z")) == "2024-03-10T07:00:00Z"
