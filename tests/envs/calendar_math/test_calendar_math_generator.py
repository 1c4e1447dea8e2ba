"""CalendarMath generator: RULES section 4 tabulated, the predecessor's draws, the expert level."""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from datetime import date

import pytest

from meeting_gym.envs.calendar_math import generator
from meeting_gym.envs.calendar_math.generator import generate

# --- RULES section 4, transcribed ----------------------------------------------------------

LEVELS = ("easy", "medium", "hard")
YEARS = {"easy": (2018, 2026), "medium": (1995, 2035), "hard": (1890, 2110)}
N_MAGNITUDE = {"easy": (1, 7), "medium": (8, 60), "hard": (60, 400)}
DELTA_MAGNITUDE = {"easy": (0, 12), "medium": (13, 90), "hard": (90, 450)}
SIGNED_DELTA = {"easy": False, "medium": True, "hard": True}
# probability that a hard item's date is a boundary date, per task
BOUNDARY_P = {"add_days": 0.45, "days_between": 0.0, "weekday": 0.5}
NOMINAL_MIX = {"easy": 0.40, "medium": 0.35, "hard": 0.25}

RULES_BOUNDARY = {
    f"{y}-{md}"
    for y in (1900, 2000, 2023, 2024, 2025, 2100)
    for md in ("01-01", "12-31", "02-28", "03-01", "01-31", "02-29")
    if md != "02-29" or y in (2000, 2024)  # the Gregorian leap years among the six
}

# the expert table of generator's docstring, transcribed
EXPERT_YEARS = {1, 100, 200, 300, 400, 1582, 1600, 1700, 1800, 1900, 2000, 2100, 2400, 9999}
EXPERT_N = (400, 9999)
EXPERT_DELTA = (450, 9999)
REFORM_FIRST, REFORM_LAST = date(1582, 10, 15), date(1600, 12, 31)
ACROSS_FIRST, ACROSS_LAST = date(1570, 1, 1), date(1582, 10, 14)


class Coin(random.Random):
    """A Random whose ``random()`` always returns ``value``: it forces the boundary coin
    (and the expert mode) while integer and ``choice`` draws stay random."""

    def __init__(self, seed: int, value: float) -> None:
        super().__init__(seed)
        self.value = value

    def random(self) -> float:
        return self.value

    # defining getrandbits keeps Random's integer draws on getrandbits, not on random()
    def getrandbits(self, k: int) -> int:
        return super().getrandbits(k)


def draw(difficulty, task_type, count, seed=0, rng=None):
    rng = rng or random.Random(f"{difficulty}-{task_type}-{seed}")
    return [generate(rng, difficulty, task_type) for _ in range(count)]


def d(text: str) -> date:
    return date.fromisoformat(text)


def offset(item) -> int:
    if item.task_type == "add_days":
        return item.inputs["n"]
    return (d(item.inputs["end"]) - d(item.inputs["start"])).days


def result(item) -> date:
    if item.task_type == "add_days":
        return d(item.gold)
    return d(item.inputs["end"])


# --- the predecessor's draws ---------------------------------------------------------------

