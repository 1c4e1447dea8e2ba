"""When an expression fires: the day rule, exact equivalence, next run times.

Checked against RULES.md's tables, a brute-force proof of the 400-year claim behind exact
equivalence, and the independent oracle's minute-by-minute walk (``cron_oracle.walk``).
"""

from __future__ import annotations

import random
import time
from datetime import date, datetime, timedelta

import cron_oracle
import pytest

from meeting_gym.envs.cron_schedule.expression import parse
from meeting_gym.envs.cron_schedule.schedule import (
    day_key,
    day_passes,
    equivalent,
    fires,
    fires_ever,
    format_time,
    next_times,
    parse_time,
    schedule_id,
)

# RULES 3.4: (expression, a predicate on the date that says when the day passes)
DAY_RULE = [
    ("0 9 * * 1", lambda d: d.isoweekday() == 1),
    ("0 9 13 * FRI", lambda d: d.day == 13 or d.isoweekday() == 5),
    ("0 9 1-31 * 1", lambda d: True),
    ("0 9 */1 * 1", lambda d: d.isoweekday() == 1),
    ("0 9 */2 * 1", lambda d: d.isoweekday() == 1 and d.day % 2 == 1),
    ("0 9 1-31/2 * 1", lambda d: d.day % 2 == 1 or d.isoweekday() == 1),
    ("0 9 1 * */1", lambda d: d.day == 1),
    ("0 9 29 2 1", lambda d: d.month == 2 and (d.day == 29 or d.isoweekday() == 1)),
    ("0 9 31 2 1", lambda d: d.month == 2 and d.isoweekday() == 1),
    ("0 0 31 * *", lambda d: d.day == 31),
    ("0 0 29 2 *", lambda d: (d.month, d.day) == (2, 29)),
    ("0 0 * * 7", lambda d: d.isoweekday() == 7),
    ("0 0 * * 0", lambda d: d.isoweekday() == 7),
    ("0 0 *,5 * 1", lambda d: d.isoweekday() == 1),  # starts with '*': AND over a full set
]


@pytest.mark.parametrize("text, rule", DAY_RULE)
def test_the_day_rule_table_of_rules_3_4(text, rule):
    cron = parse(text)
    day = date(2023, 1, 1)
    while day < date(2029, 1, 1):  # 2024 and 2028 leap, every weekday of every date
        assert day_passes(cron, day.year, day.month, day.day) == rule(day), (text, day)
        day += timedelta(days=1)


def test_days_a_month_lacks_never_match():
    assert next_times(parse("0 0 30 2 *"), datetime(2024, 1, 1), 3) == []
    assert next_times(parse("0 0 31 4,6,9,11 *"), datetime(2024, 1, 1), 3) == []
    assert not fires_ever(parse("0 0 31 2 *"))
    assert next_times(parse("0 0 29 2 *"), datetime(2096, 3, 1), 3) == [
        "2104-02-29 00:00",  # 2100 is not a leap year
        "2108-02-29 00:00",
        "2112-02-29 00:00",
    ]
    months = {t[5:7] for t in next_times(parse("0 0 31 * *"), datetime(2024, 1, 1), 14)}
    assert months == {"01", "03", "05", "07", "08", "10", "12"}


# RULES 4: pairs and whether they are equivalent
EQUIVALENCE = [
    ("*/30 * * * *", "0,30 * * * *", True),
    ("*/30 * * * *", "0-59/30 * * * *", True),
    ("@weekly", "0 0 * * 7", True),
    ("@weekly", "0 0 * * SUN", True),
    ("@daily", "@midnight", True),
    ("@yearly", "0 0 1 JAN *", True),
    ("@hourly", "0 * * * *", True),
    ("0 9 * * MON-FRI", "0 9 * * 1,2,3,4,5", True),
    ("0 0 */1 * 1", "0 0 * * 1", True),
    ("0 0 */2 * 1", "0 0 1-31/2 * 1", False),
    ("0 0 1-31 * 1", "0 0 * * *", True),  # OR with a full dom set: every day
    ("0 0 1 * */1", "0 0 1 * *", True),
    ("0 0 31 2 1", "0 0 * 2 1", True),  # the dom side is empty in February
    ("0 0 29 2 1", "0 0 * 2 1", False),  # Feb 29 in leap years
    ("0 0 30 2 *", "5 5 31 4 *", True),  # neither ever fires
    ("0 0 30 2 *", "0 0 29 2 *", False),
    ("0 0 * * 0", "0 0 * * 7", True),
    ("0 0 1,15 * 0", "0 0 1,15 * 7", True),
    ("0 0 * 1-12 *", "0 0 * * *", True),
    ("0 0 * */3 *", "0 0 * JAN,APR,JUL,OCT *", True),
    ("0 0 31 1,2 *", "0 0 31 1 *", True),  # Feb has no 31st
    ("0 0 30 1,2 *", "0 0 30 1 *", True),
    ("0 0 29 1,2 *", "0 0 29 1 *", False),
    ("0 0 * * 1/3", "0 0 * * 1,4,7", True),
    ("0 0 * * 1/3", "0 0 * * 1,4", False),
    ("5 * * * *", "5-5 * * * *", True),
    ("0 12 * * *", "0 0 * * *", False),
    ("0 0 13 * 5", "0 0 13 * *", False),
]


