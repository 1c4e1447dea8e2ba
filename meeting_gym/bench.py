"""Speed measurements behind ``meeting-gym bench``.

Every figure is a median over repeats measured in this one run; the machines
this runs on are shared and noisy, so compare figures from the same run.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from statistics import median

from meeting_gym.calendar import zones
from meeting_gym.calendar.generator import generate
from meeting_gym.calendar.solver import solve


def _clock(fn: Callable[[], object], repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def generate_batch(n: int = 500, seed: int = 0) -> None:
    """Generate ``n`` scenarios of the default mix and solve their gold answers."""
    rng = random.Random(seed)
    for _ in range(n):
        solve(generate(rng))


def run_bench(quick: bool = False) -> str:
    import gymnasium as gym

    import meeting_gym  # noqa: F401  (registers the env ids)

    repeats = 3 if quick else 7
    zones._year.cache_clear()
    cold = _clock(lambda: generate_batch(500, seed=1), 1)[0]
    warm = median(_clock(lambda: generate_batch(500, seed=2), repeats))

    env = gym.make("MeetingSlot-v0", mode="text").unwrapped
    env.reset(seed=0)
    resets = _clock(env.reset, 200 if quick else 2000)
    rng = random.Random(3)
    scenarios = [generate(rng) for _ in range(500)]
    solves = []
    for scenario in scenarios:
        start = time.perf_counter()
        solve(scenario)
        solves.append(time.perf_counter() - start)

    rows = [
        ("generate 500 + gold (cold zone cache)", f"{cold:.3f} s", "< 0.3 s"),
        ("generate 500 + gold (warm, median)", f"{warm:.3f} s", "< 0.3 s"),
        ("reset() fresh scenario, median", f"{median(resets) * 1e3:.3f} ms", "< 1 ms"),
        ("gold solve alone, median", f"{median(solves) * 1e6:.1f} us", ""),
    ]
    width = max(len(r[0]) for r in rows)
    lines = [f"{'measure':<{width}}  {'value':>12}  target", "-" * (width + 24)]
    lines += [f"{name:<{width}}  {value:>12}  {target}" for name, value, target in rows]
    return "\n".join(lines)
