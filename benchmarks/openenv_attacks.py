"""Run issue 26's attacks on a ``meeting-gym serve`` on loopback, one at a time, and print
what the well-behaved clients and the server went through.

    python benchmarks/openenv_attacks.py                    # every attack, MeetingSlot-v0
    python benchmarks/openenv_attacks.py --attack walk --env TimetablePlanner-v0
    python benchmarks/openenv_attacks.py --attack burst --json
    python benchmarks/openenv_attacks.py --attack walk --repeat 5 --json   # the spread of runs

Each attack gets a fresh server (a subprocess on a free 127.0.0.1 port) and the same
measures, the issue's targets: 2 sessions play the same short episode again and again,
first alone for a quiet phase, then for ``--seconds`` while the attack runs (their step
p99 in each phase, and every reply against the quiet phase's: ``mismatches``); ``/health``
is asked on a fresh connection five times a second through both phases; the server's RSS
is taken at the start, sampled through the attack and taken 2 s after it ends; then the
attack starts again and, 1 s in, the server gets SIGINT (how long it took to exit, its
status, its lines and tracebacks). The attacks:

* ``walk``: a client asks for eval item 999 of a new split seed (on a ``-v0`` id a walk
  through the held-out stream: about 28 s of work on TimetablePlanner-v0; on ``-v1`` one
  draw) and waits for it;
* ``slowloris``: 300 connections each send part of a request head and nothing more,
  reopened as soon as the server closes them;
* ``bad_clients``: clients in batches of 50, a third sending a text frame that is not
  UTF-8, a third a malformed frame, a third dropping their socket without a close
  handshake (1,002 of them in the attack phase): the lines the server wrote;
* ``burst``: 48 sessions each send 5 actions of 1M four-byte characters (4 MiB) at once,
  again as soon as all are answered (from a process of their own);
* ``burst_reset``: the burst, and a 332 KiB TimetablePlanner reset (984 sessions) on a new
  connection once before it and every 2 s from 3 s into it: their times (use a
  TimetablePlanner id);
* ``headers``: 8 clients each send ``GET /health`` with 12,000 headers (118 KiB) in one
  write, again as soon as they have the reply (from a process of their own): the replies'
  statuses are counted;
* ``eval_resets``: 32 sessions each ask a far eval item of a ``-v1`` id (a random index
  past a million, a random split seed: ~17 ms of CPU on MeetingSlot-v1, ~60 ms on
  TimetablePlanner-v1, each legal) again as soon as they have it (from a process of their
  own): the replies are counted (on a ``-v0`` id such an index is refused, cheaply);
* ``train_resets`` and ``curated_resets``: the same with train items of random seeds
  (~1.4 ms on MeetingSlot-v1) and curated items (~0.1 ms).

A benchmark, not a test (tests/adapters/openenv/test_openenv_abuse.py has one test per attack).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# the sibling benchmark's helpers (this folder is on sys.path when a script here runs)
from openenv_load import free_port, probe_health, rss_mb

from meeting_gym.adapters.openenv import wait_healthy

ROOT = Path(__file__).resolve().parent.parent
ATTACKS = (
    "walk",
    "slowloris",
    "bad_clients",
    "burst",
    "burst_reset",
    "headers",
    "eval_resets",
    "train_resets",
    "curated_resets",
)
QUIET_S = 5.0
"""Seconds of the quiet phase."""
VICTIMS = 2
LOOPERS = 32
"""Sessions in each looping-reset attack."""


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(1e3 * ordered[int(q * (len(ordered) - 1))], 2) if ordered else float("nan")


class Server:
    """``meeting-gym serve`` on a free loopback port, its stderr kept in a temporary file."""

    def __init__(self, env_id: str, max_sessions: int = 80) -> None:
        self.port = free_port()
        self.stopped: tuple[int, float, list[str]] | None = None
        self.log = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 - closed in stop()
        command = [sys.executable, "-m", "meeting_gym.cli", "serve", "--env", env_id]
        command += ["--port", str(self.port), "--max-sessions", str(max_sessions)]
        self.proc = subprocess.Popen(command, cwd=ROOT, stderr=self.log)
        try:
            wait_healthy(
                f"http://127.0.0.1:{self.port}", 60, alive=lambda: self.proc.poll() is None
            )
        except (TimeoutError, RuntimeError) as exc:
            self.proc.kill()
            raise SystemExit(f"the server did not start: {exc}") from None

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    def stop(self) -> tuple[int, float, list[str]]:
        """SIGINT; returns the exit status, the seconds it took and the server's lines
        (the first call's, if called again)."""
        if self.stopped is not None:
            return self.stopped
        started = time.monotonic()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            code = self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait(timeout=30)
        took = time.monotonic() - started
        self.log.seek(0)
        lines = [line for line in self.log.read().splitlines() if line.strip()]
        self.log.close()
        self.stopped = code, round(took, 2), lines
        return self.stopped


class Victims:
    """Well-behaved sessions: each plays reset (seed 1) and 3 steps, again and again; each
    reply is checked against the first episode's (the quiet phase's)."""

    def __init__(self) -> None:
        self.reference: list[str] | None = None
        self.mismatches = 0

    async def play(self, url: str, stop: float, latencies: list) -> None:
        from websockets.asyncio.client import connect

        async with connect(url) as ws:
            while time.monotonic() < stop:
                replies = []
                await ws.send(json.dumps({"type": "reset", "data": {"seed": 1}}))
                replies.append(await ws.recv())
                for _ in range(3):
                    start = time.perf_counter()
                    step = {"type": "step", "data": {"tool_call": {"name": "list_attendees"}}}
                    await ws.send(json.dumps(step))
                    replies.append(await ws.recv())
                    latencies.append(time.perf_counter() - start)
                if self.reference is None:
                    self.reference = replies
                elif replies != self.reference:
                    self.mismatches += 1

    async def phase(self, server: Server, seconds: float) -> dict[str, Any]:
        """The victims and the ``/health`` probes for ``seconds``; the server's RSS sampled."""
        stop = time.monotonic() + seconds
        steps: list[float] = []
        health: list[float] = []
        failures: list[str] = []
        samples: list[float] = []

        async def sample() -> None:
            while time.monotonic() < stop:
                samples.append(rss_mb(server.proc.pid))
                await asyncio.sleep(0.1)

        await asyncio.gather(
            sample(),
            probe_health(server.port, stop, health, failures),
            *(self.play(server.url, stop, steps) for _ in range(VICTIMS)),
        )
        return {
            "steps": len(steps),
            "step_p99_ms": pct(steps, 0.99),
            "health_probes": len(health),
            "health_p99_ms": pct(health, 0.99),
            "health_not_200": len(failures),
            "rss_max_mb": round(max(samples), 1) if samples else float("nan"),
        }


async def walk(server: Server, stop: float, env_id: str, out: dict) -> None:
    """One client asks for eval item 999 of a new split seed and waits for it (or ``stop``)."""
    from websockets.asyncio.client import connect

    far = {"split": "eval", "index": 999, "split_seed": 880_126 + out.get("walks", 0)}
    out["walks"] = out.get("walks", 0) + 1
    async with connect(server.url) as ws:
        await ws.send(json.dumps({"type": "reset", "data": far}))
        started = time.monotonic()
        with contextlib.suppress(TimeoutError, asyncio.TimeoutError):
            await asyncio.wait_for(ws.recv(), max(0.01, stop - time.monotonic()))
            out["walk_s"] = round(time.monotonic() - started, 2)


async def slowloris(server: Server, stop: float, env_id: str, out: dict) -> None:
    """300 connections sending part of a request head, reopened when closed."""

    async def one() -> None:
        while time.monotonic() < stop:
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            except OSError:
                await asyncio.sleep(0.05)
                continue
            out["slowloris_opened"] = out.get("slowloris_opened", 0) + 1
            writer.write(b"GET /health HTTP/1.1\r\nHost: x\r\nX-a: ")
            with contextlib.suppress(OSError, TimeoutError, asyncio.TimeoutError):
                await asyncio.wait_for(reader.read(), max(0.01, stop - time.monotonic()))
            writer.close()

    await asyncio.gather(*(one() for _ in range(300)))


async def bad_clients(server: Server, stop: float, env_id: str, out: dict) -> None:
    """Bad clients in batches of 50 (at most 1,002 in one call)."""
    from websockets.asyncio.client import connect

    async def bad(kind: int) -> None:
        with contextlib.suppress(Exception):  # the server closes the bad ones
            ws = await connect(server.url)
            if kind == 0:
                await ws.send(b"\xff\xfe not UTF-8", text=True)
                await asyncio.wait_for(ws.recv(), 10)
            elif kind == 1:
                ws.transport.write(b"\x83\x00")  # unmasked, a reserved opcode
                await asyncio.wait_for(ws.recv(), 10)
            else:
                await ws.send(json.dumps({"type": "reset", "data": {"seed": 1}}))
                await ws.recv()
            ws.transport.abort()

    sent = 0
    while sent < 1002 and time.monotonic() < stop:
        batch = range(sent, min(sent + 50, 1002))
        await asyncio.gather(*(bad(i % 3) for i in batch))
        sent += len(batch)
    out["bad_clients"] = out.get("bad_clients", 0) + sent


async def _attackers(url: str, stop: float, replies: dict[str, int]) -> None:
    """48 sessions sending 5 actions of 4 MiB at once, again and again, until ``stop``."""
    from websockets.asyncio.client import connect

    big = {"type": "step", "data": {"text": "\U0001f600" * (1 << 20)}}
    frame = json.dumps(big, ensure_ascii=False)  # 4 MiB of UTF-8, within MAX_ACTION_CHARS

    async def attacker() -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            async with connect(url, max_size=None) as ws:
                await ws.send(json.dumps({"type": "reset", "data": {"seed": 2}}))
                await ws.recv()
                while time.time() < stop:
                    for _ in range(5):
                        replies["sent"] = replies.get("sent", 0) + 1  # begun, if not finished
                        await ws.send(frame)
                    for _ in range(5):
                        reply = json.loads(await asyncio.wait_for(ws.recv(), 120))
                        data = reply["data"]
                        kind = data.get("code", "error") if reply["type"] == "error" else "ok"
                        replies[kind] = replies.get(kind, 0) + 1
        except ConnectionClosed as exc:
            # closed before its stop: by the server (its code), unless the run was ending
            if time.time() < stop:
                code = exc.rcvd.code if exc.rcvd is not None else "none"
                replies[f"closed_{code}"] = replies.get(f"closed_{code}", 0) + 1
        except Exception:  # a stop closes them mid-burst
            pass

    await asyncio.gather(*(attacker() for _ in range(48)))


async def burst(server: Server, stop: float, env_id: str, out: dict) -> None:
    """The attackers in a process of their own: sending 4 MiB frames would otherwise hold
    up the victims' own event loop, and their latency would be the client's."""
    add_counts(out, "burst_replies_", await _in_process(_attackers, server.url, stop))


def large_reset() -> str:
    """A TimetablePlanner reset with a scenario of 332 KiB (``scaled_scenario(41)``: 984
    sessions), the legitimate large message of issue 50."""
    from meeting_gym.bench.timetable_planner import scaled_scenario

    return json.dumps({"type": "reset", "data": {"scenario": scaled_scenario(41).to_dict()}})


async def timed_reset(url: str, message: str) -> tuple[float, str]:
    """Seconds from sending ``message`` on a new connection to its reply; the reply's kind."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    # no client pings: a server that holds the message unread holds their pongs too
    async with connect(url, max_size=None, ping_interval=None) as ws:
        started = time.monotonic()
        await ws.send(message)
        try:
            reply = json.loads(await asyncio.wait_for(ws.recv(), 120))
        except (TimeoutError, asyncio.TimeoutError, ConnectionClosed):
            return time.monotonic() - started, "no reply"
        took = time.monotonic() - started
    kind = reply["type"] if reply["type"] != "error" else reply["data"].get("code", "error")
    return took, kind


async def burst_reset(server: Server, stop: float, env_id: str, out: dict) -> None:
    """The burst, and a 332 KiB TimetablePlanner reset on a new connection: once before the
    burst (its quiet time), then every 2 s from 3 s into it (a TimetablePlanner id)."""
    if not env_id.startswith("TimetablePlanner"):
        await burst(server, stop, env_id, out)  # no scenario to reset with: the burst alone
        return
    message = await asyncio.to_thread(large_reset)
    quiet, _ = await timed_reset(server.url, message)
    out.setdefault("large_reset_quiet_s", round(quiet, 3))
    flood = asyncio.ensure_future(burst(server, stop, env_id, out))
    await asyncio.sleep(3.0)
    times, kinds = [], []
    while time.monotonic() < stop - 1.0:
        took, kind = await timed_reset(server.url, message)
        times.append(took)
        kinds.append(kind)
        await asyncio.sleep(2.0)
    await flood
    if times:
        out["large_resets"] = len(times)
        out["large_resets_answered"] = kinds.count("observation")
        out["large_reset_attacked_max_s"] = round(max(times), 3)
        out["large_reset_ratio"] = round(max(times) / quiet, 2)


HUGE_HEAD = (
    b"GET /health HTTP/1.1\r\nHost: x\r\n"
    + b"".join(b"X-%d: a\r\n" % i for i in range(12_000))
    + b"\r\n"
)


async def _head_senders(port: int, stop: float, statuses: dict[str, int]) -> None:
    """8 clients sending HUGE_HEAD in one write, again and again, until ``stop``."""

    async def sender() -> None:
        while time.time() < stop:
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.write(HUGE_HEAD)
                line = await asyncio.wait_for(reader.readline(), 30)
                writer.close()
            except (OSError, TimeoutError, asyncio.TimeoutError):
                statuses["no reply"] = statuses.get("no reply", 0) + 1
                await asyncio.sleep(0.05)
                continue
            status = line.split(b" ")[1].decode() if line.count(b" ") >= 2 else "no reply"
            statuses[status] = statuses.get(status, 0) + 1

    await asyncio.gather(*(sender() for _ in range(8)))


async def headers(server: Server, stop: float, env_id: str, out: dict) -> None:
    """The head senders in a process of their own (their 118 KiB writes would otherwise
    be the victims' latency), their replies' statuses counted."""
    add_counts(out, "headers_replies_", await _in_process(_head_senders, server.port, stop))


def _counted(attack: Any, address: Any, stop: float, queue: Any) -> None:
    """``attack(address, wall-clock stop, counts)`` run to its end; the counts put on ``queue``."""
    counts: dict[str, int] = {}
    asyncio.run(attack(address, stop, counts))
    queue.put(counts)


def add_counts(out: dict, prefix: str, counts: dict[str, int]) -> None:
    """Add ``counts`` into ``out``, each key prefixed (an attack can run twice)."""
    for key, count in counts.items():
        out[prefix + key] = out.get(prefix + key, 0) + count


async def _in_process(attack: Any, address: Any, stop: float) -> dict[str, int]:
    """The attack coroutine ``attack(address, wall-clock stop, counts)`` in a spawned process
    (its own work is then not the victims' latency); the counts it kept."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    wall_stop = time.time() + (stop - time.monotonic())
    process = context.Process(target=_counted, args=(attack, address, wall_stop, queue))
    process.start()
    try:
        return await asyncio.to_thread(queue.get, True, stop - time.monotonic() + 180)
    finally:
        await asyncio.to_thread(process.join, 60)
        if process.is_alive():
            process.kill()


def loop_message(kind: str, draw: random.Random) -> dict[str, Any]:
    """One looping attacker's next request: a far ``-v1`` eval item (a random index past
    a million of a random split seed), a train item of a random seed, or a curated item."""
    if kind == "eval":
        index, seed = draw.randrange(10**6, 10**9), draw.randrange(10**6)
        return {"type": "reset", "data": {"split": "eval", "index": index, "split_seed": seed}}
    if kind == "train":
        return {"type": "reset", "data": {"seed": draw.randrange(10**9)}}
    return {"type": "reset", "data": {"split": "curated", "index": draw.randrange(3)}}


async def _loopers(address: tuple[str, str], stop: float, replies: dict[str, int]) -> None:
    """LOOPERS sessions each asking ``kind`` resets (``address`` is the url and the kind),
    the next as soon as one is answered."""
    from websockets.asyncio.client import connect

    url, kind = address

    async def looper(number: int) -> None:
        draw = random.Random(number)
        with contextlib.suppress(Exception):  # a stop closes them mid-request
            async with connect(url, max_size=None) as ws:
                while time.time() < stop:
                    await ws.send(json.dumps(loop_message(kind, draw)))
                    reply = json.loads(await asyncio.wait_for(ws.recv(), 120))
                    data = reply["data"]
                    key = data.get("code", "error") if reply["type"] == "error" else "ok"
                    replies[key] = replies.get(key, 0) + 1

    await asyncio.gather(*(looper(number) for number in range(LOOPERS)))


def looping(kind: str) -> Any:
    """The attack of LOOPERS sessions looping ``kind`` resets (from a process of their own,
    so their own work is not the victims' latency), their replies counted."""

    async def attack(server: Server, stop: float, env_id: str, out: dict) -> None:
        counts = await _in_process(_loopers, (server.url, kind), stop)
        add_counts(out, f"{kind}_resets_replies_", counts)

    return attack


KINDS = {
    "walk": walk,
    "slowloris": slowloris,
    "bad_clients": bad_clients,
    "burst": burst,
    "burst_reset": burst_reset,
    "headers": headers,
    "eval_resets": looping("eval"),
    "train_resets": looping("train"),
    "curated_resets": looping("curated"),
}


async def attacked(name: str, server: Server, env_id: str, seconds: float) -> dict[str, Any]:
    """The quiet phase, the attack phase, RSS after, then SIGINT 1 s into the attack again."""
    victims = Victims()
    start_mb = rss_mb(server.proc.pid)
    quiet = await victims.phase(server, QUIET_S)
    out: dict[str, Any] = {}
    attack = KINDS[name]
    stop = time.monotonic() + seconds
    running = asyncio.ensure_future(attack(server, stop, env_id, out))
    loud = await victims.phase(server, seconds)
    await asyncio.wait_for(running, 240)
    await asyncio.sleep(2.0)
    after_mb = rss_mb(server.proc.pid)
    # under attack again: the stop must not wait for it
    again = asyncio.ensure_future(attack(server, time.monotonic() + 30, env_id, {"walks": 100}))
    await asyncio.sleep(1.0)
    code, took, lines = await asyncio.to_thread(server.stop)
    again.cancel()
    with contextlib.suppress(BaseException):
        await asyncio.wait_for(again, 60)
    ratio = loud["step_p99_ms"] / quiet["step_p99_ms"] if quiet["step_p99_ms"] else float("nan")
    return {
        "attack": name,
        "env": env_id,
        **out,
        "victim_steps_quiet": quiet["steps"],
        "victim_steps_attacked": loud["steps"],
        "victim_p99_quiet_ms": quiet["step_p99_ms"],
        "victim_p99_attacked_ms": loud["step_p99_ms"],
        "victim_p99_ratio": round(ratio, 2),
        "victim_mismatches": victims.mismatches,
        "health_probes": quiet["health_probes"] + loud["health_probes"],
        "health_p99_quiet_ms": quiet["health_p99_ms"],
        "health_p99_attacked_ms": loud["health_p99_ms"],
        "health_not_200": quiet["health_not_200"] + loud["health_not_200"],
        "rss_start_mb": round(start_mb, 1),
        "rss_max_mb": max(quiet["rss_max_mb"], loud["rss_max_mb"]),
        "rss_max_above_start_mb": round(max(quiet["rss_max_mb"], loud["rss_max_mb"]) - start_mb, 1),
        "rss_after_mb": round(after_mb, 1),
        "stop_exit_code": code,
        "stop_s": took,
        "server_lines": len(lines),
        "server_tracebacks": sum("Traceback" in line for line in lines),
        "last_line": lines[-1] if lines else "",
    }


def run_attack(name: str, env_id: str, seconds: float) -> dict[str, Any]:
    server = Server(env_id)
    try:
        return asyncio.run(attacked(name, server, env_id, seconds))
    finally:
        server.stop()


def flood_table(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> str:
    """Two saved runs of ``burst_reset``, side by side: what became of the actions sent,
    the victims' p99, the 332 KiB resets' time."""
    lines = [
        "| run | actions sent | answered | `SERVER_BUSY` | sessions closed | unanswered "
        "| victims' step p99: quiet → attacked | 332 KiB reset: quiet → slowest under the "
        "flood (answered of asked) | RSS above start |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- | --- | --- |",
    ]
    for label, rows in (("before", before), ("after", after)):
        for row in rows:
            sent = row.get("burst_replies_sent", 0)
            ok = row.get("burst_replies_ok", 0)
            busy = row.get("burst_replies_SERVER_BUSY", 0)
            closed = sum(v for k, v in row.items() if k.startswith("burst_replies_closed"))
            steps = (
                f"{row['victim_p99_quiet_ms']} → {row['victim_p99_attacked_ms']} ms "
                f"({row['victim_p99_ratio']}x)"
            )
            if "large_resets" in row:
                reset = (
                    f"{row['large_reset_quiet_s']} → {row['large_reset_attacked_max_s']} s "
                    f"({row['large_reset_ratio']}x; {row['large_resets_answered']} of "
                    f"{row['large_resets']})"
                )
            else:
                reset = f"{row.get('large_reset_quiet_s', '-')} → none answered in the run"
            lines.append(
                f"| {label} | {sent:,} | {ok:,} | {busy:,} | {closed} | {sent - ok - busy:,} "
                f"| {steps} | {reset} | {row['rss_max_above_start_mb']} MB |"
            )
    return "\n".join(lines) + "\n"


def table(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> str:
    """Two saved runs (``--json``) of the same attacks, side by side, as a Markdown table
    (:func:`flood_table` for runs of ``burst_reset``)."""
    if all(row["attack"] == "burst_reset" for row in before + after):
        return flood_table(before, after)
    lines = [
        "| attack (env) | run | looping replies | victims' step p99: quiet → attacked "
        "| `/health` p99: quiet → attacked | mismatches, not 200 |",
        "| --- | --- | ---: | --- | --- | --- |",
    ]
    for label, rows in (("before", before), ("after", after)):
        for row in rows:
            replies = sum(v for k, v in row.items() if k.endswith("_resets_replies_ok"))
            steps = (
                f"{row['victim_p99_quiet_ms']} → {row['victim_p99_attacked_ms']} ms "
                f"({row['victim_p99_ratio']}x)"
            )
            health_ratio = row["health_p99_attacked_ms"] / row["health_p99_quiet_ms"]
            health = (
                f"{row['health_p99_quiet_ms']} → {row['health_p99_attacked_ms']} ms "
                f"({health_ratio:.2f}x)"
            )
            wrong = f"{row['victim_mismatches']}, {row['health_not_200']}"
            lines.append(
                f"| {row['attack']} ({row['env']}) | {label} | {replies:,} | {steps} "
                f"| {health} | {wrong} |"
            )
    return "\n".join(lines) + "\n"


def spread_table(rows: list[dict[str, Any]]) -> str:
    """Saved runs (``--json``, ``--repeat``) as one line per attack: the victims' p99 ratio
    of every run, and their median and range (one run is a noisy figure on a shared
    machine: the same code gave 4.15-5.5x in one day)."""
    runs: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        runs.setdefault((row["attack"], row["env"]), []).append(row)
    lines = [
        "| attack (env) | runs | victims' step p99, attacked / quiet: median (range) "
        "| each run | mismatches, not 200 |",
        "| --- | ---: | --- | --- | --- |",
    ]
    for (attack, env), group in runs.items():
        ratios = [row["victim_p99_ratio"] for row in group]
        wrong = (
            f"{sum(r['victim_mismatches'] for r in group)}, "
            f"{sum(r['health_not_200'] for r in group)}"
        )
        lines.append(
            f"| {attack} ({env}) | {len(group)} | {statistics.median(ratios):.2f}x "
            f"({min(ratios)}-{max(ratios)}x) | {', '.join(f'{x}x' for x in ratios)} | {wrong} |"
        )
    return "\n".join(lines) + "\n"


def read_run(path: Path) -> list[dict[str, Any]]:
    """A saved run (``--json``); ``ValueError`` naming what is wrong with it."""
    try:
        rows = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: {exc}") from None
    if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) for r in rows):
        raise ValueError(f"{path}: not a saved run (a JSON list of attack results)")
    needed = {"attack", "env", "victim_p99_ratio", "health_p99_quiet_ms"}
    for row in rows:
        if not needed <= row.keys():
            raise ValueError(f"{path}: not a saved run (a row lacks {sorted(needed - row.keys())})")
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="MeetingSlot-v0")
    parser.add_argument(
        "--attack", nargs="+", choices=(*ATTACKS, "all"), default=["all"], help="one or more"
    )
    parser.add_argument("--seconds", type=float, default=15.0, help="length of each attack")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--table",
        nargs=2,
        type=Path,
        metavar=("BEFORE", "AFTER"),
        help="print the table of two saved runs (--json) and stop",
    )
    parser.add_argument(
        "--spread",
        nargs="+",
        type=Path,
        metavar="RUN",
        help="print each attack's victims' p99 ratio over saved runs (--json) and stop",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="run each attack this many times (a fresh server each)",
    )
    args = parser.parse_args()
    if args.table:
        try:
            before, after = (read_run(path) for path in args.table)
        except ValueError as exc:
            parser.error(f"--table: {exc}")
        print(table(before, after), end="")
        return 0
    if args.spread:
        try:
            rows = [row for path in args.spread for row in read_run(path)]
        except ValueError as exc:
            parser.error(f"--spread: {exc}")
        print(spread_table(rows), end="")
        return 0
    if not 0 < args.seconds <= 50:
        parser.error("--seconds must be in (0, 50]")
    if not 1 <= args.repeat <= 20:
        parser.error("--repeat must be in [1, 20]")
    names = ATTACKS if "all" in args.attack else tuple(args.attack)
    runs = [(name, k) for k in range(1, args.repeat + 1) for name in names]
    results = []
    started = time.monotonic()
    for k, (name, repeat) in enumerate(runs, 1):
        # progress on stderr from the first seconds (an attack takes seconds + ~25 s)
        left = (len(runs) - k + 1) * (args.seconds + 25)
        print(
            f"attack {k}/{len(runs)}: {name} on {args.env}, run {repeat} of {args.repeat} "
            f"(about {left:.0f} s left)",
            file=sys.stderr,
            flush=True,
        )
        results.append({**run_attack(name, args.env, args.seconds), "run": repeat})
    print(f"attacks done in {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for result in results:
            print(" ".join(f"{key}={value}" for key, value in result.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
