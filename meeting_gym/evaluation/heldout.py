"""What a held-out table of a multi-turn env reports, per episode and per model.

:func:`episode_stats` reads one evaluated episode (an
:class:`~meeting_gym.evaluation.evaluate.EpisodeResult` whose ``extra`` holds the agent's
transcript, as :class:`~meeting_gym.agentkit.llm.LLMAgent` reports it): whether it answered,
how many of its turns the env accepted (read as tool calls or an answer, not
:func:`refused`), its turns and tool calls, and its rubric terms. :func:`model_summary`
averages them with 95% intervals, overall and per difficulty, and :func:`paired` gives the
paired interval of two models on the same items (:func:`paired_line` prints it).
:func:`row_stats` reads a row logged to a file back, after :func:`row_problem` checks it. Nothing
here imports gymnasium or torch.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator, Sequence
from statistics import fmean
from types import SimpleNamespace
from typing import Any

from meeting_gym.evaluation.intervals import mean_interval, paired_interval

__all__ = [
    "episode_stats",
    "in_item_order",
    "item_index",
    "json_lines",
    "malformed_turns",
    "model_summary",
    "paired",
    "paired_line",
    "read_rows",
    "refused",
    "row_problem",
    "row_slice",
    "row_stats",
]


def malformed_turns(messages: list[dict[str, Any]], answered: bool) -> tuple[int, int]:
    """(malformed turns, turns) of a logged conversation.

    A turn is malformed when the env :func:`refused` it, or when it was the final reply and
    no answer could be read from it (``answered`` False).
    """
    turns = bad = 0
    for index, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        turns += 1
        following = messages[index + 1] if index + 1 < len(messages) else None
        if following is None:
            bad += not answered
        elif refused(str(following.get("content") or "")):
            bad += 1
    return bad, turns


def refused(observation: str) -> bool:
    """Whether an observation refuses the action before it: an ``error:`` text, or (for
    TimetablePlanner, whose observation is a JSON state) ``last_action.outcome`` invalid."""
    if observation.startswith("error:"):
        return True
    if observation.startswith("{"):
        try:
            last = json.loads(observation).get("last_action") or {}
        except (ValueError, AttributeError):
            return False
        return isinstance(last, dict) and last.get("outcome") == "invalid"
    return False


def episode_stats(result: Any) -> dict[str, Any]:
    """One episode's row of the held-out table (see the module doc)."""
    transcript = result.extra.get("transcript")
    turns = [k for k, m in enumerate(transcript or []) if m.get("role") == "assistant"]
    accepted: int | None = 0 if transcript is not None else None  # a policy keeps none
    for k in turns:
        assert transcript is not None and accepted is not None
        following = transcript[k + 1] if k + 1 < len(transcript) else None
        if following is None:  # the last turn: accepted when it was read as the answer
            accepted += result.answer is not None
        elif following.get("role") == "tool" or not refused(str(following.get("content"))):
            accepted += 1
    return {
        "item_id": result.item_id,
        "difficulty": result.difficulty,
        "reward": result.reward,
        **dict(result.terms),
        "answered": float(result.answer is not None),
        "turns": result.turns,
        "accepted_turns": accepted,
        "tool_calls": result.tool_calls,
        "error": result.error,
    }


def row_problem(row: Any) -> str | None:
    """What is wrong with a logged row's fields that :func:`row_stats` reads, or None.

    A row comes back from a file a user may have edited or cut short, so each field is
    checked before it is trusted (a bool is not taken for a number).
    """
    if not isinstance(row, dict) or not {"env", "item_id", "breakdown"} <= row.keys():
        return "not an episode row (env, item_id, breakdown)"
    if not isinstance(row["env"], str) or not isinstance(row["item_id"], str):
        return "env and item_id must be strings"
    breakdown = row["breakdown"]
    if breakdown is None:
        # an episode the agent could not finish (its model's context ran out, say): the
        # table counted it unanswered with reward 0, and reads it back the same way
        if not isinstance(row.get("error"), str) or not row["error"]:
            return "breakdown may be null only in a row whose error says what ended it"
    elif not isinstance(breakdown, dict) or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in breakdown.values()
    ):
        return "breakdown must be an object of numbers"
    for key in ("turns", "tool_calls"):
        if not isinstance(row.get(key, 0), int) or isinstance(row.get(key), bool):
            return f"{key} must be an integer"
    transcript = row.get("transcript")
    if transcript is not None and not (
        isinstance(transcript, list) and all(isinstance(m, dict) for m in transcript)
    ):
        return "transcript must be a list of messages"
    return None


