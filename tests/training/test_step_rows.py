"""A step's groups whose rewards spread, as the run trains on them (training.groups.step_rows,
which benchmarks/grpo_update.py times an update on; the timing itself runs on the real model
in test_train_tool_env.py)."""

from __future__ import annotations

import pytest

from meeting_gym.training.groups import step_rows


def row(step: int, reward: float, name: str) -> dict:
    return {"step": step, "breakdown": {"reward": reward}, "transcript": [{"content": name}]}


ROWS = [
    row(1, 0.2, "a"), row(1, 0.2, "b"),  # no spread: left out, as the run leaves it
    row(1, 1.2, "c"), row(1, 0.2, "d"),
    row(1, 0.0, "e"), row(1, 0.2, "f"),
    row(2, 1.2, "g"), row(2, 0.2, "h"),
]  # fmt: skip


def test_a_steps_groups_that_spread_with_their_advantages():
    transcripts, weights, groups = step_rows(ROWS, 1, 2)
    assert [t[0]["content"] for t in transcripts] == ["c", "d", "e", "f"]
    assert weights == pytest.approx([1.0, -1.0, -1.0, 1.0]) and groups == [1, 1, 2, 2]
    first, _, _ = step_rows(ROWS, 1, 2, most=1)
    assert [t[0]["content"] for t in first] == ["c", "d"]


@pytest.mark.parametrize(
    ("step", "group", "message"),
    [(3, 2, "no rollouts of step 3"), (1, 4, "not whole groups of 4"), (1, 1, "spread")],
)
def test_rows_it_cannot_use_are_named(step, group, message):
    with pytest.raises(ValueError, match=message):
        step_rows(ROWS, step, group)
