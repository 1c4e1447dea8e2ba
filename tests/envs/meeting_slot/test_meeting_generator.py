"""Scenario generation: determinism, the predecessor's distribution, expert coverage."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from collections import Counter
from dataclasses import replace
from datetime import date, timedelta
from functools import cache

import numpy as np
import pytest
from bruteforce import walls

from meeting_gym.envs.meeting_slot.domain import generator
from meeting_gym.envs.meeting_slot.domain.generator import (
    DIFFICULTIES,
    MAX_ATTENDEES,
    MAX_WINDOW_DAYS,
    generate,
    generate_seeded,
    scenario_id,
)
from meeting_gym.envs.meeting_slot.domain.scenario import Scenario
from meeting_gym.envs.meeting_slot.domain.solver import solve

EPOCH = date(1970, 1, 1)
ODD_ZONES = {zone for _, zone in generator.EXPERT_ODD}


@cache
def sample(difficulty: str | None, n: int, seed: int = 2024) -> tuple[Scenario, ...]:
    rng = random.Random(seed)
    return tuple(generate(rng, difficulty) for _ in range(n))


@cache
def golds(difficulty: str, n: int) -> tuple[int | None, ...]:
    return tuple(solve(s).gold for s in sample(difficulty, n))


# ----------------------------------------------------------------------------- determinism


@pytest.mark.parametrize("difficulty", [None, *DIFFICULTIES])
def test_same_seed_same_scenario(difficulty):
    for seed in range(60):
        a = generate_seeded(seed, difficulty)
        b = generate(random.Random(seed), difficulty)
        assert a == b
        assert a.to_dict() == b.to_dict()


def test_different_seeds_differ():
    ids = {generate_seeded(seed).id for seed in range(200)}
    assert len(ids) > 190


def test_global_random_is_neither_used_nor_consulted():
    random.seed(1)
    state = random.getstate()
    first = [generate_seeded(s, d).to_dict() for s in range(20) for d in DIFFICULTIES]
    assert random.getstate() == state
    random.seed(99)
    again = [generate_seeded(s, d).to_dict() for s in range(20) for d in DIFFICULTIES]
    assert first == again


_DUMP = """
import json, sys
from meeting_gym.envs.meeting_slot.domain.generator import DIFFICULTIES, generate_seeded
out = [generate_seeded(seed, d).to_dict() for seed in range(50) for d in (None, *DIFFICULTIES)]
sys.stdout.write(json.dumps(out, sort_keys=True))
"""


def _dump(tz: str, hash_seed: str) -> str:
    env = dict(os.environ, TZ=tz, PYTHONHASHSEED=hash_seed)
    done = subprocess.run(
        [sys.executable, "-c", _DUMP], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def test_same_json_in_other_processes_and_time_zones():
    kolkata = _dump("Asia/Kolkata", "1")
    angeles = _dump("America/Los_Angeles", "2")
    assert kolkata == angeles
    here = [generate_seeded(seed, d).to_dict() for seed in range(50) for d in (None, *DIFFICULTIES)]
    assert json.loads(kolkata) == here


def test_unknown_difficulty_names_the_allowed_values():
    with pytest.raises(ValueError) as info:
        generate(random.Random(0), "nightmare")
    for name in DIFFICULTIES:
        assert name in str(info.value)


# ----------------------------------------------------------------------------- shape


@pytest.mark.parametrize("difficulty", [None, *DIFFICULTIES])
def test_grid_limits_ids_and_round_trip(difficulty):
    for scenario in sample(difficulty, 600):
        assert scenario.difficulty in DIFFICULTIES
        assert 1 <= len(scenario.attendees) <= MAX_ATTENDEES
        assert 1 <= scenario.window_days <= MAX_WINDOW_DAYS
        assert scenario.duration_minutes % 15 == 0
        names = [a.name.casefold() for a in scenario.attendees]
        assert len(set(names)) == len(names)
        first = scenario.window_start - timedelta(days=2)
        last = scenario.window_end + timedelta(days=2)
        for person in scenario.attendees:
            assert person.work_start % 15 == 0 and person.work_end % 15 == 0
            assert 0 <= person.work_start < person.work_end <= 1440
            assert person.weekdays and list(person.weekdays) == sorted(set(person.weekdays))
            for day, blocks in person.busy.items():
                assert first <= day <= last
                assert list(blocks) == sorted(blocks)
                for start, end in blocks:
                    assert start % 15 == 0 and end % 15 == 0
                    assert person.work_start <= start < end <= person.work_end
        assert re.fullmatch(r"gen-[0-9A-F]{8}", scenario.id or "")
        assert scenario.id == scenario_id(scenario)
        data = scenario.to_dict()
        back = Scenario.from_dict(json.loads(json.dumps(data)))
        assert back == scenario
        assert back.to_dict() == data


def test_id_is_the_hash_of_the_content_without_id():
    import hashlib

    scenario = generate_seeded(7, "hard")
    content = (
        scenario.difficulty,
        scenario.duration_minutes,
        scenario.window_start.toordinal(),
        scenario.window_days,
        tuple(
            (
                p.name,
                p.timezone,
                p.work_start,
                p.work_end,
                p.weekdays,
                tuple((day.toordinal(), p.busy[day]) for day in sorted(p.busy)),
            )
            for p in scenario.attendees
        ),
    )
    digest = hashlib.sha256(ascii(content).encode()).hexdigest()
    assert scenario.id == "gen-" + digest[:8].upper()
    # Content only: the id field, dict order and a JSON round trip do not matter.
    assert scenario_id(replace(scenario, id="other")) == scenario.id
    back = Scenario.from_dict(json.loads(json.dumps(scenario.to_dict())))
    assert scenario_id(back) == scenario.id
    first = scenario.attendees[0]
    reordered = replace(first, busy=dict(reversed(list(first.busy.items()))))
    assert scenario_id(replace(scenario, attendees=(reordered, *scenario.attendees[1:]))) == (
        scenario.id
    )


def test_id_changes_with_any_part_of_the_content():
    scenario = generate_seeded(11, "expert")
    first = scenario.attendees[0]
    day = min(first.busy) if first.busy else scenario.window_start
    variants = [
        replace(scenario, difficulty="easy"),
        replace(scenario, duration_minutes=scenario.duration_minutes + 15),
        replace(scenario, window_start=scenario.window_start + timedelta(days=1)),
        replace(scenario, window_days=scenario.window_days + 1),
        replace(scenario, attendees=scenario.attendees[::-1]),
        replace(scenario, attendees=scenario.attendees[1:]),
    ]
    for person in (
        replace(first, name=first.name + "x"),
        replace(first, timezone="UTC" if first.timezone != "UTC" else "Asia/Tokyo"),
        replace(first, work_start=first.work_start - 15 if first.work_start else 15),
        replace(first, work_end=first.work_end - 15),
        replace(first, weekdays=(*first.weekdays, 7)),
        replace(first, busy={**first.busy, day: ((0, 15),)}),
        replace(first, busy={**first.busy, day + timedelta(days=30): ((0, 15),)}),
    ):
        variants.append(replace(scenario, attendees=(person, *scenario.attendees[1:])))
    ids = {scenario_id(v) for v in variants}
    assert scenario.id not in ids
    assert len(ids) == len(variants)


# ----------------------------------------------------------------------------- distribution


def test_default_mix_shares():
    counts = Counter(s.difficulty for s in sample(None, 3000))
    assert counts["expert"] == 0
    assert abs(counts["easy"] / 3000 - 0.40) < 0.035
    assert abs(counts["medium"] / 3000 - 0.35) < 0.035
    assert abs(counts["hard"] / 3000 - 0.25) < 0.035


@pytest.mark.parametrize(
    ("difficulty", "rate"), [("easy", 0.08), ("medium", 0.10), ("hard", 0.14), ("expert", 0.10)]
)
def test_none_rates(difficulty, rate):
    found = golds(difficulty, 1500)
    share = sum(g is None for g in found) / len(found)
    assert abs(share - rate) < 0.035, share


@pytest.mark.parametrize("difficulty", ["easy", "medium", "hard"])
def test_standard_people_hours_windows_and_durations(difficulty):
    hours = {(540, 1020)} if difficulty == "easy" else set(generator.HOURS)
    for scenario in sample(difficulty, 600):
        assert scenario.duration_minutes in generator.DURATIONS[difficulty]
        start = scenario.window_start
        if start in generator.DST_FRIDAYS:
            assert difficulty == "hard" and 3 <= scenario.window_days <= 5
        else:
            assert start.weekday() == 0 and start >= generator.FIRST_MONDAY
            assert (start - generator.FIRST_MONDAY).days <= 7 * generator.MONDAY_WEEKS
            lo, hi = {"easy": (1, 1), "medium": (1, 3), "hard": (2, 4)}[difficulty]
            assert lo <= scenario.window_days <= hi
        fallback = [a.name for a in scenario.attendees] == ["Ava", "Ben"] and all(
            a.timezone == "America/New_York" for a in scenario.attendees
        )
        for person in scenario.attendees:
            assert fallback or generator.PEOPLE[person.name] == person.timezone
            assert (person.work_start, person.work_end) in hours
            assert person.weekdays == (0, 1, 2, 3, 4)


def test_easy_keeps_about_half_empty():
    empty = sum(all(not a.busy for a in s.attendees) for s in sample("easy", 1500))
    # 55% of the ~92% solvable, plus NONE pairs left unbooked.
    assert 0.45 < empty / 1500 < 0.60


@pytest.mark.parametrize("difficulty", ["medium", "hard"])
def test_planting_moves_the_answer_off_the_first_common_slot(difficulty):
    moved = total = 0
    for scenario, gold in zip(sample(difficulty, 600), golds(difficulty, 600), strict=True):
        if gold is None:
            continue
        total += 1
        bare = replace(scenario, attendees=tuple(replace(a, busy={}) for a in scenario.attendees))
        moved += solve(bare).gold != gold
    assert moved / total > 0.6


# ----------------------------------------------------------------------------- expert


def _odd_days(scenario: Scenario) -> list[tuple[int, int, int, set[int]]]:
    """Working dates whose hours meet a gap or fold.

    (attendee index, day number, real minutes worked, minutes of the day whose
    wall-clock reading occurs other than exactly once).
    """
    lo = (scenario.window_start - EPOCH).days * 1440
    first = lo // 1440
    out = []
    for index, person in enumerate(scenario.attendees):
        wall = walls(person.timezone, lo - 3 * 1440, lo + (scenario.window_days + 3) * 1440)
        for number in range(first - 2, first + scenario.window_days + 2):
            if (number + 3) % 7 not in person.weekdays:
                continue
            on_day = wall[(wall >= number * 1440) & (wall < (number + 1) * 1440)] - number * 1440
            seen = np.bincount(on_day, minlength=1440)
            odd = {int(m) for m in np.flatnonzero(seen != 1)}
            real = int(seen[person.work_start : person.work_end].sum())
            if real != person.work_end - person.work_start:
                out.append((index, number, real, odd))
    return out


@cache
def expert_odd_days() -> tuple[list[tuple[int, int, int, set[int]]], ...]:
    return tuple(_odd_days(s) for s in sample("expert", 800))


def test_expert_often_meets_gaps_and_folds():
    scenarios = sample("expert", 800)
    touched = [(s, odd) for s, odd in zip(scenarios, expert_odd_days(), strict=True) if odd]
    assert len(touched) / len(scenarios) > 0.7
    gaps = folds = 0
    for scenario, odd_days in touched:
        for index, _, real, _ in odd_days:
            person = scenario.attendees[index]
            if real < person.work_end - person.work_start:
                gaps += 1
            else:
                folds += 1
    assert gaps > 100 and folds > 100


def test_expert_busy_blocks_inside_gaps_and_folds():
    """Some calendars book time inside a fold or gap, with free time around it."""
    hits = 0
    for scenario, odd_days in zip(sample("expert", 800), expert_odd_days(), strict=True):
        for index, number, _, odd in odd_days:
            person = scenario.attendees[index]
            blocks = person.busy.get(EPOCH + timedelta(days=number), ())
            if any(
                (start, end) != (person.work_start, person.work_end)
                and odd & set(range(start, end))
                for start, end in blocks
            ):
                hits += 1
                break
    assert hits > 40


def test_expert_features():
    scenarios = sample("expert", 800)
    zones_seen = Counter(a.timezone for s in scenarios for a in s.attendees)
    assert set(zones_seen) >= ODD_ZONES
    assert all(any(a.timezone in ODD_ZONES for a in s.attendees) for s in scenarios)
    weekend = sum(any({5, 6} & set(a.weekdays) for a in s.attendees) for s in scenarios)
    assert weekend / len(scenarios) > 0.4
    night = sum(
        any(a.work_start < 360 or a.work_end > 1260 for a in s.attendees) for s in scenarios
    )
    assert night / len(scenarios) > 0.4
    assert set(Counter(len(s.attendees) for s in scenarios)) == {2, 3, 4}
    assert set(Counter(s.window_days for s in scenarios)) == {1, 2, 3, 4, 5}
    assert {s.duration_minutes for s in scenarios} == set(generator.DURATIONS["expert"])
    empty = sum(all(not a.busy for a in s.attendees) for s in scenarios)
    assert 0.1 < empty / len(scenarios) < 0.45
    names = {a.name for s in scenarios for a in s.attendees}
    assert not names & set(generator.PEOPLE)


@pytest.mark.parametrize("difficulty", [None, *DIFFICULTIES])
def test_generate_solved_hands_back_the_scenario_and_its_own_solution(difficulty):
    """The env's path: the same scenario as generate() and exactly solve()'s Solution."""
    for seed in range(300):
        scenario, solution = generator.generate_solved(random.Random(seed), difficulty)
        assert scenario == generate_seeded(seed, difficulty)
        assert solution == solve(scenario)
