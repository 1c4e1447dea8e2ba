"""Train sb3-contrib's MaskablePPO on TimetablePlanner-v0 and compare it with random and greedy.

Trains on generated scenarios only: ``reset()`` draws the ``train`` split (the default
difficulty mix), which never holds one of the 23 catalogue scenarios nor a held-out one.
Evaluates every ``--eval-every`` steps on held-out scenarios (``load_split("eval")``:
generated, held out from training by the family's fixed partition), in discrete mode,
by the mean final ``overall_score`` (and the mean return). Training stops after
``--timesteps`` or ``--max-minutes`` of wall time (periodic evaluations included),
whichever comes first. Then saves ``model.zip``, ``curve.csv``, ``curve.png``,
``table.md`` and ``results.json`` under ``--out``.

    python examples/train_timetable_ppo.py --max-minutes 15 --out runs/timetable_ppo
    meeting-gym eval --env TimetablePlanner-v0 --policy ppo:runs/timetable_ppo/model.zip \\
        --split eval -n 200

``--policy spot`` (default) is :class:`meeting_gym.envs.timetable_planner.sb3_policy.SpotPolicy`
(a shared scorer over every (session, day, slot, room)); ``--policy mlp`` is the plain
``MultiInputPolicy`` for comparison.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from statistics import fmean
from typing import Any

import meeting_gym  # noqa: F401  (registers the env ids)
from meeting_gym.agents.evaluate import evaluate, summarize
from meeting_gym.agents.ppo import MaskablePPOAgent
from meeting_gym.agents.training import (
    curve_figure,
    reference_summaries,
    sb3_callbacks,
    write_run,
)
from meeting_gym.core.splits import load_split

ENV = "TimetablePlanner-v0"


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--timesteps", type=int, default=1_000_000, help="training steps at most")
    p.add_argument("--max-minutes", type=float, default=15.0, help="wall-clock cap (default 15)")
    p.add_argument("--seed", type=int, default=0, help="training seed")
    p.add_argument("--out", default="runs/timetable_ppo", help="output directory")
    p.add_argument("--policy", choices=("spot", "mlp"), default="spot")
    p.add_argument("--difficulty", default=None, help="train on one difficulty (default: mix)")
    p.add_argument("--n-envs", type=int, default=16)
    p.add_argument("--n-steps", type=int, default=32, help="steps per env per rollout")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--ent-coef", type=float, default=0.0)
    p.add_argument("--gain", type=float, default=5.0, help="spot: scorer learning-rate gain")
    p.add_argument("--eval-every", type=int, default=25_000, help="steps between evaluations")
    p.add_argument("--eval-n", type=int, default=100, help="held-out scenarios")
    p.add_argument("--heldout-seed", type=int, default=42, help="split seed of the held-out items")
    p.add_argument("--threads", type=int, default=2, help="torch threads")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p.parse_args()


def main() -> int:
    args = parse_args()
    try:
        import torch
        from sb3_contrib import MaskablePPO
        from stable_baselines3.common.env_util import make_vec_env
    except ImportError:
        print("this example needs the RL extra: pip install 'meeting-gym[rl]'")
        return 1
    torch.set_num_threads(args.threads)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    held_out = load_split("eval", n=args.eval_n, seed=args.heldout_seed, env=ENV)

    env_kwargs = {"difficulty": args.difficulty} if args.difficulty else {}
    venv = make_vec_env(
        f"meeting_gym:{ENV}", n_envs=args.n_envs, seed=args.seed, env_kwargs=env_kwargs
    )
    bounds = dict(vars(venv.get_attr("bounds")[0]))
    if args.policy == "spot":
        from meeting_gym.envs.timetable_planner.sb3_policy import SpotPolicy

        policy: Any = SpotPolicy
        policy_kwargs: dict[str, Any] = {"bounds": bounds, "gain": args.gain}
    else:
        policy, policy_kwargs = "MultiInputPolicy", {}
    model = MaskablePPO(
        policy,
        venv,
        learning_rate=args.lr,
        n_steps=args.n_steps,
        batch_size=args.batch_size,
        n_epochs=args.epochs,
        gamma=args.gamma,
        gae_lambda=args.gae_lambda,
        ent_coef=args.ent_coef,
        seed=args.seed,
        policy_kwargs=policy_kwargs,
        device="cpu",
        verbose=0,
    )

    curve: list[dict[str, float]] = []
    started = time.perf_counter()
    deadline = started + 60 * args.max_minutes

    def evaluate_now(items: list[Any] = held_out) -> dict[str, Any]:
        rows = evaluate(
            lambda: MaskablePPOAgent(model),
            items,
            env=ENV,
            mode="discrete",
            seed=args.heldout_seed,
            show_progress=False,
        )
        summary = summarize(rows)
        point = {
            "timesteps": model.num_timesteps,
            "seconds": round(time.perf_counter() - started, 1),
            "score": summary["score"],
            "reward": summary["reward"],
            "submitted": summary["submitted"],
            "invalid": summary["invalid_actions"],
            "steps": summary["steps"],
        }
        curve.append(point)
        print(
            f"[{point['seconds']:>7.1f}s] step {point['timesteps']:>8}  score {point['score']:.4f}"
            f"  return {point['reward']:.4f}  submitted {point['submitted']:.2f}"
            f"  steps {point['steps']:.1f}",
            flush=True,
        )
        return summary

    callbacks = sb3_callbacks(
        evaluate_now,
        args.eval_every,
        args.timesteps,
        progress=not args.no_progress,
        deadline=deadline,
    )
    evaluate_now()
    model.learn(args.timesteps, callback=callbacks)
    train_seconds = time.perf_counter() - started
    final = evaluate_now()
    model.save(out / "model.zip")

    table = {"ppo": final}
    table.update(reference_summaries(("greedy", "random"), held_out, ENV, args.heldout_seed))
    random_score, greedy_score = table["random"]["score"], table["greedy"]["score"]
    halfway = (random_score + greedy_score) / 2
    levels = sorted({s.task_name for s in held_out}, key=("easy", "medium", "hard", "expert").index)
    lines = [
        f"Held-out: the first {len(held_out)} scenarios of the eval split (generated, split seed "
        f"{args.heldout_seed}, default difficulty mix), discrete mode",
        "",
        "| policy | mean final score | "
        + " | ".join(levels)
        + " | mean return | submitted | invalid actions | steps |",
        "| --- | ---: | " + " | ".join("---:" for _ in levels) + " | ---: | ---: | ---: | ---: |",
    ]
    for name, s in table.items():
        per_level = [
            s["groups"].get(f"difficulty {level}", {}).get("score", 0.0) for level in levels
        ]
        lines.append(
            f"| {name} | {s['score']:.4f} | "
            + " | ".join(f"{v:.4f}" for v in per_level)
            + f" | {s['reward']:.4f} | {s['submitted']:.2f} | {s['invalid_actions']:.2f} | "
            f"{s['steps']:.1f} |"
        )
    verdict = "reached" if final["score"] >= halfway else "NOT reached"
    lines += [
        "",
        f"halfway from random to greedy: {halfway:.4f} ({verdict}: PPO {final['score']:.4f})",
    ]
    text = "\n".join(lines)
    print(text)
    print(
        f"training + periodic evaluation: {train_seconds / 60:.1f} min; model: {out / 'model.zip'}"
    )
    results = {
        "args": vars(args),
        "train_seconds": train_seconds,
        "timesteps": model.num_timesteps,
        "curve": curve,
        "table": {k: {n: v for n, v in s.items() if n != "groups"} for k, s in table.items()},
        "halfway": halfway,
    }
    write_run(out, text, curve, results)
    plot(curve, table, out / "curve.png")
    return 0


def plot(curve: list[dict[str, float]], table: dict[str, Any], path: Path) -> Any:
    """Save the learning curve: the held-out score with greedy, random and halfway."""
    greedy, random = table["greedy"]["score"], table["random"]["score"]
    fig = curve_figure(
        curve,
        ("score", "mean final overall_score"),
        [
            ("greedy", greedy, "--"),
            ("random", random, ":"),
            ("halfway", fmean([random, greedy]), "-."),
        ],
        title="MaskablePPO on TimetablePlanner-v0 (held-out generated scenarios)",
    )
    fig.savefig(path)
    return fig


if __name__ == "__main__":
    raise SystemExit(main())