# Computed by running the predecessor's generate_example (devtechedge/calendar-math @ 6bca5b5)
# with random.Random(42), then with random.Random(7) pinned to hard add_days.
PREDECESSOR_SEED_42 = [
    ("medium", "add_days", {"start": "2028-04-06", "n": -25}, "2028-03-12"),
    ("easy", "weekday", {"start": "2019-02-24"}, "Sunday"),
    ("medium", "weekday", {"start": "1998-11-25"}, "Wednesday"),
    ("medium", "add_days", {"start": "1996-05-03", "n": -13}, "1996-04-20"),
    ("easy", "weekday", {"start": "2018-04-19"}, "Thursday"),
    ("medium", "weekday", {"start": "2024-02-25"}, "Sunday"),
    ("medium", "days_between", {"start": "2004-11-20", "end": "2005-01-29"}, "70"),
    ("hard", "add_days", {"start": "1947-04-19", "n": 276}, "1948-01-20"),
]
PREDECESSOR_SEED_7_HARD_ADD = [
    ("hard", "add_days", {"start": "2000-03-01", "n": -393}, "1999-02-02"),
    ("hard", "add_days", {"start": "2025-01-01", "n": -247}, "2024-04-29"),
    ("hard", "add_days", {"start": "1967-01-18", "n": -79}, "1966-10-31"),
    ("hard", "add_days", {"start": "1900-12-31", "n": 106}, "1901-04-16"),
]
# sha256 over question|gold|difficulty lines: seeds 0-4, each of the pins below, 200 rows
PREDECESSOR_DIGEST = "7210dd72fd48f8cb3bea76455e98b157ddea528190d7b0b7c6b467ddb78e5958"
DIGEST_PINS = [
    (None, None), ("hard", None), (None, "weekday"),
    ("easy", "add_days"), ("medium", "days_between"), ("hard", "add_days"),
]  # fmt: skip


def summary(item):
    return (item.difficulty, item.task_type, dict(item.inputs), item.gold)


def test_same_draws_as_predecessor():
    rng = random.Random(42)
    assert [summary(generate(rng)) for _ in range(8)] == PREDECESSOR_SEED_42
    rng = random.Random(7)
    assert [summary(generate(rng, "hard", "add_days")) for _ in range(4)] == (
        PREDECESSOR_SEED_7_HARD_ADD
    )


def test_same_draws_as_predecessor_digest_with_pins():
    digest = hashlib.sha256()
    for seed in range(5):
        for difficulty, task_type in DIGEST_PINS:
            rng = random.Random(seed)
            for _ in range(200):
                item = generate(rng, difficulty, task_type)
                digest.update(f"{item.question}|{item.gold}|{item.difficulty}\n".encode())
    assert digest.hexdigest() == PREDECESSOR_DIGEST


# --- ranges per difficulty -------------------------------------------------------------------

RANGE_DRAWS = 3000


@pytest.mark.parametrize("difficulty", LEVELS)
def test_add_days_ranges(difficulty):
    items = draw(difficulty, "add_days", RANGE_DRAWS)
    low, high = N_MAGNITUDE[difficulty]
    magnitudes = [abs(item.inputs["n"]) for item in items]
    assert min(magnitudes) == low and max(magnitudes) == high
    assert all(item.inputs["n"] != 0 for item in items)
    signs = Counter(item.inputs["n"] > 0 for item in items)
    assert abs(signs[True] / RANGE_DRAWS - 0.5) < 0.04
    years = [d(item.inputs["start"]).year for item in items]
    assert (min(years), max(years)) == YEARS[difficulty]
    assert {item.difficulty for item in items} == {difficulty}


@pytest.mark.parametrize("difficulty", LEVELS)
def test_days_between_ranges(difficulty):
    items = draw(difficulty, "days_between", RANGE_DRAWS)
    low, high = DELTA_MAGNITUDE[difficulty]
    deltas = [offset(item) for item in items]
    assert min(abs(x) for x in deltas) == low and max(abs(x) for x in deltas) == high
    if SIGNED_DELTA[difficulty]:
        assert abs(sum(x > 0 for x in deltas) / RANGE_DRAWS - 0.5) < 0.04
    else:
        assert min(deltas) == 0  # easy counts never go backwards
    years = [d(item.inputs["start"]).year for item in items]
    assert (min(years), max(years)) == YEARS[difficulty]
    # the end may leave the year range (RULES 4), the start never does
    assert all(item.gold == str(x) for item, x in zip(items, deltas, strict=True))


@pytest.mark.parametrize("difficulty", LEVELS)
def test_weekday_ranges(difficulty):
    items = draw(difficulty, "weekday", RANGE_DRAWS)
    years = [d(item.inputs["start"]).year for item in items]
    assert (min(years), max(years)) == YEARS[difficulty]


