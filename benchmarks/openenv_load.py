"""Load-test the OpenEnv server on loopback, without and then with hostile clients, in one run.

    python benchmarks/openenv_load.py                          # 64 sessions, 60 s per phase
    python benchmarks/openenv_load.py --sessions 8 --seconds 10 --env CalendarMath-v0
    python benchmarks/openenv_load.py --hostile 0              # well-behaved sessions only
    python benchmarks/openenv_load.py --sessions 64 --episodes 20   # a count, not a time

Starts ``meeting-gym serve`` as a subprocess on a free 127.0.0.1 port and runs two phases
against it, each ``--seconds`` long:

1. ``quiet``: ``--sessions`` WebSocket sessions (asyncio, one client each) play the env's
   reference policy, episode after episode, on train items addressed by split and index;
2. ``hostile``: the same, with ``--hostile`` hostile clients mixed in, each doing one of
   (in turn): actions over MAX_ACTION_CHARS, items over MAX_OPTION_CHARS, eval indices
   past MAX_EVAL_ITEMS, sockets dropped without a close handshake, malformed frames
   (not JSON objects, binary, deep nesting), HTTP bodies over the bound, and (issue 26)
   slowloris HTTP connections (SLOWLORIS each, a request head never finished, reopened
   when closed), text frames that are not UTF-8, and bursts of BURST actions of 4 MiB
   sent at once; plus a few silent sockets that connect and never send. Each hostile
   client sends at most ``--hostile-rate`` requests (or bursts) a second.

Through both phases ``/health`` is probed five times a second on a fresh connection
(its p99 and worst latency, and any answer that is not 200). At the end the server is
stopped with SIGINT while sessions still play (and, for ``--env`` with an eval split,
one session walks to a far eval item of a new split seed): the time it took to exit,
its exit status and how many lines it wrote over the whole run.

Every well-behaved episode is replayed in process (same item, same policy) and must match
step for step (observations and rewards): ``mismatches`` counts those that do not. The
server's RSS is sampled twice a second. Prints, per phase: episodes/s and the p50/p99
latency of one step as the client sees it (send to reply), and the p99 ratio (target:
hostile within 3x of quiet). Bounded in count and time; nothing leaves loopback. A
benchmark, not a test (tests/adapters/openenv/test_openenv_soak.py runs it short and checks
replay and RSS).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import itertools
import json
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from functools import cache
from pathlib import Path
from typing import Any

import gymnasium as gym

import meeting_gym  # noqa: F401  (registers the env ids)
from meeting_gym.adapters.openenv import wait_healthy
from meeting_gym.agents.policies import make_policy
from meeting_gym.core.registry import task_class
from meeting_gym.core.splits import MAX_EVAL_ITEMS
from meeting_gym.core.text_env import MAX_ACTION_CHARS, MAX_OPTION_CHARS

SPLIT_SEED = 7
SLOWLORIS = 25
"""Connections each slowloris client keeps half-open."""
BURST = 5
"""Actions of 4 MiB each burst client sends at once."""
SILENT = 4
"""Silent sockets held open through the hostile phase (they take session slots)."""
ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(env_id: str, port: int, sessions: int, log: Any) -> subprocess.Popen:
    command = [sys.executable, "-m", "meeting_gym.cli", "serve", "--env", env_id]
    command += ["--port", str(port), "--max-sessions", str(sessions)]
    proc = subprocess.Popen(command, cwd=ROOT, stderr=log)
    try:
        wait_healthy(f"http://127.0.0.1:{port}", 60, alive=lambda: proc.poll() is None)
    except (TimeoutError, RuntimeError) as exc:
        proc.kill()
        raise SystemExit(f"the server did not start: {exc}") from None
    return proc


def rss_mb(pid: int) -> float:
    """The resident set of process ``pid``, in MB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def digest(trace: list[Any]) -> str:
    return hashlib.sha256(json.dumps(trace, ensure_ascii=True).encode()).hexdigest()


