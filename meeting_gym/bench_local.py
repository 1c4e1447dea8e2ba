"""What a local-model episode costs, with and without the prefix cache, side by side.

``python -m meeting_gym.bench_local`` loads the model once, then plays the same greedy
episodes through :class:`~meeting_gym.agentkit.local.LocalChatClient` with every request
read whole (``prefix_cache=False``: transformers' ``generate`` over the full conversation,
as before the cache) and with the cache (:mod:`~meeting_gym.agentkit.kvcache`), alternating
``--repeats`` times. It prints each mode's seconds per episode, the prompt tokens read anew
and reused, the tokens generated, the speed-up, and whether every reply of every episode
was the same in both modes (exit 1 if not: a cache that changes replies is a bug).

    python -m meeting_gym.bench_local --env MeetingSlot-v0 --split curated -n 2 \\
        --max-turns 5 --max-tokens 64
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from functools import partial
from typing import Any

MODES = ("uncached", "cached")


def replies(results: list[Any]) -> list[list[str]]:
    """Each episode's assistant replies, in order."""
    return [
        [m.get("content") or "" for m in r.extra.get("transcript", []) if m["role"] == "assistant"]
        for r in results
    ]


def run(
    model: str = "smollm2",
    *,
    env: str = "MeetingSlot-v0",
    split: str = "curated",
    n: int = 2,
    max_turns: int = 5,
    max_tokens: int = 64,
    batch: int = 8,
    repeats: int = 2,
    loaded: tuple[Any, Any] | None = None,
) -> dict[str, Any]:
    """Play the same episodes uncached and cached ``repeats`` times each; the measurements."""
    from meeting_gym.agentkit.llm import LLMAgent, RetryPolicy
    from meeting_gym.agentkit.local import LocalChatClient, load_model, resolve_model
    from meeting_gym.agents.evaluate import evaluate
    from meeting_gym.core.splits import load_split

    started = time.perf_counter()
    pair = loaded if loaded is not None else load_model(resolve_model(model))
    load_s = time.perf_counter() - started
    items = load_split(split, n, env=env)
    runs: dict[str, list[dict[str, Any]]] = {mode: [] for mode in MODES}
    seen: dict[str, list[list[str]]] = {}
    for _ in range(repeats):
        for mode in MODES:
            with LocalChatClient(pair, batch_size=batch, prefix_cache=mode == "cached") as client:
                make = partial(
                    LLMAgent,
                    client,
                    model,
                    tool_protocol="text",
                    temperature=0.0,
                    max_tokens=max_tokens,
                    retry=RetryPolicy(attempts=1),
                )
                began = time.perf_counter()
                results = evaluate(make, items, env=env, max_turns=max_turns, max_concurrent=batch)
                seconds = time.perf_counter() - began
                stats = dict(client.stats)
            seen.setdefault(mode, replies(results))
            runs[mode].append({"seconds": seconds, **stats})
    same = sum(a == b for a, b in zip(seen["uncached"], seen["cached"], strict=True))
    summary: dict[str, Any] = {
        "env": env,
        "split": split,
        "episodes": len(items),
        "max_turns": max_turns,
        "max_tokens": max_tokens,
        "model": model,
        "load_s": round(load_s, 1),
        "identical_episodes": same,
        "runs": runs,
    }
    for mode in MODES:
        best = min(r["seconds"] for r in runs[mode])
        summary[f"{mode}_s_per_episode"] = round(best / max(len(items), 1), 2)
    summary["speedup"] = round(
        summary["uncached_s_per_episode"] / max(summary["cached_s_per_episode"], 1e-9), 2
    )
    return summary


def table(summary: dict[str, Any]) -> str:
    """The measurements as aligned lines."""
    lines = [
        f"local-model episodes: {summary['env']} {summary['split']} n={summary['episodes']} "
        f"max-turns {summary['max_turns']} max-tokens {summary['max_tokens']} "
        f"(model load {summary['load_s']} s, not counted)",
        f"{'mode':<10}{'s/episode':>10}{'best run s':>11}{'prompt read':>12}{'reused':>9}"
        f"{'generated':>10}",
    ]
    for mode in MODES:
        first = summary["runs"][mode][0]
        best = min(r["seconds"] for r in summary["runs"][mode])
        read = first["prompt_tokens"] - first["reused_tokens"]
        lines.append(
            f"{mode:<10}{summary[f'{mode}_s_per_episode']:>10.2f}{best:>11.1f}{read:>12}"
            f"{first['reused_tokens']:>9}{first['generated']:>10}"
        )
    lines.append(
        f"speed-up {summary['speedup']:.2f}x; identical replies in "
        f"{summary['identical_episodes']} of {summary['episodes']} episodes"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="smollm2", help="a folder, a .gguf file or smollm2")
    p.add_argument("--env", default="MeetingSlot-v0")
    p.add_argument("--split", default="curated")
    p.add_argument("-n", type=int, default=2, help="episodes")
    p.add_argument("--max-turns", type=int, default=5)
    p.add_argument("--max-tokens", type=int, default=64)
    p.add_argument("--batch", type=int, default=8, help="episodes generated together")
    p.add_argument("--repeats", type=int, default=2, help="runs of each mode (best counts)")
    p.add_argument("--json", action="store_true", help="print the measurements as JSON")
    args = p.parse_args(argv)
    for name in ("n", "max_turns", "max_tokens", "batch", "repeats"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    try:
        summary = run(
            args.model,
            env=args.env,
            split=args.split,
            n=args.n,
            max_turns=args.max_turns,
            max_tokens=args.max_tokens,
            batch=args.batch,
            repeats=args.repeats,
        )
    except ValueError as exc:
        p.error(str(exc))
    print(json.dumps(summary, indent=2) if args.json else table(summary))
    return 0 if summary["identical_episodes"] == summary["episodes"] else 1


if __name__ == "__main__":
    sys.exit(main())
