"""Train sb3-contrib's MaskablePPO on MeetingSlot-v0 and compare it with gold, naive and random.

Evaluates every ``--eval-every`` steps on held-out scenarios: the generated part of
the ``eval`` split (``load_split("eval", seed=--heldout-seed)`` after its curated
cases), which training never sees: ``reset()`` only draws training items (see
:mod:`meeting_gym.core.splits`). Then saves ``model.zip``, a
learning curve ``curve.png`` (mean reward beside exact and partial rates, against
timesteps), ``curve.csv``, ``table.md`` and ``results.json`` under ``--out``.
The reward reported is the env's own rubric reward, unshaped.

    python examples/train_maskable_ppo.py --timesteps 20000 --out runs/smoke
    meeting-gym eval --policy ppo:runs/smoke/model.zip --split eval

``--policy pointer`` (default) uses
:class:`meeting_gym.envs.meeting_slot.sb3_policy.PointerPolicy` (an MLP trunk plus a
shared scorer over answer starts); ``--policy mlp`` is plain
``MultiInputPolicy`` for comparison.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
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


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--timesteps", type=int, default=20_000, help="training steps (default 20k)")
    p.add_argument("--seed", type=int, default=0, help="training seed")
    p.add_argument("--out", default="runs/maskable_ppo", help="output directory")
    p.add_argument("--policy", choices=("pointer", "mlp"), default="pointer")
    p.add_argument("--difficulty", default=None, help="train on one difficulty (default: mix)")
    p.add_argument("--n-envs", type=int, default=8)
    p.add_argument("--subproc", action="store_true", help="SubprocVecEnv instead of Dummy")
    p.add_argument("--n-steps", type=int, default=128, help="steps per env per rollout")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--gamma", type=float, default=1.0)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--ent-coef", type=float, default=0.0)
    p.add_argument("--answer-bias", type=float, default=-6.0, help="pointer: initial answer logit")
    p.add_argument("--eval-every", type=int, default=10_000, help="steps between evaluations")
    p.add_argument("--eval-n", type=int, default=200, help="held-out scenarios")
    p.add_argument(
        "--heldout-seed", type=int, default=42, help="split seed of the held-out eval items"
    )
    p.add_argument("--threads", type=int, default=1, help="torch threads")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p.parse_args()


def main() -> int:
    args = parse_args()
    try:
        import torch
        from sb3_contrib import MaskablePPO
        from stable_baselines3.common.env_util import make_vec_env
        from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv
    except ImportError:
        print("this example needs the RL extra: pip install 'meeting-gym[rl]'")
        return 1
    torch.set_num_threads(args.threads)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    curated = {s.id for s in load_split("curated")}
    eval_split = load_split("eval", n=len(curated) + args.eval_n, seed=args.heldout_seed)
    held_out = [s for s in eval_split if s.id not in curated]

    env_kwargs = {"difficulty": args.difficulty} if args.difficulty else {}
    venv = make_vec_env(
        "meeting_gym:MeetingSlot-v0",  # module prefix: subprocesses import the package
        n_envs=args.n_envs,
        seed=args.seed,
        env_kwargs=env_kwargs,
        vec_env_cls=SubprocVecEnv if args.subproc else DummyVecEnv,
    )
    if args.policy == "pointer":
        from meeting_gym.envs.meeting_slot.sb3_policy import PointerPolicy

        policy: Any = PointerPolicy
        policy_kwargs: dict[str, Any] = {"answer_bias": args.answer_bias}
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

    def evaluate_now() -> dict[str, Any]:
        rows = evaluate(
            lambda: MaskablePPOAgent(model),
            held_out,
            mode="discrete",
            seed=args.heldout_seed,
            show_progress=False,
        )
        summary = summarize(rows)
        point = {
            "timesteps": model.num_timesteps,
            "seconds": round(time.perf_counter() - started, 1),
            "reward": summary["reward"],
            "exact": summary["exact_match"],
            "partial": summary["partial_credit"] / 0.5,
            "mean_turns": summary["mean_turns"],
        }
        curve.append(point)
        print(
            f"[{point['seconds']:>7.1f}s] step {point['timesteps']:>8}"
            f"  reward {point['reward']:.3f}  exact {point['exact']:.3f}"
            f"  partial {point['partial']:.3f}  turns {point['mean_turns']:.1f}",
            flush=True,
        )
        return summary

    callbacks = sb3_callbacks(
        evaluate_now, args.eval_every, args.timesteps, progress=not args.no_progress
    )
    evaluate_now()
    model.learn(args.timesteps, callback=callbacks)
    train_seconds = time.perf_counter() - started
    final = evaluate_now()
    model.save(out / "model.zip")

    table = {"ppo": final}
    table.update(
        reference_summaries(
            ("gold", "naive", "random"), held_out, "MeetingSlot-v0", args.heldout_seed
        )
    )
    lines = [
        f"Held-out: the {len(held_out)} generated scenarios of the eval split "
        f"(split seed {args.heldout_seed}, default difficulty mix), discrete mode",
        "",
        "| policy | mean reward | exact | partial | mean turns |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for name, s in table.items():
        lines.append(
            f"| {name} | {s['reward']:.3f} | {s['exact_match']:.3f} | "
            f"{s['partial_credit'] / 0.5:.3f} | {s['mean_turns']:.1f} |"
        )
    text = "\n".join(lines)
    print(text)
    print(
        f"training + periodic evaluation: {train_seconds / 60:.1f} min; model: {out / 'model.zip'}"
    )
    results = {"args": vars(args), "train_seconds": train_seconds, "curve": curve, "table": table}
    write_run(out, text, curve, results)
    plot(curve, table, out / "curve.png")
    return 0


def plot(curve: list[dict[str, float]], table: dict[str, Any], path: Path) -> Any:
    """Save the learning curve: reward (with gold and naive) beside the two rates."""
    fig = curve_figure(
        curve,
        ("reward", "mean reward per episode (max 1.2)"),
        [("gold", table["gold"]["reward"], ":"), ("naive", table["naive"]["reward"], "--")],
        [("exact", "exact rate"), ("partial", "partial rate")],
        title="MaskablePPO on MeetingSlot-v0 (held-out, 200 scenarios)",
    )
    fig.savefig(path)
    return fig


if __name__ == "__main__":
    raise SystemExit(main())