def options_of(index: int) -> dict[str, Any]:
    return {"split": "train", "index": index, "split_seed": SPLIT_SEED}


@cache
def expected(env_id: str, index: int) -> str:
    """The digest of the reference policy's episode on train item ``index``, in process."""
    env = gym.make(env_id, mode="text", disable_env_checker=True)
    observation, info = env.reset(seed=index, options=options_of(index))
    policy = make_policy(task_class(env_id).reference_policy, seed=index, env=env_id)
    policy.reset(observation, info, seed=index)
    trace: list[Any] = [observation]
    while True:
        observation, reward, terminated, truncated, info = env.step(policy.act(observation))
        trace.append([observation, float(reward)])
        if terminated or truncated:
            return digest(trace)


async def ask(ws: Any, message: Any, timeout: float = 60) -> dict[str, Any]:
    await ws.send(json.dumps(message) if isinstance(message, dict) else message)
    return json.loads(await asyncio.wait_for(ws.recv(), timeout))


async def player(
    env_id: str,
    url: str,
    first: int,
    stop: float,
    latencies: list[float],
    played: list,
    episodes: int | None = None,
) -> None:
    """Episodes of the reference policy, back to back, until ``stop`` (monotonic) or, if
    ``episodes`` is given, that many (whichever comes first)."""
    from websockets.asyncio.client import connect

    policy_name = task_class(env_id).reference_policy
    async with connect(url, max_size=None) as ws:
        for index in itertools.count(first):
            reply = await ask(ws, {"type": "reset", "data": {"seed": index, **options_of(index)}})
            data = reply["data"]
            policy = make_policy(policy_name, seed=index, env=env_id)
            policy.reset(data["observation"]["text"], data["observation"]["info"], seed=index)
            trace: list[Any] = [data["observation"]["text"]]
            while not data["done"]:
                action = {"text": policy.act(data["observation"]["text"])}
                start = time.perf_counter()
                reply = await ask(ws, {"type": "step", "data": action})
                latencies.append(time.perf_counter() - start)
                data = reply["data"]
                trace.append([data["observation"]["text"], float(data["reward"])])
            played.append((index, digest(trace)))
            # checked after an episode: each session plays at least one
            if time.monotonic() >= stop or (episodes is not None and index + 1 - first >= episodes):
                return


HOSTILE_KINDS = (
    "huge_action",
    "huge_item",
    "eval_past_bound",
    "abandoned",
    "malformed",
    "big_body",
    "slowloris",
    "bad_utf8",
    "big_burst",
)
MALFORMED = ("[1,2]", '"reset"', "null", "[" * 1000 + "]" * 1000, b"\x00binary", "{")


