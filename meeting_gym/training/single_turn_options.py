"""The options of the single-turn pipeline (``examples/train_grpo.py``): SFT, GRPO on the
env's own rubric, and the held-out evaluation, each setting checked before anything loads."""

from __future__ import annotations

import argparse
from typing import Any

from meeting_gym.agentkit.prompts import system_prompt_for
from meeting_gym.core.curriculum import MAX_REPLAYS
from meeting_gym.core.registry import task_class
from meeting_gym.training.tool_options import add_model_options

DESCRIPTION = (
    "SFT, then GRPO on the env's own rubric, then a held-out evaluation of base, SFT and SFT+GRPO."
)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The pipeline's options, each checked (a wrong one exits with one line naming it)."""
    p = argparse.ArgumentParser(description=DESCRIPTION)
    add_model_options(
        p,
        env="CalendarMath-v0",
        env_help="a text env: a single-turn one (SFT, GRPO, held-out table), or a tool env such "
        "as MeetingSlot-v0 (a first-call warm start, then GRPO through environment_factory; "
        "whole episodes: examples/train_tool_env.py)",
        difficulty="easy",
        difficulty_help="one difficulty ('' for the mix)",
    )
    p.add_argument("--task", default="add_days", help="the env's task setting ('' for none)")
    p.add_argument("--sft-n", type=int, default=640, help="train items for SFT")
    p.add_argument("--sft-batch", type=int, default=32)
    p.add_argument("--sft-epochs", type=float, default=1.0)
    p.add_argument("--sft-lr", type=float, default=1e-4)
    p.add_argument("--grpo-steps", type=int, default=50)
    p.add_argument("--group", type=int, default=8, help="completions per prompt")
    p.add_argument("--prompts", type=int, default=4, help="prompts per GRPO step")
    p.add_argument("--grpo-lr", type=float, default=1e-5)
    p.add_argument("--temperature", type=float, default=1.0, help="GRPO sampling temperature")
    p.add_argument("--beta", type=float, default=0.0, help="KL coefficient (0: no reference)")
    p.add_argument("--max-completion", type=int, default=24, help="tokens per completion")
    p.add_argument(
        "--tool-iterations", type=int, default=4, help="tool env: tool-calling rounds per rollout"
    )
    p.add_argument("--eval-n", type=int, default=600, help="held-out eval items")
    p.add_argument("--eval-batch", type=int, default=16)
    p.add_argument(
        "--bf16",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="train under bfloat16 autocast (weights stay float32; 2-3x faster on a CPU "
        "with AVX-512 BF16)",
    )
    p.add_argument(
        "--sft-model", default=None, help="a saved SFT folder: skip SFT and start GRPO from it"
    )
    p.add_argument(
        "--evals-from",
        default=None,
        help="a run's folder with the same eval items: reuse its base evaluation "
        "(eval_base.jsonl) and, with the same --sft-model, its SFT one (eval_sft.jsonl) instead "
        "of running them again",
    )
    p.add_argument(
        "--curriculum",
        action="store_true",
        help="GRPO draws its items from a curriculum over every difficulty (needs --difficulty "
        "''): writes curriculum.json and levels.png",
    )
    p.add_argument(
        "--curriculum-replay",
        type=float,
        default=0.0,
        help="with --curriculum: the share of draws that offer again an item whose group's "
        "success rate was inside the band (default %(default)s)",
    )
    p.add_argument(
        "--curriculum-replays",
        type=int,
        default=1,
        help="with --curriculum-replay: how many more times one item may be offered "
        "(default %(default)s)",
    )
    p.add_argument(
        "--spread-extra",
        type=int,
        default=0,
        help="with --curriculum: DAPO-style dynamic sampling. After each step's generation, "
        "its groups whose rewards do not spread are replaced by groups of the curriculum's next "
        "draws, at most this many extra groups a step (default %(default)s: off)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: every core)")
    p.add_argument("--out", default="runs/grpo", help="output directory")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None)
    args = p.parse_args(argv)
    for name in ("sft_n", "sft_batch", "grpo_steps", "group", "prompts", "eval_n", "eval_batch"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.group < 2:
        p.error("--group must be at least 2: GRPO compares completions of one prompt")
    args.tools = task_class(args.env).toolset is not None
    if not 0.0 <= args.curriculum_replay <= 1.0:
        p.error("--curriculum-replay must be a share from 0 to 1")
    if not 1 <= args.curriculum_replays <= MAX_REPLAYS:
        p.error(f"--curriculum-replays must be from 1 to {MAX_REPLAYS}")
    if args.spread_extra < 0:
        p.error("--spread-extra must be 0 or more")
    if args.spread_extra and not args.curriculum:
        p.error("--spread-extra draws its fresh groups from the curriculum: give --curriculum")
    if args.curriculum and (args.difficulty or args.tools):
        p.error(
            "--curriculum chooses the difficulty itself: give --difficulty '' and a single-turn env"
        )
    try:
        args.prompt_text = system_prompt_for(args.env, args.system_prompt)
    except ValueError as exc:
        p.error(str(exc))
    from meeting_gym.agentkit.local import resolve_model

    for flag, name in (("--model", args.model), ("--sft-model", args.sft_model)):
        if name is None:
            continue
        try:
            resolve_model(name)
        except ValueError as exc:  # a missing model is the user's to fix: one line
            p.error(f"{flag}: {exc}")
    return args


def task_options(args: argparse.Namespace) -> dict[str, Any]:
    """The env's settings (``task``), as ``gym.make`` and the splits take them."""
    return {"task": args.task} if args.task else {}


def settings(args: argparse.Namespace) -> dict[str, Any]:
    """The trainer settings SFT and GRPO share, from the command line."""
    return {"bf16": args.bf16, "seed": args.seed, "progress": args.show_progress}
