"""The options of the multi-turn training pipeline (``meeting-gym train PHASES``,
``examples/train_tool_env.py``): export expert episodes, SFT, GRPO over whole episodes, and
the held-out evaluation; each setting checked before any phase starts."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any

from meeting_gym.agentkit.prompts import system_prompt_for
from meeting_gym.core.registry import ENVS, task_class

ROLLOUTS = ("whole", "last-turn")
ENGINES = ("own", "trl")
PHASES = ("export", "sft", "grpo", "eval")
POLICIES = ("gold", "naive", "random")
SPLIT_SEED = 42
DESCRIPTION = "Teach a small model a tool env: expert episodes, SFT, GRPO, held-out evaluation."


class DefaultsShown(argparse.HelpFormatter):
    """``--help`` with each option's default, unless its help already says it (or it has
    none): argparse's own formatter printed "(default: None)" after "default: the env's"."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if action.default in (None, argparse.SUPPRESS) or "default" in text:
            return text
        if not action.option_strings or isinstance(action.default, bool):
            return text
        return (
            f"{text} (default: %(default)r)"
            if action.default == ""
            else f"{text} (default: %(default)s)"
        )


def add_model_options(
    p: argparse.ArgumentParser, *, env: str, env_help: str, difficulty: str, difficulty_help: str
) -> None:
    """``--env``, ``--model``, ``--difficulty`` and ``--system-prompt``: what the multi-turn
    and the single-turn pipelines both take, with each pipeline's defaults."""
    p.add_argument("--env", default=env, help=env_help)
    p.add_argument("--model", default="smollm2", help="a folder, a .gguf file or smollm2")
    p.add_argument("--difficulty", default=difficulty, help=difficulty_help)
    p.add_argument(
        "--system-prompt", default="short", help="env (the env's own), short, or the text itself"
    )


def add_options(p: argparse.ArgumentParser) -> None:
    """The pipeline's options on ``p`` (the example's parser, or ``meeting-gym train``'s)."""
    add_model_options(
        p,
        env="MeetingSlot-v0",
        env_help="a multi-turn tool env",
        difficulty="",
        difficulty_help="one difficulty ('' for the default mix)",
    )
    p.add_argument(
        "--engine",
        choices=ENGINES,
        default="own",
        help="who trains: the package's own SFT and GRPO loops on text-protocol episodes, or "
        "TRL's SFTTrainer and GRPOTrainer(environment_factory) on OpenAI-format episodes with "
        "the Qwen2.5 tool template (trl: a fresh --out; --curriculum, --rollout last-turn and "
        "--redraws are the own engine's)",
    )
    p.add_argument("--episodes", type=int, default=384, help="expert episodes to train on")
    p.add_argument(
        "--expert",
        default=None,
        help="the expert policy (default: the env's reference; MeetingSlot-v0's gold-worked "
        "writes a worked solution before its answer)",
    )
    p.add_argument("--batch", type=int, default=8, help="episodes per SFT step")
    p.add_argument(
        "--micro-batch", type=int, default=1, help="episodes per forward pass (1: no padding)"
    )
    p.add_argument("--epochs", type=float, default=1.0)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--save-every", type=int, default=8, help="SFT steps between checkpoints")
    p.add_argument(
        "--phase-minutes",
        type=float,
        default=85.0,
        help="stop the phase (checkpointed) after this many minutes (0: at its first save)",
    )
    p.add_argument("--bf16", action=argparse.BooleanOptionalAction, default=True)
    p.add_argument("--grpo-steps", type=int, default=20)
    p.add_argument("--prompts", type=int, default=4, help="items (groups) per GRPO step")
    p.add_argument("--group", type=int, default=8, help="episodes per item")
    p.add_argument("--grpo-lr", type=float, default=1e-5)
    p.add_argument(
        "--max-completion",
        type=int,
        default=1024,
        help="--engine trl's GRPO: tokens of a rollout's whole completion, tool results "
        "included (TRL's max_completion_length)",
    )
    p.add_argument("--temperature", type=float, default=1.0, help="GRPO sampling temperature")
    p.add_argument(
        "--kl",
        type=float,
        default=0.0,
        help="GRPO: weight of a KL term toward the SFT model (0: none)",
    )
    p.add_argument(
        "--rollout",
        choices=ROLLOUTS,
        default="whole",
        help="GRPO: sample each group's episodes whole, or play each item once greedily and "
        "sample its group from that episode's last turn on (last-turn)",
    )
    p.add_argument(
        "--redraws",
        type=int,
        default=2,
        help="GRPO: rounds of fresh items drawn to replace groups whose rewards do not spread",
    )
    p.add_argument(
        "--curriculum",
        action="store_true",
        help="GRPO draws its items from a curriculum over the difficulties (from the easiest "
        "or --curriculum-from, moving where sampled success is inside the band) and offers "
        "again items whose groups' rewards spread; needs --difficulty ''",
    )
    p.add_argument(
        "--curriculum-from",
        default=None,
        help="with --curriculum: the difficulty it starts at (default: the easiest)",
    )
    p.add_argument(
        "--curriculum-up-to",
        default=None,
        help="with --curriculum: the hardest difficulty it may reach (default: every one)",
    )
    p.add_argument(
        "--curriculum-low",
        type=float,
        default=0.1,
        help="with --curriculum: the band's lower edge (a group of 8 with one success, 0.125, "
        "is inside 0.1)",
    )
    p.add_argument(
        "--curriculum-replay",
        type=float,
        default=0.5,
        help="with --curriculum: the share of draws that offer again an item whose group's "
        "rewards spread",
    )
    p.add_argument(
        "--curriculum-replays",
        type=int,
        default=2,
        help="with --curriculum: how many more times one item may be offered",
    )
    p.add_argument("--models", default="sft", help="comma-separated: base, sft, grpo")
    p.add_argument("--eval-n", type=int, default=200, help="held-out eval items")
    p.add_argument("--eval-batch", type=int, default=16, help="episodes generated together")
    p.add_argument("--max-turns", type=int, default=8)
    p.add_argument(
        "--max-tokens", type=int, default=320, help="per reply (the expert's longest: 296)"
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="runs/tool_env")