async def hostile(
    kind: str, url: str, http: str, stop: float, rate: float, done: list, over: asyncio.Event
) -> None:
    """One hostile client doing ``kind`` until ``stop`` or ``over``, at most ``rate``
    requests a second."""
    from websockets.asyncio.client import connect

    pause = 1.0 / rate
    big_text = "x" * (MAX_ACTION_CHARS + 1)
    big_item = {"attendees": ["a" * 1000] * (MAX_OPTION_CHARS // 1000 + 10)}
    if kind == "slowloris":
        port = int(http.rsplit(":", 1)[1])
        await asyncio.gather(*(slowloris(port, stop, over, done) for _ in range(SLOWLORIS)))
        return
    # 1M characters of 4-byte UTF-8: 4 MiB a frame, within MAX_ACTION_CHARS
    burst = {"type": "step", "data": {"text": "\U0001f600" * MAX_ACTION_CHARS}}
    burst = json.dumps(burst, ensure_ascii=False)
    while time.monotonic() < stop and not over.is_set():
        if kind == "abandoned":
            ws = await connect(url, max_size=None)
            await ask(ws, {"type": "reset", "data": {"seed": 1}})
            ws.transport.abort()  # no close handshake
            done.append(kind)
            await asyncio.sleep(pause)
            continue
        if kind == "bad_utf8":
            with contextlib.suppress(Exception):  # the server closes it (1007)
                ws = await connect(url)
                await ws.send(b"\xff\xfe not UTF-8", text=True)
                await asyncio.wait_for(ws.recv(), 10)
            with contextlib.suppress(Exception):
                ws.transport.abort()
            done.append(kind)
            await asyncio.sleep(pause)
            continue
        if kind == "big_burst":
            async with connect(url, max_size=None) as ws:
                await ask(ws, {"type": "reset", "data": {"seed": 2}})
                for _ in range(BURST):
                    await ws.send(burst)
                for _ in range(BURST):
                    await asyncio.wait_for(ws.recv(), 120)
            done.append(kind)
            await asyncio.sleep(pause)
            continue
        if kind == "big_body":
            body = b'{"action": {"text": "' + b"y" * (9 << 20) + b'"}}'
            await asyncio.to_thread(_post, f"{http}/step", body)
            done.append(kind)
            await asyncio.sleep(pause)
            continue
        async with connect(url, max_size=None) as ws:
            await ask(ws, {"type": "reset", "data": {"seed": 2}})
            for _ in range(20):
                if time.monotonic() >= stop or over.is_set():
                    break
                if kind == "huge_action":
                    reply = await ask(ws, {"type": "step", "data": {"text": big_text}})
                    if reply["type"] != "observation" or reply["data"]["done"]:
                        await ask(ws, {"type": "reset", "data": {"seed": 2}})
                elif kind == "huge_item":
                    await ask(ws, {"type": "reset", "data": {"item": big_item}})
                elif kind == "eval_past_bound":
                    far = {"split": "eval", "index": 10**9, "split_seed": 99}
                    await ask(ws, {"type": "reset", "data": far})
                else:
                    for raw in MALFORMED:
                        await ask(ws, raw)
                done.append(kind)
                await asyncio.sleep(pause)


async def slowloris(port: int, stop: float, over: asyncio.Event, done: list) -> None:
    """One half-open HTTP connection at a time: part of a head, then nothing, reopened
    as soon as the server closes it."""
    while time.monotonic() < stop and not over.is_set():
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.1)
            continue
        writer.write(b"GET /health HTTP/1.1\r\nHost: x\r\nX-a: ")
        done.append("slowloris")
        reading = asyncio.ensure_future(reader.read())
        waiting = asyncio.ensure_future(over.wait())
        await asyncio.wait(
            {reading, waiting}, timeout=stop - time.monotonic(), return_when="FIRST_COMPLETED"
        )
        for task in (reading, waiting):
            task.cancel()
        writer.close()


async def get_health(port: int) -> bytes:
    """The whole answer to one GET /health on a fresh connection (at most 10 s)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    answer = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    return answer


async def probe_health(
    port: int, stop: asyncio.Event | float, latencies: list, failures: list
) -> None:
    """GET /health on a fresh connection five times a second until ``stop``: an event, or a
    ``time.monotonic()`` deadline. Each probe's time goes to ``latencies``; each status
    other than 200 (or the error's name) to ``failures``."""

    def over() -> bool:
        return stop.is_set() if isinstance(stop, asyncio.Event) else time.monotonic() >= stop

    while not over():
        start = time.perf_counter()
        try:
            answer = await get_health(port)
            status = answer.split(b" ", 2)[1] if answer.count(b" ") >= 2 else b"none"
        except (OSError, TimeoutError) as exc:
            status = type(exc).__name__.encode()
        latencies.append(time.perf_counter() - start)
        if status != b"200":
            failures.append(status.decode(errors="replace"))
        if isinstance(stop, asyncio.Event):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), 0.2)
        else:
            await asyncio.sleep(max(min(0.2, stop - time.monotonic()), 0.0))


