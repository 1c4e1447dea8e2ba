"""meeting_gym.evaluation.real_model against the test suite's scripted server (no real model).

The scripted ``gold-text`` model must reach the gold reward on every row it plays (its rows
replayed by the script), the baselines must sit beside it, and the malformed-turn count
must read both kinds of refusal: an ``error:`` text and TimetablePlanner's invalid state.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("openai")
from fake_openai_server import FakeOpenAIServer


def test_the_table_of_a_gold_model_shows_gold_beside_the_baselines(tmp_path):
    with FakeOpenAIServer() as server:
        argv = [
            "--base-url",
            server.base_url,
            "--model",
            "gold-text",
            "--env",
            "CalendarMath-v0",
            "--env",
            "MeetingSlot-v0",
            "--eval-n",
            "2",
            "--curated-n",
            "2",
            "--out",
            str(tmp_path),
        ]
        done = subprocess.run(
            [sys.executable, "-m", "meeting_gym.evaluation.real_model", *argv],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr
    tables = (tmp_path / "tables.md").read_text()
    model_rows = [line for line in tables.splitlines() if line.startswith("| gold-text")]
    assert len(model_rows) == 4 and all("| 1.200 ± 0.000 |" in row for row in model_rows)
    assert tables.count("| naive |") == 4 and tables.count("| random |") == 4
    rows = [
        json.loads(line) for line in (tmp_path / "MeetingSlot-v0.jsonl").read_text().splitlines()
    ]
    assert [r["options"]["split"] for r in rows] == ["curated", "curated", "eval", "eval"]
    assert rows[2]["options"]["index"] == 15  # the held-out items after the 15 curated ones
