"""The real-model table: a chat model on every registered env, beside its naive and random policies.

For each env id (default: all of them) and each item set (``curated``, and ``--eval-n``
held-out generated items of the ``eval`` split, curated ones left out), it plays the model
(an OpenAI-compatible server with ``--base-url``, or in-process with ``--local``) and the
env's naive and random policies (TimetablePlanner has no ``naive``: its ``greedy`` stands
in), and writes a Markdown table per env: mean reward with its 95% interval, each rubric
term, the answered rate, mean turns and the malformed-action rate, with the wall time of
each model run. Every model episode is written to ``OUT/<env>.jsonl`` with what replays it,
and replayed (:mod:`meeting_gym.evaluation.replay`): the script fails if a logged reward is not
the env's grade of the logged actions.

A turn is malformed when the env answered it with an ``error:`` observation (no tool call or
answer could be read, or a tool refused its arguments; TimetablePlanner: a state whose
``last_action`` is ``invalid``), or when it was the final reply and no answer could be read
from it.

    python -m llama_cpp.server --model "$GGUF" --model_alias smollm2 --n_ctx 8192 &
    python -m meeting_gym.evaluation.real_model --base-url http://127.0.0.1:8080/v1 \\
        --model smollm2 --eval-n 100 --out out/real_model
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from statistics import fmean, stdev
from typing import Any

import gymnasium as gym

import meeting_gym
from meeting_gym.agents.policies import make_policy
from meeting_gym.core.loop import play
from meeting_gym.core.registry import make_task
from meeting_gym.core.splits import DEFAULT_SEED, load_split
from meeting_gym.evaluation.evaluate import EpisodeResult, evaluate, result_of
from meeting_gym.evaluation.heldout import malformed_turns, refused
from meeting_gym.evaluation.replay import replay_row


def item_sets(env_id: str, eval_n: int, curated_n: int | None) -> dict[str, list[tuple[Any, dict]]]:
    """``curated`` and held-out ``eval`` items, each with the reset options that address it."""
    task = make_task(env_id)
    curated = load_split("curated", n=curated_n, env=task)
    skip = len(task.eval_prefix())
    held = load_split("eval", n=skip + eval_n, env=task)[skip:]
    sets = {
        "curated": [(item, {"split": "curated", "index": i}) for i, item in enumerate(curated)],
        "eval": [
            (item, {"split": "eval", "index": skip + i, "split_seed": DEFAULT_SEED})
            for i, item in enumerate(held)
        ],
    }
    return {name: items for name, items in sets.items() if items}


def baseline_names(env_id: str) -> list[str]:
    """The env's naive policy (greedy where it has none) and its random policy."""
    policies = make_task(env_id).policies
    naive = "naive" if "naive" in policies else "greedy"
    return [name for name in (naive, "random") if name in policies]


def run_policy(env_id: str, name: str, items: list[tuple[Any, dict]], max_turns: int | None):
    """A reference policy on ``items``: results, and malformed counts from the env's transcript."""
    kwargs = {"mode": "text", **({"max_turns": max_turns} if max_turns else {})}
    env = gym.make(env_id, disable_env_checker=True, **kwargs)
    rubric = env.unwrapped.task.rubric
    agent = make_policy(name, seed=0, env=env_id)
    results, bad, turns = [], 0, 0
    for k, (item, _options) in enumerate(items):
        rollout = play(env, agent, seed=k, options={"item": item})
        result = result_of(env, rollout, rubric)
        results.append(result)
        observations = [text for kind, text in env.unwrapped.transcript if kind == "observation"]
        bad += sum(refused(text) for text in observations)
        bad += result.answer is None and result.turns > len(observations)
        turns += result.turns
    env.close()
    return results, bad, turns


def run_model(args: argparse.Namespace, make_agent: Any, env_id: str, items, protocol, out):
    """The model on ``items``; its rows (with replay fields) go to ``out``."""
    from meeting_gym.evaluation.chat import replayable_row

    rows: list[dict[str, Any]] = []

    def keep(result: EpisodeResult) -> None:
        k = len(rows)
        line = replayable_row(
            result,
            env=env_id,
            seed=k,
            options=items[k][1],
            tool_protocol=protocol,
            max_turns=args.max_turns,
        )
        rows.append(line)
        out.write(json.dumps(line, ensure_ascii=False) + "\n")
        out.flush()

    results = evaluate(
        make_agent,
        [item for item, _ in items],
        env=env_id,
        max_turns=args.max_turns,
        max_concurrent=args.max_concurrent,
        on_result=keep,
        show_progress=args.progress,
    )
    bad = turns = 0
    for result, line in zip(results, rows, strict=True):
        b, t = malformed_turns(line["transcript"][2:], result.answer is not None)
        bad, turns = bad + b, turns + t
    for line in rows:  # the logged reward is the env's grade of the logged actions
        replay = replay_row(line)
        logged = line["breakdown"]
        if logged is not None and (replay.mismatches or replay.breakdown() != logged):
            raise SystemExit(
                f"replay mismatch on {env_id} {line['options']}: logged {logged}, "
                f"replayed {replay.breakdown()} {replay.mismatches}"
            )
    return results, bad, turns


