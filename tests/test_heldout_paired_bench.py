"""benchmarks/heldout_paired.py: two evaluations' paired difference on a slice of items."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from meeting_gym.agents.heldout import paired, paired_line, row_stats

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


def test_rows_written_as_episodes_ended_are_paired_by_item(tmp_path, capsys):
    def indexed(rewards):
        out = rows(rewards)
        for k, row in enumerate(out):
            row["options"] = {"split": "eval", "index": k}
        return out

    after, before = tmp_path / "eval_grpo.jsonl", tmp_path / "eval_sft.jsonl"
    after.write_text("".join(json.dumps(r) + "\n" for r in reversed(indexed(AFTER))))
    before.write_text("".join(json.dumps(r) + "\n" for r in indexed(BEFORE)))
    assert bench.main([str(after), str(before), "--rows", "2:"]) == 0
    assert capsys.readouterr().out.startswith("paired grpo - sft: +0.300 ± ")  # items 2..5


def test_a_file_that_is_not_text_is_named_with_its_line(tmp_path, capsys):
    after = write(tmp_path / "eval_grpo.jsonl", AFTER)
    before = tmp_path / "eval_sft.jsonl"
    before.write_bytes(after.read_bytes() + b"\x97\xff\n")
    with pytest.raises(SystemExit) as stop:
        bench.main([str(after), str(before)])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].endswith("eval_sft.jsonl:7: not UTF-8 text")


def played_rows(policy: str, n: int) -> tuple[list[dict], list[dict]]:
    """``policy``'s replayable rows on the first ``n`` eval items, as the pipeline writes
    them, and naive's stats on the same items through the package's own ``evaluate``."""
    from meeting_gym.agents.evaluate import evaluate
    from meeting_gym.agents.heldout import episode_stats
    from meeting_gym.agents.llm import replayable_row
    from meeting_gym.agents.policies import make_policy
    from meeting_gym.core.splits import load_split

    items = load_split("eval", n, 42, None, env="MeetingSlot-v0")

    def play(name: str) -> list:
        return evaluate(lambda: make_policy(name), items, env="MeetingSlot-v0", max_turns=8)

    made = [
        replayable_row(
            result,
            env="MeetingSlot-v0",
            seed=k,
            options={"split": "eval", "index": k, "split_seed": 42},
            tool_protocol="text",
            max_turns=8,
        )
        for k, result in enumerate(play(policy))
    ]
    return made, [episode_stats(r) for r in play("naive")]


@pytest.mark.filterwarnings("ignore:eval n=5 keeps only")  # the first items are curated ones
def test_a_policy_named_as_before_is_played_on_the_items_of_after(tmp_path, capsys):
    gold, naive = played_rows("gold", 5)
    after = tmp_path / "eval_gold.jsonl"
    after.write_text("".join(json.dumps(r) + "\n" for r in gold))
    assert bench.main([str(after), "naive", "--rows", "1:5"]) == 0
    expected = paired([row_stats(r, ()) for r in gold[1:]], naive[1:])
    assert expected["mean"] > 0  # gold beats naive somewhere on these items
    line = capsys.readouterr().out.strip()
    assert line == paired_line("gold - naive", expected)
    assert bench.main([str(after), "gold"]) == 0  # gold against itself: nothing between
    assert capsys.readouterr().out.strip() == "paired gold - gold: +0.000 ± 0.000 (95% CI, n=5)"


def test_rows_that_cannot_be_reset_for_a_policy_are_one_line(tmp_path, capsys):
    after = write(tmp_path / "eval_grpo.jsonl", AFTER)  # hand rows: no seed, no options
    with pytest.raises(SystemExit) as stop:
        bench.main([str(after), "naive"])
    assert stop.value.code == 2
    assert "a row has no 'seed' to play naive on" in capsys.readouterr().err
