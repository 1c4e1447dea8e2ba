"""A bench budget small enough for a test: the plan and its rows, never the speed."""

from __future__ import annotations

import dataclasses
from typing import Any

from meeting_gym import bench

_TINY = bench.Budget(
    repeats=1,
    cartpole_steps=300,
    steps=50,
    resets=5,
    solves_per_difficulty=3,
    vector_steps=5,
    items=20,
)


def tiny(**changes: Any) -> bench.Budget:
    """The tiny budget, with ``changes`` (e.g. ``items=50``)."""
    return dataclasses.replace(_TINY, **changes)