def _post(url: str, body: bytes) -> int:
    request = urllib.request.Request(url, data=body, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:  # the server may close a refused upload before it is all sent
        return 0


async def phase(env_id: str, port: int, args: argparse.Namespace, hostile_n: int) -> dict:
    from websockets.asyncio.client import connect

    url, http = f"ws://127.0.0.1:{port}/ws", f"http://127.0.0.1:{port}"
    stop = time.monotonic() + args.seconds
    latencies: list[float] = []
    played: list[tuple[int, str]] = []
    attacks: list[str] = []
    silent = [await connect(url) for _ in range(SILENT if hostile_n else 0)]
    start = time.perf_counter()
    over = asyncio.Event()
    health: list[float] = []
    health_failures: list[str] = []
    prober = asyncio.ensure_future(probe_health(port, over, health, health_failures))
    players = [
        player(env_id, url, (s + 1) * 100_000 + args.offset, stop, latencies, played, args.episodes)
        for s in range(args.sessions)
    ]
    kinds = itertools.cycle(HOSTILE_KINDS)
    rate = args.hostile_rate
    hostiles = asyncio.gather(
        *(hostile(next(kinds), url, http, stop, rate, attacks, over) for _ in range(hostile_n))
    )
    await asyncio.wait_for(asyncio.gather(*players), args.seconds + 120)
    elapsed = time.perf_counter() - start
    over.set()
    await asyncio.wait_for(hostiles, 120)
    await prober
    for ws in silent:
        await ws.close()
    latencies.sort()
    health.sort()
    return {
        "phase": "hostile" if hostile_n else "quiet",
        "sessions": args.sessions,
        "hostile_clients": hostile_n + len(silent),
        "hostile_requests": len(attacks),
        "episodes": len(played),
        "steps": len(latencies),
        "seconds": round(elapsed, 1),
        "episodes_per_s": round(len(played) / elapsed, 1),
        "p50_step_ms": round(1e3 * statistics.median(latencies), 2) if latencies else None,
        "p99_step_ms": round(1e3 * latencies[int(0.99 * (len(latencies) - 1))], 2)
        if latencies
        else None,
        "health_probes": len(health),
        "health_p99_ms": round(1e3 * health[int(0.99 * (len(health) - 1))], 2) if health else None,
        "health_max_ms": round(1e3 * health[-1], 2) if health else None,
        "health_failures": len(health_failures),
        "played": played,
    }


async def sample_rss(pid: int, samples: list[float], stop: asyncio.Event) -> None:
    while not stop.is_set():
        samples.append(rss_mb(pid))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.5)


async def measure(env_id: str, port: int, pid: int, args: argparse.Namespace) -> dict:
    samples: list[float] = []
    stopped = asyncio.Event()
    sampler = asyncio.ensure_future(sample_rss(pid, samples, stopped))
    runs = []
    args.offset = 0
    start_mb = rss_mb(pid)
    runs.append(await phase(env_id, port, args, 0))
    rss_quiet = max(samples)
    if args.hostile:
        args.offset = 50_000  # other items than the quiet phase's
        runs.append(await phase(env_id, port, args, args.hostile))
    await asyncio.sleep(2)  # what stays after the phases
    after_mb = rss_mb(pid)
    stopped.set()
    await sampler
    return {
        "runs": runs,
        "rss_start_mb": round(start_mb, 1),
        "rss_quiet_mb": round(rss_quiet, 1),
        "rss_max_mb": round(max(samples), 1),
        "rss_after_mb": round(after_mb, 1),
    }


