"""The server's fair share of CPU between sessions (issue 50 item 3): its lanes, its order
and its accounting, tested directly (no server, no gymnasium); the attack itself is
measured by ``benchmarks/openenv_attacks.py --attack eval_resets``."""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from typing import Any

import pytest

from meeting_gym.adapters.openenv.fair import FairShare, decayed


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def fair(**options: float) -> tuple[FairShare, Clock]:
    clock = Clock()
    return FairShare(clock=clock, **options), clock


def test_decayed_halves_every_half_life_and_never_grows():
    assert decayed(8.0, 10.0, 12.0, 2.0) == pytest.approx(4.0)
    assert decayed(8.0, 10.0, 16.0, 2.0) == pytest.approx(1.0)
    assert decayed(8.0, 10.0, 9.0, 2.0) == 8.0  # a clock read before ``since``


def test_a_kind_never_run_is_heavy_a_cheap_one_light_a_dear_one_heavy_until_it_fades():
    share, clock = fair(light_s=0.001, half_life_s=2.0)
    assert not share.light("a", "step")
    share.charge("a", "step", 0.0002)
    assert share.light("a", "step")
    assert not share.light("a", "reset") and not share.light("b", "step")
    share.charge("a", "reset", 0.064)  # 64 ms: 6 half-lives to fall under 1 ms
    assert not share.light("a", "reset") and share.light("a", "step")
    clock.now += 11.9
    assert not share.light("a", "reset")
    clock.now += 0.2
    assert share.light("a", "reset")


def test_cheap_requests_do_not_wash_out_a_dear_one():
    """The dearest recent cost counts, not the mean: an attacker that mixes many cheap
    requests of a kind with a dear one keeps that kind heavy."""
    share, _ = fair(light_s=0.001)
    share.charge("a", "reset", 0.050)
    for _ in range(100):
        share.charge("a", "reset", 0.0001)
    assert not share.light("a", "reset")


def test_cpu_lately_adds_up_and_fades_and_forget_drops_it():
    share, clock = fair(half_life_s=2.0)
    share.charge("a", "reset", 0.010)
    share.charge("a", "step", 0.006)
    assert share.spent("a", clock.now) == pytest.approx(0.016)
    clock.now += 2.0
    assert share.spent("a", clock.now) == pytest.approx(0.008)
    share.forget("a")
    assert share.spent("a", clock.now) == 0.0 and not share.light("a", "step")


async def immediate(work):
    return work()


def gated() -> tuple[asyncio.Event, Any]:
    """A gate, and a ``submit`` whose work runs once the gate is set (a worker still busy)."""
    gate = asyncio.Event()

    async def held(work):
        await gate.wait()
        return work()

    return gate, held


def test_light_work_runs_beside_heavy_work_and_heavy_work_takes_turns():
    async def scenario() -> list[str]:
        share, _ = fair()
        share.charge("quiet", "step", 0.0001)
        order: list[str] = []
        release, held = gated()

        first = asyncio.ensure_future(share.run("x", "reset", held, lambda: order.append("x")))
        await asyncio.sleep(0)
        second = asyncio.ensure_future(share.run("y", "reset", held, lambda: order.append("y")))
        await asyncio.sleep(0)
        assert len(share.heavy.running) == 1 and len(share.heavy.waiting) == 1  # y waits
        await share.run("quiet", "step", immediate, lambda: order.append("quiet"))
        release.set()
        await asyncio.gather(first, second)
        assert not share.heavy.running and not share.heavy.waiting
        return order

    assert asyncio.run(scenario()) == ["quiet", "x", "y"]


def test_light_work_takes_turns_by_kind_so_looped_resets_delay_a_step_by_one_reset():
    """32 sessions' cheap resets wait in the light lane; a quiet session's step that comes
    after them goes next but one (the reset running ends first), not last."""

    async def scenario() -> list[str]:
        share, _ = fair()
        order: list[str] = []
        gate, held = gated()
        for name in [f"r{k}" for k in range(32)] + ["quiet"]:
            share.charge(name, "reset" if name != "quiet" else "step", 0.0002)
        runs = [asyncio.ensure_future(share.run("r0", "reset", held, lambda: order.append("r0")))]
        await asyncio.sleep(0)
        for k in range(1, 32):
            work = (lambda n: lambda: order.append(n))(f"r{k}")
            runs.append(asyncio.ensure_future(share.run(f"r{k}", "reset", immediate, work)))
        await asyncio.sleep(0)
        runs.append(
            asyncio.ensure_future(
                share.run("quiet", "step", immediate, lambda: order.append("quiet"))
            )
        )
        await asyncio.sleep(0)
        lane = share.light_lane
        assert len(lane.running) == 1 and len(lane.waiting) == 32  # one light at a time
        gate.set()
        await asyncio.gather(*runs)
        assert not lane.running and not lane.waiting and not share.heavy.waiting
        return order

    order = asyncio.run(scenario())
    assert order[:2] == ["r0", "quiet"]  # kinds take turns
    assert order[2:] == [f"r{k}" for k in range(1, 32)]  # first come first within a kind


