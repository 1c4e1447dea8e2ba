"""The multi-turn pipeline's held-out evaluation: each model and reference policy on the
same ``eval`` items (none trained on: checked), every row replayed on a fresh env to its
logged reward before it counts; the table, per difficulty, and the run's curves."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from meeting_gym.evaluation.chat import LocalProgress
from meeting_gym.evaluation.heldout import paired_line
from meeting_gym.training.finetune import trainable
from meeting_gym.training.tool_options import POLICIES, SPLIT_SEED


def load(name: str) -> tuple[Any, Any]:
    """(tokenizer, float32 model) of a model name or a saved folder."""
    from meeting_gym.agentkit.local import load_model, resolve_model

    tokenizer, model = load_model(resolve_model(name))
    return tokenizer, trainable(model)


def read_logged(path: Path) -> list[dict[str, Any]]:
    """The rows an earlier run wrote to ``path``; a damaged line stops the run with one line
    naming it (delete the file to evaluate afresh).

    A last line without its newline was cut short by a stop in the middle of its write:
    it is dropped from the file, so the run appends after the last whole row.
    """
    from meeting_gym.evaluation.heldout import read_rows

    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with open(path, "r+b") as handle:
            handle.truncate(data.rfind(b"\n") + 1)
        print(f"{path.name}: dropped a last row cut short by a stop", file=sys.stderr)
    try:
        return read_rows(path)
    except ValueError as exc:
        raise ValueError(str(exc)) from None


def logged_items(path: Path, options: list[dict[str, Any]]) -> dict[int, dict[str, Any]] | None:
    """The rows of ``path`` by the index of the item each played (rows are written as
    episodes end, in any order). Rows of items past ``options`` (a larger ``--eval-n``) are
    left in the file and unread. None if a row is of another item at its index (another
    split seed or difficulty): the file is then written afresh."""
    from meeting_gym.evaluation.heldout import item_index

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
    from meeting_gym.evaluation.replay import replay_row

    if row.get("error") is None:
        try:
            replay = replay_row(row)
        except Exception as exc:  # a row cut or edited by hand: named, not a traceback
            raise ValueError(f"{label} eval item {k} cannot be replayed: {exc!r}") from None
        if replay.mismatches or replay.breakdown() != row["breakdown"]:
            raise ValueError(f"{label} eval item {k} does not replay: {replay.mismatches}")


def evaluate_all(args: argparse.Namespace, out: Path, episodes: Path) -> dict[str, Any]:
    """The held-out table: each model and reference policy on the same eval items."""
    from meeting_gym.agentkit.local import template_has_tools
    from meeting_gym.agents.policies import make_policy
    from meeting_gym.core.splits import load_split, make_task
    from meeting_gym.evaluation.chat import evaluate_local, replayable_row
    from meeting_gym.evaluation.evaluate import evaluate
    from meeting_gym.evaluation.heldout import episode_stats, model_summary, paired, row_stats

    task = make_task(args.env)
    terms = list(task.rubric.names)
    level = args.difficulty or None
    # one plain line (a small --eval-n is curated items), not Python's warning format
    items = load_split(
        "eval",
        args.eval_n,
        SPLIT_SEED,
        level,
        env=task,
        note=lambda text: print(f"note: {text}", file=sys.stderr),
    )
    # by item id: a MeetingSlot question states only the duration and the window, so two
    # different scenarios can share one (the attendees are behind the tools)
    trained = {json.loads(line)["id"] for line in episodes.read_text().splitlines()}
    if any(task.item_id(i) in trained for i in items):  # the splits promise it never happens
        raise ValueError("an eval item is also a training episode")
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
        # a folder saved with a template that renders tools (--engine trl's) is played with
        # native tool calls, as `meeting-gym eval --policy local --model FOLDER` plays it
        protocol = "native" if template_has_tools(tokenizer) else "text"
        # appended to, unless it holds an older model's rows or other items'
        with open(rows_file, "a" if mine is not None else "w", encoding="utf-8") as handle:

            def write(
                j: int,
                result: Any,
                handle: Any = handle,
                left: list[int] = left,
                label: str = label,
                protocol: str = protocol,
            ) -> None:
                # each row as its episode ends, in any order (its options name its item), so
                # a stopped run resumes from every episode that ended
                k = left[j]
                row = replayable_row(
                    result,
                    env=args.env,
                    seed=args.seed + k,
                    options=options[k],
                    tool_protocol=protocol,
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
                tool_protocol=protocol,
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
    if results.get("engine") == "trl":
        lines += ["", *bar_lines(results)]
    lines += ["", *difficulty_table(results)]
    return "\n".join(lines)


BAR = 0.95
"""Issue 48's bar for a trained model: this share of episodes answered, and of turns accepted."""


def bar_lines(results: dict[str, Any]) -> list[str]:
    """One line per trained model: its answered and accepted-turn shares against :data:`BAR`."""
    lines = []
    for name in ("sft", "grpo"):
        s = results["summary"].get(name)
        if s is None:
            continue
        answered, accepted = s["answered"]["mean"], s["accepted_turn_share"]
        met = answered >= BAR and accepted is not None and accepted >= BAR
        lines.append(
            f"{name}: answered {answered:.3f}, accepted turns "
            f"{'-' if accepted is None else f'{accepted:.3f}'} (bar {BAR}: "
            f"{'met' if met else 'not met'})"
        )
    return lines


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
    from meeting_gym.training.runs import llm_curve_figure, llm_curve_rows, write_curve_csv

    logs = [out / "sft" / "sft_log.json", out / "grpo" / "grpo_log.json"]
    sft_log, grpo_log = (json.loads(f.read_text()) if f.is_file() else [] for f in logs)
    if not sft_log and not grpo_log:
        return
    curve = llm_curve_rows(sft_log, grpo_log)
    write_curve_csv(out / "curve.csv", curve)
    title = f"{args.env}: SFT on {args.episodes} expert episodes, then GRPO over whole episodes"
    llm_curve_figure(curve, title).savefig(out / "curve.png")
