"""Where a worked-solutions model's computation goes wrong: its last turn, step by step
(``meeting-gym rows steps``).

Each row is a MeetingSlot-v0 episode of ``examples/train_tool_env.py`` (``--expert
gold-worked``). Its last reply is marked step by step against the worked solution the
reference writes for the same scenario (:mod:`.domain.worked_marks`): each attendee's
working hours, busy blocks and free time in UTC, the starts that fit everyone, and the
earliest one; then whether the answer says what the reply's own last step says; and the
working hours' marks by time zone. A step is right only if its text equals the
reference's. The reward is the env's, as logged: these marks are a diagnosis, not a grade.
"""

from __future__ import annotations

from typing import Any

from meeting_gym.core.splits import make_task, options_item
from meeting_gym.envs.meeting_slot.domain.worked_marks import FIELDS, WorkedMarks, mark_worked

ENV = "MeetingSlot-v0"


def last_reply(row: dict[str, Any]) -> str:
    """The text of the episode's last assistant turn ('' if it has none)."""
    for message in reversed(row.get("transcript") or []):
        if isinstance(message, dict) and message.get("role") == "assistant":
            return str(message.get("content") or "")
    return ""


def marks_of(rows: list[dict[str, Any]]) -> list[WorkedMarks]:
    """Each row's last reply marked against its scenario's worked solution."""
    task = make_task(ENV)
    out = []
    for number, row in enumerate(rows):
        if row.get("env") != ENV or not isinstance(row.get("options"), dict):
            raise ValueError(f"row {number} is not a {ENV} episode with its reset options")
        found = options_item(task, row["options"])
        if found is None:
            raise ValueError(f"row {number}'s options name no split item")
        out.append(mark_worked(last_reply(row), task.load_item(found[0])))
    return out


def share(count: int, whole: int) -> str:
    return f"{count} of {whole}" + (f" ({count / whole:.0%})" if whole else "")


def report(marks: list[WorkedMarks], rows: list[dict[str, Any]]) -> list[str]:
    """The lines printed: each step's right share, then the answers against the last step."""
    people = sum(m.attendees for m in marks)
    written = sum(m.written for m in marks)
    exact = [bool((r.get("breakdown") or {}).get("exact_match")) for r in rows]
    said = [m for m in marks if m.consistent is not None]
    names = {"works": "working hours", "busy": "busy blocks", "free": "free time"}
    every_hour = [m.written == m.attendees and m.count("works") == m.attendees for m in marks]
    pairs = [
        ("episodes", str(len(marks))),
        ("attendee lines written", share(written, people)),
        *(
            (f"{names[f]} in UTC right", share(sum(m.count(f) for m in marks), written))
            for f in FIELDS
        ),
        ("episodes with every hour right", share(sum(every_hour), len(marks))),
        ("common starts right", share(sum(m.starts for m in marks), len(marks))),
        ("earliest start right", share(sum(m.earliest for m in marks), len(marks))),
        ("answer = its own last step", share(sum(bool(m.consistent) for m in said), len(said))),
        ("exact answers", share(sum(exact), len(marks))),
        (
            "exact, with the last step right",
            share(sum(e and m.earliest for e, m in zip(exact, marks, strict=True)), sum(exact)),
        ),
    ]
    # the working hours by time zone: whether the step fails on the zones whose clock is
    # not UTC's (the offset) or everywhere
    zones: dict[str, list[bool]] = {}
    for person in (p for m in marks for p in m.people if p.written):
        zones.setdefault(person.zone, []).append(person.works)
    pairs.append(("working hours right, by zone", ""))
    pairs += [(f"  {zone}", share(sum(ok), len(ok))) for zone, ok in sorted(zones.items())]
    width = max(len(label) for label, _ in pairs) + 2
    return [f"{label:<{width}}{value}".rstrip() for label, value in pairs]
