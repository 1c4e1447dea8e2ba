"""Running the README's code blocks in a checkout leaves nothing untracked behind.

The blocks write these (``export_split(..., "train.jsonl")``, ``eval --out rows.jsonl``,
``--out results.jsonl``, ``RecordVideo(..., "videos")``, ``pip download -d chat-wheels``,
``vf-eval``'s ``outputs/``); ``git status`` once listed them all.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest
from paths import ROOT

WRITTEN = [
    "train.jsonl",
    "rows.jsonl",
    "results.jsonl",
    "videos/rl-video-episode-0.mp4",
    "chat-wheels/openai-1.0-py3-none-any.whl",
    "outputs/meeting-gym-verifiers--gold-native--null--b7ba0b60/results.jsonl",
]


@pytest.mark.parametrize("path", WRITTEN)
def test_what_the_readme_blocks_write_is_ignored(path):
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    # --no-index: judge by .gitignore alone, whether or not the file exists
    done = subprocess.run(
        ["git", "check-ignore", "--no-index", "-q", path], cwd=ROOT, timeout=30, check=False
    )
    assert done.returncode == 0, f"{path} is not ignored by .gitignore"


def test_package_and_test_files_are_not_ignored():
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    for path in (
        "meeting_gym/cli/__init__.py",
        "tests/data/timetable_planner/trajectories.json.gz",
    ):
        done = subprocess.run(
            ["git", "check-ignore", "--no-index", "-q", path], cwd=ROOT, timeout=30, check=False
        )
        assert done.returncode == 1, f"{path} is ignored"
