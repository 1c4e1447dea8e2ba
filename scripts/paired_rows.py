"""Compare two evaluations of the same held-out items: each one's mean reward, and the paired
difference ``after - before`` with its 95% interval.

The rows are the ``eval_<model>.jsonl`` files ``examples/train_tool_env.py`` (or
``train_grpo.py``) writes, one replayable episode a line, for example two SFT models of one
env trained on different expert episodes:

    python scripts/paired_rows.py runs/cron_steps/eval_sft.jsonl runs/cron_lists/eval_sft.jsonl

A wrong file, or two files of different items, is one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any


def read_rows(path: str) -> list[dict[str, Any]]:
    """The episode rows of a JSONL file (``ValueError`` naming the file and line if malformed)."""
    from meeting_gym.agents.heldout import read_rows as checked_rows

    rows = checked_rows(path)
    if not rows:
        raise ValueError(f"{path}: no rows")
    return rows


def compare(after_path: str, before_path: str) -> list[str]:
    """The lines the script prints (``ValueError`` naming what is wrong)."""
    from meeting_gym.agents.heldout import model_summary, paired, paired_line, row_stats
    from meeting_gym.core.splits import make_task

    after, before = read_rows(after_path), read_rows(before_path)
    envs = {row["env"] for row in after + before}
    if len(envs) != 1:
        raise ValueError(f"the rows are of more than one env: {', '.join(sorted(envs))}")
    terms = list(make_task(envs.pop()).rubric.names)
    a, b = [row_stats(r, terms) for r in after], [row_stats(r, terms) for r in before]
    difference = paired(a, b)
    lines = []
    for path, rows in ((after_path, a), (before_path, b)):
        summary = model_summary(rows, terms)
        reward = summary["reward"]
        lines.append(f"{path}: {reward['mean']:.3f} ± {reward['ci95']:.3f} (n={len(rows)})")
    lines.append(paired_line("after - before", difference))
    return lines


def main(argv: list[str] | None = None) -> int:
    """Print the comparison; a user error is one line and exit status 2."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("after", help="the rows of the model to compare (JSONL)")
    parser.add_argument("before", help="the rows of the model it is compared with (JSONL)")
    args = parser.parse_args(argv)
    try:
        lines = compare(args.after, args.before)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
