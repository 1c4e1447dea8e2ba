"""One GRPO step over whole MeetingSlot episodes, in TRL's GRPOTrainer and in the package's own
loop, timed side by side in one process at equal group sizes.

    python benchmarks/grpo_step_cost.py --model runs/tool_env_trl/sft_model \
        --prompts 1 --group 4 --max-tokens 320 --max-turns 8 --max-completion 1024 --json

Both steps start from the same weights (``--model``, loaded afresh for each), play the same
``train`` items (the first after ``--skip``, the items a run's GRPO phase draws after its SFT
episodes), ``--group`` sampled episodes an item at the same temperature and seed, and take one
optimizer step at the same learning rate, with the same system prompt. Each engine plays the
episodes its own way, as its pipeline does (``meeting-gym train --engine own|trl``):

* own (:mod:`meeting_gym.training.grpo`): the text tool protocol through the batched local
  client, at most ``--max-tokens`` a reply and ``--max-turns`` replies; then one update
  (a group whose rewards do not spread is updated at advantage 0, as TRL does, so both
  steps take their backward pass);
* trl: ``GRPOTrainer(environment_factory=...)`` with native tool calls in the Qwen2.5
  template (given to a model whose template renders no tools), at most ``--max-turns``
  generations and ``--max-completion`` tokens a rollout, tool results included.

Printed: wall and CPU seconds of the step, rollouts, completion tokens generated, and the
mean reward; ``--json`` prints the rows as JSON too, with the libraries and the CPU they were
measured on, and ``--table RUN`` prints the table of such a saved run again.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ENV = "MeetingSlot-v0"
SPLIT_SEED = 42


def timed(work: Any) -> tuple[float, float, Any]:
    """Wall and CPU seconds (every thread of the process) of ``work()``, and its result."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = work()
    return time.perf_counter() - wall, time.process_time() - cpu, out


def train_rows(n: int, skip: int, system_prompt: str | None) -> list[dict[str, Any]]:
    """The adapter's dataset rows of train items ``skip`` to ``skip + n - 1``."""
    from meeting_gym.adapters.trl import rows

    every = rows(ENV, "train", skip + n, seed=SPLIT_SEED, system_prompt=system_prompt)
    return every[skip:]


def own_step(model: str, settings: SimpleNamespace) -> dict[str, Any]:
    """One step of the package's own loop; its timings and counts."""
    import torch

    from meeting_gym.core.splits import load_split
    from meeting_gym.training.grpo import Sampling, advantages, policy_rows, policy_step
    from meeting_gym.training.trl_runs import load

    tokenizer, net = load(model)
    items = load_split("train", settings.skip + settings.prompts, SPLIT_SEED, None, env=ENV)
    items = items[settings.skip :]
    sampling = Sampling(
        settings.system_prompt,
        settings.max_turns,
        settings.max_tokens,
        settings.temperature,
        settings.seed,
    )
    optimizer = torch.optim.AdamW(net.parameters(), lr=settings.lr, weight_decay=0.0)
    stops = [tokenizer.convert_tokens_to_ids("<|im_end|>")]

    def rollouts() -> list[list[Any]]:
        from meeting_gym.training.grpo import rollout_groups

        return rollout_groups((tokenizer, net), ENV, items, settings.group, sampling)

    def update(groups: list[list[Any]]) -> float:
        transcripts, weights, group_of = [], [], []
        for g, group in enumerate(groups):
            weighted = advantages([r.reward for r in group]) or [0.0] * len(group)
            for result, weight in zip(group, weighted, strict=True):
                transcripts.append(result.extra["transcript"])
                weights.append(weight)
                group_of.append(g)
        rows = policy_rows(tokenizer, transcripts, weights, stops, group_of)
        return policy_step(net, optimizer, rows, bf16=settings.bf16)

    wall, cpu, groups = timed(rollouts)
    wall_update, cpu_update, _ = timed(lambda: update(groups))
    played = [r for g in groups for r in g]
    tokens = sum((r.extra.get("usage") or {}).get("completion_tokens", 0) for r in played)
    return {
        "engine": "own",
        "wall_s": round(wall + wall_update, 2),
        "cpu_s": round(cpu + cpu_update, 2),
        "rollout_wall_s": round(wall, 2),
        "update_wall_s": round(wall_update, 2),
        "rollouts": len(played),
        "completion_tokens": tokens,
        "reward": round(sum(r.reward for r in played) / len(played), 4),
    }