def json_lines(path: Any) -> Iterator[tuple[int, Any]]:
    """(line number, value) of each non-blank line of a JSONL file, gzipped where its name
    ends in ``.gz``; ``ValueError`` naming the file and line that is not UTF-8 or not JSON."""
    opener = gzip.open if str(path).endswith(".gz") else open
    # read bytes and decode each line, so a file that is not text is named with its line
    with opener(path, "rb") as handle:
        for number, raw in enumerate(handle, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise ValueError(f"{path}:{number}: not UTF-8 text") from None
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: not JSON ({exc.msg})") from None


def read_rows(path: Any) -> list[dict[str, Any]]:
    """The episode rows of a JSONL file, each checked by :func:`row_problem` (blank lines
    skipped); ``ValueError`` naming the file, the line and what is wrong."""
    rows = []
    for number, row in json_lines(path):
        problem = row_problem(row)
        if problem:
            raise ValueError(f"{path}:{number}: {problem}")
        rows.append(row)
    return rows


def item_index(row: dict[str, Any]) -> int | None:
    """The index of the split item a logged row played (its reset ``options["index"]``),
    or None if the row does not carry one."""
    k = (row.get("options") or {}).get("index")
    # bool is an int subclass; a hand-edited True is not an index
    return k if isinstance(k, int) and not isinstance(k, bool) else None


def row_slice(text: str) -> slice:
    """``START:STOP`` (either may be left out) as a slice; ``ValueError`` if it is not one."""
    start, sep, stop = text.partition(":")
    if not sep:
        raise ValueError(f"--rows must be START:STOP, not {text!r}")
    try:
        bounds = [int(b) if b.strip() else None for b in (start, stop)]
    except ValueError:
        raise ValueError(f"--rows must be two whole numbers, not {text!r}") from None
    if any(b is not None and b < 0 for b in bounds):
        raise ValueError(f"--rows counts from 0: {text!r}")
    return slice(*bounds)


def in_item_order(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows by the item each played (:func:`item_index`, then the rollout): an
    evaluation that writes each row as its episode ends leaves them in the order they
    ended. Rows that do not all carry an index keep their order."""
    indices = [item_index(r) for r in rows]
    if rows and None not in indices:
        order = sorted(range(len(rows)), key=lambda i: (indices[i], rows[i].get("rollout") or 0))
        return [rows[i] for i in order]
    return rows


def row_stats(row: dict[str, Any], terms: Sequence[str]) -> dict[str, Any]:
    """:func:`episode_stats` of a logged row (``meeting_gym.evaluation.chat.replayable_row``).

    So an evaluation already written is read back, not played again. Raises ``ValueError``
    naming the field if the row is malformed (see :func:`row_problem`).
    """
    problem = row_problem(row)
    if problem:
        raise ValueError(problem)
    breakdown = row["breakdown"] or {}  # an error row scores 0, as evaluate's result did
    result = SimpleNamespace(
        extra={"transcript": row.get("transcript")},
        answer=row.get("answer"),
        item_id=row.get("item_id"),
        difficulty=row.get("difficulty"),
        reward=float(breakdown.get("reward", 0.0)),
        terms={t: float(breakdown.get(t, 0.0)) for t in terms},
        turns=row.get("turns", 0),
        tool_calls=row.get("tool_calls", 0),
        error=row.get("error"),
    )
    return episode_stats(result)


def _means(rows: Sequence[dict[str, Any]], terms: Sequence[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"n": len(rows)}
    for key in ("reward", *terms, "answered"):
        mean, half = mean_interval([float(r[key]) for r in rows])
        out[key] = {"mean": round(mean, 4), "ci95": round(half, 4)}
    turns = sum(r["turns"] for r in rows)
    known = all(r["accepted_turns"] is not None for r in rows)
    out["accepted_turn_share"] = (
        round(sum(r["accepted_turns"] for r in rows) / max(turns, 1), 4) if known else None
    )
    out["mean_turns"] = round(fmean(r["turns"] for r in rows), 3)
    out["mean_tool_calls"] = round(fmean(r["tool_calls"] for r in rows), 3)
    out["errors"] = sum(r["error"] is not None for r in rows)
    return out


def model_summary(rows: Sequence[dict[str, Any]], terms: Sequence[str]) -> dict[str, Any]:
    """Means with 95% intervals of :func:`episode_stats` rows, overall and per difficulty."""
    if not rows:
        raise ValueError("no episodes")
    summary = _means(rows, terms)
    levels = sorted({r["difficulty"] for r in rows if r["difficulty"] is not None})
    summary["by_difficulty"] = {
        level: _means([r for r in rows if r["difficulty"] == level], terms) for level in levels
    }
    return summary


def paired(after: Sequence[dict[str, Any]], before: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The paired reward difference ``after - before`` on the same items, with its interval.

    Raises ``ValueError`` if the two lists are not the same items in the same order.
    """
    if [r["item_id"] for r in after] != [r["item_id"] for r in before]:
        raise ValueError("the two evaluations are not of the same items in the same order")
    mean, half = paired_interval([r["reward"] for r in after], [r["reward"] for r in before])
    return {"mean": round(mean, 4), "ci95": round(half, 4), "n": len(after)}


def paired_line(name: str, difference: dict[str, Any]) -> str:
    """The one line every table prints for a paired difference, e.g.
    ``paired SFT - base: +0.052 ± 0.041 (95% CI, n=200)``; ``difference`` is what
    :func:`paired` returns."""
    return (
        f"paired {name}: {difference['mean']:+.3f} ± {difference['ci95']:.3f} "
        f"(95% CI, n={difference['n']})"
    )
