"""examples/train_ppo.py runs as a user runs it, on each env's recipe (tiny settings)."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest
from paths import ROOT
from records import assert_environment_record

pytest.importorskip("sb3_contrib")
pytest.importorskip("matplotlib")

SCRIPT = ROOT / "examples" / "train_ppo.py"
TINY = ["--eval-n", "2", "--n-envs", "2", "--no-progress", "--threads", "1"]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize(
    ("env_id", "steps", "references", "metric"),
    [
        ("MeetingSlot-v0", ("128", "32"), ("gold", "naive", "random"), "exact"),
        ("TimetablePlanner-v0", ("64", "16"), ("greedy", "random"), "score"),
    ],
)
def test_one_script_trains_each_env_with_its_recipe(env_id, steps, references, metric, tmp_path):
    total, rollout = steps
    done = run(
        "--env", env_id, "--timesteps", total, "--eval-every", total, "--n-steps", rollout,
        "--batch-size", rollout, "--out", str(tmp_path), *TINY,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    for name in ("model.zip", "curve.png", "curve.csv", "table.md", "results.json"):
        assert (tmp_path / name).is_file(), name
    table = (tmp_path / "table.md").read_text()
    assert [line.split("|")[1].strip() for line in table.splitlines() if line.startswith("| ")][
        2:
    ] == ["ppo", *references]
    with open(tmp_path / "curve.csv") as handle:
        curve = list(csv.DictReader(handle))
    # at step 0, at the periodic evaluation, and the final one
    assert [int(row["timesteps"]) for row in curve] == [0, int(total), int(total)]
    assert metric in curve[0]
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["args"]["env"] == env_id and results["timesteps"] == int(total)
    assert_environment_record(results["environment"], torch_loaded=True)


def test_each_env_shows_its_own_defaults_and_networks():
    meeting, timetable = run("--help"), run("--env", "TimetablePlanner-v0", "--help")
    assert "{pointer,mlp}" in meeting.stdout and "network (pointer)" in meeting.stdout
    assert "{spot,mlp}" in timetable.stdout and "wall-clock cap in minutes (15.0)" in (
        " ".join(timetable.stdout.split())
    )


def test_an_env_without_a_recipe_is_one_line():
    done = run("--env", "CalendarMath-v0")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "invalid choice: 'CalendarMath-v0'" in done.stderr


def test_a_curriculum_run_saves_its_state_and_levels_and_the_comparison_pairs_items(tmp_path):
    tiny = ["--n-steps", "32", "--batch-size", "32", "--n-envs", "2", "--threads", "1"]
    done = subprocess.run(
        [
            sys.executable, str(ROOT / "examples" / "curriculum_ppo.py"), "--seeds", "0", "1",
            "--timesteps", "64", "--eval-every", "64", "--eval-n", "3", "--out", str(tmp_path),
            *tiny,
        ],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    curriculum = tmp_path / "curriculum_seed0"
    for name in ("curriculum.json", "levels.png", "results.json"):
        assert (curriculum / name).is_file(), name
    state = json.loads((curriculum / "curriculum.json").read_text())
    # 64 steps of episodes, every one drawn from easy (nothing learnt yet to move it)
    assert state["levels"] == ["easy", "medium", "hard", "expert"] and state["drawn"]["easy"] > 0
    runs = [json.loads((tmp_path / f"{arm}_seed0" / "results.json").read_text()) for arm in (
        "alone", "curriculum")]  # fmt: skip
    assert [len(r["heldout_rewards"]) for r in runs] == [3, 3]
    assert runs[0]["args"]["difficulty"] == "expert" and runs[1]["args"]["curriculum"] == "expert"
    table = (tmp_path / "table.md").read_text()
    assert "| 0 | expert only |" in table and "| 0 | curriculum |" in table
    assert "held out on the 3 generated expert scenarios" in table
    assert "paired curriculum - expert only, seed 0:" in table
    # across seeds: one difference per seed, with Student's t for one degree of freedom
    diffs = []
    for seed in (0, 1):
        after, before = (
            json.loads((tmp_path / f"{arm}_seed{seed}" / "results.json").read_text())[
                "heldout_rewards"
            ]
            for arm in ("curriculum", "alone")
        )
        diffs.append(sum(a - b for a, b in zip(after, before, strict=True)) / len(after))
    mean, spread = sum(diffs) / 2, abs(diffs[0] - diffs[1]) / 2**0.5
    half = 12.706 * spread / 2**0.5
    assert f"across the 2 seeds (one difference per seed): {mean:+.3f} ± {half:.3f}" in table


def test_curriculum_and_difficulty_exclude_each_other_and_a_bad_level_is_one_line():
    both = run("--curriculum", "expert", "--difficulty", "easy")
    assert both.returncode == 2 and "exclude each other" in both.stderr
    bad = run("--curriculum", "legendary", "--timesteps", "1")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr + bad.stdout
    assert bad.stderr.strip().splitlines() == [
        "error: MeetingSlot-v0 has no difficulty 'legendary'; choose one of "
        "('easy', 'medium', 'hard', 'expert')"
    ]
