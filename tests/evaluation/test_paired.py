"""``meeting-gym rows paired``: two evaluations of the same items compared pair by pair, on
a slice of them, or a model against a reference policy played on its items (the script and
the benchmark that each did half of this are gone, issue 49)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from meeting_gym.agents.policies import make_policy
from meeting_gym.cli import main
from meeting_gym.core.splits import load_split
from meeting_gym.evaluation.chat import replayable_row
from meeting_gym.evaluation.evaluate import evaluate
from meeting_gym.evaluation.heldout import episode_stats, paired, paired_line, row_stats
from meeting_gym.evaluation.paired import compare, run_name, side_names


def hand_rows(rewards: list[float], indexed: bool = False) -> list[dict]:
    rows = [
        {"env": "MeetingSlot-v0", "item_id": f"item-{k}", "breakdown": {"reward": r}}
        for k, r in enumerate(rewards)
    ]
    for k, row in enumerate(rows if indexed else ()):
        row["options"] = {"split": "eval", "index": k}
    return rows


def write(path: Path, rows: list[dict]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


AFTER = [1.2, 0.2, 1.2, 0.2, 1.2, 0.2]
BEFORE = [0.2, 0.2, 0.2, 1.2, 0.2, 0.0]


def cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["rows", "paired", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_slice_is_paired_item_by_item(tmp_path, capsys):
    after = write(tmp_path / "eval_grpo.jsonl", hand_rows(AFTER))
    before = write(tmp_path / "eval_sft.jsonl", hand_rows(BEFORE))
    code, out, _ = cli(capsys, after, before, "--rows", "2:")
    assert code == 0
    # items 2..5: differences 1.0, -1.0, 1.0, 0.2, mean 0.3
    expected = paired(
        [row_stats(r, ()) for r in hand_rows(AFTER)[2:]],
        [row_stats(r, ()) for r in hand_rows(BEFORE)[2:]],
    )
    assert expected["mean"] == pytest.approx(0.3) and expected["n"] == 4
    lines = out.splitlines()
    assert lines[0].startswith(f"{after}: 0.700 ± ") and lines[0].endswith("(n=4)")
    assert lines[1].startswith(f"{before}: 0.400 ± ")
    assert lines[2] == f"paired grpo - sft: +0.300 ± {expected['ci95']:.3f} (95% CI, n=4)"
    assert cli(capsys, after, before)[1].endswith("(95% CI, n=6)\n")  # every item by default


def test_rows_written_as_episodes_ended_are_paired_by_item(tmp_path):
    after = write(tmp_path / "eval_grpo.jsonl", list(reversed(hand_rows(AFTER, indexed=True))))
    before = write(tmp_path / "eval_sft.jsonl", hand_rows(BEFORE, indexed=True))
    assert compare(after, before, "2:")[-1].startswith("paired grpo - sft: +0.300 ± ")


@pytest.mark.parametrize(
    ("rows", "message"),
    [("3", "START:STOP"), ("a:b", "whole numbers"), ("9:", "no rows"), ("0:-1", "counts from 0")],
)
def test_a_bad_slice_is_one_line_and_exit_2(tmp_path, capsys, rows, message):
    after = write(tmp_path / "eval_grpo.jsonl", hand_rows(AFTER))
    before = write(tmp_path / "eval_sft.jsonl", hand_rows(BEFORE))
    code, _, err = cli(capsys, after, before, f"--rows={rows}")
    assert code == 2 and err.count("\n") == 1 and message in err, err


def test_two_runs_of_one_model_name_are_told_apart_by_their_folders():
    assert run_name("runs/x/eval_grpo.jsonl.gz") == "grpo"
    assert side_names("a/eval_sft.jsonl", "b/eval_sft.jsonl", False) == ("a/sft", "b/sft")
    assert side_names("a/eval_gold.jsonl", "gold", True) == ("gold", "gold")


ENV = "CronSchedule-Tools-v0"


def write_played(path: Path, policy: str, items: list) -> list[float]:
    """A policy's episodes on ``items`` as the pipeline writes them; their rewards."""
    results = evaluate(lambda: make_policy(policy, seed=0, env=ENV), items, env=ENV, seed=0)
    with open(path, "w", encoding="utf-8") as handle:
        for k, result in enumerate(results):
            row = replayable_row(
                result, env=ENV, seed=k, options={"split": "eval", "index": k}, tool_protocol="text"
            )
            handle.write(json.dumps(row) + "\n")
    return [r.reward for r in results]


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> tuple[Path, Path, list[float], list[float]]:
    folder = tmp_path_factory.mktemp("rows")
    items = load_split("eval", 12, 42, None, env=ENV)
    gold, naive = folder / "eval_gold.jsonl", folder / "eval_naive.jsonl"
    return gold, naive, write_played(gold, "gold", items), write_played(naive, "naive", items)


