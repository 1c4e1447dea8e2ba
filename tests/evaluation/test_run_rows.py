"""A single-turn run's table rebuilt from its rows (meeting_gym.evaluation.run_rows), and the
published tables recomputed from the rows committed under docs/results/rows/."""

from __future__ import annotations

import json
import re

import pytest
from paths import ROOT

from meeting_gym.cli import main
from meeting_gym.evaluation.intervals import mean_interval, paired_interval
from meeting_gym.evaluation.run_rows import (
    MODELS,
    read_model_rows,
    run_table,
    summary,
    write_model_rows,
)

ROWS = ROOT / "docs" / "results" / "rows"
TERMS = ["exact_match", "format"]


def rows_of(rewards: list[float], exact: list[float]) -> list[dict]:
    return [
        {"item_id": f"i{k}", "reward": r, "terms": {"exact_match": e, "format": 1.0}, "error": None}
        for k, (r, e) in enumerate(zip(rewards, exact, strict=True))
    ]


def a_run(folder, rewards: dict[str, list[float]], gz: bool = True) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for m in MODELS:
        name = f"eval_{m}.jsonl" + (".gz" if gz else "")
        write_model_rows(folder / name, rows_of(rewards[m], [float(r == 1) for r in rewards[m]]))
    base = {"n": 0, "errors": 0, "reward": {}, **{t: {} for t in TERMS}}
    (folder / "results.json").write_text(json.dumps({"eval": {"base": base}}))


def test_the_table_is_computed_from_the_rows_as_the_intervals_say(tmp_path):
    rewards = {
        "base": [0.0, 0.0, 0.2, 0.0],
        "sft": [1.0, 0.2, 0.3, 0.2],
        "grpo": [1.0, 1.0, 0.3, 0.2],
    }
    a_run(tmp_path, rewards)
    text = run_table(tmp_path)
    # results.json keeps 4 decimals and the table prints 3 of those, as the pipeline does
    mean, half = (round(v, 4) for v in mean_interval(rewards["sft"]))
    assert f"| sft | 4 | {mean:.3f} ± {half:.3f} | 0.250 ± " in text
    diff, dhalf = (round(v, 4) for v in paired_interval(rewards["grpo"], rewards["sft"]))
    assert f"paired SFT+GRPO - SFT: {diff:+.3f} ± {dhalf:.3f} (95% CI, n=4)" in text


def test_gzipped_and_plain_rows_read_the_same_and_gzip_is_byte_stable(tmp_path):
    rows = rows_of([0.5, 1.0], [0.0, 1.0])
    write_model_rows(tmp_path / "a.jsonl", rows)
    write_model_rows(tmp_path / "a.jsonl.gz", rows)
    first = (tmp_path / "a.jsonl.gz").read_bytes()
    write_model_rows(tmp_path / "a.jsonl.gz", rows)
    assert (tmp_path / "a.jsonl.gz").read_bytes() == first
    assert read_model_rows(tmp_path / "a.jsonl") == read_model_rows(tmp_path / "a.jsonl.gz") == rows
    # stdev 0.25 * sqrt(2); half-width 1.96 * stdev / sqrt(2) = 0.49
    assert summary(rows, TERMS)["reward"] == {"mean": 0.75, "ci95": 0.49}


def test_models_on_other_items_are_refused(tmp_path):
    a_run(tmp_path, {m: [0.0, 1.0] for m in MODELS})
    rows = read_model_rows(tmp_path / "eval_grpo.jsonl.gz")
    rows[0]["item_id"] = "other"
    write_model_rows(tmp_path / "eval_grpo.jsonl.gz", rows)
    with pytest.raises(ValueError, match="grpo and sft were not evaluated on the same items"):
        run_table(tmp_path)


@pytest.mark.parametrize(
    "damage, fragment",
    [
        ("no-results", "no results.json"),
        ("bad-row", "eval_sft.jsonl:2: no numeric reward"),
        ("no-model", "no eval_grpo.jsonl"),
    ],
)
def test_the_cli_names_what_is_wrong_in_one_line(tmp_path, capsys, damage, fragment):
    a_run(tmp_path, {m: [0.0, 1.0] for m in MODELS}, gz=False)
    if damage == "no-results":
        (tmp_path / "results.json").unlink()
    elif damage == "bad-row":
        (tmp_path / "eval_sft.jsonl").write_text('{"reward": 1, "terms": {}}\n{"reward": "x"}\n')
    else:
        (tmp_path / "eval_grpo.jsonl").unlink()
    assert main(["rows", "table", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and fragment in err[0], err


def published_tables() -> list[tuple[str, str]]:
    """(rows folder, the table printed under it) for each ``meeting-gym rows table`` command
    on the results pages: the command's folder and the Markdown table and paired lines that
    follow its code block."""
    found = []
    pattern = re.compile(
        r"meeting-gym rows table (\S+)\n```\n\n((?:\|.*\n)+\n(?:paired .*\n)+)", re.MULTILINE
    )
    for page in sorted((ROOT / "docs" / "results").glob("*.md")):
        for folder, text in pattern.findall(page.read_text(encoding="utf-8")):
            found.append((folder, text.strip()))
    return found


def test_every_published_rows_table_is_on_a_page():
    tables = published_tables()
    assert tables, "no results page prints a `meeting-gym rows table` command with its table"
    on_disk = sorted(p.parent.relative_to(ROOT).as_posix() for p in ROWS.glob("*/results.json"))
    assert sorted(folder for folder, _ in tables) == on_disk


@pytest.mark.parametrize("folder, printed", published_tables())
def test_each_published_table_recomputes_to_the_digit_from_its_rows(folder, printed, capsys):
    assert main(["rows", "table", str(ROOT / folder)]) == 0
    assert capsys.readouterr().out.strip() == printed
