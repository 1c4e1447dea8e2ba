"""Marks for a worked solution someone wrote: which of its steps are right.

A model taught to write worked solutions (:mod:`~meeting_gym.envs.meeting_slot.domain.worked`)
writes each step before its answer. :func:`mark_worked` grades those steps one by one against
the steps :func:`~meeting_gym.envs.meeting_slot.domain.worked.worked_solution` writes for the
same scenario, so an evaluation can say where the computation goes wrong (a time zone's
offset, the free time, the common starts) and not only that the answer is wrong.

A diagnostic, never a reward: the env's rubric grades the answer alone, and a step is right
only when its text equals the reference step's (the same spans, in the same order).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from meeting_gym.envs.meeting_slot.domain.scenario import Scenario
from meeting_gym.envs.meeting_slot.domain.worked import worked_solution

FIELDS = ("works", "busy", "free")
"""An attendee line's fields: working hours, busy blocks and free time, all in UTC."""

_ATTENDEE = re.compile(
    r"^- (?P<name>[^()\n]+?) \((?P<zone>[^()\n]*)\): works (?P<works>[^;\n]*); "
    r"busy (?P<busy>[^;\n]*); free (?P<free>[^;\n]*)$",
    re.MULTILINE,
)
_STARTS = re.compile(r"^A \d+-minute meeting can start: .*$", re.MULTILINE)
_LAST = re.compile(r"^(The earliest start: .*|No start fits everyone inside the window\.)$", re.M)
_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)


@dataclass(frozen=True)
class AttendeeMarks:
    """One of the reference's attendees: whether the text has a line for them (by name; the
    first line of a name counts) and which of its fields are right."""

    name: str
    zone: str
    written: bool
    works: bool
    busy: bool
    free: bool


@dataclass(frozen=True)
class WorkedMarks:
    """Which of a written worked solution's steps equal the reference's.

    ``people`` marks each of the reference's attendees, in its order. ``starts`` and
    ``earliest`` say whether the common starts and the earliest-start lines are right
    (False when missing); ``consistent`` whether the ``<answer>`` block says what the text's
    own last step says (None when either is missing).
    """

    people: tuple[AttendeeMarks, ...]
    starts: bool
    earliest: bool
    consistent: bool | None

    @property
    def attendees(self) -> int:
        return len(self.people)

    @property
    def written(self) -> int:
        return sum(p.written for p in self.people)

    def count(self, field: str) -> int:
        """How many attendees' ``field`` (one of :data:`FIELDS`) is right."""
        if field not in FIELDS:
            raise ValueError(f"field must be one of {', '.join(FIELDS)}, got {field!r}")
        return sum(getattr(p, field) for p in self.people)


def _lines(text: str) -> tuple[dict[str, dict[str, str]], str | None, str | None]:
    people: dict[str, dict[str, str]] = {}
    for m in _ATTENDEE.finditer(text):
        people.setdefault(m["name"].strip(), {f: m[f].strip() for f in ("zone", *FIELDS)})
    starts = _STARTS.search(text)
    last = _LAST.search(text)
    return people, starts and starts[0].strip(), last and last[0].strip()


def _says(last: str | None) -> str | None:
    """The answer a last step states: a UTC instant, or NONE."""
    if last is None:
        return None
    if last.startswith("No start"):
        return "NONE"
    return last.removeprefix("The earliest start: ").strip()


def mark_worked(text: str, scenario: Scenario) -> WorkedMarks:
    """Grade the worked solution in ``text`` (a reply, its ``<answer>`` block included) step
    by step against the reference's for ``scenario``."""
    gold_people, gold_starts, gold_last = _lines(worked_solution(scenario))
    people, starts, last = _lines(text)
    marks = []
    for name, gold in gold_people.items():
        line = people.get(name)
        right = {f: line is not None and line[f] == gold[f] for f in FIELDS}
        marks.append(AttendeeMarks(name, gold["zone"], line is not None, **right))
    answer = _ANSWER.search(text)
    said = _says(last)
    consistent = None
    if answer is not None and said is not None:
        consistent = answer[1].strip().upper() == said.upper()
    return WorkedMarks(
        people=tuple(marks),
        starts=starts is not None and starts == gold_starts,
        earliest=last is not None and last == gold_last,
        consistent=consistent,
    )
