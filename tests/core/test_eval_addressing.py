"""The -v1 ids' eval split: item ``k`` is one draw of its own (issue 26).

A ``-v0`` id walks the held-out draws and skips repeats, so its item ``k`` costs ``k``
draws (27.9 s for item 999 of a new split seed on TimetablePlanner). A ``-v1`` id's item
``k`` past the curated ones is held-out draw ``k - len(curated)`` of ``split_seed + 1``:
it needs no other item. These tests check the address against a re-derivation of the rule
written here (its own hash and generator calls), count the work an item costs, and show
where the two versions part.
"""

from __future__ import annotations

import hashlib
import random
import subprocess
import sys

import gymnasium as gym
import pytest

import meeting_gym
from meeting_gym.core.registry import make_task
from meeting_gym.core.splits import MAX_EVAL_ITEMS, MAX_INDEX, load_split, split_item

V1 = [env_id for env_id in meeting_gym.ENV_IDS if env_id.endswith("-v1")]


def _held_out(key: str) -> bool:
    # the partition, re-derived: 1 in 16 of sha256("meeting_gym:held-out:" + key)'s first byte
    return hashlib.sha256(f"meeting_gym:held-out:{key}".encode()).digest()[0] < 16


def _expected(task, seed: int, index: int, difficulty=None):
    """Item ``index`` of the eval split of a -v1 id, from the rule as the docs state it."""
    curated = [
        i for i in task.eval_prefix() if difficulty is None or task.item_difficulty(i) == difficulty
    ]
    if index < len(curated):
        return curated[index]
    j = index - len(curated)
    hand_picked = {task.key(i) for items in task.fixed_splits().values() for i in items}
    level = difficulty if difficulty is not None else task.difficulty
    for attempt in range(4096):
        rng = random.Random(f"meeting_gym:{seed + 1}:{j}" + (f":{attempt}" if attempt else ""))
        item = task.generate(rng, level)
        if _held_out(task.key(item)) and task.key(item) not in hand_picked:
            return item
    raise AssertionError("no held-out item in 4096 attempts")


def test_every_env_has_a_v1_id_beside_its_v0():
    assert len(V1) == 6
    assert [i.replace("-v1", "-v0") for i in V1] == [
        i for i in meeting_gym.ENV_IDS if i.endswith("-v0")
    ]
    for env_id in V1:
        assert make_task(env_id).eval_draws == "independent"
        assert make_task(env_id.replace("-v1", "-v0")).eval_draws == "distinct"


@pytest.mark.parametrize("env_id", V1)
def test_a_v1_eval_item_is_the_rule_re_derived(env_id):
    task = make_task(env_id)
    prefix = len(task.eval_prefix())
    for index in (0, prefix, prefix + 7, 999, 99_999, 10**12):
        got, _ = split_item(task, "eval", index, seed=2026)
        assert task.key(got) == task.key(_expected(task, 2026, index)), (env_id, index)


def test_a_v1_eval_item_at_a_level_is_the_rule_re_derived():
    task = make_task("CronSchedule-v1")
    for index in (0, 3, 99_999):
        got, _ = split_item(task, "eval", index, seed=7, difficulty="2")
        assert task.key(got) == task.key(_expected(task, 7, index, "2"))


@pytest.mark.parametrize("env_id", V1)
def test_a_far_v1_item_costs_its_own_draws_only(env_id, monkeypatch):
    """Item 99,999 generates as many items as its own draw takes: no walk (a count of
    work, not a timing)."""
    task = make_task(env_id)
    calls = []
    generate = type(task).generate_solved

    def counted(self, rng, difficulty):
        calls.append(1)
        return generate(self, rng, difficulty)

    monkeypatch.setattr(type(task), "generate_solved", counted)
    split_item(task, "eval", 99_999, seed=123_456_789)
    alone = len(calls)
    assert 1 <= alone <= 200  # about 16 on average: one item in 16 is held out
    calls.clear()
    split_item(task, "eval", 99_999, seed=123_456_789)
    assert len(calls) == alone  # and nothing was kept to make it cheaper the second time


