"""How replay and spare groups change GRPO's flat groups: a simulation, before a real run.

A real CronSchedule run costs an hour; this costs a second. Each simulated item has a
success rate fixed by its index: 42% are never solved, 4% always, the rest follow
Beta(0.7, 1.6), so that about 54% of fresh groups of 8 are flat, as measured at level 1
in the first curriculum run (docs/guides/curriculum.md). Each step draws 4 items from the
package's own ``Curriculum`` (one level), samples a group of 8 rewards for each, and,
like ``adapters.trl_spread.keep_spread``, replaces flat groups with the curriculum's next
draws while its spare budget lasts. It does not learn: the rates stay fixed.

    python -m meeting_gym.training.curriculum_sim                 # the configurations of the guide
    python -m meeting_gym.training.curriculum_sim --config 0.5 2 5
"""

from __future__ import annotations

import argparse
import random
import statistics

from meeting_gym.core.curriculum import Curriculum, Rules

GROUP, PROMPTS, STEPS = 8, 4, 50
CONFIGS = [(0.5, 1, 3), (0.75, 8, 4), (0.5, 2, 5), (0.5, 1, 5), (0.0, 1, 8)]


def success_rate(index: int, run: int) -> float:
    """The fixed success rate of simulated item ``index`` in run ``run``."""
    rng = random.Random(f"{run}:{index}")
    u = rng.random()
    if u < 0.42:
        return 0.0
    if u < 0.46:
        return 1.0
    return rng.betavariate(0.7, 1.6)


def simulate(replay: float, replays: int, spare: int, run: int) -> dict[str, float]:
    """One run of ``STEPS`` steps: flat shares, groups generated, distinct items trained."""
    rng = random.Random(run)
    cur = Curriculum(["1"], best=1.0, seed=run, rules=Rules(replay=replay, replays=replays))
    generated = generated_flat = trained_flat = 0
    trained: list[int] = []

    def group(draw) -> tuple[bool, int]:
        p = success_rate(draw.index, run)
        rewards = [float(rng.random() < p) for _ in range(GROUP)]
        cur.report(draw, rewards)
        return max(rewards) != min(rewards), draw.index

    for _ in range(STEPS):
        groups = [group(d) for d in cur.take(PROMPTS)]
        generated += len(groups)
        kept = [index for spread, index in groups if spread]
        used = 0
        while len(kept) < PROMPTS and used < spare:
            n = min(PROMPTS - len(kept), spare - used)
            more = [group(d) for d in cur.take(n)]
            groups += more
            generated += n
            kept += [index for spread, index in more if spread][: PROMPTS - len(kept)]
            used += n
        generated_flat += sum(not spread for spread, _ in groups)
        trained_flat += PROMPTS - len(kept)
        trained += kept
    return {
        "generated flat": generated_flat / generated,
        "trained flat": trained_flat / (STEPS * PROMPTS),
        "generated": generated,
        "distinct trained": len(set(trained)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--config",
        nargs=3,
        type=float,
        metavar=("REPLAY", "REPLAYS", "SPARE"),
        help="one configuration (default: the guide's)",
    )
    parser.add_argument("--runs", type=int, default=20, help="simulated runs a configuration")
    args = parser.parse_args()
    configs = (
        [(args.config[0], int(args.config[1]), int(args.config[2]))] if args.config else CONFIGS
    )
    print("replay replays spare | generated flat | trained flat | generated | distinct trained")
    for replay, replays, spare in configs:
        runs = [simulate(replay, replays, spare, run) for run in range(args.runs)]
        mean = {key: statistics.mean(r[key] for r in runs) for key in runs[0]}
        print(
            f"{replay:6.2f} {replays:7d} {spare:5d} | {mean['generated flat']:14.1%} | "
            f"{mean['trained flat']:12.1%} | {mean['generated']:9.0f} | "
            f"{mean['distinct trained']:16.0f}"
        )


if __name__ == "__main__":
    main()
