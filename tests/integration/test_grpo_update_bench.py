"""benchmarks/grpo_update.py's choice of rows: a step's groups whose rewards spread, as the run
trains on them (the timing itself runs on the real model in test_train_tool_env.py)."""

from __future__ import annotations

import importlib.util

import pytest
from paths import ROOT

spec = importlib.util.spec_from_file_location("grpo_update", ROOT / "benchmarks" / "grpo_update.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def row(step: int, reward: float, name: str) -> dict:
    return {"step": step, "breakdown": {"reward": reward}, "transcript": [{"content": name}]}


ROWS = [
    row(1, 0.2, "a"), row(1, 0.2, "b"),  # no spread: left out, as the run leaves it
    row(1, 1.2, "c"), row(1, 0.2, "d"),
    row(1, 0.0, "e"), row(1, 0.2, "f"),
    row(2, 1.2, "g"), row(2, 0.2, "h"),
]  # fmt: skip


def test_a_steps_groups_that_spread_with_their_advantages():
    transcripts, weights, groups = bench.step_rows(ROWS, 1, 2)
    assert [t[0]["content"] for t in transcripts] == ["c", "d", "e", "f"]
    assert weights == pytest.approx([1.0, -1.0, -1.0, 1.0]) and groups == [1, 1, 2, 2]
    first, _, _ = bench.step_rows(ROWS, 1, 2, most=1)
    assert [t[0]["content"] for t in first] == ["c", "d"]


@pytest.mark.parametrize(
    ("step", "group", "message"),
    [(3, 2, "no rollouts of step 3"), (1, 4, "not whole groups of 4"), (1, 1, "spread")],
)
def test_rows_it_cannot_use_are_named(step, group, message):
    with pytest.raises(ValueError, match=message):
        bench.step_rows(ROWS, step, group)