@pytest.mark.parametrize("a, b, same", EQUIVALENCE)
def test_equivalence_table(a, b, same):
    assert equivalent(parse(a), parse(b)) is same
    assert equivalent(parse(b), parse(a)) is same
    assert (schedule_id(parse(a)) == schedule_id(parse(b))) is same
    oracle = cron_oracle.equivalent(cron_oracle.parse(a), cron_oracle.parse(b))
    assert oracle is same


def test_every_real_date_falls_on_every_weekday_in_the_400_year_cycle():
    """The claim that makes equivalence exact, proved by walking one Gregorian cycle.

    Every (month, day) pair, Feb 29 included, meets every weekday within 2000..2399, and
    the cycle repeats (146,097 days is a whole number of weeks), so the (month, day,
    weekday) triples are exactly the dates that ever exist.
    """
    seen = set()
    day, end = date(2000, 1, 1), date(2400, 1, 1)
    while day < end:
        seen.add((day.month, day.day, day.weekday()))
        day += timedelta(days=1)
    pairs = {(d.month, d.day) for d in (date(2024, 1, 1) + timedelta(n) for n in range(366))}
    assert len(pairs) == 366
    assert seen == {(m, d, w) for m, d in pairs for w in range(7)}
    assert (end - date(2000, 1, 1)).days % 7 == 0
    # the oracle's shorter window (2024-2052) also meets every triple
    window = set()
    day = date(2024, 1, 1)
    while day <= date(2052, 12, 31):
        window.add((day.month, day.day, day.weekday()))
        day += timedelta(days=1)
    assert window == seen


def test_day_key_is_the_set_of_passing_triples():
    rng = random.Random(3)
    for _ in range(100):
        cron = parse(cron_oracle.random_expression(rng))
        expected = 0
        for m in range(1, 13):
            for d in range(1, 32):
                try:
                    date(2024, m, d)
                except ValueError:
                    continue
                for w in range(7):  # weekday w (Sunday 0) on (m, d): find such a real date
                    year = next(y for y in range(2024, 2080) if _cron_weekday(y, m, d) == w)
                    if day_passes(cron, year, m, d):
                        expected |= 1 << (224 * (m - 1) + 32 * w + d)
        assert day_key(cron) == expected, cron.source


def _cron_weekday(year: int, month: int, day: int) -> int | None:
    try:
        return date(year, month, day).isoweekday() % 7
    except ValueError:
        return None


def _random_pair(rng: random.Random) -> tuple[str, str]:
    """Two expressions that are often equivalent: one of them rewritten or slightly changed."""
    a = cron_oracle.random_expression(rng)
    b = cron_oracle.random_expression(rng) if rng.random() < 0.3 else _rewrite(rng, a)
    return a, b


def _rewrite(rng: random.Random, text: str) -> str:
    cron = parse(text)
    fields = [",".join(map(str, cron.values(i))) for i in range(5)]
    fields[2] = ("*/1," if cron.dom_star else "") + fields[2] if rng.random() < 0.8 else fields[2]
    fields[4] = ("*/1," if cron.dow_star else "") + fields[4] if rng.random() < 0.8 else fields[4]
    if rng.random() < 0.3:  # a near miss
        index = rng.randint(0, 4)
        values = list(cron.values(index))
        values[0] = values[0] + 1 if values[0] < (59, 23, 28, 12, 6)[index] else values[0] - 1
        fields[index] = (fields[index].split(",")[0] + "," if "*/1" in fields[index] else "") + (
            ",".join(map(str, sorted(set(values))))
        )
    return " ".join(fields)


def _equivalence_check(seed: int, count: int) -> dict[bool, int]:
    rng = random.Random(seed)
    verdicts = {True: 0, False: 0}
    for _ in range(count):
        a, b = _random_pair(rng)
        same = equivalent(parse(a), parse(b))
        assert same == cron_oracle.equivalent(cron_oracle.parse(a), cron_oracle.parse(b)), (a, b)
        verdicts[same] += 1
    return verdicts


def test_equivalence_agrees_with_the_oracle_on_random_pairs():
    verdicts = _equivalence_check(seed=11, count=120)
    assert min(verdicts.values()) > 20, verdicts


@pytest.mark.slow
def test_equivalence_agrees_with_the_oracle_on_random_pairs_full_size():
    verdicts = _equivalence_check(seed=12, count=2000)
    assert min(verdicts.values()) > 400, verdicts


