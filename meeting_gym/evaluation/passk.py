"""pass@k and pass^k over K sampled episodes of each item.

A mean reward says how good a policy is on average; it does not say how reliable it is.
With K sampled episodes of every item (``meeting-gym eval --samples K``), an item is
*solved* by an episode that earns the item's best reward (``Task.max_reward_for``), and for
each k from 1 to K:

* **pass@k** is the chance that at least one of k episodes drawn from the K solves the item
  (the unbiased estimator of Chen et al., 2021: ``1 - C(K - c, k) / C(K, k)`` for ``c``
  solved of ``K``), the usual measure of what a policy can do with retries;
* **pass^k** is the chance that all k solve it (``C(c, k) / C(K, k)``, as tau-bench reports
  reliability): what a user who needs it right every time gets.

Both are averaged over items, each with a 95% interval (normal approximation over the items'
estimates). pass@1 equals pass^1: the solved share of all episodes. Nothing here imports
gymnasium.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from math import comb
from typing import Any

from meeting_gym.evaluation.intervals import mean_interval

__all__ = ["pass_at", "pass_hat", "pass_lines", "pass_summary", "solved_counts"]

_TOLERANCE = 1e-9  # rewards are rounded to 10 places by the rubric


def pass_at(solved: int, samples: int, k: int) -> float:
    """The chance that at least one of ``k`` of ``samples`` episodes solves the item, given
    ``solved`` of them do (drawn without replacement)."""
    _check(solved, samples, k)
    return 1.0 - comb(samples - solved, k) / comb(samples, k)


def pass_hat(solved: int, samples: int, k: int) -> float:
    """The chance that all ``k`` of ``samples`` episodes solve the item, given ``solved`` do."""
    _check(solved, samples, k)
    return comb(solved, k) / comb(samples, k)


def _check(solved: int, samples: int, k: int) -> None:
    if not 0 <= solved <= samples or not 1 <= k <= samples:
        raise ValueError(
            f"need 0 <= solved <= samples and 1 <= k <= samples, got {solved=}, {samples=}, {k=}"
        )


def solved_counts(
    results: Sequence[Any], items: Sequence[Any], samples: int, best: Callable[[Any], float]
) -> list[int]:
    """How many of each item's ``samples`` episodes solved it.

    ``results`` are the runner's, item by item, ``samples`` a row (its order); an episode
    solves its item when it ended without error and earned ``best(item)``.
    """
    if len(results) != len(items) * samples:
        raise ValueError(f"{len(results)} episodes for {len(items)} items x {samples} samples")
    counts = []
    for i, item in enumerate(items):
        target = best(item) - _TOLERANCE
        chunk = results[i * samples : (i + 1) * samples]
        counts.append(sum(r.error is None and r.reward >= target for r in chunk))
    return counts


def pass_summary(counts: Sequence[int], samples: int) -> dict[str, Any]:
    """pass@k and pass^k for k = 1..``samples`` over items with ``counts`` solved episodes:
    ``{"samples", "items", "pass@k": {k: {"mean", "ci95"}}, "pass^k": {...}}``."""
    if not counts:
        raise ValueError("no items")
    out: dict[str, Any] = {"samples": samples, "items": len(counts), "pass@k": {}, "pass^k": {}}
    for k in range(1, samples + 1):
        for key, estimate in (("pass@k", pass_at), ("pass^k", pass_hat)):
            mean, half = mean_interval([estimate(c, samples, k) for c in counts])
            out[key][k] = {"mean": mean, "ci95": half}
    return out


def pass_lines(summary: dict[str, Any]) -> list[str]:
    """The summary as table lines: one for pass@k and one for pass^k, k = 1..K."""
    samples = summary["samples"]
    lines = [f"solved = the item's best reward; {samples} samples of {summary['items']} items"]
    for key, name in (("pass@k", "pass@"), ("pass^k", "pass^")):
        cells = [f"{name}{k} {v['mean']:.3f} ± {v['ci95']:.3f}" for k, v in summary[key].items()]
        lines.append("  ".join(cells))
    return lines
