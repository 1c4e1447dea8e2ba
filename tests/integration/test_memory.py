"""Memory over many episodes.

Slow: ``python -m pytest -m slow tests/integration/test_memory.py``.
"""

from __future__ import annotations

import importlib.util

import pytest
from paths import ROOT

SCRIPT = ROOT / "scripts" / "memory_check.py"


def load_script():
    spec = importlib.util.spec_from_file_location("memory_check", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_100k_text_episodes_grow_memory_by_less_than_20_mb():
    report = load_script().run(episodes=100_000, mode="text")
    assert report["growth_mb"] < 20, report


def test_memory_script_runs_a_few_episodes():
    report = load_script().run(episodes=30, warmup=5)
    assert report["episodes"] == 30 and report["steps"] >= 30
    assert report["rss_after_mb"] > 0
