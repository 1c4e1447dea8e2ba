"""Fair CPU between sessions: light work runs at once, heavy work takes turns.

Every session's reset and step runs in its own worker thread, and Python runs one thread
at a time: 32 sessions looping ~50 ms resets kept 32 threads asking for the interpreter,
and a quiet session's 0.1 ms step waited behind them (its p99 went from 2.1 to 554 ms).
Here a request runs at once only if what its session's requests of that kind have cost
lately is small (LIGHT_WORK_S); heavier ones, and kinds a session has not run yet, queue
for one shared lane, where the waiting session that has used the least CPU lately goes
next. So however many sessions loop expensive requests, a quiet one's cheap step
competes with one of them, and each of them gets its turn in proportion, no more.
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
    admitted: asyncio.Future


class FairShare:
    """The lanes that sessions' work runs through (used from the event loop only)."""

    def __init__(
        self,
        light_s: float = limits.LIGHT_WORK_S,
        half_life_s: float = limits.WORK_HALF_LIFE_S,
        heavy_turn_s: float = limits.HEAVY_TURN_S,
        heavy_max: int = limits.HEAVY_RUNNING_MAX,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.light_s, self.half_life = light_s, half_life_s
        self.heavy_turn_s, self.heavy_max = heavy_turn_s, heavy_max
        self.clock = clock
        self.usage: dict[str, Usage] = {}
        self.waiting: list[Waiter] = []
        self.running: dict[int, float] = {}  # heavy work running: its ticket, its start
        self.tickets = 0
        self.timer: asyncio.TimerHandle | None = None

    def light(self, session: str, kind: str) -> bool:
        """Whether ``session``'s next ``kind`` request runs at once: its dearest recent one
        cost at most ``light_s`` (decayed; a kind never run is not light)."""
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

        if self.light(session, kind):
            try:
                return await submit(timed)
            finally:
                self.charge(session, kind, spent[0])
        ticket = await self._turn(session)
        try:
            return await submit(timed)
        finally:
            self.charge(session, kind, spent[0])
            self.running.pop(ticket, None)
            self._admit()

    async def _turn(self, session: str) -> int:
        """Wait for the heavy lane; the ticket of the work admitted."""
        self.tickets += 1
        waiter = Waiter(self.tickets, session, asyncio.get_running_loop().create_future())
        self.waiting.append(waiter)
        self._admit()
        try:
            return await waiter.admitted
        except asyncio.CancelledError:
            if waiter in self.waiting:
                self.waiting.remove(waiter)
            elif waiter.admitted.done() and not waiter.admitted.cancelled():
                self.running.pop(waiter.admitted.result(), None)  # admitted, never ran
                self._admit()
            raise

    def _admit(self) -> None:
        """Start the next heavy work if the lane is free: nothing running, or everything
        running has had its turn (``heavy_turn_s``: a long walk does not hold the lane
        for its whole length) and fewer than ``heavy_max`` run."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        while self.waiting:
            now = self.clock()
            if self.running:
                youngest = max(self.running.values())
                if len(self.running) >= self.heavy_max:
                    return  # a finish admits the next
                if now - youngest < self.heavy_turn_s:
                    loop = asyncio.get_running_loop()
                    wait = self.heavy_turn_s - (now - youngest)
                    self.timer = loop.call_later(wait, self._admit)
                    return
            waiter = min(self.waiting, key=lambda w: (self.spent(w.session, now), w.arrived))
            self.waiting.remove(waiter)
            if waiter.admitted.done():  # cancelled meanwhile
                continue
            self.running[waiter.arrived] = now
            waiter.admitted.set_result(waiter.arrived)
