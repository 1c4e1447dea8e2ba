"""Fair CPU between sessions: light and heavy work each take turns in a lane of their own.

Every session's reset and step runs in its own worker thread, and Python runs one thread
at a time: 32 sessions looping ~50 ms resets kept 32 threads asking for the interpreter,
and a quiet session's 0.1 ms step waited behind them (its p99 went from 2.1 to 554 ms).
Here a request is light if what its session's requests of that kind have cost lately is
small (LIGHT_WORK_S); heavier ones, and kinds a session has not run yet, are heavy. Each
kind of work has one lane, and a lane runs one request at a time (more only once the
running one has had its turn). In the heavy lane the waiting session that has used the
least CPU lately goes next; in the light lane kinds take turns (a step, then a reset, ...).
So a quiet session's cheap step competes with one expensive request, not with one each of
every session looping them; and 32 sessions looping cheap resets (0.2 ms each, all at
once in their own threads before: a quiet session's step p99 went to 20x) delay that step
by about one reset.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

from meeting_gym.adapters.openenv import limits

T = TypeVar("T")


def decayed(value: float, since: float, now: float, half_life: float) -> float:
    """``value`` measured at ``since``, halved every ``half_life`` seconds until ``now``."""
    return value * math.exp2(-max(0.0, now - since) / half_life)


@dataclass
class Usage:
    """What one session's work has cost lately: its CPU in all (for its turn in the
    heavy lane) and the dearest recent request of each kind (for its lane)."""

    cpu: float = 0.0
    cpu_at: float = 0.0
    dearest: dict[str, tuple[float, float]] = field(default_factory=dict)  # kind: (cost, at)


@dataclass
class Waiter:
    arrived: int
    session: str
    kind: str
    admitted: asyncio.Future


class Lane:
    """Work that takes turns: at most one runs, unless what runs has had its turn
    (``turn_s``: a long request does not hold the lane for its whole length), then up to
    ``running_max``; ``pick`` chooses who of the waiting goes next (used from the event
    loop only)."""

    def __init__(
        self,
        turn_s: float,
        running_max: int,
        pick: Callable[[list[Waiter], float], Waiter],
        clock: Callable[[], float],
    ) -> None:
        self.turn_s, self.running_max, self.pick, self.clock = turn_s, running_max, pick, clock
        self.waiting: list[Waiter] = []
        self.running: dict[int, float] = {}  # work running: its ticket, its start
        self.last_kind = ""
        self.tickets = 0
        self.timer: asyncio.TimerHandle | None = None

    async def turn(self, session: str, kind: str) -> int:
        """Wait for the lane; the ticket to give back to :meth:`done`."""
        self.tickets += 1
        loop = asyncio.get_running_loop()
        waiter = Waiter(self.tickets, session, kind, loop.create_future())
        self.waiting.append(waiter)
        self._admit()
        try:
            return await waiter.admitted
        except asyncio.CancelledError:
            if waiter in self.waiting:
                self.waiting.remove(waiter)
            elif waiter.admitted.done() and not waiter.admitted.cancelled():
                self.done(waiter.admitted.result())  # admitted, never ran
            raise

    def done(self, ticket: int) -> None:
        """The work of ``ticket`` ended: the next may start."""
        self.running.pop(ticket, None)
        self._admit()

    def _later(self, wait: float) -> None:
        self.timer = asyncio.get_running_loop().call_later(wait, self._admit)

    def _admit(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        while self.waiting:
            now = self.clock()
            if self.running:
                youngest = max(self.running.values())
                if len(self.running) >= self.running_max:
                    return  # a finish admits the next
                if now - youngest < self.turn_s:
                    self._later(self.turn_s - (now - youngest))
                    return
            waiter = self.pick(self.waiting, now)
            self.waiting.remove(waiter)
            if waiter.admitted.done():  # cancelled meanwhile
                continue
            self.running[waiter.arrived] = now
            self.last_kind = waiter.kind
            waiter.admitted.set_result(waiter.arrived)


class FairShare:
    """The lanes that sessions' work runs through (used from the event loop only)."""

    def __init__(
        self,
        light_s: float = limits.LIGHT_WORK_S,
        half_life_s: float = limits.WORK_HALF_LIFE_S,
        heavy_turn_s: float = limits.HEAVY_TURN_S,
        heavy_max: int = limits.HEAVY_RUNNING_MAX,
        light_turn_s: float = limits.LIGHT_TURN_S,
        light_max: int = limits.LIGHT_RUNNING_MAX,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.light_s, self.half_life = light_s, half_life_s
        self.clock = clock
        self.usage: dict[str, Usage] = {}
        self.light_lane = Lane(light_turn_s, light_max, self._other_kind, clock)
        self.heavy = Lane(heavy_turn_s, heavy_max, self._least_spent, clock)

    def light(self, session: str, kind: str) -> bool:
        """Whether ``session``'s next ``kind`` request goes in the light lane: its dearest
        recent one cost at most ``light_s`` (decayed; a kind never run is not light)."""
        usage = self.usage.get(session)
        if usage is None or kind not in usage.dearest:
            return False
        cost, at = usage.dearest[kind]
        return decayed(cost, at, self.clock(), self.half_life) <= self.light_s

    def charge(self, session: str, kind: str, cost: float) -> None:
        """Count ``cost`` CPU seconds of ``kind`` work to ``session``."""
        now = self.clock()
        usage = self.usage.setdefault(session, Usage(cpu_at=now))
        usage.cpu = decayed(usage.cpu, usage.cpu_at, now, self.half_life) + cost
        usage.cpu_at = now
        last = usage.dearest.get(kind)
        dearest = cost if last is None else max(cost, decayed(*last, now, self.half_life))
        usage.dearest[kind] = (dearest, now)

    def spent(self, session: str, now: float) -> float:
        """``session``'s CPU seconds lately (decayed to ``now``)."""
        usage = self.usage.get(session)
        return 0.0 if usage is None else decayed(usage.cpu, usage.cpu_at, now, self.half_life)

    def forget(self, session: str) -> None:
        """The session ended: its usage goes (a waiter of it, if any, still gets its turn)."""
        self.usage.pop(session, None)

    def _least_spent(self, waiting: list[Waiter], now: float) -> Waiter:
        """The heavy lane's next: the session with the least CPU lately."""
        return min(waiting, key=lambda w: (self.spent(w.session, now), w.arrived))

    def _other_kind(self, waiting: list[Waiter], now: float) -> Waiter:
        """The light lane's next: the first to come of another kind than the last one
        admitted, else the first to come. Kinds take turns, so sessions looping cheap
        resets delay another session's step by one reset, not by one reset each."""
        last = self.light_lane.last_kind
        return next((w for w in waiting if w.kind != last), waiting[0])

    async def run(
        self,
        session: str,
        kind: str,
        submit: Callable[[Callable[[], T]], Awaitable[T]],
        work: Callable[[], T],
    ) -> T:
        """``await submit(work)`` in ``session``'s lane, its CPU time counted to it.

        ``submit`` runs a callable in the session's worker thread; the CPU the callable
        takes there (``time.thread_time``) is what the session is charged.
        """
        spent = [0.0]

        def timed() -> T:
            started = time.thread_time()
            try:
                return work()
            finally:
                spent[0] = time.thread_time() - started

        lane = self.light_lane if self.light(session, kind) else self.heavy
        ticket = await lane.turn(session, kind)
        try:
            return await submit(timed)
        finally:
            self.charge(session, kind, spent[0])
            lane.done(ticket)
