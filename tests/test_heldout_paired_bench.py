"""benchmarks/heldout_paired.py: two evaluations' paired difference on a slice of items."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from meeting_gym.agents.heldout import paired, row_stats

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location(
    "heldout_paired", ROOT / "benchmarks" / "heldout_paired.py"
)
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def rows(rewards: list[float]) -> list[dict]:
    return [
        {"env": "MeetingSlot-v0", "item_id": f"item-{k}", "breakdown": {"reward": r}}
        for k, r in enumerate(rewards)
    ]


def write(path: Path, rewards: list[float]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows(rewards)))
    return path


AFTER = [1.2, 0.2, 1.2, 0.2, 1.2, 0.2]
BEFORE = [0.2, 0.2, 0.2, 1.2, 0.2, 0.0]


def test_the_slice_is_paired_item_by_item(tmp_path, capsys):
    after = write(tmp_path / "eval_grpo.jsonl", AFTER)
    before = write(tmp_path / "eval_sft.jsonl", BEFORE)
    assert bench.main([str(after), str(before), "--rows", "2:"]) == 0
    # items 2..5: differences 1.0, -1.0, 1.0, 0.2, mean 0.3
    expected = paired(
        [row_stats(r, ()) for r in rows(AFTER)[2:]], [row_stats(r, ()) for r in rows(BEFORE)[2:]]
    )
    assert expected["mean"] == pytest.approx(0.3) and expected["n"] == 4
    line = capsys.readouterr().out.strip()
    assert line == f"paired grpo - sft: +0.300 ± {expected['ci95']:.3f} (95% CI, n=4)"
    assert bench.main([str(after), str(before)]) == 0  # every item by default
    assert "(95% CI, n=6)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("rows_arg", "message"),
    [("3", "START:STOP"), ("a:b", "whole numbers"), ("9:", "no rows"), ("0:-1", "counts from 0")],
)
def test_a_bad_slice_is_one_line_and_exit_2(tmp_path, capsys, rows_arg, message):
    after = write(tmp_path / "eval_grpo.jsonl", AFTER)
    before = write(tmp_path / "eval_sft.jsonl", BEFORE)
    with pytest.raises(SystemExit) as stop:
        bench.main([str(after), str(before), f"--rows={rows_arg}"])
    assert stop.value.code == 2
    assert message in capsys.readouterr().err


def test_evaluations_of_other_items_are_refused(tmp_path, capsys):
    after = write(tmp_path / "eval_grpo.jsonl", AFTER)
    before = write(tmp_path / "eval_sft.jsonl", BEFORE[:3])
    with pytest.raises(SystemExit) as stop:
        bench.main([str(after), str(before)])
    assert stop.value.code == 2
    assert "not of the same items" in capsys.readouterr().err
