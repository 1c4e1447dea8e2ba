"""The CronSchedule generator: seeded, valid, and the level table of its docstring, monotone."""

from __future__ import annotations

import itertools
import random
import re
from collections import Counter
from datetime import datetime

import pytest

from meeting_gym.envs.cron_schedule.expression import parse
from meeting_gym.envs.cron_schedule.generator import generate
from meeting_gym.envs.cron_schedule.items import CronItem
from meeting_gym.envs.cron_schedule.schedule import fires, fires_ever, next_times, parse_time

LEVELS = ("1", "2", "3", "4")


def _sample(level: str, count: int = 1500, kind: str = "mixed", **kwargs):
    return [
        generate(random.Random(f"gen:{level}:{i}"), level, kind, **kwargs) for i in range(count)
    ]


def features(text: str) -> set[str]:
    """The constructs one expression uses, by its syntax and its meaning."""
    if text.startswith("@"):
        return {"macro"}
    cron = parse(text)
    minute, hour, dom, month, dow = text.split()
    out = set()
    out.add(
        "minute "
        + (
            "step"
            if minute.startswith("*/")
            else "every"
            if minute == "*"
            else "list"
            if "," in minute
            else "single"
            if minute.isdigit()
            else "offset"
        )
    )
    out.add(
        "hour "
        + (
            "every"
            if hour == "*"
            else "step"
            if "/" in hour
            else "list"
            if "," in hour
            else "range"
            if "-" in hour
            else "single"
        )
    )
    if dom != "*":
        out.add("dom")
    if dow != "*":
        out.add("dow")
    if month != "*":
        out.add("month")
    if re.search(r"[A-Za-z]", month + dow):
        out.add("names")
    if dom != "*" and dow != "*":
        out.add("both days, AND" if cron.and_rule else "both days, OR")
    if re.search(r"(^|[,-])7", dow):
        out.add("sunday as 7")
    if "/" in dow and not dow.startswith("*"):
        out.add("weekday N/STEP")
    if any(d >= 29 for d in cron.values(2)) and dom != "*":
        out.add("the 29th to the 31st")
    if "-" in minute and "/" in minute:
        out.add("minute a-b/N")
    return out


def test_same_rng_state_same_task_and_no_global_random():
    random.seed(1)
    state = random.getstate()
    for level in LEVELS:
        for kind in ("write", "read", "mixed"):
            a = generate(random.Random(f"x{level}{kind}"), level, kind)
            b = generate(random.Random(f"x{level}{kind}"), level, kind)
            assert a == b
    assert random.getstate() == state


def test_every_task_is_valid_and_its_truth_is_right():
    for level in LEVELS:
        for item, truth in _sample(level, 400):
            assert CronItem.from_dict(item.to_dict()) == item  # every field re-checked
            cron = parse(item.expression)
            assert fires_ever(cron) and item.difficulty == level
            if item.kind == "write":
                assert truth == cron and item.gold == item.expression
            else:
                assert list(truth) == next_times(cron, parse_time(item.start), item.num_times)
                assert item.gold == "\n".join(truth)


def test_the_levels_are_monotone_and_each_adds_constructs():
    seen = {level: Counter() for level in LEVELS}
    for level in LEVELS:
        for item, _ in _sample(level):
            seen[level].update(features(item.expression))
    common = {level: {f for f, n in seen[level].items() if n >= 3} for level in LEVELS}
    for lower, higher in itertools.pairwise(LEVELS):
        assert common[lower] <= set(seen[higher]), (lower, common[lower] - set(seen[higher]))
        assert set(seen[higher]) - set(seen[lower]), higher  # something new
    assert not {"dom", "dow", "month"} & set(seen["1"])
    assert not {f for f in seen["2"] if f.startswith("both days")}
    assert {"both days, OR", "sunday as 7", "minute a-b/N"} <= common["3"]
    assert "both days, AND" not in seen["3"]
    assert {"both days, AND", "macro", "weekday N/STEP", "the 29th to the 31st"} <= common["4"]


def test_level_3_restricts_both_day_fields_in_half_its_tasks():
    items = [item for item, _ in _sample("3", 2000)]
    share = sum(item.both_days_restricted for item in items) / len(items)
    assert 0.4 < share < 0.6


def _on_a_run(item: CronItem) -> bool:
    return fires(parse(item.expression), parse_time(item.start))


def test_read_starts_by_level():
    for level, low, high in (("1", 0, 0), ("2", 0, 0), ("3", 0.4, 0.6), ("4", 0.2, 0.4)):
        items = [item for item, _ in _sample(level, 1500, "read")]
        share = sum(_on_a_run(item) for item in items) / len(items)
        assert low <= share <= high, (level, share)
    late = Counter()
    for item, _ in _sample("4", 1000, "read"):
        start = datetime.strptime(item.start, "%Y-%m-%d %H:%M")
        if (start.month, start.day) >= (2, 25) and start.month == 2:
            late["february"] += 1
        if start.year in (2023, 2025, 2027, 2100) and start.month == 2:
            late["common february"] += 1
    assert late["february"] > 200 and late["common february"] > 80


def test_run_time_counts_by_level_and_the_setting_wins():
    assert {item.num_times for item, _ in _sample("2", 300, "read")} == {3}
    assert {item.num_times for item, _ in _sample("4", 600, "read")} == set(range(5, 11))
    for level in LEVELS:
        assert {item.num_times for item, _ in _sample(level, 50, "read", num_times=7)} == {7}


def test_kinds():
    assert {item.kind for item, _ in _sample("2", 100, "write")} == {"write"}
    assert {item.kind for item, _ in _sample("2", 100, "read")} == {"read"}
    mixed = Counter(item.kind for item, _ in _sample("2", 1000))
    assert mixed["write"] == pytest.approx(500, abs=80)


def test_no_level_draws_the_default_mix_evenly():
    levels = Counter(generate(random.Random(i))[0].difficulty for i in range(2000))
    assert set(levels) == set(LEVELS) and min(levels.values()) > 400


def test_the_same_items_in_other_processes_hash_seeds_and_time_zones():
    import os
    import subprocess
    import sys

    code = (
        "import hashlib, json\n"
        "from meeting_gym.core.splits import load_split\n"
        "rows = [json.dumps(i.to_dict(), sort_keys=True)\n"
        "        for i in load_split('train', n=400, env='CronSchedule-v0')]\n"
        "print(hashlib.sha256('\\n'.join(rows).encode()).hexdigest())\n"
    )
    digests = set()
    for hash_seed, zone in (("1", "UTC"), ("2", "Asia/Kathmandu"), ("3", "America/St_Johns")):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "TZ": zone}
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        digests.add(done.stdout.strip())
    assert len(digests) == 1
