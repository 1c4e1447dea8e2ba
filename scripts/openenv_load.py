"""Load-test the OpenEnv server on loopback, without and then with hostile clients, in one run.

    python scripts/openenv_load.py                          # 64 sessions, 60 s per phase
    python scripts/openenv_load.py --sessions 8 --seconds 10 --env CalendarMath-v0
    python scripts/openenv_load.py --hostile 0              # well-behaved sessions only
    python scripts/openenv_load.py --sessions 64 --episodes 20   # a count, not a time

Starts ``meeting-gym serve`` as a subprocess on a free 127.0.0.1 port and runs two phases
against it, each ``--seconds`` long:

1. ``quiet``: ``--sessions`` WebSocket sessions (asyncio, one client each) play the env's
   reference policy, episode after episode, on train items addressed by split and index;
2. ``hostile``: the same, with ``--hostile`` hostile clients mixed in, each doing one of
   (in turn): actions over MAX_ACTION_CHARS, items over MAX_OPTION_CHARS, eval indices
   past MAX_EVAL_ITEMS, sockets dropped without a close handshake, malformed frames
   (not JSON objects, binary, deep nesting), HTTP bodies over the bound; plus a few
   silent sockets that connect and never send. Each hostile client sends at most
   ``--hostile-rate`` requests a second.

Every well-behaved episode is replayed in process (same item, same policy) and must match
step for step (observations and rewards): ``mismatches`` counts those that do not. The
server's RSS is sampled twice a second. Prints, per phase: episodes/s and the p50/p99
latency of one step as the client sees it (send to reply), and the p99 ratio (target:
hostile within 3x of quiet). Bounded in count and time; nothing leaves loopback. A
benchmark, not a test (tests/test_openenv_soak.py runs it short and checks replay and RSS).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import itertools
import json
import socket
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from functools import cache
from pathlib import Path
from typing import Any

import gymnasium as gym

import meeting_gym  # noqa: F401  (registers the env ids)
from meeting_gym.agents.policies import make_policy
from meeting_gym.core.registry import task_class
from meeting_gym.core.text_env import MAX_ACTION_CHARS, MAX_OPTION_CHARS

SPLIT_SEED = 7
SILENT = 4
"""Silent sockets held open through the hostile phase (they take session slots)."""
ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(env_id: str, port: int, sessions: int) -> subprocess.Popen:
    command = [sys.executable, "-m", "meeting_gym.cli", "serve", "--env", env_id]
    command += ["--port", str(port), "--max-sessions", str(sessions)]
    proc = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1):
                return proc
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("the server did not start")


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
    while time.monotonic() < stop and not over.is_set():
        if kind == "abandoned":
            ws = await connect(url, max_size=None)
            await ask(ws, {"type": "reset", "data": {"seed": 1}})
            ws.transport.abort()  # no close handshake
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
    for ws in silent:
        await ws.close()
    latencies.sort()
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
    runs.append(await phase(env_id, port, args, 0))
    rss_quiet = max(samples)
    if args.hostile:
        args.offset = 50_000  # other items than the quiet phase's
        runs.append(await phase(env_id, port, args, args.hostile))
    stopped.set()
    await sampler
    return {"runs": runs, "rss_quiet_mb": round(rss_quiet, 1), "rss_max_mb": round(max(samples), 1)}


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
    capacity = args.sessions + args.hostile + SILENT + 8
    proc = start_server(args.env, port, capacity)
    try:
        # one untimed episode first: the server process loads the env's modules and caches
        warm = {"sessions": 1, "seconds": 0.001, "offset": 0, "episodes": 1}
        warm = argparse.Namespace(**{**vars(args), **warm})
        asyncio.run(phase(args.env, port, warm, 0))
        result = asyncio.run(measure(args.env, port, proc.pid, args))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    for run in result["runs"]:
        run["mismatches"] = sum(expected(args.env, i) != d for i, d in run.pop("played"))
    quiet, *rest = result["runs"]
    if rest and quiet["p99_step_ms"] and rest[0]["p99_step_ms"]:
        result["p99_ratio"] = round(rest[0]["p99_step_ms"] / quiet["p99_step_ms"], 2)
    result["command"] = " ".join(["python", "scripts/openenv_load.py", *sys.argv[1:]])
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
        rss = f"{result['rss_quiet_mb']} MB by the end of the quiet phase"
        print(f"server RSS: {rss}, {result['rss_max_mb']} MB at most")
    return 0 if all(r["mismatches"] == 0 for r in result["runs"]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
