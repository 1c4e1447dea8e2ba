"""Two evaluations of the same items compared pair by pair (``meeting-gym rows paired``).

Each side is an ``eval_<model>.jsonl[.gz]`` of held-out rows (one replayable episode a line,
as ``examples/train_tool_env.py`` and ``train_grpo.py`` write them), or, for the second,
the name of one of the env's deterministic reference policies (``naive``, ``gold``), played
on the first's items, each reset as its row was (the evaluation keeps no rows of them).
``rows`` (``START:STOP``) keeps items START to STOP - 1 of both, so that a model chosen on
the first items can be judged on items it was not chosen on. :func:`compare` gives the
lines the command prints: each side's mean reward with its 95% interval, then the paired
difference ``after - before`` with its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from meeting_gym.evaluation.heldout import (
    episode_stats,
    in_item_order,
    model_summary,
    paired,
    paired_line,
    read_rows,
    row_slice,
    row_stats,
)

POLICIES = ("naive", "gold")
"""Reference policies a model is paired with: deterministic, so the pairing is the
evaluation's own (a random policy would draw other moves than the evaluation did)."""


def policy_stats(name: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The reference policy ``name`` played on the items of ``rows``, each episode reset with
    its row's env, seed and options; one :func:`episode_stats` row each, in order."""
    import gymnasium as gym

    from meeting_gym.agents.policies import make_policy
    from meeting_gym.core.loop import play
    from meeting_gym.core.registry import task_class
    from meeting_gym.evaluation.evaluate import as_agent, result_of

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


def run_name(path: str) -> str:
    """``runs/x/eval_grpo.jsonl`` (or ``.jsonl.gz``) -> ``grpo``; other names as they are."""
    name = Path(path).name
    for suffix in (".gz", ".jsonl"):
        name = name.removesuffix(suffix)
    return name.removeprefix("eval_")


def side_names(after: str, before: str, policy: bool) -> tuple[str, str]:
    """The two sides' names in the paired line; two files of one model name (two folders'
    ``eval_sft.jsonl``) are told apart by their folders."""
    first, second = run_name(after), before if policy else run_name(before)
    if policy or first != second:
        return first, second
    return f"{Path(after).parent.name}/{first}", f"{Path(before).parent.name}/{second}"


def compare(after: str, before: str, rows: str = ":") -> list[str]:
    """The lines ``meeting-gym rows paired`` prints; ``ValueError`` naming what is wrong (a
    missing or malformed file, a row of an unknown env, other items on the two sides, an
    empty or malformed ``rows``)."""
    from meeting_gym.core.splits import make_task

    part = row_slice(rows)
    played = in_item_order(read_rows(after))[part]
    if not played:
        raise ValueError(f"{after}: no rows in {rows}")
    envs = {row["env"] for row in played}
    if len(envs) != 1:
        raise ValueError(f"the rows are of more than one env: {', '.join(sorted(envs))}")
    terms = list(make_task(envs.pop()).rubric.names)
    a = [row_stats(r, terms) for r in played]
    policy = before in POLICIES and not Path(before).is_file()
    if policy:
        try:
            b = policy_stats(before, played)
        except KeyError as exc:  # a row without what resets its episode for the policy
            raise ValueError(f"{after}: a row has no {exc} to play {before} on") from None
    else:
        b = [row_stats(r, terms) for r in in_item_order(read_rows(before))[part]]
    difference = paired(a, b)
    lines = []
    for side, stats in ((after, a), (before, b)):
        reward = model_summary(stats, terms)["reward"]
        lines.append(f"{side}: {reward['mean']:.3f} ± {reward['ci95']:.3f} (n={len(stats)})")
    first, second = side_names(after, before, policy)
    lines.append(paired_line(f"{first} - {second}", difference))
    return lines
