"""CalendarMath reference policies: gold scores 1.2, naive reproduces the predecessor's README
baseline on the curated cases, random answers the right shape reproducibly."""

from __future__ import annotations

import json
import random
import re
from datetime import date

import pytest
from paths import DATA

from meeting_gym.agents.policies import Policy
from meeting_gym.envs.calendar_math import dates
from meeting_gym.envs.calendar_math.answers import extract, reward, score
from meeting_gym.envs.calendar_math.curated import CURATED, CURATED_BY_ID
from meeting_gym.envs.calendar_math.generator import generate
from meeting_gym.envs.calendar_math.items import Item
from meeting_gym.envs.calendar_math.policies import (
    POLICIES,
    GoldPolicy,
    NaivePolicy,
    RandomPolicy,
    julian_days,
    julian_ymd,
    naive_answer,
)

# the predecessor's curated cases, copied into the repo (tests/data/README.md: source, licence)
REFERENCE = DATA / "calendar_math"


def curated_cases() -> list[dict]:
    return json.loads((REFERENCE / "curated.json").read_text(encoding="utf-8"))["cases"]


def info(item: Item) -> dict:
    """What the env's reset info will carry."""
    return {"task_type": item.task_type, "inputs": dict(item.inputs), "difficulty": item.difficulty}


def play(policy: Policy, item: Item, seed: int | None = None) -> str:
    policy.reset(item.question, info(item), seed=seed)
    return policy.act(item.question)


def mean_terms(policy: Policy, items) -> tuple[float, float, float, float]:
    totals = [0.0, 0.0, 0.0, 0.0]
    for item in items:
        terms = score(extract(play(policy, item)), item.gold, item.task_type)
        for i, value in enumerate((*terms, reward(terms))):
            totals[i] += value
    return tuple(round(total / len(items), 3) for total in totals)


SAMPLE = [
    generate(random.Random(seed), difficulty)
    for seed in range(300)
    for difficulty in ("easy", "medium", "hard", "expert")
]


def test_policy_table():
    assert {"gold": GoldPolicy, "naive": NaivePolicy, "random": RandomPolicy} == POLICIES
    for name, cls in POLICIES.items():
        assert issubclass(cls, Policy) and cls.name == name


# --- gold -----------------------------------------------------------------------------------


def test_gold_policy_is_exact_everywhere():
    assert mean_terms(GoldPolicy(), CURATED) == (1.0, 1.0, 0.0, 1.2)
    assert mean_terms(GoldPolicy(), SAMPLE) == (1.0, 1.0, 0.0, 1.2)


def test_gold_policy_accepts_the_items_own_mapping():
    item = CURATED_BY_ID["wd_2000_jan1"]
    policy = GoldPolicy()
    policy.reset(item.question, {"task_type": item.task_type, "inputs": item.inputs})
    assert policy.act(item.question) == "<answer>Saturday</answer>"


# --- naive ----------------------------------------------------------------------------------


def julian_jdn(y: int, m: int, d: int) -> int:
    """Julian Day Number of a proleptic Julian calendar date (the standard integer formula)."""
    a = (14 - m) // 12
    yy, mm = y + 4800 - a, m + 12 * a - 3
    return d + (153 * mm + 2) // 5 + 365 * yy + yy // 4 - 32083