async def stop_under_load(env_id: str, port: int, proc: subprocess.Popen) -> dict:
    """SIGINT while 8 sessions play and one walks to a far eval item of a new split seed:
    how long the server took to exit, and its status."""
    from websockets.asyncio.client import connect

    url = f"ws://127.0.0.1:{port}/ws"
    end = time.monotonic() + 60
    players = [
        asyncio.ensure_future(player(env_id, url, 900_000 + 1000 * s, end, [], []))
        for s in range(8)
    ]
    walker = await connect(url)
    far = {"split": "eval", "index": MAX_EVAL_ITEMS - 1, "split_seed": 880_026}
    await walker.send(json.dumps({"type": "reset", "data": far}))
    await asyncio.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    started = time.monotonic()
    code = await asyncio.to_thread(proc.wait, 60)
    took = time.monotonic() - started
    for task in players:
        task.cancel()
    await asyncio.gather(*players, return_exceptions=True)
    walker.transport.abort()
    return {"stop_s": round(took, 2), "exit_code": code}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="MeetingSlot-v0")
    parser.add_argument("--sessions", type=int, default=64, help="well-behaved sessions")
    parser.add_argument("--hostile", type=int, default=12, help="hostile clients (0: none)")
    parser.add_argument("--hostile-rate", type=float, default=5.0, help="requests/s each")
    parser.add_argument("--seconds", type=float, default=60.0, help="length of each phase")
    parser.add_argument(
        "--episodes", type=int, default=None, help="episodes per session per phase (default: time)"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.seconds <= 0 or args.seconds > 3600 or args.sessions < 1:
        parser.error("--seconds must be in (0, 3600] and --sessions at least 1")
    port = free_port()
    capacity = args.sessions + args.hostile + SILENT + 8 + 9
    with tempfile.TemporaryFile(mode="w+") as log:  # the server's stderr, counted
        proc = start_server(args.env, port, capacity, log)
        try:
            # one untimed episode first: the server process loads the env's modules and caches
            warm = {"sessions": 1, "seconds": 0.001, "offset": 0, "episodes": 1}
            warm = argparse.Namespace(**{**vars(args), **warm})
            asyncio.run(phase(args.env, port, warm, 0))
            result = asyncio.run(measure(args.env, port, proc.pid, args))
            result.update(asyncio.run(stop_under_load(args.env, port, proc)))
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)
        log.seek(0)
        lines = [line for line in log.read().splitlines() if line.strip()]
        result["log_lines"] = len(lines)
        result["log_tracebacks"] = sum("Traceback" in line for line in lines)
    for run in result["runs"]:
        run["mismatches"] = sum(expected(args.env, i) != d for i, d in run.pop("played"))
    quiet, *rest = result["runs"]
    if rest and quiet["p99_step_ms"] and rest[0]["p99_step_ms"]:
        result["p99_ratio"] = round(rest[0]["p99_step_ms"] / quiet["p99_step_ms"], 2)
    result["command"] = " ".join(["python", "benchmarks/openenv_load.py", *sys.argv[1:]])
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        head = ("phase", "sessions", "hostile clients", "hostile requests", "episodes")
        head += ("seconds", "episodes/s", "p50 step ms", "p99 step ms", "mismatches")
        print(" | ".join(head))
        for r in result["runs"]:
            cells = (r["phase"], r["sessions"], r["hostile_clients"], r["hostile_requests"])
            cells += (r["episodes"], r["seconds"], r["episodes_per_s"], r["p50_step_ms"])
            cells += (r["p99_step_ms"], r["mismatches"])
            print(" | ".join(str(c) for c in cells))
        print(f"p99 hostile/quiet: {result.get('p99_ratio')} (target: within 3x)")
        rss = f"{result['rss_start_mb']} MB at the start, {result['rss_quiet_mb']} MB by the end"
        rss += f" of the quiet phase, {result['rss_max_mb']} MB at most,"
        print(f"server RSS: {rss} {result['rss_after_mb']} MB 2 s after the phases")
        for r in result["runs"]:
            health = f"/health ({r['phase']}): {r['health_probes']} probes, p99"
            health += f" {r['health_p99_ms']} ms, worst {r['health_max_ms']} ms,"
            print(f"{health} {r['health_failures']} not 200")
        stop = f"SIGINT under load: exited {result['exit_code']} after {result['stop_s']} s;"
        print(f"{stop} {result['log_lines']} log lines ({result['log_tracebacks']} tracebacks)")
    return 0 if all(r["mismatches"] == 0 for r in result["runs"]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
