"""What a local-model episode costs: uncached, cached in static batches, cached continuously.

``python -m meeting_gym.bench_local`` loads the model once, then plays the same greedy
episodes through :class:`~meeting_gym.agentkit.local.LocalChatClient` in each mode,
alternating ``--repeats`` times:

* ``uncached``: every request read whole (transformers' ``generate`` over the full
  conversation, as before the prefix cache);
* ``static``: the prefix cache (:mod:`~meeting_gym.agentkit.kvcache`) in static batches,
  each answered when its longest reply ends (0.3's client);
* ``continuous``: the cache with continuous batching, each request answered when its own
  reply ends and waiting requests let into a running batch (today's default);
* ``nodraft``: ``continuous`` without prompt-lookup drafts (one token a row per step);
* ``noprefill``: ``continuous`` with every batch's new prompt chunks read in its first pass,
  a row with one token to read padded to the longest (before prefill passes).

It prints each mode's seconds per episode, the prompt tokens read anew and reused, the
tokens generated, the speed-ups, and whether every reply of every episode was the same in
every mode (exit 1 if not: a cache or a batching that changes replies is a bug).

With ``--temperature`` above 0 the episodes are sampled, as GRPO's rollouts are: each mode
draws its own replies (drafts change which random numbers a reply uses, not how it is
distributed), so instead of identical replies each mode's mean reward and reply length are
printed with their 95% intervals, to be compared.

    python -m meeting_gym.bench_local --env MeetingSlot-v0 --split curated -n 2 \\
        --max-turns 5 --max-tokens 64
    python -m meeting_gym.bench_local --split eval -n 32 --max-tokens 320 \\
        --modes static,continuous
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from functools import partial
from typing import Any

MODES = ("uncached", "static", "continuous", "nodraft", "noprefill")
DEFAULT_MODES = ("uncached", "static", "continuous")
CLIENT = {
    "uncached": {"prefix_cache": False},
    "static": {"prefix_cache": True, "continuous": False},
    "continuous": {"prefix_cache": True, "continuous": True},
    "nodraft": {"prefix_cache": True, "continuous": True, "draft_tokens": 0},
    "noprefill": {"prefix_cache": True, "continuous": True, "prefill": False},
}


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
    modes: tuple[str, ...] = DEFAULT_MODES,
    temperature: float = 0.0,
    seed: int = 0,
    system_prompt: str = "env",
    step_tokens: int | None = None,
    loaded: tuple[Any, Any] | None = None,
) -> dict[str, Any]:
    """Play the same episodes in each of ``modes``, ``repeats`` times each; the measurements.

    Greedy unless ``temperature`` > 0 (then each client's sampler is seeded with ``seed``).
    ``system_prompt`` is ``env`` (the env's own), ``short`` or the text itself;
    ``step_tokens`` the tokens a decoding step reads across rows (None: the client's default).
    """
    from meeting_gym.agentkit.llm import LLMAgent, RetryPolicy
    from meeting_gym.agentkit.local import LocalChatClient, load_model, resolve_model
    from meeting_gym.agentkit.prompts import system_prompt_for
    from meeting_gym.core.splits import load_split
    from meeting_gym.evaluation.evaluate import evaluate
    from meeting_gym.evaluation.intervals import mean_interval

    unknown = [mode for mode in modes if mode not in MODES]
    if unknown or not modes:
        raise ValueError(f"modes must be some of {', '.join(MODES)}, got {', '.join(modes)}")
    prompt = system_prompt_for(env, system_prompt)
    started = time.perf_counter()
    pair = loaded if loaded is not None else load_model(resolve_model(model))
    load_s = time.perf_counter() - started
    items = load_split(split, n, env=env)
    runs: dict[str, list[dict[str, Any]]] = {mode: [] for mode in modes}
    seen: dict[str, list[list[str]]] = {}
    for _ in range(repeats):
        for mode in modes:
            settings = {**CLIENT[mode], "step_tokens": step_tokens}
            with LocalChatClient(pair, batch_size=batch, seed=seed, **settings) as client:
                make = partial(
                    LLMAgent,
                    client,
                    model,
                    tool_protocol="text",
                    temperature=temperature,
                    max_tokens=max_tokens,
                    system_prompt=prompt,
                    retry=RetryPolicy(attempts=1),
                )
                began = time.perf_counter()
                results = evaluate(make, items, env=env, max_turns=max_turns, max_concurrent=batch)
                seconds = time.perf_counter() - began
            # read once the client has closed: a continuous batch answers its requests
            # before it adds up what it read and generated
            stats = dict(client.stats)
            seen.setdefault(mode, replies(results))
            rewards = [r.reward for r in results]
            runs[mode].append({"seconds": seconds, "rewards": rewards, **stats})
    first = seen[modes[0]]
    same = sum(all(seen[mode][k] == episode for mode in modes) for k, episode in enumerate(first))
    summary: dict[str, Any] = {
        "env": env,
        "split": split,
        "episodes": len(items),
        "max_turns": max_turns,
        "max_tokens": max_tokens,
        "batch": batch,
        "model": model,
        "temperature": temperature,
        "system_prompt": system_prompt,
        "step_tokens": step_tokens,
        "modes": list(modes),
        "load_s": round(load_s, 1),
        "identical_episodes": same,
        # a digest of each mode's replies: runs in other processes compare by it
        "replies_sha256": {
            mode: hashlib.sha256(json.dumps(seen[mode]).encode()).hexdigest() for mode in modes
        },
        "runs": runs,
    }
    for mode in modes:
        best = min(r["seconds"] for r in runs[mode])
        summary[f"{mode}_s_per_episode"] = round(best / max(len(items), 1), 2)
        mean, half = mean_interval([x for r in runs[mode] for x in r["rewards"]])
        summary[f"{mode}_reward"] = {"mean": round(mean, 4), "ci95": round(half, 4)}
        lengths = [r["generated"] / max(len(items), 1) for r in runs[mode]]
        summary[f"{mode}_tokens_per_episode"] = round(sum(lengths) / len(lengths), 1)
    pairs = [(mode, "continuous") for mode in MODES if mode != "continuous"]
    for slow, fast in pairs:
        if slow in modes and fast in modes:
            summary[f"speedup_{fast}_over_{slow}"] = round(
                summary[f"{slow}_s_per_episode"] / max(summary[f"{fast}_s_per_episode"], 1e-9), 2
            )
    return summary


def table(summary: dict[str, Any]) -> str:
    """The measurements as aligned lines."""
    prompt = summary["system_prompt"]
    lines = [
        f"local-model episodes: {summary['env']} {summary['split']} n={summary['episodes']} "
        f"max-turns {summary['max_turns']} max-tokens {summary['max_tokens']} "
        + ("" if prompt == "env" else f"system prompt {prompt} ")
        + ("" if summary["step_tokens"] is None else f"step tokens {summary['step_tokens']} ")
        + f"(model load {summary['load_s']} s, not counted)",
        f"{'mode':<10}{'s/episode':>10}{'best run s':>11}{'prompt read':>12}{'reused':>9}"
        f"{'generated':>10}",
    ]
    sampled = summary["temperature"] > 0
    if sampled:
        lines[0] += f", sampled at temperature {summary['temperature']}"
        lines[1] += f"{'reward (95% CI)':>18}{'tokens/ep':>10}"
    for mode in summary["modes"]:
        first = summary["runs"][mode][0]
        best = min(r["seconds"] for r in summary["runs"][mode])
        read = first["prompt_tokens"] - first["reused_tokens"]
        line = (
            f"{mode:<10}{summary[f'{mode}_s_per_episode']:>10.2f}{best:>11.1f}{read:>12}"
            f"{first['reused_tokens']:>9}{first['generated']:>10}"
        )
        if sampled:
            reward = summary[f"{mode}_reward"]
            cell = f"{reward['mean']:.3f} ± {reward['ci95']:.3f}"
            line += f"{cell:>18}{summary[f'{mode}_tokens_per_episode']:>10.1f}"
        lines.append(line)
    speedups = [
        f"{key.split('_')[1]} over {key.split('_')[3]} {value:.2f}x"
        for key, value in summary.items()
        if key.startswith("speedup_")
    ]
    same = f"identical replies in {summary['identical_episodes']} of {summary['episodes']} episodes"
    if sampled:
        same = "sampled: each mode draws its own replies"
    lines.append(f"speed-up: {'; '.join(speedups) or '-'}; {same}")
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
    p.add_argument(
        "--modes",
        default=",".join(DEFAULT_MODES),
        help=f"the modes to compare, comma-separated, of {', '.join(MODES)} (default %(default)s)",
    )
    p.add_argument(
        "--temperature", type=float, default=0.0, help="above 0: sampled episodes (as GRPO's)"
    )
    p.add_argument("--seed", type=int, default=0, help="the sampler's seed in every mode")
    p.add_argument(
        "--system-prompt", default="env", help="env (the env's own), short, or the text itself"
    )
    p.add_argument(
        "--step-tokens",
        type=int,
        default=None,
        help="tokens a decoding step reads at most across rows, drafts included "
        "(default: meeting_gym.agentkit.kvcache.STEP_TOKENS)",
    )
    p.add_argument("--json", action="store_true", help="print the measurements as JSON")
    args = p.parse_args(argv)
    for name in ("n", "max_turns", "max_tokens", "batch", "repeats"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.step_tokens is not None and args.step_tokens < 1:
        p.error("--step-tokens must be at least 1")
    if not 0.0 <= args.temperature <= 10.0:
        p.error(f"--temperature must be between 0 and 10, got {args.temperature}")
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
            modes=tuple(m.strip() for m in args.modes.split(",") if m.strip()),
            temperature=args.temperature,
            seed=args.seed,
            system_prompt=args.system_prompt,
            step_tokens=args.step_tokens,
        )
    except ValueError as exc:
        p.error(str(exc))
    print(json.dumps(summary, indent=2) if args.json else table(summary))
    if args.temperature > 0:
        return 0
    return 0 if summary["identical_episodes"] == summary["episodes"] else 1


if __name__ == "__main__":
    sys.exit(main())
