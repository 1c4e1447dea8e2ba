"""The ``meeting-gym`` command line: ``eval``, ``bench`` and ``export``."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

from meeting_gym.core.splits import DEFAULT_SEED, SPLITS, export_jsonl, load_split
from meeting_gym.envs.meeting_slot.domain.generator import DIFFICULTIES


def _eval(args: argparse.Namespace) -> int:
    from meeting_gym.agents.evaluate import evaluate, format_table, summarize
    from meeting_gym.agents.policies import make_policy

    scenarios = load_split(args.split, n=args.n, seed=args.seed, difficulty=args.difficulty)
    if args.policy == "openai":
        if args.mode == "discrete":
            raise ValueError("the openai policy acts in text mode; drop --mode discrete")
        args.mode = "text"
        from meeting_gym.agents.llm_eval import run_cli

        return run_cli(args, scenarios)
    if args.policy.startswith("ppo:") and args.mode == "text":
        raise ValueError("a ppo:PATH policy acts in discrete mode; drop --mode text")
    if args.mode is None:
        args.mode = "discrete" if args.policy.startswith("ppo:") else "text"
    if args.mode == "discrete":
        from meeting_gym.envs.meeting_slot.agents import evaluate_discrete, make_discrete_agent

        agent = make_discrete_agent(args.policy, seed=args.seed)
        results = evaluate_discrete(
            lambda: agent,
            scenarios,
            seed=args.seed,
            show_progress=args.progress,
            obs=getattr(agent, "obs", "grid"),
        )
    else:
        results = evaluate(
            lambda: make_policy(args.policy, seed=args.seed),
            scenarios,
            seed=args.seed,
            show_progress=args.progress,
        )
    summary = summarize(results)
    if args.json:
        payload = {"policy": args.policy, "split": args.split, "mode": args.mode, **summary}
        if args.verbose:
            payload["episodes"] = [r.as_dict() for r in results]
        print(json.dumps(payload, indent=2))
    else:
        title = (
            f"meeting-gym eval  policy={args.policy}  split={args.split}  "
            f"mode={args.mode}  n={len(scenarios)}"
        )
        print(format_table(summary, title, results if args.verbose else ()))
    return 0


def _bench(args: argparse.Namespace) -> int:
    from meeting_gym.bench import run_bench

    print(run_bench(quick=args.quick, as_json=args.json))
    return 0


def _export(args: argparse.Namespace) -> int:
    scenarios = load_split(args.split, n=args.n, seed=args.seed, difficulty=args.difficulty)
    count = export_jsonl(scenarios, args.out)
    print(f"wrote {count} rows to {args.out}")
    return 0


def _add_llm_options(parser: argparse.ArgumentParser) -> None:
    from meeting_gym.agents.llm_eval import add_cli_options  # no openai import here

    add_cli_options(parser)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="meeting-gym", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    def split_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--split", choices=SPLITS, default="curated")
        p.add_argument("-n", type=int, default=None, help="number of scenarios (split default)")
        p.add_argument("--seed", type=int, default=DEFAULT_SEED)
        p.add_argument("--difficulty", choices=DIFFICULTIES, default=None)

    ev = sub.add_parser("eval", help="evaluate a policy and print the rubric table")
    ev.add_argument(
        "--policy",
        default="gold",
        help="gold | naive | random | ppo:PATH (a saved MaskablePPO) | openai (an LLM endpoint)",
    )
    ev.add_argument(
        "--mode",
        choices=("text", "discrete"),
        default=None,
        help="interface to act through (default: text; discrete for ppo:PATH)",
    )
    split_options(ev)
    ev.add_argument("--verbose", action="store_true", help="one row per scenario")
    ev.add_argument("--json", action="store_true", help="machine-readable output")
    ev.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bar on stderr (default: on a tty, for 50+ scenarios)",
    )
    _add_llm_options(ev)
    ev.set_defaults(run=_eval)

    bench = sub.add_parser("bench", help="measure speed against CartPole-v1 in the same run")
    bench.add_argument("--quick", action="store_true", help="fewer repeats (for smoke tests)")
    bench.add_argument("--json", action="store_true", help="machine-readable output")
    bench.set_defaults(run=_bench)

    export = sub.add_parser("export", help="write a split as JSONL rows for LLM trainers")
    split_options(export)
    export.add_argument("--out", required=True)
    export.set_defaults(run=_export)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "n", None) is not None and args.n < 0:
        parser.error("-n must be non-negative")
    try:
        return args.run(args)
    except (ValueError, ImportError) as exc:
        print(f"meeting-gym: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `meeting-gym eval | head`: the reader left, not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
