"""CronSchedule's rows of ``meeting-gym bench``: the generic text-env rows plus its own.

Targets (the CronSchedule issue), each a ratio to CartPole-v1 in the same run:

* an equivalence check (parse a fresh candidate text, then compare it with a parsed
  reference: the grading path of a write answer) within the time of 50 CartPole steps,
  by its median: 1 / median at least 1/50 of CartPole's steps per second;
* 10,000 tasks with gold within the time of 200,000 CartPole steps: items per second at
  least 5% of CartPole's steps per second;
* single-turn episodes (reset + one answer) at least 10% of CartPole's steps per second.

The next-N row (the next 10 run times of a parsed expression from a fresh start, the
truth of a read task) has no target and is shown for scale.
"""

from __future__ import annotations

import random
import time
from datetime import datetime, timedelta

from meeting_gym.bench import Budget, Measure, default_plan
from meeting_gym.envs.cron_schedule.expression import parse_uncached
from meeting_gym.envs.cron_schedule.generator import schedule
from meeting_gym.envs.cron_schedule.schedule import equivalent, next_times

EPISODE_TARGET = 0.10
GENERATE_TARGET = 10_000 / 200_000
EQUIVALENCE_TARGET = 1 / 50


def _pairs(count: int, seed: int) -> list[tuple[str, str]]:
    """(candidate text, reference text): rewrites of the reference or other schedules."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        reference = schedule(rng, rng.randint(1, 4))
        candidate = reference if rng.random() < 0.5 else schedule(rng, rng.randint(1, 4))
        # a fresh text each time (one more space), so no parse cache helps
        out.append((candidate.replace(" ", "  ", 1 + len(out) % 3) + " " * len(out), reference))
    return out


def plan(env_id: str, budget: Budget) -> list[Measure]:
    rows = default_plan(
        env_id,
        budget,
        episode_target=EPISODE_TARGET,
        generate_target=GENERATE_TARGET,
        generate_note=">= 5% (10,000 in 200,000 CartPole steps)",
    )
    count = max(budget.resets, 50)

    def equivalence(repeat: int) -> list[float]:
        pairs = [(text, parse_uncached(reference)) for text, reference in _pairs(count, repeat)]
        clock, out = time.perf_counter, []
        for text, reference in pairs:
            start = clock()
            equivalent(parse_uncached(text), reference)
            out.append(clock() - start)
        return out

    def runs(repeat: int) -> list[float]:
        rng = random.Random(repeat)
        crons = [parse_uncached(schedule(rng, rng.randint(1, 4))) for _ in range(count)]
        starts = [datetime(2024, 1, 1) + timedelta(minutes=rng.randint(0, 10**6)) for _ in crons]
        clock, out = time.perf_counter, []
        for cron, start in zip(crons, starts, strict=True):
            begin = clock()
            next_times(cron, start, 10)
            out.append(clock() - begin)
        return out

    rows += [
        Measure(
            "equivalence",
            "equivalence check: parse + compare (median)",
            equivalence,
            kind="time",
            min_ratio=EQUIVALENCE_TARGET,
            target_note="within 50 CartPole steps",
        ),
        Measure("next", "next 10 run times (median)", runs, kind="time"),
    ]
    return rows