def checked(args: argparse.Namespace, error: Callable[[str], Any]) -> argparse.Namespace:
    """``args`` with what the phases derive from them; ``error`` (a parser's) names a wrong
    setting in one line."""
    if args.env not in ENVS:
        error(f"unknown env {args.env!r}; `meeting-gym envs` lists them")
    if task_class(args.env).max_turns == 1:
        error(f"{args.env} is single-turn: examples/train_grpo.py trains it")
    args.model_list = [x for x in args.models.split(",") if x]
    for name in args.model_list:
        if name not in ("base", "sft", "grpo"):
            error(f"unknown model {name!r}; choose from base, sft, grpo")
    names = ("episodes", "batch", "micro_batch", "eval_n", "eval_batch", "max_turns")
    for name in (*names, "max_completion", "save_every", "grpo_steps", "prompts"):
        if getattr(args, name) < 1:
            error(f"--{name.replace('_', '-')} must be at least 1")
    if args.group < 2:
        error("--group must be at least 2 (GRPO compares the episodes of a group)")
    if not (args.kl >= 0 and math.isfinite(args.kl)):
        error("--kl must be a finite number at least 0")
    if not (args.phase_minutes >= 0 and math.isfinite(args.phase_minutes)):
        error("--phase-minutes must be a finite number at least 0 (0: stop at the first save)")
    if args.engine == "trl":
        if args.curriculum or args.rollout != "whole":
            error("--engine trl takes neither --curriculum nor --rollout last-turn")
        if args.batch % args.micro_batch:
            error("--engine trl: --batch must be a multiple of --micro-batch")
    if args.curriculum and args.difficulty:
        error("--curriculum chooses the difficulty itself: give --difficulty ''")
    args.rules = None
    if args.curriculum:
        try:
            args.rules = curriculum_rules(args)
            curriculum_for(args, SPLIT_SEED)
        except ValueError as exc:
            error(f"--curriculum: {exc}")
    try:
        args.prompt_text = system_prompt_for(args.env, args.system_prompt)
    except ValueError as exc:
        error(str(exc))
    return args


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The example's options (``--phases`` says which phases run)."""
    p = argparse.ArgumentParser(description=DESCRIPTION, formatter_class=DefaultsShown)
    add_options(p)
    p.add_argument(
        "--phases",
        default="export,sft,eval",
        help=f"comma-separated, in order: {', '.join(PHASES)}",
    )
    args = p.parse_args(argv)
    args.phase_list = phases_of(args.phases, p.error)
    return checked(args, p.error)


def phases_of(text: str, error: Callable[[str], Any]) -> list[str]:
    """The phases of a comma-separated ``text``, in the order given."""
    phases = [x for x in text.split(",") if x]
    for phase in phases:
        if phase not in PHASES:
            error(f"unknown phase {phase!r}; choose from {', '.join(PHASES)}")
    if not phases:
        error(f"no phase given; choose from {', '.join(PHASES)}")
    return phases


def curriculum_rules(args: argparse.Namespace) -> Any:
    """The curriculum's rules of ``--curriculum-*`` (a ValueError names a wrong one)."""
    from meeting_gym.core.curriculum import Rules

    return Rules(
        low=args.curriculum_low, replay=args.curriculum_replay, replays=args.curriculum_replays
    )


def curriculum_for(args: argparse.Namespace, seed: int) -> Any:
    """GRPO's curriculum of ``--curriculum-*`` (a ValueError names a wrong setting)."""
    from meeting_gym.core.curriculum import Curriculum

    return Curriculum.for_env(
        args.env,
        easiest=args.curriculum_from,
        up_to=args.curriculum_up_to,
        seed=seed,
        rules=args.rules,
    )