# ----------------------------------------------------------------------------- next run times


def test_next_times_examples():
    start = datetime(2024, 1, 1)  # a Monday
    assert next_times(parse("0 9 */2 * 1"), start, 3) == [
        "2024-01-01 09:00",
        "2024-01-15 09:00",
        "2024-01-29 09:00",
    ]
    assert next_times(parse("0 0 */2 * 1"), start, 3) == [  # midnight of the start excluded
        "2024-01-15 00:00",
        "2024-01-29 00:00",
        "2024-02-05 00:00",
    ]
    assert next_times(parse("0 0 */31 * 1"), start, 3) == [
        "2024-04-01 00:00",
        "2024-07-01 00:00",
        "2025-09-01 00:00",
    ]
    # seconds count from their minute: after 09:00:30 comes 09:01
    assert next_times(parse("* * * * *"), datetime(2024, 1, 1, 9, 0, 30), 2) == [
        "2024-01-01 09:01",
        "2024-01-01 09:02",
    ]
    assert next_times(parse("59 23 31 12 *"), datetime(2024, 12, 31, 23, 58), 2) == [
        "2024-12-31 23:59",
        "2025-12-31 23:59",
    ]
    assert next_times(parse("0 0 1 1 *"), datetime(9999, 6, 1), 3) == []  # the end of 9999
    assert next_times(parse("0 0 * * *"), start, 0) == []


def test_fires_is_the_minute_predicate():
    cron = parse("*/15 9-17 * * MON-FRI")
    assert fires(cron, datetime(2024, 1, 1, 9, 15, 59))
    assert not fires(cron, datetime(2024, 1, 1, 9, 16))
    assert not fires(cron, datetime(2024, 1, 6, 9, 15))  # a Saturday


def test_time_text():
    assert parse_time("2024-02-29 13:05") == datetime(2024, 2, 29, 13, 5)
    assert parse_time("2024-02-29T13:05:30") == datetime(2024, 2, 29, 13, 5, 30)
    assert format_time(datetime(7, 1, 2, 3, 4)) == "0007-01-02 03:04"
    for bad in ("2023-02-29 10:00", "2024-02-29", "2024-2-29 10:00", "2024-02-29 24:00", "x"):
        with pytest.raises(ValueError):
            parse_time(bad)


LEAP_AND_COMMON = (2023, 2024, 2025, 2028, 2100, 2000)


def _random_start(rng: random.Random) -> datetime:
    """One in three in late February of a leap or common year, one in three at a year end."""
    kind = rng.random()
    if kind < 1 / 3:
        year = rng.choice(LEAP_AND_COMMON)
        day = rng.randint(20, 29 if year % 4 == 0 and year != 2100 else 28)
        return datetime(year, 2, day, rng.randint(0, 23), rng.randint(0, 59))
    if kind < 2 / 3:
        return datetime(
            rng.choice(LEAP_AND_COMMON),
            12,
            rng.randint(24, 31),
            rng.randint(0, 23),
            rng.randint(0, 59),
        )
    return datetime(2020, 1, 1) + timedelta(minutes=rng.randint(0, 10 * 366 * 1440))


def _brute_force_check(seed: int, count: int, horizon_days: int) -> int:
    """next_times against the oracle's minute walk; returns the number of minutes walked."""
    rng = random.Random(seed)
    walked = 0
    for _ in range(count):
        text = cron_oracle.random_expression(rng)
        start = _random_start(rng)
        n = rng.choice((1, 3, 5))
        walk = cron_oracle.walk(cron_oracle.parse(text), start, n, horizon_days)
        walked += horizon_days * 1440 if len(walk) < n else 0
        ours = next_times(parse(text), start, n)
        first_day = (start + timedelta(minutes=1)).date()
        end = f"{first_day + timedelta(days=horizon_days)} 00:00"  # where the walk stops
        if len(walk) < n:  # the walk gave up at its horizon: compare what lies before it
            ours = [t for t in ours if t < end]
        assert ours == walk, (text, start)
    return walked


def test_next_times_match_a_minute_by_minute_walk():
    started = time.perf_counter()
    _brute_force_check(seed=1, count=1000, horizon_days=60)
    assert time.perf_counter() - started < 60


@pytest.mark.slow
def test_next_times_match_a_minute_by_minute_walk_full_size():
    """3,000 expressions, a 400-day horizon (the README's figure)."""
    _brute_force_check(seed=2, count=3000, horizon_days=400)


def test_next_times_are_fast():
    cron = parse("*/7 9-17 1,15 * MON-FRI")
    started = time.perf_counter()
    for day in range(1000):
        next_times(cron, datetime(2024, 1, 1) + timedelta(days=day), 10)
    assert time.perf_counter() - started < 1.0  # about 20 us each on a laptop
