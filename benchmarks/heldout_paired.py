"""The paired reward difference of two held-out evaluations, on a slice of their items.

    python benchmarks/heldout_paired.py runs/X/eval_grpo.jsonl runs/X/eval_sft.jsonl --rows 200:400

Each file is an ``eval_<model>.jsonl`` of ``examples/train_tool_env.py`` (one replayable row
an episode, written as episodes end and read in item order). ``--rows START:STOP`` keeps the
rows of items START to STOP - 1 of both, so that a model chosen on the first items can be
judged on items it was not chosen on. Prints the same line as the evaluation's table,
e.g. ``paired grpo - sft: +0.085 ± 0.052 (95% CI, n=200)``.

BEFORE may instead name one of the env's reference policies (``naive``, ``gold``): it is
played on AFTER's items, each reset as AFTER's row was (its env, seed and split options),
since the evaluation keeps no rows of the policies:

    python benchmarks/heldout_paired.py runs/X/eval_grpo.jsonl naive --rows 200:400
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from meeting_gym.agents.heldout import (
    episode_stats,
    in_item_order,
    paired,
    paired_line,
    read_rows,
    row_slice,
    row_stats,
)

# reference policies a model is paired with here: deterministic, so the pairing is the
# evaluation's own (a random policy would draw other moves than the evaluation's did)
POLICIES = ("naive", "gold")


def policy_stats(name: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The reference policy ``name`` played on the items of ``rows``, each episode reset with
    its row's env, seed and options; one :func:`episode_stats` row each, in order."""
    import gymnasium as gym

    from meeting_gym.agents.evaluate import as_agent, result_of
    from meeting_gym.agents.policies import make_policy
    from meeting_gym.core.loop import play
    from meeting_gym.core.registry import task_class

    stats = []
    for row in rows:
        kwargs = {**(row.get("env_kwargs") or {}), "mode": "text"}  # as the model played
        if row.get("max_turns") is not None:
            kwargs["max_turns"] = row["max_turns"]
        env = gym.make(row["env"], disable_env_checker=True, **kwargs)
        try:
            agent = as_agent(make_policy(name, seed=row["seed"], env=row["env"]), env, "text")
            rollout = play(env, agent, seed=row["seed"], options=row["options"])
            stats.append(episode_stats(result_of(env, rollout, task_class(row["env"]).rubric)))
        finally:
            env.close()
    return stats


def name_of(path: Path) -> str:
    """``eval_grpo.jsonl`` -> ``grpo`` (other names as they are, without the suffix)."""
    return path.stem.removeprefix("eval_")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("after", type=Path, help="the evaluation rows of the model after")
    p.add_argument(
        "before",
        type=Path,
        help="the evaluation rows of the model before, or a reference policy (naive, gold)",
    )
    p.add_argument("--rows", default=":", help="START:STOP, the items to compare (default all)")
    args = p.parse_args(argv)
    try:
        part = row_slice(args.rows)
        rows = in_item_order(read_rows(args.after))[part]
        if not rows:
            raise ValueError(f"no rows in {args.rows}")
        after = [row_stats(r, ()) for r in rows]
        if args.before.is_file() or str(args.before) not in POLICIES:
            before = [row_stats(r, ()) for r in in_item_order(read_rows(args.before))[part]]
        else:
            before = policy_stats(str(args.before), rows)
        difference = paired(after, before)
    except (OSError, ValueError) as exc:
        p.error(str(exc))
    except KeyError as exc:  # a row without what resets its episode for the policy
        p.error(f"{args.after}: a row has no {exc} to play {args.before} on")
    print(paired_line(f"{name_of(args.after)} - {name_of(args.before)}", difference))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
