"""Heavy resets choose their item in a worker process, outside the sessions' interpreter.

Python runs one thread at a time, so a quiet session's 0.1 ms step shares the interpreter
with whatever heavy request runs: even one at a time in the heavy lane (:mod:`fair`), 32
sessions looping far ``-v1`` eval resets (2-50 ms of CPU each) kept its p99 at ~5x quiet,
and a ``-v0`` eval walk (seconds) at ~3x. What makes those resets dear is choosing the
item (walking a split's stream, generating and solving an item); playing it is cheap.

So an addressed reset (``split`` and ``index``) that the heavy lane runs chooses its item
here: the env's own :meth:`~meeting_gym.core.text_env.TextEnv.choose`, on an env made with
the session's id and arguments in a worker process, so the item is the one the session's
env would have chosen; the session's env then plays it
(:meth:`~meeting_gym.core.text_env.TextEnv.supplied`). A choice that fails comes back as
nothing, and the session's env makes it again itself, so the error a client sees is the
one it always saw. A client that leaves during a choice ends that worker (killed; another
is made at the next need), so an abandoned walk stops at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import signal
import time
from collections import deque
from typing import Any

from meeting_gym.adapters.openenv import limits

Chosen = tuple[Any, Any]


def _work(conn: Any, niceness: int) -> None:
    """A worker's loop: (env id, env arguments, options) in; (chosen or None, CPU s) out."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the server's stop ends it, not a Ctrl-C
    os.nice(niceness)  # dear work yields the CPU to the sessions' light work
    import gymnasium as gym

    import meeting_gym  # noqa: F401  (registers the ids)

    envs: dict[str, Any] = {}
    while True:
        try:
            env_id, env_kwargs, options = conn.recv()
        except (EOFError, OSError):
            return  # the server is gone
        started = time.process_time()
        chosen: Chosen | None
        try:
            key = repr((env_id, sorted(env_kwargs.items())))
            if key not in envs:
                envs[key] = gym.make(env_id, mode="text", disable_env_checker=True, **env_kwargs)
            chosen = envs[key].unwrapped.choose(options)
        except Exception:  # the session's env raises it again, with its own message
            chosen = None
        cost = time.process_time() - started
        try:
            conn.send((chosen, cost))
        except Exception:  # an item that does not pickle: the session chooses it itself
            conn.send((None, cost))


class _Worker:
    def __init__(self, context: Any) -> None:
        self.conn, child = context.Pipe()
        self.process = context.Process(
            target=_work, args=(child, limits.CHOICE_NICENESS), daemon=True
        )
        self.child = child

    def start(self) -> None:
        self.process.start()
        self.child.close()  # the worker's end lives in the worker only

    def kill(self) -> None:
        with contextlib.suppress(Exception):
            self.process.kill()
        with contextlib.suppress(Exception):
            self.conn.close()


class ChoicePool:
    """Up to ``workers`` worker processes, made when first needed and kept while they
    serve (used from the event loop only)."""

    def __init__(self, workers: int = limits.CHOICE_WORKERS) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.workers = workers
        self.idle: list[_Worker] = []
        self.alive: set[_Worker] = set()
        self.waiting: deque[asyncio.Future] = deque()
        self.closed = False
        # a fresh interpreter per worker, not a fork of the server's threads and sockets;
        # the fork server makes later workers (after a kill) in milliseconds
        self.context = multiprocessing.get_context("forkserver")
        self.context.set_forkserver_preload(["gymnasium", "meeting_gym", __name__])

    async def warm(self) -> None:
        """Start the fork server the workers come from (a second of CPU, importing the
        package), at the server's start-up rather than during the first dear reset, where
        it took a core from every session for that second."""
        from multiprocessing import forkserver

        await asyncio.get_running_loop().run_in_executor(None, forkserver.ensure_running)

    async def choose(
        self, env_id: str, env_kwargs: dict[str, Any], options: dict[str, Any], gone: asyncio.Event
    ) -> tuple[Chosen | None, float]:
        """The item ``options`` name for a session of ``env_id`` made with ``env_kwargs``,
        and the CPU seconds the choice took; None where it failed (the session's env makes
        it again, and raises). ``gone`` set: the worker is killed, and ``WalkAbandoned``."""
        from meeting_gym.core.splits import WalkAbandoned

        if self.closed:
            return None, 0.0
        worker = await self._take()
        loop = asyncio.get_running_loop()
        ready = loop.create_future()
        fd = worker.conn.fileno()
        kept = False
        try:
            worker.conn.send((env_id, env_kwargs, options))
            loop.add_reader(fd, lambda: ready.done() or ready.set_result(None))
            left = asyncio.ensure_future(gone.wait())
            try:
                await asyncio.wait({ready, left}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                left.cancel()
                loop.remove_reader(fd)
            if not ready.done():
                raise WalkAbandoned("the client left while its item was being chosen")
            chosen, cost = worker.conn.recv()
            kept = True
            return chosen, cost
        except (EOFError, OSError):
            return None, 0.0  # the worker died: the session's env chooses for itself
        finally:
            ready.cancel()
            self._give(worker, kept)

    async def _take(self) -> _Worker:
        while not self.idle and len(self.alive) >= self.workers:
            waiter = asyncio.get_running_loop().create_future()
            self.waiting.append(waiter)
            try:
                await waiter
            finally:
                if waiter in self.waiting:
                    self.waiting.remove(waiter)
        if self.idle:
            return self.idle.pop()
        worker = _Worker(self.context)
        self.alive.add(worker)
        try:
            # starting the fork server the first time takes a second: not on the loop
            await asyncio.get_running_loop().run_in_executor(None, worker.start)
        except BaseException:
            self.alive.discard(worker)
            worker.kill()
            self._wake()
            raise
        return worker

    def _give(self, worker: _Worker, keep: bool) -> None:
        if keep and not self.closed:
            self.idle.append(worker)
        else:
            self.alive.discard(worker)
            worker.kill()
        self._wake()

    def _wake(self) -> None:
        while self.waiting:
            waiter = self.waiting.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def close(self) -> None:
        """Every worker killed (the server stops)."""
        self.closed = True
        for worker in list(self.alive):
            worker.kill()
        self.alive.clear()
        self.idle.clear()