def interval(values: list[float]) -> str:
    """The mean and the half-width of its 95% interval (normal approximation)."""
    if not values:
        return "-"
    half = 1.96 * stdev(values) / math.sqrt(len(values)) if len(values) > 1 else 0.0
    return f"{fmean(values):.3f} ± {half:.3f}"


def table(env_id: str, rows: list[tuple[str, str, list[EpisodeResult], int, int, float]]) -> str:
    """The Markdown table of one env: a line per (policy, item set)."""
    terms = list(make_task(env_id).rubric.names)
    head = ["policy", "items", "n", "reward (95% CI)", *terms, "answered", "turns", "malformed"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for policy, name, results, bad, turns, seconds in rows:
        scored = [r for r in results if r.error is None]
        cells = [
            policy + (f" ({seconds:.0f} s)" if seconds else ""),
            name,
            f"{len(results)}"
            + (f" ({len(results) - len(scored)} errors)" if len(scored) < len(results) else ""),
            interval([r.reward for r in scored]),
            *(f"{fmean(r.terms[t] for r in scored):.3f}" if scored else "-" for t in terms),
            f"{fmean(r.answer is not None for r in scored):.2f}" if scored else "-",
            f"{fmean(r.turns for r in scored):.2f}" if scored else "-",
            f"{bad / turns:.2f}" if turns else "-",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", action="append", choices=meeting_gym.ENV_IDS, help="(repeatable)")
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--base-url", help="an OpenAI-compatible server (else --local)")
    parser.add_argument("--local", action="store_true", help="run --model in-process")
    parser.add_argument("--tool-protocol", choices=("native", "text"), default=None)
    parser.add_argument("--eval-n", type=int, default=100)
    parser.add_argument("--curated-n", type=int, default=None, help="default: every item")
    parser.add_argument("--max-turns", type=int, default=None, help="default: the env's")
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--temperature", type=float, default=0.0, help="default 0: greedy")
    parser.add_argument("--max-concurrent", type=int, default=1)
    parser.add_argument("--out", default="out/real_model")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None)
    args = parser.parse_args(argv)
    if bool(args.base_url) == bool(args.local):
        parser.error("give exactly one of --base-url URL and --local")
    from functools import partial

    from meeting_gym.agentkit.llm import LLMAgent, RetryPolicy, make_client

    client: Any
    if args.local:
        from meeting_gym.agentkit.local import LocalChatClient

        client = LocalChatClient(args.model, batch_size=args.max_concurrent)
        protocol = args.tool_protocol or client.tool_protocol
    else:
        client = make_client(args.base_url, "EMPTY", timeout=600.0)
        protocol = args.tool_protocol or "text"
    make_agent = partial(
        LLMAgent,
        client,
        args.model,
        tool_protocol=protocol,
        max_tokens=args.max_tokens,
        temperature=args.temperature,
        retry=RetryPolicy(attempts=3),
    )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    pages = []
    for env_id in args.env or meeting_gym.ENV_IDS:
        rows = []
        with open(out / f"{env_id}.jsonl", "w", encoding="utf-8") as handle:
            for name, items in item_sets(env_id, args.eval_n, args.curated_n).items():
                begun = time.perf_counter()
                results, bad, turns = run_model(args, make_agent, env_id, items, protocol, handle)
                rows.append((args.model, name, results, bad, turns, time.perf_counter() - begun))
                print(f"{env_id} {name}: {rows[-1][-1]:.0f} s", file=sys.stderr)
                for policy in baseline_names(env_id):
                    rows.append(
                        (policy, name, *run_policy(env_id, policy, items, args.max_turns), 0.0)
                    )
        pages.append(f"### {env_id}\n\n{table(env_id, rows)}\n")
        (out / "tables.md").write_text("\n".join(pages), encoding="utf-8")
    if args.local:
        client.close()
    total = time.perf_counter() - started
    print("\n".join(pages))
    print(f"wall time {total:.0f} s; rows and tables in {out}/", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
