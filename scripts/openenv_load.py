"""Load-test the OpenEnv server on loopback: many sessions of reference-policy play at once.

    python scripts/openenv_load.py                       # 64 sessions x 20 episodes, then 1 x 20
    python scripts/openenv_load.py --sessions 8 --episodes 5 --env CalendarMath-v0

Starts ``meeting-gym serve`` as a subprocess on a free 127.0.0.1 port, plays ``--sessions``
WebSocket sessions at once (asyncio, one client each), each ``--episodes`` episodes of
the env's reference policy on train items addressed by split and index (after one untimed
warm-up episode), and checks every
episode's reward against the same item played in process. Bounded in count and time
(``--max-seconds``); nothing leaves loopback. Prints episodes/s, steps/s and the p50/p99
latency of one step as the client sees it (send to reply).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from typing import Any

import gymnasium as gym

import meeting_gym  # noqa: F401  (registers the env ids)
from meeting_gym.adapters.openenv import client
from meeting_gym.agents.policies import make_policy
from meeting_gym.core.registry import task_class

SPLIT_SEED = 7


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(env_id: str, port: int, sessions: int) -> subprocess.Popen:
    command = [sys.executable, "-m", "meeting_gym.cli", "serve", "--env", env_id]
    command += ["--port", str(port), "--max-sessions", str(sessions)]
    proc = subprocess.Popen(command, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1):
                return proc
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("the server did not start")


def expected_reward(env_id: str, index: int) -> float:
    """The reference policy's reward on train item ``index``, played in process."""
    env = gym.make(env_id, mode="text", disable_env_checker=True)
    options = {"split": "train", "index": index, "split_seed": SPLIT_SEED}
    observation, info = env.reset(seed=index, options=options)
    policy = make_policy(task_class(env_id).reference_policy, seed=index, env=env_id)
    policy.reset(observation, info, seed=index)
    while True:
        observation, reward, terminated, truncated, info = env.step(policy.act(observation))
        if terminated or truncated:
            return float(reward)


async def session(env_id: str, url: str, first: int, episodes: int, latencies: list[float]):
    rewards = []
    remote = client(env_id, url)
    async with remote:
        for index in range(first, first + episodes):
            options = {"split": "train", "index": index, "split_seed": SPLIT_SEED}
            result = await remote.reset(seed=index, **options)
            policy = make_policy(task_class(env_id).reference_policy, seed=index, env=env_id)
            policy.reset(result.observation.text, result.observation.info, seed=index)
            while not result.done:
                action = {"text": policy.act(result.observation.text)}
                start = time.perf_counter()
                result = await remote.step(action)
                latencies.append(time.perf_counter() - start)
            rewards.append((index, float(result.reward)))
    return rewards


async def run(env_id: str, url: str, sessions: int, episodes: int) -> tuple[list, list, float]:
    # one untimed episode first: the server process loads the env's modules and caches
    await session(env_id, url, sessions * episodes, 1, [])
    latencies: list[float] = []
    start = time.perf_counter()
    per_session = await asyncio.gather(
        *(session(env_id, url, s * episodes, episodes, latencies) for s in range(sessions))
    )
    elapsed = time.perf_counter() - start
    return [pair for rewards in per_session for pair in rewards], latencies, elapsed


def measure(env_id: str, sessions: int, episodes: int, max_seconds: float) -> dict[str, Any]:
    port = free_port()
    proc = start_server(env_id, port, sessions)
    try:
        rewards, latencies, elapsed = asyncio.run(
            asyncio.wait_for(
                run(env_id, f"http://127.0.0.1:{port}", sessions, episodes), max_seconds
            )
        )
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    mismatches = [i for i, r in rewards if abs(r - expected_reward(env_id, i)) > 1e-9]
    latencies.sort()
    return {
        "env": env_id,
        "sessions": sessions,
        "episodes": len(rewards),
        "steps": len(latencies),
        "seconds": round(elapsed, 2),
        "episodes_per_s": round(len(rewards) / elapsed, 1),
        "steps_per_s": round(len(latencies) / elapsed, 1),
        "p50_step_ms": round(1e3 * statistics.median(latencies), 2),
        "p99_step_ms": round(1e3 * latencies[int(0.99 * (len(latencies) - 1))], 2),
        "reward_mismatches": len(mismatches),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="MeetingSlot-v0")
    parser.add_argument("--sessions", type=int, default=64)
    parser.add_argument("--episodes", type=int, default=20, help="episodes per session")
    parser.add_argument("--max-seconds", type=float, default=600.0, help="give up after this")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    runs = [measure(args.env, args.sessions, args.episodes, args.max_seconds)]
    if args.sessions != 1:
        runs.append(measure(args.env, 1, args.episodes, args.max_seconds))
    if args.json:
        print(json.dumps(runs, indent=2))
    else:
        head = ("sessions", "episodes", "steps", "seconds", "episodes/s", "steps/s")
        head += ("p50 step ms", "p99 step ms", "reward mismatches")
        print(" | ".join(head))
        for r in runs:
            cells = (r["sessions"], r["episodes"], r["steps"], r["seconds"], r["episodes_per_s"])
            cells += (r["steps_per_s"], r["p50_step_ms"], r["p99_step_ms"], r["reward_mismatches"])
            print(" | ".join(str(c) for c in cells))
    return 0 if all(r["reward_mismatches"] == 0 for r in runs) else 1


if __name__ == "__main__":
    raise SystemExit(main())
