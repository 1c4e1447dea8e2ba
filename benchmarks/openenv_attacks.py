"""Run issue 26's four attacks on a ``meeting-gym serve`` on loopback, one at a time, and print
what the well-behaved clients and the server went through.

    python benchmarks/openenv_attacks.py                    # all four, MeetingSlot-v0
    python benchmarks/openenv_attacks.py --attack burst --json

Each attack gets a fresh server (a subprocess on a free 127.0.0.1 port), stopped with
SIGINT at its end; each lasts at most ``--seconds`` and stops by itself:

* ``slowloris``: 300 connections each send part of a request head and nothing more,
  reopened as soon as the server closes them; meanwhile ``/health`` is asked on a fresh
  connection five times a second (latency p50, p99 and worst; answers other than 200);
* ``burst``: 48 sessions each send 5 actions of 1M four-byte characters (4 MiB) at once,
  again as soon as all are answered, while 2 sessions play steps (their p99, against the
  same 2 sessions' p99 before the attack); the server's RSS at the start, at most, and
  2 s after the attack;
* ``bad_clients``: 1,002 clients, a third sending a text frame that is not UTF-8, a third
  a malformed frame, a third dropping their socket without a close handshake: the lines
  the server wrote;
* ``stop``: SIGINT while 8 sessions play and one walks to eval item 999 of a new split
  seed (``--env TimetablePlanner-v0``: about 28 s of work): how long the server took to
  exit, its status and its last line.

A benchmark, not a test (tests/adapters/openenv/test_openenv_abuse.py has one test per attack).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# the sibling benchmark's helpers (this folder is on sys.path when a script here runs)
from openenv_load import free_port, get_health, rss_mb

from meeting_gym.adapters.openenv import wait_healthy

ROOT = Path(__file__).resolve().parent.parent
ATTACKS = ("slowloris", "burst", "bad_clients", "stop")


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


async def health_probe(port: int, stop: float, latencies: list, failures: list) -> None:
    while time.monotonic() < stop:
        start = time.perf_counter()
        try:
            answer = await get_health(port)
            ok = answer.startswith(b"HTTP/1.1 200")
        except (OSError, TimeoutError):
            ok = False
        latencies.append(time.perf_counter() - start)
        if not ok:
            failures.append(1)
        await asyncio.sleep(0.2)


async def slowloris(server: Server, seconds: float) -> dict[str, Any]:
    stop = time.monotonic() + seconds
    opened = [0]

    async def one() -> None:
        while time.monotonic() < stop:
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            except OSError:
                await asyncio.sleep(0.05)
                continue
            opened[0] += 1
            writer.write(b"GET /health HTTP/1.1\r\nHost: x\r\nX-a: ")
            with contextlib.suppress(OSError, TimeoutError):
                await asyncio.wait_for(reader.read(), max(0.01, stop - time.monotonic()))
            writer.close()

    attackers = asyncio.gather(*(one() for _ in range(300)))
    await asyncio.sleep(1.0)  # all 300 open before the probes start
    latencies: list[float] = []
    failures: list[int] = []
    await health_probe(server.port, stop, latencies, failures)
    await attackers
    return {
        "slowloris_connections_opened": opened[0],
        "health_probes": len(latencies),
        "health_p50_ms": pct(latencies, 0.5),
        "health_p99_ms": pct(latencies, 0.99),
        "health_max_ms": pct(latencies, 1.0),
        "health_not_200": len(failures),
    }


async def _victim(url: str, stop: float, latencies: list) -> None:
    from websockets.asyncio.client import connect

    async with connect(url) as ws:
        while time.monotonic() < stop:
            await ws.send(json.dumps({"type": "reset", "data": {"seed": 1}}))
            await ws.recv()
            for _ in range(3):
                start = time.perf_counter()
                step = {"type": "step", "data": {"tool_call": {"name": "list_attendees"}}}
                await ws.send(json.dumps(step))
                await ws.recv()
                latencies.append(time.perf_counter() - start)


async def _attackers(url: str, stop: float, replies: dict[str, int]) -> None:
    """48 sessions sending 5 actions of 4 MiB at once, again and again, until ``stop``."""
    from websockets.asyncio.client import connect

    big = {"type": "step", "data": {"text": "\U0001f600" * (1 << 20)}}
    frame = json.dumps(big, ensure_ascii=False)  # 4 MiB of UTF-8, within MAX_ACTION_CHARS

    async def attacker() -> None:
        async with connect(url, max_size=None) as ws:
            await ws.send(json.dumps({"type": "reset", "data": {"seed": 2}}))
            await ws.recv()
            while time.time() < stop:
                for _ in range(5):
                    await ws.send(frame)
                for _ in range(5):
                    reply = json.loads(await asyncio.wait_for(ws.recv(), 120))
                    kind = reply["data"].get("code", "error") if reply["type"] == "error" else "ok"
                    replies[kind] = replies.get(kind, 0) + 1

    await asyncio.gather(*(attacker() for _ in range(48)))


def _attack_process(url: str, stop: float, out: Any) -> None:
    replies: dict[str, int] = {}
    asyncio.run(_attackers(url, stop, replies))
    out.put(replies)


async def burst(server: Server, seconds: float) -> dict[str, Any]:
    import multiprocessing

    start_mb = rss_mb(server.proc.pid)
    quiet: list[float] = []
    end_quiet = time.monotonic() + min(5.0, seconds / 3)
    await asyncio.gather(*(_victim(server.url, end_quiet, quiet) for _ in range(2)))
    # the attackers in a process of their own: sending 4 MiB frames would otherwise hold
    # up the victims' own event loop, and their latency would be the client's
    context = multiprocessing.get_context("spawn")
    out = context.Queue()
    attackers = context.Process(
        target=_attack_process, args=(server.url, time.time() + seconds, out)
    )
    attackers.start()
    stop = time.monotonic() + seconds
    samples: list[float] = []

    async def sample() -> None:
        while time.monotonic() < stop:
            samples.append(rss_mb(server.proc.pid))
            await asyncio.sleep(0.1)

    attacked: list[float] = []
    await asyncio.gather(sample(), *(_victim(server.url, stop, attacked) for _ in range(2)))
    replies = await asyncio.to_thread(out.get, True, 180)
    await asyncio.to_thread(attackers.join, 60)
    await asyncio.sleep(2.0)
    return {
        "rss_start_mb": round(start_mb, 1),
        "rss_max_mb": round(max(samples), 1),
        "rss_after_mb": round(rss_mb(server.proc.pid), 1),
        "actions_answered": replies,
        "victim_quiet_p99_ms": pct(quiet, 0.99),
        "victim_attacked_p99_ms": pct(attacked, 0.99),
        "victim_attacked_steps": len(attacked),
    }


async def bad_clients(server: Server, seconds: float) -> dict[str, Any]:
    from websockets.asyncio.client import connect

    stop = time.monotonic() + seconds

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
    return {"bad_clients": sent}


async def stop_under_load(server: Server, env_id: str) -> dict[str, Any]:
    from websockets.asyncio.client import connect

    players = []
    for _ in range(8):
        ws = await connect(server.url)
        players.append(ws)
    play = [asyncio.ensure_future(_keep_resetting(ws)) for ws in players]
    walker = await connect(server.url)
    far = {"split": "eval", "index": 999, "split_seed": 880_126}
    await walker.send(json.dumps({"type": "reset", "data": far}))
    await asyncio.sleep(1.0)
    code, took, lines = await asyncio.to_thread(server.stop)
    for task in play:
        task.cancel()
    await asyncio.gather(*play, return_exceptions=True)
    for ws in [*players, walker]:
        ws.transport.abort()
    return {"exit_code": code, "stop_s": took, "last_line": lines[-1] if lines else ""}


async def _keep_resetting(ws: Any) -> None:
    for seed in range(10**6):
        await ws.send(json.dumps({"type": "reset", "data": {"seed": seed}}))
        await ws.recv()


def run_attack(name: str, env_id: str, seconds: float) -> dict[str, Any]:
    server = Server(env_id)
    try:
        if name == "slowloris":
            result = asyncio.run(slowloris(server, seconds))
        elif name == "burst":
            result = asyncio.run(burst(server, seconds))
        elif name == "bad_clients":
            result = asyncio.run(bad_clients(server, seconds))
        else:
            result = asyncio.run(stop_under_load(server, env_id))
    finally:
        code, took, lines = server.stop()
    result.update(
        {
            "attack": name,
            "env": env_id,
            "server_lines": len(lines),
            "server_tracebacks": sum("Traceback" in line for line in lines),
            "exit_code": code,
            "stop_s": took,
        }
    )
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="MeetingSlot-v0")
    parser.add_argument("--attack", choices=(*ATTACKS, "all"), default="all")
    parser.add_argument("--seconds", type=float, default=15.0, help="length of each attack")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not 0 < args.seconds <= 50:
        parser.error("--seconds must be in (0, 50]")
    names = ATTACKS if args.attack == "all" else (args.attack,)
    results = [run_attack(name, args.env, args.seconds) for name in names]
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for result in results:
            print(" ".join(f"{key}={value}" for key, value in result.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
