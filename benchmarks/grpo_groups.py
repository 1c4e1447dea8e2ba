"""Per GRPO step of a run: its groups, their distinct final answers and exact rollouts.

    python benchmarks/grpo_groups.py runs/tool_env/grpo/rollouts.jsonl [--group 8]

``examples/train_tool_env.py`` writes every rollout as a row, group by group, each with its
step. A group whose distinct answers fall toward one is a policy collapsing onto one reply
(the step's log carries the same count as ``answers_per_group`` since it was added; this
reads it back from any run's rows).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path


def step_table(rows: list[dict], group: int) -> list[dict]:
    """One line per step: groups, mean distinct answers per group, exact rollouts of all."""
    if len(rows) % group:
        raise ValueError(f"{len(rows)} rows are not whole groups of {group}")
    distinct: dict[int, list[int]] = defaultdict(list)
    exact: dict[int, list[float]] = defaultdict(list)
    for k in range(0, len(rows), group):
        members = rows[k : k + group]
        if len({r["step"] for r in members}) != 1:
            raise ValueError(f"rows {k} to {k + group - 1} span two steps: is --group right?")
        distinct[members[0]["step"]].append(len({str(r["answer"]) for r in members}))
        exact[members[0]["step"]] += [r["breakdown"]["exact_match"] for r in members]
    return [
        {
            "step": step,
            "groups": len(counts),
            "answers_per_group": round(sum(counts) / len(counts), 2),
            "exact": int(sum(exact[step])),
            "rollouts": len(exact[step]),
        }
        for step, counts in distinct.items()
    ]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("rollouts", help="a run's grpo/rollouts.jsonl")
    p.add_argument("--group", type=int, default=8, help="episodes per item (the run's --group)")
    args = p.parse_args(argv)
    if args.group < 1:
        p.error("--group must be at least 1")
    try:
        text = Path(args.rollouts).read_text(encoding="utf-8")
        table = step_table([json.loads(line) for line in text.splitlines()], args.group)
    except (OSError, ValueError, KeyError) as exc:
        p.error(f"{args.rollouts}: {exc}")
    print("| step | groups | distinct answers per group | exact rollouts |")
    print("|---|---|---|---|")
    for line in table:
        print(
            f"| {line['step']} | {line['groups']} | {line['answers_per_group']:.2f} | "
            f"{line['exact']} of {line['rollouts']} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
