"""The rules of the issue, case by case, and the curated golds."""

from __future__ import annotations

import json

import pytest
from paths import DATA
from scenarios import one_person, utc

from meeting_gym.envs.meeting_slot.domain.curated import CURATED, curated_dicts
from meeting_gym.envs.meeting_slot.domain.scenario import Scenario
from meeting_gym.envs.meeting_slot.domain.solver import solve, subtract
from meeting_gym.envs.meeting_slot.domain.timeutil import format_utc

CURATED_GOLD = {
    "same_tz_empty_busy": "2024-03-11T13:00:00Z",
    "overlapping_busy": "2024-03-11T18:00:00Z",
    "no_overlap_ny_kolkata": "NONE",
    "weekend_skip_dst": "2024-03-11T13:00:00Z",
    "dst_us_spring_monday": "2024-03-11T13:00:00Z",
    "inclusive_busy_utc": "2024-03-11T11:00:00Z",
    "gap_30min": "2024-03-11T11:00:00Z",
    "gap_60min": "2024-03-11T16:00:00Z",
    "four_person_summer": "2024-06-10T13:00:00Z",
    "sydney_ny_none": "NONE",
    "shanghai_tokyo": "2024-03-11T01:00:00Z",
    "last_friday_slot": "2024-03-08T16:30:00Z",
    "dst_eu_monday": "2024-04-01T08:00:00Z",
    "three_person_busy": "2024-06-10T14:00:00Z",
    "no_slot_fully_booked": "NONE",
}


def gold_text(scenario: Scenario) -> str:
    gold = solve(scenario).gold
    return "NONE" if gold is None else format_utc(gold)


def test_curated_ids_in_published_order():
    assert [s.id for s in CURATED] == list(CURATED_GOLD)


@pytest.mark.parametrize("scenario", CURATED, ids=lambda s: s.id)
def test_curated_gold(scenario):
    assert gold_text(scenario) == CURATED_GOLD[scenario.id]


def test_curated_worlds_match_the_reference_data():
    # the predecessor's curated cases, copied into the repo (tests/data/README.md)
    path = DATA / "meeting_slot" / "curated.json"
    reference = json.loads(path.read_text(encoding="utf-8"))
    for ref, mine in zip(reference, curated_dicts(), strict=True):
        assert ref["gold"] == CURATED_GOLD[mine["id"]]
        assert {k: v for k, v in ref.items() if k not in ("gold", "naive_answer")} == mine


# New York's fall-back day, 00:00-04:00 with 01:30-02:00 busy (in EDT and again in EST):
# its gold is a GOLD_CASES row, and the run through the busy block a test of its own.
FALL_BACK_THROUGH_BUSY = (
    "America/New_York",
    "00:00",
    "04:00",
    "2024-11-03",
    105,
    {"2024-11-03": [("01:30", "02:00")]},
)

# (zone, work start, work end, window, duration, busy, gold)
GOLD_CASES = [
    ("America/New_York", "02:00", "04:00", "2024-03-10", 30, None, "2024-03-10T07:00:00Z"),
    ("Europe/London", "01:00", "03:00", "2024-03-31", 30, None, "2024-03-31T01:00:00Z"),
    ("Australia/Lord_Howe", "02:00", "04:00", "2024-10-05", 30, None, "2024-10-05T15:30:00Z"),
    ("Pacific/Chatham", "02:00", "05:00", "2024-09-28", 120, None, "2024-09-28T13:15:00Z"),
    ("America/New_York", "01:00", "02:00", "2024-11-03", 60, None, "2024-11-03T05:00:00Z"),
    (*FALL_BACK_THROUGH_BUSY, "2024-11-03T07:00:00Z"),
    (
        "America/New_York",
        "00:00",
        "04:00",
        "2024-03-10",
        60,
        {"2024-03-10": [("00:00", "01:30"), ("02:00", "03:00")]},
        "2024-03-10T06:30:00Z",
    ),
    ("UTC", "09:00", "17:00", "2024-03-11", 60, None, "2024-03-11T09:00:00Z"),
]