def test_it_prints_each_mean_and_the_paired_difference(played, capsys):
    gold, naive, gold_rewards, naive_rewards = played
    code, out, _ = cli(capsys, str(gold), str(naive))
    assert code == 0
    lines = out.splitlines()
    difference = sum(gold_rewards) / 12 - sum(naive_rewards) / 12
    assert 0 < difference < 1  # naive is right on some items: the pairs differ
    assert lines[0].startswith(f"{gold}: {sum(gold_rewards) / 12:.3f} ± ")
    assert lines[1].startswith(f"{naive}: {sum(naive_rewards) / 12:.3f} ± ")
    assert lines[2].startswith(f"paired gold - naive: {difference:+.3f} ± ")
    assert lines[2].endswith("(95% CI, n=12)")


def test_other_items_or_a_bad_file_is_one_line_and_exit_2(played, tmp_path, capsys):
    gold, naive, _, _ = played
    fewer = tmp_path / "fewer.jsonl"
    fewer.write_text("".join(gold.read_text().splitlines(keepends=True)[:5]))
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"env": "CronSchedule-Tools-v0"}\nnot json\n')
    not_text = tmp_path / "eval_sft.jsonl"
    not_text.write_bytes(gold.read_bytes() + b"\x97\xff\n")
    first = json.loads(gold.read_text().splitlines()[0])
    cases = [
        ([fewer, naive], "not of the same items"),
        ([naive, fewer], "not of the same items"),
        ([broken, naive], "broken.jsonl:1: not an episode row"),
        ([tmp_path / "missing.jsonl", naive], "missing.jsonl"),
        ([gold, not_text], "eval_sft.jsonl:13: not UTF-8 text"),
    ]
    # a row whose fields are the wrong kind: one line naming the field, not a traceback
    for name, change, message in (
        ("breakdown", {"breakdown": [1.0]}, "breakdown must be an object of numbers"),
        ("reward", {"breakdown": {"reward": "high"}}, "breakdown must be an object of numbers"),
        ("env", {"env": ["CronSchedule-Tools-v0"]}, "env and item_id must be strings"),
        ("turns", {"turns": "3"}, "turns must be an integer"),
        ("transcript", {"transcript": "hi"}, "transcript must be a list of messages"),
        ("unknown", {"env": "Nope-v0"}, "unknown env 'Nope-v0'"),
    ):
        bad = tmp_path / f"{name}.jsonl"
        bad.write_text(json.dumps({**first, **change}) + "\n")
        cases.append(([bad, bad], message))
    for args, message in cases:
        code, _, err = cli(capsys, *(str(a) for a in args))
        assert code == 2 and err.count("\n") == 1 and message in err, err


def played_rows(policy: str, n: int) -> tuple[list[dict], list[dict]]:
    """``policy``'s replayable rows on the first ``n`` MeetingSlot eval items, as the
    pipeline writes them, and naive's stats on the same items through ``evaluate``."""
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
def test_a_policy_named_as_before_is_played_on_the_items_of_after(tmp_path):
    gold, naive = played_rows("gold", 5)
    after = write(tmp_path / "eval_gold.jsonl", gold)
    expected = paired([row_stats(r, ()) for r in gold[1:]], naive[1:])
    assert expected["mean"] > 0  # gold beats naive somewhere on these items
    lines = compare(after, "naive", "1:5")
    assert lines[1].startswith("naive: ") and lines[2] == paired_line("gold - naive", expected)
    # gold against itself: nothing between
    assert compare(after, "gold")[-1] == "paired gold - gold: +0.000 ± 0.000 (95% CI, n=5)"


def test_rows_that_cannot_be_reset_for_a_policy_are_one_line(tmp_path, capsys):
    after = write(tmp_path / "eval_grpo.jsonl", hand_rows(AFTER))  # hand rows: no seed
    code, _, err = cli(capsys, after, "naive")
    assert code == 2 and "a row has no 'seed' to play naive on" in err
