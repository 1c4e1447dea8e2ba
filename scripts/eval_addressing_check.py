"""Would constant-time ``eval`` addressing give the items the split gives today? A check, per env.

    python scripts/eval_addressing_check.py                  # every env id, every level, n=1000
    python scripts/eval_addressing_check.py --env CalendarMath-v0 --task add_days -n 600

Today item ``k`` of ``eval`` (after the curated items) is the ``k``-th *distinct* held-out
draw of ``split_seed + 1``: an item equal to an earlier one is skipped, so reaching item
``k`` walks the stream (issue 26: eval item 999 of a new split seed cost 27.9 s on
TimetablePlanner-v0). The candidate constant-time map drops the skipping: item ``k`` is
``draw(task, split_seed + 1, k - len(curated), held=True)``. The two agree up to the first
skipped repeat; this prints, for the default split seed (42, the seed of every published
result) and each difficulty, where the first repeat falls (``first differing item``; none:
the same items up to ``n``) and how many draws were skipped, and the constant-time map's
cost per item at indices 0, 999 and 99,999 of a new split seed.

A diagnostic, not a test: the answer decided that issue 26 leaves the addressing as it is
(published items would change), see the changelog.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import meeting_gym  # noqa: F401  (registers the env ids)
from meeting_gym.core import splits
from meeting_gym.core.registry import ENVS, make_task


def repeats(env_id: str, n: int, difficulty: str | None, **options: Any) -> dict[str, Any]:
    """Walk today's eval stream of seed 42 to ``n`` items; where the first repeat was skipped."""
    task = make_task(env_id, **options)
    level = task.check_difficulty(difficulty) or task.difficulty
    stream = splits._EvalStream(task, splits.DEFAULT_SEED, level)
    curated = len(stream.items)
    first = None
    while len(stream.items) < n:
        before = len(stream.items)
        stream._walk(before + 1)
        if first is None and stream.next_index > len(stream.items) - curated:
            first = before  # the item at this index differs under the candidate map
    return {
        "curated": curated,
        "draws": stream.next_index,
        "skipped": stream.next_index - (n - curated),
        "first_differing_item": first,
    }


def candidate_cost(env_id: str, index: int, seeds: int = 5) -> float:
    """Median ms of the candidate map's item ``index`` over ``seeds`` new split seeds."""
    task = make_task(env_id)
    times = []
    for seed in range(880_000, 880_000 + seeds):
        start = time.perf_counter()
        splits.draw(task, seed + 1, index, task.difficulty, held=True)
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", choices=sorted(ENVS), help="one env id (default: all)")
    parser.add_argument("-n", type=int, default=1000, help="items walked per setting (1000)")
    parser.add_argument("--task", help="CalendarMath-v0's or CronSchedule's task setting")
    args = parser.parse_args()
    if not 0 < args.n <= splits.MAX_EVAL_ITEMS:
        parser.error(f"-n must be in 1..{splits.MAX_EVAL_ITEMS}")
    options = {"task": args.task} if args.task else {}
    print("env | options | difficulty | curated | draws | skipped | first differing item")
    for env_id in [args.env] if args.env else sorted(ENVS):
        task = make_task(env_id, **options)
        for level in (None, *task.difficulties):
            found = repeats(env_id, args.n, level, **options)
            cells = (env_id, options or "-", level, found["curated"], found["draws"])
            cells += (found["skipped"], found["first_differing_item"])
            print(" | ".join(str(c) for c in cells), flush=True)
    print("\nenv | candidate item 0 ms | item 999 ms | item 99,999 ms (median of 5 new seeds)")
    for env_id in [args.env] if args.env else sorted(ENVS):
        costs = [f"{candidate_cost(env_id, i):.2f}" for i in (0, 999, 99_999)]
        print(" | ".join([env_id, *costs]), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
