"""Every code block of the README and of the documentation site runs as printed.

Blocks are read from README.md, then from every ``docs/**/*.md`` page (in path order), in
order within each page. Only ``python`` and ``bash`` blocks are code to run; every other
fence is not run: ``text`` (a command's output, compared by ``output`` below), config
snippets in their own language (``yaml``, ``toml``, ``nginx``, ``dockerfile``, ``ini``) and
unlabelled fences (a folder layout). Write a snippet that cannot run alone in one of those
languages, never as ``python`` or ``bash``. An HTML comment on the line before a block says
how it is checked (nothing: it is run):

* ``<!-- readme: output -->``: run it; its stdout must equal the next ``text`` block;
* ``<!-- readme: llm-server -->``: run it against the test suite's scripted OpenAI server
  (its address and a scripted model swapped in; lines that start a real server skipped);
* ``<!-- readme: slow -->``: run it only in the slow run (``-m slow``): training and the full
  benchmark take minutes;
* ``<!-- readme: openenv -->``: run it while ``meeting-gym serve --env MeetingSlot-v1`` listens
  on 127.0.0.1:8017, as the block expects;
* ``<!-- readme: rllib -->`` / ``<!-- readme: rllib-slow -->``: run only where the rllib
  extra is installed (CI's gymnasium-1.2.2 venv), the second only in the slow run;
* ``<!-- readme: ci -->``: the set-up lines, which CI itself runs: every command of the block
  must be in ``.ci/run``.
* ``<!-- readme: docs -->``: the command that serves the site locally (it runs until
  stopped): its install command must be in ``.ci/run``, and ``test_docs.py`` (beside this file)
  builds and serves the same site;
* ``<!-- readme: verifiers... -->`` (``verifiers``, ``verifiers-python``, ``verifiers-ci``,
  ``verifiers03``): blocks that need a verifiers venv, whose pins the main venv cannot hold;
  ``test_verifiers_eval.py`` and ``test_verifiers_legacy.py`` in ``tests/adapters/verifiers/``
  run them there.

``python`` blocks run in a fresh interpreter, ``bash`` blocks under ``bash -euo pipefail``,
both in a scratch folder that links the checkout's ``meeting_gym``, ``examples``, ``tests``,
``benchmarks`` (so relative paths work and nothing is written into the
checkout). Blocks that write files write them under ``runs/`` (ignored by git).
"""

from __future__ import annotations

import contextlib
import fcntl
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from paths import ROOT
from readme_blocks import (
    BLOCKS,
    ENDPOINTS,
    MODELS,
    OPENENV_PORT,
    README,
    SERVER_LINES,
    Block,
    normalise,
    run_block,
    skip_without_extras,
)


def _params(tags: tuple[str | None, ...]) -> list:
    params = []
    for block in BLOCKS:
        if block.tag not in tags:
            continue
        marks = [pytest.mark.slow] if block.tag in ("slow", "rllib-slow") else []
        params.append(pytest.param(block, id=block.name, marks=marks))
    return params


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    for name in ("meeting_gym", "examples", "tests", "benchmarks"):
        (tmp_path / name).symlink_to(ROOT / name, target_is_directory=True)
    (tmp_path / "docs").mkdir()
    # the rows behind the published tables, which `meeting-gym rows table` blocks read
    (tmp_path / "docs" / "results").symlink_to(ROOT / "docs" / "results", target_is_directory=True)
    return tmp_path


def test_the_readme_has_blocks_of_every_kind():
    tags = {block.tag for block in BLOCKS}
    assert {None, "output", "llm-server", "slow", "ci", "openenv", "docs"} <= tags
    assert BLOCKS[0].tag == "ci", "the README opens with its two set-up commands"
    assert BLOCKS[0].page == "README.md"


def test_every_page_of_the_site_is_read():
    pages = {block.page for block in BLOCKS}
    assert "docs/guides/adding-an-environment.md" in pages  # the toy task is built and played
    assert sum(page.startswith("docs/") for page in pages) >= 10