def test_boundary_pool_is_the_32_listed_dates():
    assert len(RULES_BOUNDARY) == 32
    assert set(generator.BOUNDARY_DATES) == RULES_BOUNDARY


@pytest.mark.parametrize("task_type", ["add_days", "weekday"])
def test_forced_boundary_coin_draws_only_the_32_dates_and_all_of_them(task_type):
    items = draw("hard", task_type, 1000, rng=Coin(3, 0.0))
    starts = Counter(item.inputs["start"] for item in items)
    assert set(starts) == RULES_BOUNDARY
    items = draw("hard", task_type, 1000, rng=Coin(3, 0.999))
    assert sum(item.inputs["start"] in RULES_BOUNDARY for item in items) < 10


@pytest.mark.parametrize("task_type", ["add_days", "days_between", "weekday"])
def test_boundary_probability_per_task(task_type):
    items = draw("hard", task_type, RANGE_DRAWS)
    share = sum(item.inputs["start"] in RULES_BOUNDARY for item in items) / RANGE_DRAWS
    # a random date in 1890-2110 is one of the 32 with probability 32/80,717
    assert abs(share - BOUNDARY_P[task_type]) < 0.035, share


@pytest.mark.parametrize("difficulty", ["easy", "medium"])
def test_no_boundary_coin_below_hard(difficulty):
    # easy and medium draw no coin: forcing random() to 0 changes nothing
    forced = draw(difficulty, "add_days", 200, rng=Coin(11, 0.0))
    plain_rng = random.Random(11)
    plain = [generate(plain_rng, difficulty, "add_days") for _ in range(200)]
    assert forced == plain


# --- the mix, pinning, determinism ------------------------------------------------------------


def test_nominal_mix_and_uniform_task_types():
    rng = random.Random(2024)
    items = [generate(rng) for _ in range(12000)]
    levels = Counter(item.difficulty for item in items)
    assert set(levels) == set(NOMINAL_MIX)  # never expert
    for level, share in NOMINAL_MIX.items():
        assert abs(levels[level] / len(items) - share) < 0.02, levels
    tasks = Counter(item.task_type for item in items)
    for task_type in ("add_days", "days_between", "weekday"):
        assert abs(tasks[task_type] / len(items) - 1 / 3) < 0.02, tasks
    assert generator.MIX == (("easy", 0.40), ("medium", 0.35), ("hard", 0.25))
    assert generator.DIFFICULTIES == ("easy", "medium", "hard", "expert")


@pytest.mark.parametrize("task_type", ["add_days", "days_between", "weekday"])
def test_pinned_task_type(task_type):
    rng = random.Random(5)
    items = [generate(rng, task_type=task_type) for _ in range(600)]
    assert {item.task_type for item in items} == {task_type}
    assert {item.difficulty for item in items} == set(NOMINAL_MIX)


def test_same_rng_state_same_item_and_global_random_untouched():
    random.seed(1234)
    before = random.getstate()
    for difficulty in (None, *generator.DIFFICULTIES):
        first = random.Random(99)
        second = random.Random(99)
        assert [generate(first, difficulty) for _ in range(100)] == [
            generate(second, difficulty) for _ in range(100)
        ]
        state = first.getstate()
        one = generate(first, difficulty)
        first.setstate(state)
        assert generate(first, difficulty) == one
    assert random.getstate() == before
    assert [generate(random.Random(1)) for _ in range(5)] != [
        generate(random.Random(2)) for _ in range(5)
    ]


