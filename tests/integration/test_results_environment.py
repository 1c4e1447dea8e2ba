"""Every published training figure names the environment it was measured in (issue 51).

A training table reproduces to the digit only on the libraries and CPU it ran on. Each section
of a results page that prints a training command carries an ``*Environment:*`` line: the
record of the run (a rows folder's ``results.json``) or, for a run made before runs recorded
theirs, that it was not recorded and so reproduces only within its interval. And the one page
that explains what reproduces where says it, with the pinned set it names.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from paths import ROOT

from meeting_gym.evaluation.provenance import read_constraints

PAGES = [*sorted((ROOT / "docs" / "results").glob("*.md")), ROOT / "docs/guides/curriculum.md"]
TRAINING = re.compile(r"examples/(train_\w+|curriculum_ppo)\.py")
HEADING = re.compile(r"^(#{1,6} .*)$", re.M)
BLOCK = re.compile(r"^```[\w-]*\n(.*?)^```$", re.S | re.M)
RECORD = re.compile(r"docs/results/rows/[\w-]+/results\.json|rows/[\w-]+/results\.json")


def training_sections() -> list[tuple[str, str, str]]:
    """(page, heading, text) of each section whose code blocks run a training script."""
    found = []
    for page in PAGES:
        parts = HEADING.split(page.read_text(encoding="utf-8"))
        heading = "(top)"
        for part in parts:
            if HEADING.fullmatch(part):
                heading = part
            elif any(TRAINING.search(b) for b in BLOCK.findall(part)):
                found.append((page.relative_to(ROOT).as_posix(), heading, part))
    return found


def test_there_are_training_sections_to_check():
    assert len(training_sections()) >= 15


@pytest.mark.parametrize(
    "page, heading, text", training_sections(), ids=lambda v: v[:40] if isinstance(v, str) else v
)
def test_each_training_section_names_its_environment(page, heading, text):
    lines = [line for line in text.splitlines() if line.startswith("*Environment:")]
    assert lines, f"{page} {heading}: no *Environment:* line"
    for line in lines:
        recorded = RECORD.search(line)
        unrecorded = "not recorded" in line and "what-reproduces-where" in line
        assert recorded or unrecorded, f"{page} {heading}: {line}"
        if recorded:
            path = recorded.group(0)
            path = path if path.startswith("docs/") else "docs/results/" + path
            assert (ROOT / path).is_file(), f"{page}: {path} does not exist"


def test_the_page_says_what_reproduces_where_and_names_the_pins():
    page = (ROOT / "docs" / "results" / "grpo.md").read_text(encoding="utf-8")
    section = page.split("## What reproduces where", 1)[1].split("\n## ", 1)[0]
    pins = read_constraints((ROOT / "constraints" / "train.txt").read_text())
    for name in ("torch", "transformers", "trl", "accelerate", "datasets"):
        assert f"{name} {pins[name]}" in section, name
    assert "to the digit" in section and "paired interval" in section
    # no claim of digit-for-digit reproduction outside that section's terms
    assert "to the last digit" not in page.replace(section, "")


def test_the_rows_folders_record_their_environment():
    import json

    folders = sorted(Path(ROOT, "docs", "results", "rows").glob("*/results.json"))
    assert folders
    for path in folders:
        record = json.loads(path.read_text())["environment"]
        assert record["packages"]["torch"] and record["cpu"]["vector_extensions"], path


def test_the_grpo_page_answers_first_on_one_screen():
    """The results page opens with its one summary table (every published run a row, each
    naming the -v0 id it was measured on) and stays at most 250 lines; the history is on
    the log page (issue 49)."""
    lines = (ROOT / "docs" / "results" / "grpo.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, len(lines)
    first_section = next(k for k, line in enumerate(lines) if line.startswith("## "))
    table = [line for line in lines[:first_section] if line.startswith("| ")]
    assert table[0].startswith("| env (id measured on) |")
    assert all("-v0" in row for row in table[1:]), table
    log = ROOT / "docs" / "results" / "grpo-log.md"
    assert "(grpo-log.md)" in "\n".join(lines[:first_section]) and log.is_file()


@pytest.mark.parametrize("name", ["evaluation", "real-model", "training", "benchmarks"])
def test_each_results_page_answers_first_with_one_table(name):
    """Like the GRPO page, each results page opens with one summary table, after a few lines
    of intro and before its first section or code block: every row names the id it was
    measured on and links to the section holding its command."""
    lines = (ROOT / "docs" / "results" / f"{name}.md").read_text(encoding="utf-8").splitlines()
    top = next(k for k, line in enumerate(lines) if line.startswith(("## ", "```", "<!--")))
    table = [k for k in range(top) if lines[k].startswith("|")]
    assert table and table == list(range(table[0], table[-1] + 1)), name  # one table
    assert table[0] <= 7, f"{name}: {table[0] - 2} lines of intro before the table"
    assert lines[table[0]].startswith("| env (id measured on) |")
    for row in lines[table[0] + 2 : table[-1] + 1]:
        assert "](#" in row, row
        assert re.search(r"-v[01]\b|none \(", row.split(" | ")[0]), row
