"""Where things are, for tests at any depth under ``tests/``."""

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
DATA = TESTS / "data"


def run_benchmark(name: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``python benchmarks/NAME ARGS`` from the repository root, as a user runs it (offline)."""
    return subprocess.run(
        [sys.executable, f"benchmarks/{name}", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )


def assert_one_line_error(done: subprocess.CompletedProcess[str], message: str) -> None:
    """A command line's user error: exit 2, no traceback, ``message`` on its last line."""
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert message in done.stderr.strip().splitlines()[-1]