@pytest.mark.parametrize(
    ("kwargs", "allowed"),
    [
        ({"difficulty": "extreme"}, "expert"),
        ({"difficulty": ""}, "expert"),  # the predecessor took "" as "draw one"
        ({"difficulty": "Easy"}, "expert"),
        ({"task_type": "weekdays"}, "days_between"),
        ({"task_type": ""}, "days_between"),
    ],
)
def test_unknown_difficulty_or_task_type_names_the_allowed_values(kwargs, allowed):
    rng = random.Random(0)
    state = rng.getstate()
    with pytest.raises(ValueError, match=allowed):
        generate(rng, **kwargs)
    assert rng.getstate() == state  # refused before any draw


# --- expert -------------------------------------------------------------------------------------

_EXPERT: dict[str, list] = {}


def expert(task_type: str) -> list:
    if task_type not in _EXPERT:
        rng = random.Random(f"expert-{task_type}")
        _EXPERT[task_type] = [generate(rng, "expert", task_type) for _ in range(4000)]
    return _EXPERT[task_type]


def across_1582(item) -> bool:
    return REFORM_FIRST <= d(item.inputs["start"]) <= REFORM_LAST and (
        ACROSS_FIRST <= result(item) <= ACROSS_LAST
    )


@pytest.mark.parametrize(
    ("task_type", "magnitude"), [("add_days", EXPERT_N), ("days_between", EXPERT_DELTA)]
)
def test_expert_offsets_stay_in_years_1_to_9999(task_type, magnitude):
    items = expert(task_type)
    low, high = magnitude
    crossing = [item for item in items if across_1582(item)]
    assert 0.17 < len(crossing) / len(items) < 0.23
    assert all(offset(item) < 0 for item in crossing)
    assert any(date(1582, 10, 5) <= result(item) <= date(1582, 10, 14) for item in crossing)
    for item in items:
        assert date(1, 1, 1) <= result(item) <= date(9999, 12, 31)  # fromisoformat would fail
        assert offset(item) != 0
        if not across_1582(item):
            assert low <= abs(offset(item)) <= high, item
    spans = [abs(offset(item)) for item in items]
    assert sum(x >= 2000 for x in spans) / len(spans) > 0.6  # several thousand days
    starts = Counter(d(item.inputs["start"]).year for item in items)
    assert set(starts) >= EXPERT_YEARS
    # and random dates all over 1..9999: many distinct years, in every millennium
    assert len(starts) > 1000
    assert {(year - 1) // 1000 for year in starts} == set(range(10))


@pytest.mark.parametrize("task_type", ["add_days", "days_between"])
def test_expert_flips_the_sign_at_the_ends_of_the_calendar(task_type):
    # mode 0.3: boundary start; the extreme dates must fit whatever sign was drawn
    items = draw("expert", task_type, 2000, rng=Coin(8, 0.3))
    assert {item.inputs["start"] for item in items} == set(generator.EXPERT_BOUNDARY_DATES)
    first = [item for item in items if item.inputs["start"] == "0001-01-01"]
    last = [item for item in items if item.inputs["start"] == "9999-12-31"]
    assert first and last
    assert all(offset(item) > 0 for item in first)
    assert all(offset(item) < 0 for item in last)


def test_expert_boundary_pool():
    pool = set(generator.EXPERT_BOUNDARY_DATES)
    assert {date.fromisoformat(x).year for x in pool} == EXPERT_YEARS
    for year in EXPERT_YEARS:
        leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
        days = {"01-01", "01-31", "02-28", "03-01", "12-31", *(("02-29",) if leap else ())}
        if year == 1582:
            days |= {"10-04", "10-05", "10-14", "10-15"}
        assert {x[5:] for x in pool if x.startswith(f"{year:04d}-")} == days, year
    assert "1900-02-29" not in pool and "2400-02-29" in pool and "0400-02-29" in pool


def test_expert_weekday_boundary_share_and_years():
    items = draw("expert", "weekday", 4000)
    pool = set(generator.EXPERT_BOUNDARY_DATES)
    share = sum(item.inputs["start"] in pool for item in items) / len(items)
    assert abs(share - 0.6) < 0.035
    assert {d(item.inputs["start"]).year for item in items} >= EXPERT_YEARS
