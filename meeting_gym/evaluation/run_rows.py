"""A single-turn training run's held-out rows, and the table they make.

``examples/train_grpo.py`` evaluates base, SFT and SFT+GRPO on the same ``eval`` items and
writes one row per item and model (``eval_<model>.jsonl``: the item, the reply, the grade).
:func:`run_table` rebuilds the run's table (each model's mean reward and rubric terms with
95% intervals, then the paired differences) from those rows alone, so a published table can
be re-graded without re-running hours of training: the rows behind each one live, gzipped,
under ``docs/results/rows/`` with the run's ``results.json`` (settings and environment).

    meeting-gym rows table docs/results/rows/grpo_calendar

Nothing here imports gymnasium or torch.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from meeting_gym.evaluation.heldout import json_lines, paired_line
from meeting_gym.evaluation.intervals import mean_interval, paired_interval

__all__ = [
    "MODELS",
    "PAIRS",
    "paired_summaries",
    "read_model_rows",
    "run_table",
    "summary",
    "table",
    "write_model_rows",
]

MODELS = ("base", "sft", "grpo")
PAIRS = {"sft_minus_base": ("sft", "base"), "grpo_minus_sft": ("grpo", "sft")}
_PAIR_NAMES = {"sft_minus_base": "SFT - base", "grpo_minus_sft": "SFT+GRPO - SFT"}


def write_model_rows(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    """One JSON line per row; gzipped when ``path`` ends in ``.gz``."""
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    if path.suffix == ".gz":
        # mtime 0: the same rows give the same bytes, so a rerun leaves git nothing to diff
        with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as handle:
            handle.write(text.encode("utf-8"))
    else:
        path.write_text(text, encoding="utf-8")


def read_model_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of ``eval_<model>.jsonl`` or ``.jsonl.gz``; ``ValueError`` naming the file and
    line of a row that is not a JSON object with a numeric ``reward`` and a ``terms`` object."""
    rows = []
    for number, row in json_lines(path):
        reward = row.get("reward") if isinstance(row, dict) else None
        if not isinstance(reward, (int, float)) or isinstance(reward, bool):
            raise ValueError(f"{path}:{number}: no numeric reward")
        if not isinstance(row.get("terms"), dict):
            raise ValueError(f"{path}:{number}: terms must be an object")
        rows.append(row)
    return rows


def summary(rows: Sequence[dict[str, Any]], terms: Sequence[str]) -> dict[str, Any]:
    """Mean reward and each term with their 95% half-widths, over one model's rows."""
    out: dict[str, Any] = {"n": len(rows), "errors": sum(r.get("error") is not None for r in rows)}
    for key in ("reward", *terms):
        values = [r["reward"] if key == "reward" else r["terms"].get(key, 0.0) for r in rows]
        mean, half = mean_interval(values)
        out[key] = {"mean": round(mean, 4), "ci95": round(half, 4)}
    return out


def paired_summaries(rows: dict[str, Sequence[dict[str, Any]]]) -> dict[str, Any]:
    """The paired differences :data:`PAIRS` names, item by item; refused unless both models
    graded the same items in the same order."""
    out = {}
    for key, (a, b) in PAIRS.items():
        ids_a = [r.get("item_id") for r in rows[a]]
        if ids_a != [r.get("item_id") for r in rows[b]]:
            raise ValueError(f"{a} and {b} were not evaluated on the same items")
        mean, half = paired_interval([r["reward"] for r in rows[a]], [r["reward"] for r in rows[b]])
        out[key] = {"mean": round(mean, 4), "ci95": round(half, 4), "n": len(ids_a)}
    return out


def table(results: dict[str, Any], terms: Sequence[str]) -> str:
    """The Markdown results table: one line per model, then the paired differences."""
    head = ["model", "n", "reward (95% CI)", *terms]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name in MODELS:
        s = results["eval"][name]
        cells = [name, str(s["n"]), f"{s['reward']['mean']:.3f} ± {s['reward']['ci95']:.3f}"]
        cells += [f"{s[t]['mean']:.3f} ± {s[t]['ci95']:.3f}" for t in terms]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    for key, text in _PAIR_NAMES.items():
        lines.append(paired_line(text, results["paired"][key]))
    return "\n".join(lines)


def _rows_file(folder: Path, model: str) -> Path:
    for name in (f"eval_{model}.jsonl.gz", f"eval_{model}.jsonl"):
        if (folder / name).is_file():
            return folder / name
    raise ValueError(f"{folder}: no eval_{model}.jsonl or eval_{model}.jsonl.gz")


def run_table(folder: Path) -> str:
    """The table of the run whose rows and ``results.json`` are in ``folder``, recomputed
    from the rows (``results.json`` gives only the rubric's term names)."""
    meta = folder / "results.json"
    if not meta.is_file():
        raise ValueError(f"{folder}: no results.json (the run's settings)")
    try:
        recorded = json.loads(meta.read_text(encoding="utf-8"))
        terms = [k for k in recorded["eval"]["base"] if k not in ("n", "errors", "reward")]
    except (json.JSONDecodeError, KeyError, TypeError):
        raise ValueError(f"{meta}: not a run's results (no eval.base summary)") from None
    rows = {m: read_model_rows(_rows_file(folder, m)) for m in MODELS}
    results = {
        "eval": {m: summary(rows[m], terms) for m in MODELS},
        "paired": paired_summaries(rows),
    }
    return table(results, terms)
