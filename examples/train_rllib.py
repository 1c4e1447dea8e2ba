"""Train RLlib's PPO on MeetingSlot-v0 with action masks; compare it with gold, naive, random.

The same run as examples/train_ppo.py, on RLlib's new API stack: the env goes
through :mod:`meeting_gym.adapters.rllib` (masks in the observation, as RLlib's masking
modules expect), the module is the pointer module
(:class:`meeting_gym.envs.meeting_slot.models.rllib_module.PointerRLModule`, the counterpart of
SB3's PointerPolicy) or ``--module mlp`` (RLlib's own ``ActionMaskingTorchRLModule`` over a
plain 64x64 MLP). Evaluates every ``--eval-every`` steps on the held-out scenarios (the
generated part of the ``eval`` split, which training never draws) with the package's
evaluation runner, then writes ``curve.png``, ``curve.csv``, ``table.md``,
``results.json`` and the checkpoint ``checkpoint/`` under ``--out``. The reward is the
env's own rubric reward, unshaped.

    python examples/train_rllib.py --timesteps 20000 --out runs/rllib_smoke
    python examples/train_rllib.py --num-env-runners 2 --address auto   # on a Ray cluster

``--num-env-runners 0`` samples in this process; ``N > 0`` starts N sampling actors
(processes, on any node of the cluster with ``--address auto``). The batch per update
is the same whatever N is: more runners only sample it in parallel.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any

import meeting_gym  # noqa: F401  (registers the env ids)
from meeting_gym.core.splits import load_split
from meeting_gym.evaluation.evaluate import summarize
from meeting_gym.evaluation.provenance import run_environment
from meeting_gym.training.ppo_runs import meeting_table, reward_curve
from meeting_gym.training.runs import evaluate_held_out, reference_summaries, write_run


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--env", default="MeetingSlot-v0", help="a registered id with a discrete mode")
    p.add_argument("--num-env-runners", type=int, default=0, help="sampling actors (0: in here)")
    p.add_argument("--address", default=None, help="Ray cluster to join, e.g. auto")
    p.add_argument("--timesteps", type=int, default=20_000, help="training steps (default 20k)")
    p.add_argument("--seed", type=int, default=0, help="training seed")
    p.add_argument("--out", default="runs/rllib", help="output directory")
    p.add_argument("--module", choices=("pointer", "mlp"), default="pointer")
    p.add_argument("--envs-per-runner", type=int, default=8, help="vectorised envs per runner")
    p.add_argument("--train-batch", type=int, default=1024, help="env steps per update")
    p.add_argument("--minibatch", type=int, default=256)
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
    p.add_argument("--target", type=float, default=1.1, help="report the time to this reward")
    p.add_argument("--stop-at-target", action="store_true", help="stop once --target is reached")
    p.add_argument("--threads", type=int, default=1, help="torch threads in this process")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from gymnasium.error import DependencyNotInstalled

    from meeting_gym.adapters import rllib as adapter

    try:
        adapter.require_rllib()
    except DependencyNotInstalled as error:
        print(f"this example needs the rllib extra: {error}")
        return 1
    import ray
    import torch

    from meeting_gym.agents.rllib_agent import RLlibAgent

    torch.set_num_threads(args.threads)
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    environment = run_environment()  # as the run starts: the checkout may move on meanwhile
    if args.address:
        ray.init(address=args.address, include_dashboard=False, log_to_driver=False)
    else:
        # logical CPUs: the driver (local learner) plus one per runner, even on 2 cores
        ray.init(num_cpus=args.num_env_runners + 1, include_dashboard=False, log_to_driver=False)
    if args.module == "pointer":
        from meeting_gym.envs.meeting_slot.models.rllib_module import pointer_spec

        spec = pointer_spec(args.env, answer_bias=args.answer_bias)
    else:
        spec = adapter.masked_mlp_spec()
    config = adapter.ppo_config(
        args.env,
        spec,
        num_env_runners=args.num_env_runners,
        envs_per_env_runner=args.envs_per_runner,
        train_batch_size=args.train_batch,
        minibatch_size=args.minibatch,
        num_epochs=args.epochs,
        lr=args.lr,
        gamma=args.gamma,
        lambda_=args.gae_lambda,
        entropy_coeff=args.ent_coef,
        seed=args.seed,
    )
    algo = config.build_algo()
    ready = time.perf_counter() - started
    print(f"[{ready:>7.1f}s] Ray up, PPO built ({args.num_env_runners} env runners)", flush=True)

    curated = {s.id for s in load_split("curated", env=args.env)}
    eval_split = load_split(
        "eval", n=len(curated) + args.eval_n, seed=args.heldout_seed, env=args.env
    )
    held_out = [s for s in eval_split if s.id not in curated]
    curve: list[dict[str, Any]] = []
    timing = {"train": 0.0, "sample": 0.0, "learn": 0.0, "evaluate": 0.0, "iterations": 0}
    steps = 0

    def evaluate_now() -> dict[str, Any]:
        began = time.perf_counter()
        module = algo.get_module()
        rows = evaluate_held_out(lambda: RLlibAgent(module), held_out, args.env, args.heldout_seed)
        timing["evaluate"] += time.perf_counter() - began
        summary = summarize(rows)
        point = {
            "timesteps": steps,
            "seconds": round(time.perf_counter() - started, 1),
            "reward": summary["reward"],
            "exact": summary["exact_match"],
            "partial": summary["partial_credit"] / 0.5,
            "mean_turns": summary["mean_turns"],
            "load_1min": round(os.getloadavg()[0], 2),  # the machine may be shared
        }
        curve.append(point)
        print(
            f"[{point['seconds']:>7.1f}s] step {point['timesteps']:>8}"
            f"  reward {point['reward']:.3f}  exact {point['exact']:.3f}"
            f"  partial {point['partial']:.3f}  turns {point['mean_turns']:.1f}"
            f"  load {point['load_1min']:.1f}",
            flush=True,
        )
        return summary

    evaluate_now()
    next_eval = args.eval_every
    reached: dict[str, Any] | None = None
    while steps < args.timesteps:
        began = time.perf_counter()
        result = algo.train()
        timing["train"] += time.perf_counter() - began
        timing["iterations"] += 1
        steps = int(result["env_runners"]["num_env_steps_sampled_lifetime"])
        timers = result.get("timers", {})  # RLlib's smoothed seconds per train()
        timing["sample"] = float(timers.get("env_runner_sampling_timer", 0.0))
        timing["learn"] = float(timers.get("learner_update_timer", 0.0))
        if steps >= next_eval or steps >= args.timesteps:
            next_eval += args.eval_every
            point = evaluate_now()
            if reached is None and point["reward"] >= args.target:
                reached = dict(curve[-1])
                if args.stop_at_target:
                    break
    wall = time.perf_counter() - started
    final = summarize(
        evaluate_held_out(
            lambda: RLlibAgent(algo.get_module()), held_out, args.env, args.heldout_seed
        )
    )
    algo.save_to_path(str(out / "checkpoint"))

    name = f"PPO ({'PointerRLModule' if args.module == 'pointer' else 'masked MLP'})"
    table = {name: final}
    table.update(
        reference_summaries(("gold", "naive", "random"), held_out, args.env, args.heldout_seed)
    )
    lines = meeting_table(table, held_out, args.heldout_seed)
    text = "\n".join(lines)
    print(text)
    per_call = timing["train"] / max(timing["iterations"], 1)
    print(
        f"wall time {wall / 60:.1f} min: Ray start and PPO build {ready:.0f} s, "
        f"{timing['iterations']} train() calls {timing['train']:.0f} s ({per_call:.2f} s each; "
        f"RLlib's timers at the end: sampling {timing['sample']:.2f} s, learning "
        f"{timing['learn']:.2f} s), evaluations {timing['evaluate']:.0f} s"
    )
    if reached is not None:
        print(
            f"first evaluation at >= {args.target}: {reached['reward']:.3f} at step "
            f"{reached['timesteps']}, {reached['seconds'] / 60:.1f} min"
        )
    else:
        print(f"never reached {args.target}")
    loads = [p["load_1min"] for p in curve]
    print(
        f"load average (1 min) at the evaluations: {min(loads):.1f} to {max(loads):.1f}, "
        f"median {sorted(loads)[len(loads) // 2]:.1f}; checkpoint: {out / 'checkpoint'}"
    )
    results = {
        "environment": environment,
        "args": vars(args),
        "wall_seconds": wall,
        "setup_seconds": ready,
        "timing": timing,
        "reached_target": reached,
        "curve": curve,
        "table": table,
    }
    write_run(out, text, curve, results)
    try:
        figure = reward_curve(
            curve, table, f"RLlib {name} on {args.env} (held-out)", "mean reward per episode"
        )
        figure.savefig(out / "curve.png")
    except ImportError:
        print("no matplotlib: curve.png skipped (curve.csv has the points)")
    algo.stop()
    ray.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