def trl_step(model: str, settings: SimpleNamespace) -> dict[str, Any]:
    """One step of TRL's GRPOTrainer as ``--engine trl`` runs it; its timings and counts."""
    from datasets import Dataset
    from trl import GRPOTrainer
    from trl.chat_template_utils import qwen2_5_chat_template

    from meeting_gym.agentkit.local import template_has_tools
    from meeting_gym.training.trl_runs import load
    from meeting_gym.training.trl_tool_run import grpo_config
    from meeting_gym.training.trl_tools import (
        recorded_factory,
        render_env_schemas,
        submit_replies,
    )

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    tokenizer, net = load(model)
    if not template_has_tools(tokenizer):
        tokenizer.chat_template = qwen2_5_chat_template
    played: list[dict[str, Any]] = []
    args = SimpleNamespace(
        **vars(settings), grpo_steps=1, grpo_lr=settings.lr, kl=0.0, episodes=settings.skip
    )
    with tempfile.TemporaryDirectory() as folder:
        trainer = GRPOTrainer(
            model=net,
            reward_funcs=[submit_replies],
            args=grpo_config(args, Path(folder), save=False),
            train_dataset=Dataset.from_list(
                train_rows(settings.prompts, settings.skip, settings.system_prompt)
            ),
            processing_class=tokenizer,
            environment_factory=recorded_factory(ENV, played.append),
        )
        render_env_schemas(trainer, ENV)
        wall, cpu, _ = timed(trainer.train)
    (entry,) = [e for e in trainer.state.log_history if "reward" in e]
    return {
        "engine": "trl",
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "rollouts": len(played),
        "completion_tokens": round(entry["completions/mean_length"] * len(played)),
        "reward": round(entry["reward"], 4),
    }


@contextlib.contextmanager
def ticking(what: str, started: float, every_s: float = 30.0) -> Iterator[None]:
    """``what`` on stderr now and every ``every_s`` seconds until the block ends, with the
    time since ``started`` (a step at real size runs for minutes, and says so)."""
    done = threading.Event()

    def tick() -> None:
        while True:
            print(f"{what}: {time.monotonic() - started:.0f} s in", file=sys.stderr, flush=True)
            if done.wait(every_s):
                return

    thread = threading.Thread(target=tick, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


def measure(model: str, settings: SimpleNamespace, engines: tuple[str, ...]) -> list[dict]:
    """One step of each engine of ``engines`` in turn; their rows."""
    import torch

    steps = {"own": own_step, "trl": trl_step}
    rows = []
    started = time.monotonic()
    for k, name in enumerate(engines, 1):
        torch.manual_seed(settings.seed)
        with ticking(
            f"engine {k}/{len(engines)}: {name}, one step of {settings.prompts} x "
            f"{settings.group} episodes (rollouts, then the update)",
            started,
        ):
            row = steps[name](model, settings)
        row.update(group=settings.group, prompts=settings.prompts, threads=torch.get_num_threads())
        rows.append(row)
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    """The rows as a Markdown table."""
    head = ["engine", "prompts x group", "wall s", "CPU s", "rollouts", "tokens", "reward"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r["engine"], f"{r['prompts']} x {r['group']}", f"{r['wall_s']:.1f}"]
        cells += [f"{r['cpu_s']:.1f}", str(r["rollouts"]), str(r["completion_tokens"])]
        cells.append(f"{r['reward']:.3f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="smollm2", help="a folder, a .gguf file or smollm2")
    p.add_argument("--prompts", type=int, default=1, help="items a step")
    p.add_argument("--group", type=int, default=4, help="episodes an item")
    p.add_argument("--max-tokens", type=int, default=320, help="own: tokens a reply")
    p.add_argument("--max-turns", type=int, default=8, help="replies (generations) a rollout")
    p.add_argument("--max-completion", type=int, default=1024, help="trl: tokens a rollout")
    p.add_argument("--skip", type=int, default=384, help="train items before the first one")
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--lr", type=float, default=1e-5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--system-prompt", default="short", help="env, short, or the text itself")
    p.add_argument("--bf16", action=argparse.BooleanOptionalAction, default=True)
    p.add_argument("--engines", default="own,trl", help="comma-separated, in the order run")
    p.add_argument("--json", action="store_true", help="print the rows as JSON too")
    p.add_argument(
        "--table", type=Path, metavar="RUN", help="print the table of a saved run (--json) and stop"
    )
    args = p.parse_args(argv)
    if args.table:
        try:
            saved = json.loads(args.table.read_text())
            rows = saved["rows"]
            print(table(rows))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            p.error(f"--table: {args.table} is not a saved run ({exc})")
        return 0
    engines = tuple(x for x in args.engines.split(",") if x)
    if not engines or set(engines) - {"own", "trl"}:
        p.error("--engines: own, trl or both")
    for name in ("prompts", "group", "max_tokens", "max_turns", "max_completion"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.group < 2:
        p.error("--group must be at least 2 (TRL's GRPO needs two generations an item)")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import meeting_gym  # noqa: F401  (registers the env ids)
    from meeting_gym.agentkit.prompts import system_prompt_for
    from meeting_gym.training.trl_runs import quiet_trl_deprecations

    quiet_trl_deprecations()
    settings = SimpleNamespace(
        prompts=args.prompts,
        group=args.group,
        max_tokens=args.max_tokens,
        max_turns=args.max_turns,
        max_completion=args.max_completion,
        skip=args.skip,
        temperature=args.temperature,
        lr=args.lr,
        seed=args.seed,
        bf16=args.bf16,
        system_prompt=system_prompt_for(ENV, args.system_prompt),
    )
    rows = measure(args.model, settings, engines)
    print(table(rows))
    if args.json:
        from meeting_gym.evaluation.provenance import run_environment

        # the libraries and the CPU the figures were measured on (they reproduce there)
        print(json.dumps({"rows": rows, "environment": run_environment()}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
