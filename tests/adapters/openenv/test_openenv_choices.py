"""Heavy resets choose their item in a worker process (choices.py): the item is the one the
session's env would choose, a failed choice is made again by the session's env (so its
error is the one a client always saw), and a client gone ends the worker."""

from __future__ import annotations

import asyncio
import random

import gymnasium as gym
import pytest

import meeting_gym  # noqa: F401
from meeting_gym.adapters.openenv.choices import ChoicePool
from meeting_gym.adapters.openenv.fair import FairShare
from meeting_gym.core.splits import WalkAbandoned

IDS = ("MeetingSlot-v1", "TimetablePlanner-v1", "CronSchedule-Tools-v1", "CalendarMath-v0")


def far(draw: random.Random) -> dict:
    return {
        "split": "eval",
        "index": draw.randrange(10**6, 10**9),
        "split_seed": draw.randrange(99),
    }


@pytest.mark.parametrize("env_id", IDS)
def test_a_worker_chooses_the_item_the_sessions_env_would_and_it_plays_the_same(env_id):
    draw = random.Random(env_id)
    options = [far(draw) if env_id.endswith("v1") else {"split": "curated", "index": 1}]
    options.append({"split": "eval", "index": 3, "split_seed": 7})

    async def chosen() -> list:
        pool = ChoicePool(workers=1)
        try:
            return [await pool.choose(env_id, {}, o, asyncio.Event()) for o in options]
        finally:
            pool.close()

    for o, (item, cost) in zip(options, asyncio.run(chosen()), strict=True):
        assert item is not None and cost >= 0.0
        here = gym.make(env_id, mode="text", disable_env_checker=True)
        there = gym.make(env_id, mode="text", disable_env_checker=True)
        expected = here.reset(options=o)
        with there.unwrapped.supplied(o, item):
            played = there.reset(options=o)
        assert played == expected
        assert there.unwrapped._supplied is None  # the block's end forgets it


def test_supplied_plays_only_for_equal_options():
    env = gym.make("MeetingSlot-v1", mode="text", disable_env_checker=True)
    wanted = {"split": "eval", "index": 2}
    chosen = env.unwrapped.choose({"split": "curated", "index": 4})
    with env.unwrapped.supplied(wanted, chosen):
        other = env.reset(options={"split": "eval", "index": 3})
        supplied = env.reset(options=wanted)
    plain = gym.make("MeetingSlot-v1", mode="text", disable_env_checker=True)
    assert other == plain.reset(options={"split": "eval", "index": 3})
    assert supplied == plain.reset(options={"split": "curated", "index": 4})


def test_a_failed_choice_comes_back_as_nothing_and_the_worker_serves_on():
    async def go() -> tuple:
        pool = ChoicePool(workers=1)
        try:
            bad = await pool.choose(
                "MeetingSlot-v1", {}, {"split": "nope", "index": 0}, asyncio.Event()
            )
            good = await pool.choose(
                "MeetingSlot-v1", {}, {"split": "curated", "index": 0}, asyncio.Event()
            )
            return bad, good, len(pool.alive)
        finally:
            pool.close()

    (bad, _), (good, _), alive = asyncio.run(go())
    assert bad is None and good is not None and alive == 1


def test_a_client_gone_ends_the_worker_and_a_dead_worker_is_replaced():
    walk = {"split": "eval", "index": 999, "split_seed": 880_331}

    async def go() -> tuple:
        pool = ChoicePool(workers=1)
        try:
            gone = asyncio.Event()
            asyncio.get_running_loop().call_later(1.0, gone.set)
            with pytest.raises(WalkAbandoned):
                await pool.choose("TimetablePlanner-v0", {}, walk, gone)
            ended = not pool.alive
            again = await pool.choose(
                "CalendarMath-v0", {}, {"split": "curated", "index": 0}, asyncio.Event()
            )
            (worker,) = pool.alive
            worker.process.kill()
            worker.process.join(5)
            dead = await pool.choose(
                "CalendarMath-v0", {}, {"split": "curated", "index": 0}, asyncio.Event()
            )
            after = await pool.choose(
                "CalendarMath-v0", {}, {"split": "curated", "index": 0}, asyncio.Event()
            )
            return ended, again, dead, after
        finally:
            pool.close()

    ended, (again, _), (dead, _), (after, _) = asyncio.run(go())
    assert ended and again is not None
    assert dead is None  # the session's env chooses for itself
    assert after is not None  # a new worker


def test_more_choices_than_workers_wait_their_turn():
    async def go() -> list:
        pool = ChoicePool(workers=1)
        try:
            asks = [
                pool.choose(
                    "CalendarMath-v0", {}, {"split": "curated", "index": i}, asyncio.Event()
                )
                for i in range(4)
            ]
            results = await asyncio.gather(*asks)
            assert len(pool.alive) == 1
            return results
        finally:
            pool.close()

    results = asyncio.run(go())
    assert all(item is not None for item, _ in results)
    assert len({repr(item) for item, _ in results}) == 4


def test_work_elsewhere_takes_a_heavy_turn_and_is_charged_its_reported_cpu():
    async def go() -> tuple:
        fair = FairShare(half_life_s=1e9)

        async def work() -> tuple[str, float]:
            return "done", 0.25

        result = await fair.run_elsewhere("a", "reset", work)
        return result, fair.spent("a", fair.clock()), fair.light("a", "reset"), fair.heavy.running

    result, spent, light, running = asyncio.run(go())
    assert result == "done" and spent == pytest.approx(0.25)
    assert not light and not running


def test_the_pool_needs_a_worker():
    with pytest.raises(ValueError, match="at least 1"):
        ChoicePool(workers=0)
