"""The paired reward difference of two held-out evaluations, on a slice of their items.

    python benchmarks/heldout_paired.py runs/X/eval_grpo.jsonl runs/X/eval_sft.jsonl --rows 200:400

Each file is an ``eval_<model>.jsonl`` of ``examples/train_tool_env.py`` (one replayable row
an episode, in item order). ``--rows START:STOP`` keeps the rows of items START to STOP - 1
of both, so that a model chosen on the first items can be judged on items it was not chosen
on. Prints the same line as the evaluation's table, e.g. ``paired grpo - sft: +0.085 ± 0.052
(95% CI, n=200)``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from meeting_gym.agents.heldout import paired, paired_line, read_rows, row_stats


def row_slice(text: str) -> slice:
    """``START:STOP`` (either may be left out) as a slice; ``ValueError`` if it is not one."""
    start, sep, stop = text.partition(":")
    if not sep:
        raise ValueError(f"--rows must be START:STOP, not {text!r}")
    try:
        bounds = [int(b) if b.strip() else None for b in (start, stop)]
    except ValueError:
        raise ValueError(f"--rows must be two whole numbers, not {text!r}") from None
    if any(b is not None and b < 0 for b in bounds):
        raise ValueError(f"--rows counts from 0: {text!r}")
    return slice(*bounds)


def name_of(path: Path) -> str:
    """``eval_grpo.jsonl`` -> ``grpo`` (other names as they are, without the suffix)."""
    return path.stem.removeprefix("eval_")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("after", type=Path, help="the evaluation rows of the model after")
    p.add_argument("before", type=Path, help="the evaluation rows of the model before")
    p.add_argument("--rows", default=":", help="START:STOP, the items to compare (default all)")
    args = p.parse_args(argv)
    try:
        part = row_slice(args.rows)
        rows = [read_rows(path)[part] for path in (args.after, args.before)]
        if not rows[0]:
            raise ValueError(f"no rows in {args.rows}")
        after, before = ([row_stats(r, ()) for r in rs] for rs in rows)
        difference = paired(after, before)
    except (OSError, ValueError) as exc:
        p.error(str(exc))
    print(paired_line(f"{name_of(args.after)} - {name_of(args.before)}", difference))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
