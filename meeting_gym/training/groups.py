"""Per GRPO step of a run: its groups, their distinct final answers and exact rollouts
(``meeting-gym rows groups``).

    meeting-gym rows groups runs/tool_env/grpo/rollouts.jsonl [--group 8]
    meeting-gym rows groups ROLLOUTS --times 09:00:00Z,10:00:00Z

``--times`` adds, per step, the share of the rollouts' answers at those times of day (on any
date) and the share of gold's answers there: a policy that gathers on a few times where gold
rarely is has found a shortcut, not the conversion.

``--unasked`` adds, per step, the episodes that answered without asking any tool about one
of the attendees ``list_attendees`` named (MeetingSlot): a policy that answers before it has
read every calendar guesses.

``--branches`` (a ``--rollout last-turn`` run) adds, per step, how many branches answered in
the first turn they sampled and how many did not (called a tool, or wrote no answer), with
each kind's mean advantage over the groups whose returns spread: where the second is below 0
the updates push "answer now" up, at the branch and, by generalising, a turn early.

Held-out rows (``eval_<model>.jsonl``, which carry no step) are read as one line, ``held
out``, with ``--group 1``: how often a model answers at those times on the evaluation items.

``examples/train_tool_env.py`` writes every rollout as a row, group by group, each with its
step. A group whose distinct answers fall toward one is a policy collapsing onto one reply
(the step's log carries the same count as ``answers_per_group`` since it was added; this
reads it back from any run's rows).
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict

from meeting_gym.agentkit.llm import SCRIPTED
from meeting_gym.evaluation.heldout import read_rows
from meeting_gym.training.grpo import advantages

HELD_OUT = "held out"


def unasked(row: dict) -> bool:
    """Whether the episode never asked a tool about one of the attendees ``list_attendees``
    named (False when it never listed them). Each turn is read as the env reads it."""
    from meeting_gym.core.protocol import ToolCallsAction, parse_action

    messages = row.get("transcript") or []
    listed, asked = None, set()
    for k, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        action = parse_action(str(message.get("content", "")))
        for call in action.calls if isinstance(action, ToolCallsAction) else ():
            if call.name == "list_attendees" and listed is None and k + 1 < len(messages):
                try:  # the tool's result is the next message
                    listed = json.loads(messages[k + 1].get("content", ""))
                except (TypeError, ValueError):
                    listed = None
            elif isinstance(call.arguments, dict):  # the person a call is about
                asked.add(str(call.arguments.get("name")))
    return isinstance(listed, list) and any(str(name) not in asked for name in listed)


def answered_at_branch(row: dict) -> bool:
    """Whether the episode's first sampled turn (the one after its scripted opening) was its
    answer."""
    reasons = row.get("finish_reasons") or []
    scripted = sum(1 for reason in reasons if reason == SCRIPTED)
    return len(reasons) - scripted == 1 and row.get("answer") is not None


def time_of_day(answer: object) -> str:
    """The part of an ISO answer after its ``T`` (``NONE`` and other text as they are)."""
    text = str(answer)
    return text.split("T", 1)[1] if "T" in text else text


def step_table(rows: list[dict], group: int, times: frozenset[str] = frozenset()) -> list[dict]:
    """One line per step: groups, mean distinct answers per group, exact rollouts of all, and
    (with ``times``) the rollouts and gold answers at those times of day."""
    if len(rows) % group:
        raise ValueError(f"{len(rows)} rows are not whole groups of {group}")
    distinct: dict[int, list[int]] = defaultdict(list)
    exact: dict[int, list[float]] = defaultdict(list)
    at: dict[int, list[tuple[bool, bool]]] = defaultdict(list)
    skipped: dict[int, int] = defaultdict(int)
    branches: dict[int, dict[bool, list[float]]] = defaultdict(lambda: {True: [], False: []})
    counts_by_kind: dict[int, dict[bool, int]] = defaultdict(lambda: {True: 0, False: 0})
    for k in range(0, len(rows), group):
        members = rows[k : k + group]
        steps = {r.get("step", HELD_OUT) for r in members}  # eval rows carry no step
        if len(steps) != 1:
            raise ValueError(f"rows {k} to {k + group - 1} span two steps: is --group right?")
        step = steps.pop()
        distinct[step].append(len({str(r["answer"]) for r in members}))
        exact[step] += [r["breakdown"]["exact_match"] for r in members]
        skipped[step] += sum(unasked(r) for r in members)
        returns = [r["breakdown"].get("reward") for r in members]
        weights = advantages(returns) if None not in returns else None
        for k_row, r in enumerate(members):
            kind = answered_at_branch(r)
            counts_by_kind[step][kind] += 1
            if weights is not None:
                branches[step][kind].append(weights[k_row])
        at[step] += [
            (time_of_day(r["answer"]) in times, time_of_day(r["gold"]) in times) for r in members
        ]
    return [
        {
            "step": step,
            "groups": len(counts),
            "answers_per_group": round(sum(counts) / len(counts), 2),
            "exact": int(sum(exact[step])),
            "rollouts": len(exact[step]),
            "at_times": sum(mine for mine, _ in at[step]),
            "gold_at_times": sum(gold for _, gold in at[step]),
            "unasked": skipped[step],
            "answered_at_branch": counts_by_kind[step][True],
            "not_answered_at_branch": counts_by_kind[step][False],
            "advantage_answered": _mean(branches[step][True]),
            "advantage_not_answered": _mean(branches[step][False]),
        }
        for step, counts in distinct.items()
    ]


def _mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None


def checked(rows: list[dict], path: object) -> list[dict]:
    """The rows (as :func:`meeting_gym.evaluation.heldout.read_rows` read them), each checked to
    carry what this table reads beyond an episode row: an answer, a gold and ``exact_match``
    in its breakdown. ``ValueError`` naming the row otherwise."""
    for number, row in enumerate(rows, 1):
        if not {"answer", "gold"} <= row.keys() or "exact_match" not in row["breakdown"]:
            raise ValueError(f"{path}: row {number} has no answer, gold or exact_match")
    return rows


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:+.2f}"


def table(
    path: str,
    group: int,
    times: frozenset[str] = frozenset(),
    unasked_column: bool = False,
    branches: bool = False,
) -> list[str]:
    """The lines ``meeting-gym rows groups`` prints for the rows at ``path``; ``ValueError``
    naming the file (and the row) if they cannot be read as a run's rollouts."""
    try:
        lines = step_table(checked(read_rows(path), path), group, times)
    except OSError as exc:
        raise ValueError(f"{path}: {exc.strerror or exc}") from None
    except (TypeError, AttributeError) as exc:  # a field of a checked row is of another type
        raise ValueError(
            f"{path}: a row's fields are not of the types the package writes ({exc})"
        ) from None
    extra = " answers at the times | gold at the times |" if times else ""
    extra += " an attendee never asked |" if unasked_column else ""
    if branches:
        extra += " answered at the branch (advantage) | did not (advantage) |"
    out = [
        "| step | groups | distinct answers per group | exact rollouts |" + extra,
        "|---|---|---|---|"
        + ("---|---|" if times else "")
        + ("---|" if unasked_column else "")
        + ("---|---|" if branches else ""),
    ]
    for line in lines:
        cells = (
            f" {line['at_times']} of {line['rollouts']} |"
            f" {line['gold_at_times']} of {line['rollouts']} |"
            if times
            else ""
        )
        cells += f" {line['unasked']} of {line['rollouts']} |" if unasked_column else ""
        if branches:
            cells += (
                f" {line['answered_at_branch']} ({_cell(line['advantage_answered'])}) |"
                f" {line['not_answered_at_branch']} ({_cell(line['advantage_not_answered'])}) |"
            )
        out.append(
            f"| {line['step']} | {line['groups']} | {line['answers_per_group']:.2f} | "
            f"{line['exact']} of {line['rollouts']} |" + cells
        )
    return out


def step_rows(
    rows: list[dict], step: int, group: int, most: int | None = None
) -> tuple[list, list, list]:
    """(transcripts, advantages, group numbers) of one step's groups whose rewards spread
    (the first ``most`` of them, or all), as a run trains on them
    (``benchmarks/grpo_update.py`` times an update on them)."""
    chosen = [r for r in rows if r["step"] == step]
    if not chosen:
        raise ValueError(f"no rollouts of step {step}")
    if len(chosen) % group:
        raise ValueError(f"{len(chosen)} rollouts of step {step} are not whole groups of {group}")
    transcripts, weights, groups = [], [], []
    for g, k in enumerate(range(0, len(chosen), group)):
        members = chosen[k : k + group]
        spread = advantages([float(r["breakdown"]["reward"]) for r in members])
        if spread is None or (most is not None and len(set(groups)) >= most):
            continue
        for row, weight in zip(members, spread, strict=True):
            transcripts.append(row["transcript"])
            weights.append(weight)
            groups.append(g)
    if not transcripts:
        raise ValueError(f"no group of step {step} has rewards that spread")
    return transcripts, weights, groups