def test_v1_repeats_where_v0_skips_and_they_agree_before():
    """On a small item space (level 1) a -v1 split samples with repeats, as train does;
    -v0 skips them. Up to the first repeat the two are the same items."""
    v0, v1 = make_task("CronSchedule-Tools-v0"), make_task("CronSchedule-Tools-v1")
    old = load_split("eval", 300, seed=42, difficulty="1", env=v0)
    new = load_split("eval", 300, seed=42, difficulty="1", env=v1)
    keys = [v1.key(item) for item in new]
    first_repeat = next(k for k, key in enumerate(keys) if key in keys[:k])
    assert [v0.key(i) for i in old[:first_repeat]] == keys[:first_repeat]
    assert len({v0.key(i) for i in old}) == 300  # v0: distinct
    assert len(set(keys)) < 300  # v1: a sample, repeats kept


@pytest.mark.parametrize("env_id", V1)
def test_v1_eval_and_train_stay_disjoint(env_id):
    task = make_task(env_id)
    prefix = {task.key(i) for i in task.eval_prefix()}
    hand_picked = {task.key(i) for items in task.fixed_splits().values() for i in items}
    for item in load_split("eval", 60, seed=9, env=task):
        key = task.key(item)
        assert key in prefix or (_held_out(key) and key not in hand_picked)
    for item in load_split("train", 60, seed=9, env=task):
        key = task.key(item)
        assert not _held_out(key) and key not in hand_picked


def test_the_addressing_is_a_registered_make_argument_of_each_id():
    """One route: each id registers ``eval_draws`` as a make argument, which the env's
    constructor takes (gym.make of a -v0 id with v1's argument addresses as v1 does)."""
    for env_id in meeting_gym.ENV_IDS:
        expected = "independent" if env_id.endswith("-v1") else "distinct"
        assert gym.spec(env_id).kwargs["eval_draws"] == expected
        assert gym.make(env_id).unwrapped.task.eval_draws == expected
    far = {"split": "eval", "index": 99_999, "split_seed": 31}
    as_v1 = gym.make("CalendarMath-v0", eval_draws="independent").reset(options=far)[1]
    assert as_v1["item_id"] == gym.make("CalendarMath-v1").reset(options=far)[1]["item_id"]
    with pytest.raises(ValueError, match="eval_draws must be one of"):
        gym.make("CalendarMath-v1", eval_draws="sideways")


def test_gym_make_plays_the_ids_addressing():
    """The env made by gym.make reads its id's version; -v0 keeps its walk and its bound."""
    options = {"split": "eval", "index": 99_999, "split_seed": 31}
    env = gym.make("CalendarMath-v1")
    _, info = env.reset(options=options)
    task = make_task("CalendarMath-v1")
    assert info["item_id"] == task.item_id(split_item(task, "eval", 99_999, seed=31)[0])
    with pytest.raises(ValueError, match="MAX_EVAL_ITEMS"):
        gym.make("CalendarMath-v0").reset(options=options)
    # within the v0 bound both versions address the same kind of item, each its own way
    small = {"split": "eval", "index": MAX_EVAL_ITEMS - 1, "split_seed": 31}
    assert gym.make("CalendarMath-v1").reset(options=small)[1]["item_id"]


def test_v1_index_bound_is_a_64_bit_integer():
    task = make_task("CalendarMath-v1")
    split_item(task, "eval", MAX_INDEX, seed=1)
    with pytest.raises(ValueError, match="MAX_INDEX is 2\\*\\*63 - 1"):
        split_item(task, "eval", MAX_INDEX + 1, seed=1)
    with pytest.raises(ValueError, match="MAX_INDEX"):
        split_item(
            task, "eval", 10**5000, seed=1
        )  # past Python's int-to-text limit, still one line


def test_a_v0_id_is_supported_not_out_of_date():
    """Gymnasium warns (once, on stderr) that an id with a newer version is "out of date";
    ours are supported beside their -v1, so that warning is silenced for them, and only for
    them (a fresh interpreter, where Gymnasium's own filter would show it)."""
    script = """
import gymnasium as gym, meeting_gym
for env_id in meeting_gym.ENV_IDS:
    gym.make(env_id, disable_env_checker=True).close()
gym.register("OtherToy-v0", entry_point="gymnasium.envs.classic_control:CartPoleEnv")
gym.register("OtherToy-v1", entry_point="gymnasium.envs.classic_control:CartPoleEnv")
gym.make("OtherToy-v0", disable_env_checker=True)
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "OtherToy-v0 is out of date" in done.stderr
    assert done.stderr.count("is out of date") == 1, done.stderr
