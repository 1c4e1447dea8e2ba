"""scripts/paired_rows.py: two evaluations of the same items, compared pair by pair."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from paths import ROOT

from meeting_gym.agents.evaluate import evaluate
from meeting_gym.agents.llm import replayable_row
from meeting_gym.agents.policies import make_policy
from meeting_gym.core.splits import load_split

spec = importlib.util.spec_from_file_location("paired_rows", ROOT / "scripts" / "paired_rows.py")
script = importlib.util.module_from_spec(spec)
spec.loader.exec_module(script)

ENV = "CronSchedule-Tools-v0"


def write_rows(path: Path, policy: str, items: list) -> list[float]:
    """A policy's episodes on ``items`` as the example writes them; their rewards."""
    results = evaluate(lambda: make_policy(policy, seed=0, env=ENV), items, env=ENV, seed=0)
    with open(path, "w", encoding="utf-8") as handle:
        for k, result in enumerate(results):
            row = replayable_row(
                result, env=ENV, seed=k, options={"split": "eval", "index": k}, tool_protocol="text"
            )
            handle.write(json.dumps(row) + "\n")
    return [r.reward for r in results]


@pytest.fixture(scope="module")
def rows(tmp_path_factory) -> tuple[Path, Path, list[float], list[float]]:
    folder = tmp_path_factory.mktemp("rows")
    items = load_split("eval", 12, 42, None, env=ENV)
    gold, naive = folder / "gold.jsonl", folder / "naive.jsonl"
    return gold, naive, write_rows(gold, "gold", items), write_rows(naive, "naive", items)


def test_it_prints_each_mean_and_the_paired_difference(rows, capsys):
    gold, naive, gold_rewards, naive_rewards = rows
    assert script.main([str(gold), str(naive)]) == 0
    out = capsys.readouterr().out.splitlines()
    difference = sum(gold_rewards) / 12 - sum(naive_rewards) / 12
    assert 0 < difference < 1  # naive is right on some items: the pairs differ
    assert out[0].startswith(f"{gold}: {sum(gold_rewards) / 12:.3f} ± ")
    assert out[1].startswith(f"{naive}: {sum(naive_rewards) / 12:.3f} ± ")
    assert out[2].startswith(f"paired after - before: {difference:+.3f} ± ")
    assert out[2].endswith("(95% CI, n=12)")


def test_other_items_or_a_bad_file_is_one_line_and_exit_2(rows, tmp_path, capsys):
    gold, naive, _, _ = rows
    fewer = tmp_path / "fewer.jsonl"
    fewer.write_text("".join(gold.read_text().splitlines(keepends=True)[:5]))
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"env": "CronSchedule-Tools-v0"}\nnot json\n')
    first = json.loads(gold.read_text().splitlines()[0])
    cases = [
        ([fewer, naive], "not of the same items"),
        ([broken, naive], "broken.jsonl:1: not an episode row"),
        ([tmp_path / "missing.jsonl", naive], "missing.jsonl"),
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
        assert script.main([str(a) for a in args]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err
