"""The 95% intervals the results tables report (normal approximation; the paired one over
per-item differences). Nothing here imports gymnasium or torch."""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import fmean, stdev

__all__ = ["mean_interval", "paired_interval"]


def mean_interval(values: Sequence[float]) -> tuple[float, float]:
    """The mean and the half-width of its 95% interval (normal approximation)."""
    if not values:
        raise ValueError("no values")
    half = 1.96 * stdev(values) / math.sqrt(len(values)) if len(values) > 1 else 0.0
    return fmean(values), half


def paired_interval(after: Sequence[float], before: Sequence[float]) -> tuple[float, float]:
    """The mean per-item difference ``after - before`` and its 95% half-width."""
    if len(after) != len(before):
        raise ValueError(f"unpaired: {len(after)} values against {len(before)}")
    return mean_interval([a - b for a, b in zip(after, before, strict=True)])