@pytest.mark.parametrize("case", GOLD_CASES, ids=lambda c: f"{c[0]}-{c[3]}-{c[4]}")
def test_rule_examples_gold_and_valid(case):
    zone, start, end, window, duration, busy, expected = case
    solution = solve(Scenario.from_dict(one_person(zone, start, end, window, duration, busy)))
    assert solution.gold == utc(expected)
    assert solution.is_valid(utc(expected))
    assert not solution.is_valid(utc(expected) - 60)


def test_meeting_ending_at_local_midnight_is_invalid():
    # The predecessor wrapped the end minute to 0 and accepted this.
    solution = solve(Scenario.from_dict(one_person("UTC", "09:00", "17:00", "2024-03-11", 60)))
    assert not solution.is_valid(utc("2024-03-11T23:00:00Z"))
    full_day = solve(Scenario.from_dict(one_person("UTC", "00:00", "24:00", "2024-03-11", 60)))
    assert full_day.is_valid(utc("2024-03-11T23:00:00Z"))  # ends exactly at 24:00: fits
    assert not full_day.is_valid(utc("2024-03-11T23:30:00Z"))  # would cross midnight


def test_fall_back_run_through_busy_block_is_invalid():
    scenario = one_person(*FALL_BACK_THROUGH_BUSY)
    assert not solve(Scenario.from_dict(scenario)).is_valid(utc("2024-11-03T04:30:00Z"))


def test_spring_forward_predecessor_answer_is_invalid():
    scenario = one_person("America/New_York", "02:00", "04:00", "2024-03-10", 30)
    assert not solve(Scenario.from_dict(scenario)).is_valid(utc("2024-03-10T06:00:00Z"))


def test_free_time_of_two_local_dates_never_joins():
    # 00:00-24:00 every day in UTC: a 60-minute meeting may not straddle midnight.
    solution = solve(Scenario.from_dict(one_person("UTC", "00:00", "24:00", "2024-03-11", 60)))
    assert solution.is_valid(utc("2024-03-11T23:00:00Z"))
    assert not solution.is_valid(utc("2024-03-11T23:01:00Z"))


def test_fold_day_holds_25_hours():
    scenario = one_person("America/New_York", "00:00", "24:00", "2024-11-03", 25 * 60)
    solution = solve(Scenario.from_dict(scenario))
    assert solution.gold == utc("2024-11-03T04:00:00Z")
    too_long = one_person("America/New_York", "00:00", "24:00", "2024-11-03", 25 * 60 + 1)
    assert solve(Scenario.from_dict(too_long)).gold is None


def test_half_open_busy_end_is_free():
    scenario = one_person(
        "UTC", "09:00", "17:00", "2024-03-11", 30, {"2024-03-11": [("09:00", "11:00")]}
    )
    assert solve(Scenario.from_dict(scenario)).gold == utc("2024-03-11T11:00:00Z")


def test_start_must_be_a_whole_minute_inside_the_window():
    solution = solve(Scenario.from_dict(one_person("UTC", "00:00", "24:00", "2024-03-11", 30)))
    assert not solution.is_valid(utc("2024-03-11T10:00:00Z") + 30)
    assert not solution.is_valid(utc("2024-03-10T23:00:00Z"))
    assert not solution.is_valid(utc("2024-03-12T00:00:00Z"))


def test_meeting_may_end_after_the_window():
    # Tokyo 08:00 on 2024-03-12 is 23:00Z on 2024-03-11: starts inside, ends 00:30Z after it.
    scenario = one_person("Asia/Tokyo", "08:00", "10:00", "2024-03-11", 90)
    assert solve(Scenario.from_dict(scenario)).gold == utc("2024-03-11T23:00:00Z")


@pytest.mark.parametrize(
    "work, busy, free",
    [
        ((540, 1020), [], [(540, 1020)]),
        ((540, 1020), [(540, 1020)], []),
        ((540, 1020), [(600, 660), (630, 700)], [(540, 600), (700, 1020)]),
        ((540, 1020), [(0, 600), (1000, 1440)], [(600, 1000)]),
        ((540, 1020), [(300, 400), (1100, 1200)], [(540, 1020)]),
    ],
)
def test_subtract(work, busy, free):
    assert subtract(work, busy) == free
