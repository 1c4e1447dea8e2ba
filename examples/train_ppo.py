"""Train sb3-contrib's MaskablePPO on an env's discrete mode and compare it with its references.

``--env MeetingSlot-v0`` (default) or ``--env TimetablePlanner-v0``; each env's tuned
defaults, network and table come from :mod:`meeting_gym.training.ppo_runs`. Trains on the
``train`` split only (``reset()`` never draws a held-out item; see
:mod:`meeting_gym.core.splits`) and evaluates every ``--eval-every`` steps on held-out
items of the ``eval`` split (for MeetingSlot its generated part, after the curated
cases), in discrete mode, with the env's own rubric reward, unshaped. Training stops after
``--timesteps`` or ``--max-minutes`` of wall time (periodic evaluations included),
whichever comes first. Then saves ``model.zip``, ``curve.png``, ``curve.csv``,
``table.md`` and ``results.json`` (with each held-out item's final reward, for paired
comparisons between runs) under ``--out``.

``--curriculum LEVEL`` trains on a :class:`meeting_gym.core.curriculum.Curriculum` from the
easiest difficulty up to ``LEVEL`` (each reset's item is the curriculum's next draw, each
episode's return moves it; one curriculum shared by the vector env's copies, or one per
process with ``--subproc``), and saves its state as ``curriculum.json``;
``--heldout-difficulty`` holds out one level's items only. A curriculum run also draws the
levels it chose as ``levels.png``.

    python examples/train_ppo.py --timesteps 20000 --out runs/smoke
    meeting-gym eval --policy ppo:runs/smoke/model.zip --split eval
    python examples/train_ppo.py --env TimetablePlanner-v0 --max-minutes 15
    python examples/train_ppo.py --curriculum expert --heldout-difficulty expert --out runs/cur

MeetingSlot's ``--policy pointer`` is
:class:`meeting_gym.envs.meeting_slot.models.sb3_policy.PointerPolicy` (an MLP trunk plus a shared
scorer over answer starts); TimetablePlanner's ``--policy spot`` is
:class:`meeting_gym.envs.timetable_planner.models.sb3_policy.SpotPolicy` (a shared scorer over
every (session, day, slot, room)); ``--policy mlp`` is plain ``MultiInputPolicy``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import meeting_gym  # noqa: F401  (registers the env ids)
from meeting_gym.agents.ppo import MaskablePPOAgent
from meeting_gym.core.curriculum import Curriculum
from meeting_gym.core.curriculum_wrapper import CurriculumWrapper
from meeting_gym.core.registry import load_object
from meeting_gym.evaluation.evaluate import summarize
from meeting_gym.evaluation.provenance import run_environment
from meeting_gym.training.ppo_runs import RECIPES, Recipe, save_curve
from meeting_gym.training.runs import (
    evaluate_held_out,
    levels_figure,
    reference_summaries,
    sb3_callbacks,
    write_run,
)


def parse_args(argv: list[str] | None = None) -> tuple[argparse.Namespace, Recipe]:
    first = argparse.ArgumentParser(add_help=False)
    first.add_argument(
        "--env", choices=sorted(RECIPES), default="MeetingSlot-v0", help="env (%(default)s)"
    )
    recipe = RECIPES[first.parse_known_args(argv)[0].env]
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], parents=[first])
    p.add_argument("--timesteps", type=int, help="training steps at most (%(default)s)")
    p.add_argument("--max-minutes", type=float, help="wall-clock cap in minutes (%(default)s)")
    p.add_argument("--seed", type=int, default=0, help="training seed")
    p.add_argument("--out", help="output directory (%(default)s)")
    p.add_argument("--policy", choices=tuple(recipe.networks), help="network (%(default)s)")
    p.add_argument("--difficulty", default=None, help="train on one difficulty (default: mix)")
    p.add_argument(
        "--curriculum",
        metavar="LEVEL",
        default=None,
        help="train on a curriculum from the easiest difficulty up to LEVEL",
    )
    p.add_argument(
        "--heldout-difficulty", default=None, help="hold out one difficulty (default: mix)"
    )
    p.add_argument("--n-envs", type=int, help="vectorised envs (%(default)s)")
    p.add_argument("--subproc", action="store_true", help="SubprocVecEnv instead of Dummy")
    p.add_argument("--n-steps", type=int, help="steps per env per rollout (%(default)s)")
    p.add_argument("--batch-size", type=int, help="minibatch (%(default)s)")
    p.add_argument("--epochs", type=int, help="epochs per update (%(default)s)")
    p.add_argument("--lr", type=float, help="learning rate (%(default)s)")
    p.add_argument("--gamma", type=float, help="discount (%(default)s)")
    p.add_argument("--gae-lambda", type=float, help="GAE lambda (%(default)s)")
    p.add_argument("--ent-coef", type=float, help="entropy bonus (%(default)s)")
    p.add_argument("--answer-bias", type=float, default=-6.0, help="pointer: initial answer logit")
    p.add_argument("--gain", type=float, default=5.0, help="spot: scorer learning-rate gain")
    p.add_argument("--eval-every", type=int, help="steps between evaluations (%(default)s)")
    p.add_argument("--eval-n", type=int, help="held-out items (%(default)s)")
    p.add_argument(
        "--heldout-seed", type=int, help="split seed of the held-out eval items (%(default)s)"
    )
    p.add_argument("--threads", type=int, help="torch threads (%(default)s)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(**recipe.defaults)
    args = p.parse_args(argv)
    if args.curriculum and args.difficulty:
        p.error("--curriculum and --difficulty exclude each other")
    return args, recipe


def main(argv: list[str] | None = None) -> int:
    args, recipe = parse_args(argv)
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
    held_out = recipe.held_out(args.eval_n, args.heldout_seed, args.heldout_difficulty)
    curriculum = wrapping = None
    if args.curriculum:
        try:
            curriculum = Curriculum.for_env(args.env, up_to=args.curriculum, seed=args.seed)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        wrapping = {
            "wrapper_class": CurriculumWrapper,
            "wrapper_kwargs": {"curriculum": curriculum},
        }
    venv = make_vec_env(
        f"meeting_gym:{args.env}",  # module prefix: subprocesses import the package
        n_envs=args.n_envs,
        seed=args.seed,
        env_kwargs={"difficulty": args.difficulty} if args.difficulty else {},
        vec_env_cls=SubprocVecEnv if args.subproc else DummyVecEnv,
        **(wrapping or {}),
    )
    network = recipe.networks[args.policy]
    model = MaskablePPO(
        load_object(network) if ":" in network else network,
        venv,
        learning_rate=args.lr,
        n_steps=args.n_steps,
        batch_size=args.batch_size,
        n_epochs=args.epochs,
        gamma=args.gamma,
        gae_lambda=args.gae_lambda,
        ent_coef=args.ent_coef,
        seed=args.seed,
        policy_kwargs=recipe.network_kwargs(args.policy, args, venv),
        device="cpu",
        verbose=0,
    )

    curve: list[dict[str, float]] = []
    started = time.perf_counter()
    environment = run_environment()  # as the run starts: the checkout may move on meanwhile
    final_rows: list[Any] = []

    def evaluate_now() -> dict[str, Any]:
        rows = evaluate_held_out(
            lambda: MaskablePPOAgent(model), held_out, args.env, args.heldout_seed
        )
        final_rows[:] = rows
        summary = summarize(rows)
        point = {
            "timesteps": model.num_timesteps,
            "seconds": round(time.perf_counter() - started, 1),
            **recipe.point(summary),
        }
        if curriculum is not None:  # the level index the curriculum trains at now
            point["level"] = curriculum.level
        curve.append(point)
        print(
            f"[{point['seconds']:>7.1f}s] step {point['timesteps']:>8}  {recipe.line(point)}",
            flush=True,
        )
        return summary

    deadline = None if args.max_minutes is None else started + 60 * args.max_minutes
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
    table.update(reference_summaries(recipe.references, held_out, args.env, args.heldout_seed))
    text = "\n".join(recipe.table(table, held_out, args.heldout_seed))
    print(text)
    print(
        f"training + periodic evaluation: {train_seconds / 60:.1f} min; model: {out / 'model.zip'}"
    )
    results = {
        "environment": environment,
        "args": vars(args),
        "train_seconds": train_seconds,
        "timesteps": model.num_timesteps,
        "curve": curve,
        "table": {k: {n: v for n, v in s.items() if n != "groups"} for k, s in table.items()},
        "heldout_rewards": [float(row.reward) for row in final_rows],
    }
    if curriculum is not None:
        # with --subproc each process moved its own copy: this one never saw an episode
        results["curriculum"] = curriculum.state()
        curriculum.save(out / "curriculum.json")
        levels_figure(
            curriculum.state(), title=f"Curriculum on {args.env} (MaskablePPO, seed {args.seed})"
        ).savefig(out / "levels.png")
    write_run(out, text, curve, results)
    save_curve(recipe, curve, table, out / "curve.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