@pytest.mark.parametrize(
    "year", [1, 2, 3, 4, 5, 99, 100, 300, 1581, 1582, 1899, 1900, 2000, 2100, 9999]
)
def test_julian_day_counting_against_the_julian_day_number(year):
    for month in range(1, 13):
        length = [31, 29 if year % 4 == 0 else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        for day in range(1, length[month - 1] + 1):
            count = julian_days(year, month, day)
            assert count == julian_jdn(year, month, day) - julian_jdn(1, 1, 1)
            assert julian_ymd(count) == (year, month, day)


def test_julian_counting_meets_history_in_1582():
    # the day after Julian 1582-10-04 was Gregorian 1582-10-15: Julian 10-05 is that day, and
    # Julian 0001-01-01 fell two days before Gregorian 0001-01-01 (date ordinal 1)
    assert julian_days(1582, 10, 5) == date(1582, 10, 15).toordinal() + 1
    assert julian_ymd(julian_days(1900, 2, 28) + 1) == (1900, 2, 29)
    assert julian_ymd(julian_days(1900, 2, 29) + 1) == (1900, 3, 1)


def test_naive_answers_on_curated_equal_curated_json():
    cases = curated_cases()
    for item, case in zip(CURATED, cases, strict=True):
        answer = play(NaivePolicy(), item)
        assert answer == f"<answer>{case['naive_answer']}</answer>", item.id
        terms = score(extract(answer), item.gold, item.task_type)
        expected = case["naive_scores"]
        assert terms == (expected["exact"], expected["format"], expected["partial"]), item.id


def test_naive_reproduces_the_readme_baseline_on_curated():
    # RULES 7: reward 0.768, exact 0.533 (8/15), format 1.000, partial 0.173 (2.6/15)
    exact, fmt, partial, value = mean_terms(NaivePolicy(), CURATED)
    assert (value, exact, fmt, partial) == (0.768, 0.533, 1.0, 0.173)
    path = REFERENCE / "curated.json"
    readme = json.loads(path.read_text(encoding="utf-8"))["readme_figures"]["naive"]
    assert (value, exact, fmt, partial) == tuple(
        readme[k] for k in ("reward", "exact", "format", "partial")
    )


@pytest.mark.parametrize(
    ("task_type", "inputs", "answer"),
    [
        ("add_days", {"start": "1900-02-28", "n": 1}, "1900-02-29"),  # impossible date
        ("add_days", {"start": "2100-03-01", "n": -1}, "2100-02-29"),
        ("add_days", {"start": "2024-02-29", "n": 365}, "2025-02-28"),
        ("days_between", {"start": "2024-01-01", "end": "2024-01-01"}, "1"),  # inclusive
        ("days_between", {"start": "2024-01-02", "end": "2024-01-01"}, "0"),  # +1 on negatives
        ("days_between", {"start": "1900-02-28", "end": "1900-03-01"}, "3"),
        ("weekday", {"start": "0001-01-01"}, "Monday"),
        ("weekday", {"start": "1900-01-01"}, "Monday"),
        ("weekday", {"start": "2000-01-01"}, "Sunday"),  # one day late
    ],
)
def test_naive_rules(task_type, inputs, answer):
    assert naive_answer(task_type, inputs) == answer


def crosses_a_julian_only_leap_day(start: date, end: date) -> bool:
    """Whether [start, end] holds Feb 28 and Mar 1 of a year the Julian rule alone makes leap."""
    low, high = min(start, end), max(start, end)
    return any(
        low <= date(year, 2, 28) and date(year, 3, 1) <= high
        for year in range(low.year, high.year + 1)
        if year % 100 == 0 and year % 400 != 0
    )


def test_naive_add_days_is_wrong_exactly_when_it_crosses_a_julian_only_leap_day():
    rng = random.Random(12)
    expert = [generate(rng, "expert", "add_days") for _ in range(1500)]
    items = [item for item in SAMPLE if item.task_type == "add_days"] + expert
    crossing = 0
    for item in items:
        start, gold = dates.parse_date(item.inputs["start"]), dates.parse_date(item.gold)
        exact = score(extract(play(NaivePolicy(), item)), item.gold, item.task_type)[0]
        assert exact == (not crosses_a_julian_only_leap_day(start, gold)), item
        crossing += exact == 0.0
    assert crossing > 100  # expert spans and century boundaries make this common


def test_naive_answers_every_item_with_a_block():
    for item in SAMPLE:
        assert extract(play(NaivePolicy(), item)) is not None


# --- random ----------------------------------------------------------------------------------


def test_random_answers_have_the_right_shape():
    policy = RandomPolicy(seed=0)
    for item in SAMPLE:
        content = extract(play(policy, item))
        if item.task_type == "add_days":
            drift = dates.parse_date(content) - dates.parse_date(item.inputs["start"])
            assert abs(drift.days) <= 400
        elif item.task_type == "days_between":
            assert re.fullmatch(r"0|-?[1-9][0-9]*", content)
            assert abs(int(content)) <= (9999 if item.difficulty == "expert" else 450)
        else:
            assert content in dates.WEEKDAYS


def test_random_policy_stays_inside_the_calendar():
    edge = Item.build("add_days", {"start": "9999-12-31", "n": -1}, "expert")
    policy = RandomPolicy(seed=1)
    for _ in range(300):
        dates.parse_date(extract(play(policy, edge)))


def test_random_policy_is_seeded_and_leaves_global_random_alone():
    random.seed(77)
    before = random.getstate()
    first = [play(RandomPolicy(seed=3), item) for item in SAMPLE[:200]]
    one, two = RandomPolicy(seed=3), RandomPolicy(seed=3)
    assert [play(one, item) for item in SAMPLE[:200]] == [play(two, item) for item in SAMPLE[:200]]
    other = RandomPolicy(seed=4)
    assert [play(other, item) for item in SAMPLE[:200]] != first
    # reset(seed=...) reseeds, whatever the constructor seed
    a, b = RandomPolicy(seed=10), RandomPolicy(seed=20)
    assert [play(a, item, seed=i) for i, item in enumerate(SAMPLE[:100])] == [
        play(b, item, seed=i) for i, item in enumerate(SAMPLE[:100])
    ]
    assert random.getstate() == before


def test_random_policy_scores_low_but_sometimes_right():
    exact, fmt, _partial, value = mean_terms(RandomPolicy(seed=5), SAMPLE)
    assert fmt == 1.0 and 0.0 < exact < 0.2 and value < 0.5