def test_the_readme_fits_on_a_few_screens():
    assert README.count("\n") <= 250


def test_the_serve_command_installs_what_ci_installs():
    (block,) = [b for b in BLOCKS if b.tag == "docs"]
    install, _, serve = block.body.strip().partition(" && ")
    assert normalise(install) in normalise((ROOT / ".ci" / "run").read_text())
    assert serve.startswith("mkdocs serve -a 127.0.0.1:")


@pytest.mark.parametrize("block", _params((None, "output", "slow", "rllib", "rllib-slow")))
def test_block_runs_as_printed(block: Block, workdir: Path):
    if block.tag in ("rllib", "rllib-slow"):
        pytest.importorskip("ray.rllib")
    skip_without_extras(block)
    slow = block.tag in ("slow", "rllib-slow")
    done = run_block(block, workdir, timeout=3600 if slow else 600)
    if block.expected is not None:
        assert done.stdout.rstrip() == block.expected.rstrip()


@pytest.mark.parametrize("block", _params(("llm-server",)))
def test_llm_block_runs_against_the_scripted_server(block: Block, workdir: Path):
    pytest.importorskip("openai")
    skip_without_extras(block)
    sys.path.insert(0, str(ROOT / "tests"))
    from fake_openai_server import FakeOpenAIServer

    with FakeOpenAIServer() as server:
        lines = []
        for line in block.body.splitlines():
            if line.lstrip().startswith(SERVER_LINES):
                continue
            for endpoint in ENDPOINTS:
                line = line.replace(endpoint, server.base_url)
            scripted = "gold-text" if "--tool-protocol text" in line else "gold-native"
            if "TimetablePlanner" in line:
                scripted = "timetable"  # the scripted model that plays the solver's actions
            for model in MODELS:
                # a served alias is swapped where it is the --model (not in the server's line)
                swap = f"--model {scripted}" if model.startswith("--model ") else scripted
                line = line.replace(model, swap)
            lines.append(line)
        run_block(block, workdir, body="\n".join(lines) + "\n")
        assert server.requests, "the block sent no request"


@pytest.mark.parametrize("block", _params(("openenv",)))
def test_openenv_block_runs_against_a_server(block: Block, workdir: Path):
    pytest.importorskip("openenv.core")
    from meeting_gym.adapters.openenv import wait_healthy

    command = [sys.executable, "-m", "meeting_gym.cli", "serve", "--env", "MeetingSlot-v1"]
    # the blocks name one port: under xdist two of them must not serve it at once (the second
    # server fails to bind, its block talks to the first, which then stops under it)
    with port_lock(OPENENV_PORT):
        server = subprocess.Popen(
            [*command, "--port", str(OPENENV_PORT)], stderr=subprocess.DEVNULL
        )
        try:
            wait_healthy(
                f"http://127.0.0.1:{OPENENV_PORT}", 60, alive=lambda: server.poll() is None
            )
            run_block(block, workdir)
        finally:
            server.terminate()
            server.wait(timeout=30)


@contextlib.contextmanager
def port_lock(port: int) -> Iterator[None]:
    """Hold ``port`` for this test process alone among the suite's processes (a file lock)."""
    path = Path(tempfile.gettempdir()) / f"meeting_gym_tests_port_{port}.lock"
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def test_the_set_up_lines_are_what_ci_runs():
    ci = normalise((ROOT / ".ci" / "run").read_text())
    blocks = [b for b in BLOCKS if b.tag == "ci"]  # the opening one, then the RLlib venv's
    for number, block in enumerate(blocks):
        commands = [
            part
            for line in block.body.splitlines()
            if line.strip() and not line.lstrip().startswith("#")
            for part in line.split("&&")
        ]
        assert len(commands) >= (8 if number == 0 else 1)
        for command in commands:
            assert normalise(command) in ci, command