def test_long_light_work_lets_the_next_start_after_its_turn():
    """A light request that turns out long (LIGHT_TURN_S) does not hold the lane."""

    async def scenario() -> int:
        share, clock = fair(light_turn_s=0.005)
        share.charge("a", "step", 0.0001)
        share.charge("b", "step", 0.0001)
        gate, held = gated()
        long = asyncio.ensure_future(share.run("a", "step", held, lambda: None))
        await asyncio.sleep(0)
        clock.now += 0.01
        answer = await asyncio.wait_for(share.run("b", "step", immediate, lambda: 3), 1)
        gate.set()
        await long
        return answer

    assert asyncio.run(scenario()) == 3


def test_the_heavy_lane_serves_the_session_with_the_least_cpu_lately_first():
    async def named() -> list[str]:
        share, _ = fair()
        share.charge("greedy", "other", 5.0)
        share.charge("modest", "other", 0.5)
        order: list[str] = []
        gate, held = gated()

        blocker = asyncio.ensure_future(share.run("first", "reset", held, lambda: None))
        await asyncio.sleep(0)
        runs = []
        for name in ("greedy", "modest", "new"):
            work = (lambda n: lambda: order.append(n))(name)
            runs.append(asyncio.ensure_future(share.run(name, "reset", immediate, work)))
            await asyncio.sleep(0)
        assert len(share.heavy.waiting) == 3
        gate.set()
        await asyncio.gather(blocker, *runs)
        return order

    assert asyncio.run(named()) == ["new", "modest", "greedy"]


def test_long_heavy_work_lets_the_next_start_after_its_turn_up_to_the_most_running():
    async def scenario() -> list[int]:
        share, clock = fair(heavy_turn_s=0.05, heavy_max=2)
        gate, held = gated()

        runs = [
            asyncio.ensure_future(share.run(f"s{k}", "reset", held, lambda: None)) for k in range(3)
        ]
        await asyncio.sleep(0)
        lane = share.heavy
        counts = [len(lane.running)]
        clock.now += 0.06  # the first has had its turn: the timer lets the second in
        await asyncio.sleep(0.08)
        counts.append(len(lane.running))
        clock.now += 0.06
        await asyncio.sleep(0.08)
        counts.append(len(lane.running))  # at most heavy_max, however long they run
        gate.set()
        await asyncio.gather(*runs)
        counts.append(len(lane.running) + len(lane.waiting))
        return counts

    assert asyncio.run(scenario()) == [1, 2, 2, 0]


def test_a_waiter_cancelled_leaves_the_lane_as_it_was():
    async def scenario() -> None:
        share, _ = fair()
        gate, held = gated()

        running = asyncio.ensure_future(share.run("a", "reset", held, lambda: None))
        await asyncio.sleep(0)
        waiting = asyncio.ensure_future(share.run("b", "reset", immediate, lambda: None))
        await asyncio.sleep(0)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert share.heavy.waiting == [] and len(share.heavy.running) == 1
        gate.set()
        await running
        assert share.heavy.running == {}
        # and the lane still serves: the next heavy request runs at once
        assert await share.run("c", "reset", immediate, lambda: 7) == 7

    asyncio.run(scenario())


def test_a_session_is_charged_the_cpu_its_work_took_in_its_thread_not_its_waits():
    """Costs are ``thread_time`` in the worker: a 30 ms busy loop is charged ~30 ms, a
    30 ms sleep almost nothing (a reset waiting on the interpreter is not charged)."""

    def busy() -> None:
        end = time.thread_time() + 0.03
        while time.thread_time() < end:
            pass

    async def scenario() -> tuple[float, float]:
        share = FairShare()
        loop = asyncio.get_running_loop()
        with concurrent.futures.ThreadPoolExecutor(1) as pool:

            async def submit(work):
                return await loop.run_in_executor(pool, work)

            await share.run("busy", "reset", submit, busy)
            await share.run("sleepy", "reset", submit, lambda: time.sleep(0.03))
        now = time.monotonic()
        return share.spent("busy", now), share.spent("sleepy", now)

    busy_s, sleepy_s = asyncio.run(scenario())
    assert 0.025 <= busy_s <= 0.06
    assert sleepy_s < 0.01


def test_work_that_raises_is_charged_and_frees_the_lane():
    async def scenario() -> FairShare:
        share = FairShare()

        def fails() -> None:
            raise ValueError("bad reset")

        with pytest.raises(ValueError, match="bad reset"):
            await share.run("a", "reset", immediate, fails)
        return share

    share = asyncio.run(scenario())
    lane = share.heavy
    assert lane.running == {} and lane.waiting == [] and "reset" in share.usage["a"].dearest
