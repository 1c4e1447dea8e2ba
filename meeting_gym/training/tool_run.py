"""The multi-turn training pipeline in phases that each resume from what the last run saved.

:func:`run` plays the phases of ``args.phase_list`` in order (``meeting-gym train PHASES``,
``examples/train_tool_env.py --phases PHASES``):

1. ``export``: the reference policy's whole episodes on ``train`` items, each replayed to the
   env's best before it is written (``meeting_gym.evaluation.episodes``), as ``episodes.jsonl``;
2. ``sft``: the model fine-tuned on them with the loss on the assistant's tokens only
   (``meeting_gym.training.sft``), checkpointed every ``--save-every`` steps and resumed from
   the last checkpoint; the result is ``sft_model/`` (``meeting-gym eval --policy local
   --model OUT/sft_model`` evaluates it with the same rendering);
3. ``grpo``: GRPO over whole episodes from the SFT model (``meeting_gym.training.grpo``): each
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

A phase that cannot start (no episodes, no SFT model) is a ``ValueError`` naming the phase
to run first. With ``--engine trl`` the export, sft and grpo phases are TRL's
(:mod:`meeting_gym.training.trl_tool_run`), the eval phase this one.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from meeting_gym.agentkit.prompts import save_trained
from meeting_gym.evaluation.chat import LocalProgress
from meeting_gym.evaluation.provenance import record_phase
from meeting_gym.training.runs import StepProgress
from meeting_gym.training.tool_eval import evaluate_all, load, table, write_curves
from meeting_gym.training.tool_options import SPLIT_SEED, curriculum_for


def export(args: argparse.Namespace, out: Path, tool_format: str = "text") -> Path:
    """``episodes.jsonl``: the expert's train episodes in ``tool_format`` (kept if already
    written; the TRL engine's export asks for ``openai``)."""
    from meeting_gym.evaluation.episodes import export_episodes

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
            tool_format=tool_format,
        )
    return path


def sft(args: argparse.Namespace, out: Path, episodes: Path) -> dict[str, Any]:
    """Fine-tune (or resume); ``sft_model/`` once every step is taken."""
    from meeting_gym.training.sft import episode_tokens, train

    folder = out / "sft_model"
    log_file = out / "sft" / "sft_log.json"
    if folder.is_dir() and log_file.is_file():
        return {"log": json.loads(log_file.read_text()), "done": True}
    lines = episodes.read_text().splitlines()
    if lines and json.loads(lines[0]).get("format") == "openai":
        raise ValueError(f"{episodes} holds OpenAI-format episodes: train them with --engine trl")
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
    from meeting_gym.core.curriculum import Curriculum
    from meeting_gym.training.grpo import (
        Sampling,
        advantages,
        branch_groups,
        informative,
        policy_rows,
        policy_step,
        reference_logps,
        rollout_groups,
    )

    folder, state_dir = out / "grpo_model", out / "grpo"
    state_file = state_dir / "state.pt"
    if folder.is_dir():
        return {"log": json.loads((state_dir / "grpo_log.json").read_text()), "done": True}
    resumed = state_file.is_file()
    if resumed:  # a run resumes with the rollouts it began with
        saved = json.loads((state_dir / "grpo_log.json").read_text())
        first = saved[0].get("rollout", "whole") if saved else args.rollout
        if first != args.rollout:
            raise ValueError(f"this GRPO run began with --rollout {first}: resume it so")
        beta = saved[0].get("kl_beta", 0.0) if saved else args.kl
        if beta != args.kl:
            raise ValueError(f"this GRPO run began with --kl {beta}: resume it so")
    # a run resumes as it began: with its curriculum (saved beside its state) or without
    began_with = (state_dir / "curriculum.json").is_file()
    if resumed and began_with != args.curriculum:
        said = "with" if began_with else "without"
        raise ValueError(f"this GRPO run began {said} --curriculum: resume it {said}")
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
                Sampling(args.prompt_text, args.max_turns, args.max_tokens, args.temperature, seed),
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
    from meeting_gym.evaluation.chat import replayable_row

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


def run(args: argparse.Namespace) -> int:
    """Play the phases of ``args.phase_list`` in order; 0 when they ran."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    times_file = out / "times.json"
    times = json.loads(times_file.read_text()) if times_file.is_file() else {}
    episodes = out / "episodes.jsonl"
    # the phases' trainer: this module's own loops, or TRL's (meeting_gym.training.trl_tool_run)
    engine: Any = sys.modules[__name__]
    if getattr(args, "engine", "own") == "trl":
        from meeting_gym.training import trl_tool_run as engine
    for phase in args.phase_list:
        began = time.perf_counter()
        # each sitting's libraries and CPU: a phase resumed elsewhere reproduces only as well
        phases = record_phase(out / "environment.json", phase)
        if phase == "export":
            episodes = engine.export(args, out)
        elif phase == "sft":
            if not episodes.is_file():
                raise ValueError("no episodes.jsonl: run the export phase first")
            run = engine.sft(args, out, episodes)
            if not run["done"]:
                print(
                    f"SFT stopped after {len(run['log'])} steps (checkpointed): run again to resume"
                )
        elif phase == "grpo":
            if not (out / "sft_model").is_dir():
                raise ValueError("no sft_model/: finish the sft phase first")
            run = engine.grpo(args, out)
            if not run["done"]:
                print(f"GRPO stopped after {len(run['log'])} steps (saved): run again to resume")
        else:
            if not episodes.is_file():  # it proves no eval item was trained on
                raise ValueError("no episodes.jsonl: run the export phase first")
            for label in ("sft", "grpo"):
                if label in args.model_list and not (out / f"{label}_model").is_dir():
                    raise ValueError(f"no {label}_model/: finish the {label} phase first")
            results = evaluate_all(args, out, episodes)
            results["engine"] = args.engine
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
