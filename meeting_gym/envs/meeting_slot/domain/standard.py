"""The ``easy`` / ``medium`` / ``hard`` tiers, reproducing meeting-slot's distribution.

meeting-slot is the verifiers environment that MeetingSlot succeeds.

* a solvable case picks a cluster of colleagues, computes the valid starts of
  their working hours alone (15-minute UTC grid) and, except for 55% of easy
  cases, *plants* one of the first few of them (see
  :mod:`meeting_gym.envs.meeting_slot.domain.planting`);
* a NONE case is either a pair of zones whose working hours never overlap
  (sometimes also fully booked) or a fully booked cluster.
"""

from __future__ import annotations

import random
from datetime import date

from meeting_gym.envs.meeting_slot.domain.planting import (
    DURATIONS,
    HOURS,
    NONE_RATE,
    SOLVABLE_TRIES,
    TARGET_CAP,
    Draft,
    Spec,
    book_all,
    candidates,
    make_spec,
    plant,
    solve_specs,
)
from meeting_gym.envs.meeting_slot.domain.scenario import Block
from meeting_gym.envs.meeting_slot.domain.solver import Solution
from meeting_gym.envs.meeting_slot.domain.timeutil import day_number

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
EASY_HOURS: Block = (540, 1020)
FIRST_MONDAY = date(2024, 1, 8)
MONDAY_WEEKS = 90
DST_FRIDAYS = (date(2024, 3, 8), date(2024, 3, 29), date(2024, 10, 25), date(2024, 11, 1))


def draft(rng: random.Random, difficulty: str) -> Draft:
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


def _standard_none(
    rng: random.Random, difficulty: str, duration: int, first: int, days: int
) -> tuple[list[Spec], Solution | None]:
    if rng.random() < 0.55:
        pair = rng.choice(NO_OVERLAP_PAIRS)
        specs = [make_spec(name, PEOPLE[name], _hours(rng, difficulty)) for name in pair]
        if rng.random() < 0.40:
            return book_all(specs, first, days), None
        solution = solve_specs(duration, first, days, specs)
        if solution.gold is not None:
            # Some hour choices do overlap by a little; booking makes the case NONE anyway.
            return book_all(specs, first, days), None
        return specs, solution
    members = CLUSTERS[rng.choice(_clusters(difficulty))]
    names = rng.sample(members, min(_group_size(rng, difficulty), len(members)))
    specs = [make_spec(name, PEOPLE[name], _hours(rng, difficulty)) for name in names]
    return book_all(specs, first, days), None


def _standard_solvable(
    rng: random.Random, difficulty: str, duration: int, first: int, days: int
) -> tuple[list[Spec], Solution | None]:
    cap = TARGET_CAP[difficulty]
    for _ in range(SOLVABLE_TRIES):
        members = CLUSTERS[rng.choice(_clusters(difficulty))]
        names = rng.sample(members, min(_group_size(rng, difficulty), len(members)))
        specs = [make_spec(name, PEOPLE[name], _hours(rng, difficulty)) for name in names]
        starts, solution = candidates(duration, first, days, specs, enough=cap + 1)
        if not starts:
            continue
        if difficulty == "easy" and rng.random() < 0.55:
            return specs, solution
        target = starts[rng.randint(0, min(cap, len(starts) - 1))]
        if not plant(specs, target, target + duration * 60, first, days):
            continue
        solution = solve_specs(duration, first, days, specs)
        if solution.gold is not None:
            return specs, solution
    return _fallback(), None


def _fallback() -> list[Spec]:
    return [
        make_spec("Ava", "America/New_York", EASY_HOURS),
        make_spec("Ben", "America/New_York", EASY_HOURS),
    ]
