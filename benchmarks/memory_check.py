"""Run many MeetingSlot-v0 episodes in one process and report how much memory grows.

    PYTHONPATH=. python benchmarks/memory_check.py                  # 100,000 text episodes
    PYTHONPATH=. python benchmarks/memory_check.py --episodes 20000 --mode discrete

Each episode resets to a freshly generated scenario and plays a seeded random agent
(tool calls, then an answer with probability 1/4 per turn). Resident memory (RSS) is
read after a warm-up of ``--warmup`` episodes and again at the end; the growth
between the two must stay under ``--limit-mb`` (exit status 1 otherwise).
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import resource
import sys
import time
from typing import Any

import gymnasium as gym
import numpy as np

import meeting_gym  # noqa: F401  (registers the env ids)
from meeting_gym.bench.meeting_slot import TEXT_ANSWERS, text_action_pool

ANSWER_RATE = 0.25


def rss_mb() -> float:
    """Current resident set size in MB (peak RSS where /proc is not available)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024 if sys.platform == "darwin" else 1024)


def play(env: Any, mode: str, episodes: int, rng: random.Random) -> int:
    """Play ``episodes`` episodes; returns the number of steps taken."""
    pool = text_action_pool()
    steps = 0
    for _ in range(episodes):
        _, info = env.reset()
        done = False
        while not done:
            if mode == "discrete":
                legal = np.flatnonzero(info["action_mask"])
                action: Any = int(legal[int(rng.random() * len(legal))])
            elif rng.random() < ANSWER_RATE:
                action = TEXT_ANSWERS[rng.random() < 0.5]
            else:
                action = pool[int(rng.random() * len(pool))]
            _, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
            steps += 1
    return steps


def run(episodes: int = 100_000, mode: str = "text", warmup: int = 2_000, seed: int = 0) -> dict:
    env = gym.make("MeetingSlot-v0", mode=mode)
    env.reset(seed=seed)
    rng = random.Random(seed)
    start = time.perf_counter()
    play(env, mode, warmup, rng)
    gc.collect()
    before = rss_mb()
    steps = play(env, mode, episodes, rng)
    gc.collect()
    after = rss_mb()
    env.close()
    return {
        "mode": mode,
        "episodes": episodes,
        "steps": steps,
        "warmup_episodes": warmup,
        "rss_before_mb": round(before, 1),
        "rss_after_mb": round(after, 1),
        "growth_mb": round(after - before, 2),
        "seconds": round(time.perf_counter() - start, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=100_000)
    parser.add_argument("--warmup", type=int, default=2_000)
    parser.add_argument("--mode", default="text")
    parser.add_argument("--limit-mb", type=float, default=20.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    report = run(args.episodes, args.mode, args.warmup, args.seed)
    report["limit_mb"] = args.limit_mb
    report["ok"] = report["growth_mb"] < args.limit_mb
    print(json.dumps(report, indent=2))
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
