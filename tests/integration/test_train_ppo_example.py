"""examples/train_ppo.py runs as a user runs it, on each env's recipe (tiny settings)."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest
from paths import ROOT

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
