"""``meeting-gym eval --env CronSchedule* --policy openai`` end to end, against the scripted
server's ``cron`` model (tests/fake_openai_server.py), through the real openai client."""

from __future__ import annotations

import json

import pytest
from fake_openai_server import FakeOpenAIServer
from paths import ROOT

from meeting_gym.cli import main
from meeting_gym.core.splits import load_split

pytest.importorskip("openai")  # the [llm] extra


@pytest.fixture
def server():
    with FakeOpenAIServer() as running:
        yield running


def _eval(server, capsys, env: str, protocol: str, *extra: str) -> dict:
    argv = ["eval", "--env", env, "--policy", "openai", "--model", "cron"]
    argv += ["--base-url", server.base_url, "--api-key-env", "CRON_TEST_KEY"]
    argv += ["--tool-protocol", protocol, "--json", *extra]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("protocol", ["native", "text"])
def test_single_turn_env_scores_1_on_curated(server, capsys, monkeypatch, protocol):
    monkeypatch.setenv("CRON_TEST_KEY", "sk-test")
    payload = _eval(server, capsys, "CronSchedule-v0", protocol)
    n = len(load_split("curated", env="CronSchedule-v0"))
    assert (payload["n"], payload["scored"], payload["reward"]) == (n, n, 1.0)
    assert payload["groups"]["task read"]["correct"] == 1.0
    assert server.count("cron") == n  # one request per single-turn episode
    requests = server.requests["cron"]
    assert all("tools" not in r for r in requests)  # a single-turn env offers no tools


@pytest.mark.parametrize("protocol", ["native", "text"])
def test_tool_variant_calls_next_runs_then_answers(server, capsys, monkeypatch, protocol):
    monkeypatch.setenv("CRON_TEST_KEY", "sk-test")
    payload = _eval(
        server, capsys, "CronSchedule-Tools-v0", protocol, "--split", "eval", "-n", "12"
    )
    assert (payload["scored"], payload["reward"]) == (12, 1.0)
    assert (payload["mean_turns"], payload["mean_tool_calls"]) == (2.0, 1.0)
    requests = server.requests["cron"]
    assert len(requests) == 24
    followups = [r["messages"] for r in requests if len(r["messages"]) > 2]
    assert len(followups) == 12
    for messages in followups:  # each second request carries the tool's run times back
        assert messages[-1]["role"] == ("tool" if protocol == "native" else "user")
        times = json.loads(messages[-1]["content"])
        assert len(times) == 3 and all(len(t) == 16 for t in times)


def test_the_meeting_gym_command_against_the_server_process(tmp_path):
    """The literal command line: the scripted server in its own process (any free port),
    ``meeting-gym eval --env CronSchedule-v0 --policy openai`` in another."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = ROOT
    env = {**os.environ, "PYTHONPATH": str(root), "OPENAI_API_KEY": "sk-test"}
    server = subprocess.Popen(
        [sys.executable, str(root / "tests" / "fake_openai_server.py"), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        url = server.stdout.readline().split(" at ")[1].split()[0]
        command = Path(sys.executable).parent / "meeting-gym"
        done = subprocess.run(
            [str(command), "eval", "--env", "CronSchedule-v0", "--policy", "openai",
             "--model", "cron", "--base-url", url, "--split", "eval", "-n", "30"],
            capture_output=True, text=True, env=env, timeout=300,
        )  # fmt: skip
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "policy=openai  model=cron" in lines[0] and "n=30" in lines[0]
    assert "avg reward      1.000" in lines
    assert any(line.startswith("requests        30 ") for line in lines)
