"""MaskablePPO on one difficulty: a curriculum up to it against training on it alone.

For each ``--seeds`` value, runs ``examples/train_ppo.py`` twice with the same budget (steps,
network, hyperparameters) and the same held-out items of ``--level`` (the eval split, split
seed 42): once with ``--difficulty LEVEL`` (every training item at that level), once with
``--curriculum LEVEL`` (a :class:`meeting_gym.core.curriculum.Curriculum` from the easiest
level up to it). Then prints, and writes as ``table.md``, each run's held-out mean reward with
its 95% interval, the first evaluation that reached the best reward, the paired per-item
difference curriculum - level alone for each seed, and across seeds (one difference per
seed, Student's t: seeds, not items, are what varies between runs). A run whose
``results.json`` exists is read, not rerun. Options this script does not know go to
``train_ppo.py`` as they are (``--n-envs 4`` ...).

    python examples/curriculum_ppo.py --seeds 0 1 2 --timesteps 60000 --out runs/curriculum_ppo
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from pathlib import Path
from statistics import fmean, stdev
from typing import Any

from meeting_gym.evaluation.intervals import mean_interval, paired_interval

TRAIN = Path(__file__).with_name("train_ppo.py")
ARMS = ("alone", "curriculum")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--env", default="MeetingSlot-v0", help="an env with a masked discrete mode")
    p.add_argument("--level", default="expert", help="the difficulty trained for and held out")
    p.add_argument("--seeds", type=int, nargs="+", default=[0], help="training seeds")
    p.add_argument("--timesteps", type=int, default=60_000, help="training steps of every run")
    p.add_argument("--eval-every", type=int, default=10_000, help="steps between evaluations")
    p.add_argument("--eval-n", type=int, default=200, help="held-out items")
    p.add_argument("--out", default="runs/curriculum_ppo")
    args, args.passed = p.parse_known_args(argv)
    return args


def run(args: argparse.Namespace, arm: str, seed: int) -> dict[str, Any]:
    """One training run's ``results.json`` (trained now unless it is already there)."""
    out = Path(args.out) / f"{arm}_seed{seed}"
    results = out / "results.json"
    if not results.is_file():
        flag = "--difficulty" if arm == "alone" else "--curriculum"
        command = [
            sys.executable,
            str(TRAIN),
            *("--env", args.env, flag, args.level, "--heldout-difficulty", args.level),
            *("--timesteps", str(args.timesteps), "--eval-every", str(args.eval_every)),
            *("--eval-n", str(args.eval_n), "--seed", str(seed), "--out", str(out)),
            "--no-progress",
            *args.passed,
        ]
        print("$", " ".join(command[1:]), flush=True)
        subprocess.run(command, check=True)
    return json.loads(results.read_text(encoding="utf-8"))


def first_at_best(results: dict[str, Any]) -> str:
    """The step of the first evaluation whose mean reward reached the gold policy's."""
    best = results["table"]["gold"]["reward"]
    for point in results["curve"]:
        if point["reward"] >= best - 1e-9:
            return f"{point['timesteps'] // 1000}k"
    return "never"


def table(args: argparse.Namespace, runs: dict[tuple[str, int], dict[str, Any]]) -> list[str]:
    """The comparison as markdown lines."""
    lines = [
        f"{args.env}, MaskablePPO, {args.timesteps} steps a run, held out on the {args.eval_n} "
        f"generated {args.level} scenarios of the eval split (split seed 42), discrete mode",
        "",
        "| seed | training items | held-out reward (95% CI) | exact | first at gold | "
        "levels reached | minutes |",
        "| ---: | --- | --- | ---: | ---: | --- | ---: |",
    ]
    for seed in args.seeds:
        for arm in ARMS:
            r = runs[arm, seed]
            mean, half = mean_interval(r["heldout_rewards"])
            state = r.get("curriculum")
            reached = (
                " → ".join([state["start"], *(m["to"] for m in state["moves"])])
                if state
                else args.level
            )
            if state and len(state["moves"]) > 6:
                reached = f"{len(state['moves'])} moves, last at {state['level']}"
            lines.append(
                f"| {seed} | {'curriculum' if state else args.level + ' only'} | "
                f"{mean:.3f} ± {half:.3f} | {r['table']['ppo']['exact_match']:.3f} | "
                f"{first_at_best(r)} | {reached} | {r['train_seconds'] / 60:.1f} |"
            )
    lines.append("")
    per_seed = []
    for seed in args.seeds:
        after = runs["curriculum", seed]["heldout_rewards"]
        before = runs["alone", seed]["heldout_rewards"]
        diff, half = paired_interval(after, before)
        per_seed.append(diff)
        lines.append(
            f"paired curriculum - {args.level} only, seed {seed}: {diff:+.3f} ± {half:.3f} "
            f"(over the {len(after)} items)"
        )
    if len(per_seed) > 1:
        # a training run is the unit that varies: the items of one run do not vary
        # independently of each other, so the interval across seeds is Student's t over seeds
        mean, spread = fmean(per_seed), stdev(per_seed)
        half = t975(len(per_seed) - 1) * spread / math.sqrt(len(per_seed))
        lines.append(
            f"across the {len(per_seed)} seeds (one difference per seed): "
            f"{mean:+.3f} ± {half:.3f} (95%, Student's t)"
        )
    return lines


T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228)
"""Student's t 97.5% quantiles for 1 to 10 degrees of freedom."""


def t975(df: int) -> float:
    """The two-sided 95% t quantile for ``df`` degrees of freedom (2.0 above 10: an upper
    bound up to 60)."""
    return T975[df - 1] if df <= len(T975) else 2.0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    runs = {(arm, seed): run(args, arm, seed) for seed in args.seeds for arm in ARMS}
    text = "\n".join(table(args, runs))
    print(text)
    Path(args.out, "table.md").write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
