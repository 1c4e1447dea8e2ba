"""A results page's table against the command printed above it, for tests at any depth."""

from __future__ import annotations

import re
import subprocess
import sys

from paths import ROOT


def printed_table(page: str, command: str) -> str:
    """The Markdown table printed right under ``command``'s block on ``page``."""
    text = (ROOT / page).read_text()
    match = re.search(re.escape(command) + r"\n```\n\n((?:\|.*\n)+)", text)
    assert match, f"{page} prints `{command}` with its table under it"
    return match.group(1)


def run_printed(command: str) -> subprocess.CompletedProcess[str]:
    """``command`` (``python benchmarks/...``), run from the repository with this Python."""
    argv = command.split()
    assert argv[0] == "python", command
    return subprocess.run(
        [sys.executable, *argv[1:]], capture_output=True, text=True, timeout=60, cwd=ROOT
    )


def assert_page_table_is_recomputed(page: str, command: str) -> None:
    """The table under ``command`` on ``page`` is what ``command`` prints now."""
    table = printed_table(page, command)
    done = run_printed(command)
    assert done.returncode == 0, done.stderr
    assert done.stdout == table
