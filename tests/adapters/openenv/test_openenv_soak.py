"""The soak (issues 18 and 26): 64 well-behaved sessions with hostile clients mixed in, on loopback.

It runs ``benchmarks/openenv_load.py`` for a bounded time (two phases of SECONDS each: without,
then with the hostile clients) against a ``meeting-gym serve`` subprocess on 127.0.0.1,
stopped at the end. Every well-behaved episode must replay step for step as in process,
and the server's RSS must stay within RSS_GROWTH_MB of its start (docs/guides/serving.md);
``/health`` must answer 200 to every probe of both phases (slowloris clients among the
hostile ones), and SIGINT under load must end the server with status 0 and no traceback in
its log. The
latency figures (steps, health probes, the stop) are a benchmark's, not checked here.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from paths import ROOT

pytest.importorskip("openenv.core")
pytest.importorskip("websockets")

SESSIONS = 64
HOSTILE = 12
SECONDS = 40
RSS_GROWTH_MB = 300
"""The server's resident set may not grow past its start by more than this during the soak
(issue 26's bound; documented in the guide)."""


def test_soak_well_behaved_sessions_replay_exactly_and_rss_stays_bounded():
    command = [sys.executable, str(ROOT / "benchmarks" / "openenv_load.py"), "--json"]
    command += ["--sessions", str(SESSIONS), "--hostile", str(HOSTILE)]
    command += ["--seconds", str(SECONDS)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-4000:]
    result = json.loads(done.stdout)
    quiet, hostile = result["runs"]
    assert (quiet["phase"], hostile["phase"]) == ("quiet", "hostile")
    for run in (quiet, hostile):
        assert run["mismatches"] == 0 and run["episodes"] >= SESSIONS
    # every kind of hostile client got through its requests (and the server kept serving)
    assert hostile["hostile_requests"] >= HOSTILE
    assert result["rss_max_mb"] - result["rss_start_mb"] <= RSS_GROWTH_MB, result
    # issue 26: slowloris, invalid UTF-8 and 4 MiB-action bursts are among the hostile kinds
    assert all(run["health_failures"] == 0 for run in (quiet, hostile)), result
    assert result["exit_code"] == 0 and result["log_tracebacks"] == 0, result
