"""Memory over many episodes, as ``benchmarks/memory_check.py`` measures it (run as a user runs it).

Slow: ``python -m pytest -m slow tests/integration/test_memory.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from paths import ROOT

SCRIPT = ROOT / "benchmarks" / "memory_check.py"


def memory_check(*args: str, timeout: int) -> tuple[int, dict]:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout
    )
    return done.returncode, json.loads(done.stdout)


@pytest.mark.slow
def test_100k_text_episodes_grow_memory_by_less_than_20_mb():
    status, report = memory_check("--episodes", "100000", "--mode", "text", timeout=3600)
    assert status == 0 and report["growth_mb"] < 20, report


def test_memory_script_runs_a_few_episodes():
    status, report = memory_check("--episodes", "30", "--warmup", "5", timeout=300)
    assert report["episodes"] == 30 and report["steps"] >= 30
    assert report["rss_after_mb"] > 0
    assert status == (0 if report["growth_mb"] < report["limit_mb"] else 1)
