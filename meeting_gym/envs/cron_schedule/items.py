"""One CronSchedule task as a validated, immutable value, and the texts an agent sees.

A :class:`CronItem` is a **write** task (an English ``description`` of a schedule; the
reference ``expression`` is the gold answer, any equivalent expression is correct) or a
**read** task (an ``expression``, a ``start`` time and ``num_times``; the gold answer is
the next ``num_times`` run times strictly after the start). The question and the gold are
computed from those fields, never stored apart from them. :meth:`CronItem.from_dict` is
the one door for untrusted data (the ``item`` reset option, JSONL rows): it raises only
:class:`ItemError`, whose message names the field.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from meeting_gym.core.bounded import field_problem, show
from meeting_gym.envs.cron_schedule.expression import Cron, CronError, parse
from meeting_gym.envs.cron_schedule.schedule import (
    day_key,
    format_time,
    next_times,
    parse_time,
)

__all__ = [
    "KINDS",
    "LEVELS",
    "MAX_TIMES",
    "READ_QUESTION",
    "SYSTEM_PROMPT",
    "WRITE_QUESTION",
    "CronItem",
    "ItemError",
    "question_text",
]

KINDS = ("write", "read")
LEVELS = ("1", "2", "3", "4")
MAX_TIMES = 50
"""The most run times a read task (or one ``next_runs`` call) asks for."""

SYSTEM_PROMPT = (
    "You read and write cron schedules. Expressions follow standard Vixie cron (cronie) "
    "semantics: five fields, minute hour day-of-month month day-of-week, or a macro such "
    "as @daily. Times are local wall-clock times to the minute, with no time zones and no "
    "daylight saving.\n\n"
    "When asked to write an expression, reply with exactly one expression inside "
    "<cron>...</cron>. Only the last <cron> block is read, and it must hold nothing but the "
    "expression; any expression that fires at exactly the same minutes is correct.\n\n"
    "When asked for run times, reply with one time per line inside <times>...</times>, "
    "earliest first, each written YYYY-MM-DD HH:MM (24-hour clock). Only the last <times> "
    "block is read; its lines are compared with the true run times in order, position by "
    "position, and extra lines count against you."
)

WRITE_QUESTION = (
    "Schedule: {description}\n\n"
    "Write one cron expression (five fields: minute hour day-of-month month day-of-week) "
    "that fires at exactly these times. Reply with it in a <cron>...</cron> block."
)
READ_QUESTION = (
    "Cron expression: {expression}\n"
    "Start: {start}\n\n"
    "List the next {what} this expression fires strictly after the start, earliest first, "
    "one per line as YYYY-MM-DD HH:MM (24-hour clock), in a <times>...</times> block."
)


class ItemError(ValueError):
    """An item's data is malformed; the message starts with the field (``item.start: ...``)."""


def question_text(kind: str, expression: str, description: str, start: str, n: int) -> str:
    """The question of a task (write: the description; read: expression, start, count)."""
    if kind == "write":
        return WRITE_QUESTION.format(description=description)
    what = "time" if n == 1 else f"{n} times"
    return READ_QUESTION.format(expression=expression, start=start, what=what)


@dataclass(frozen=True)
class CronItem:
    """One task. ``kind`` is ``"write"`` or ``"read"``; ``difficulty`` the level ``"1"``-``"4"``.

    write: ``expression`` is the reference answer and ``description`` the English
    schedule shown; read: ``expression`` is shown with ``start`` (``YYYY-MM-DD HH:MM``)
    and ``num_times``. ``question`` and ``gold`` are computed from those (gold: the
    reference expression, or the run times one per line). ``both_days_restricted``: the
    expression restricts both day fields (neither is a bare ``*``). Construction checks
    every field (:class:`ItemError`); :meth:`build` computes ``question``, ``gold`` and
    ``id``.
    """

    kind: str
    difficulty: str | None
    expression: str
    description: str
    start: str
    num_times: int
    question: str
    gold: str
    id: str

    def __post_init__(self) -> None:
        expected = CronItem.build(
            self.kind,
            self.difficulty,
            self.expression,
            description=self.description,
            start=self.start,
            num_times=self.num_times,
            id=self.id,
        )
        for name in ("question", "gold"):
            if getattr(self, name) != getattr(expected, name):
                raise ItemError(f"item.{name}: does not match the other fields")

    # ------------------------------------------------------------------ construction

    @classmethod
    def build(
        cls,
        kind: str,
        difficulty: str | None,
        expression: str,
        *,
        description: str = "",
        start: str = "",
        num_times: int = 0,
        id: str | None = None,
    ) -> CronItem:
        """Validate the fields and compute the question, the gold and the id."""
        if kind not in KINDS:
            raise ItemError(f"item.kind: must be 'write' or 'read', got {show(kind)}")
        if difficulty is not None and difficulty not in LEVELS:
            raise ItemError(
                f"item.difficulty: must be one of 1, 2, 3, 4 or null, got {show(difficulty)}"
            )
        cron = _expression(expression)
        if kind == "write":
            if not isinstance(description, str) or not description.strip():
                raise ItemError("item.description: a write task needs a non-empty description")
            if start or num_times:
                raise ItemError("item.start / item.num_times: only read tasks have them")
            gold = cron.source
        else:
            if description:
                raise ItemError("item.description: only write tasks have one")
            start = _start(start)
            if isinstance(num_times, bool) or not isinstance(num_times, int):
                raise ItemError(f"item.num_times: must be an integer, got {show(num_times)}")
            if not 1 <= num_times <= MAX_TIMES:
                raise ItemError(f"item.num_times: must be 1..{MAX_TIMES}, got {num_times}")
            times = next_times(cron, parse_time(start), num_times)
            if len(times) < num_times:
                raise ItemError("item.start: fewer run times than asked before the end of 9999")
            gold = "\n".join(times)
        item = cls._computed(kind, difficulty, cron.source, description, start, num_times, gold, id)
        item.__dict__["cron"] = cron
        return item

    @classmethod
    def _computed(
        cls,
        kind: str,
        difficulty: str | None,
        expression: str,
        description: str,
        start: str,
        num_times: int,
        gold: str,
        id: str | None,
    ) -> CronItem:
        """An item from fields known to be valid (the generator's path: no re-check)."""
        question = question_text(kind, expression, description, start, num_times)
        if id is None:
            id = "cron-" + hashlib.sha256(question.encode("utf-8")).hexdigest()[:10]
        elif not isinstance(id, str) or not id.strip():
            raise ItemError(f"item.id: must be a non-empty string, got {show(id)}")
        item = object.__new__(cls)
        item.__dict__.update(
            kind=kind,
            difficulty=difficulty,
            expression=expression,
            description=description,
            start=start,
            num_times=num_times,
            question=question,
            gold=gold,
            id=id,
        )
        return item

    @classmethod
    def from_dict(cls, data: Any) -> CronItem:
        """Validate untrusted JSON-like data (as :meth:`to_dict` writes it); only ItemError."""
        if not isinstance(data, Mapping):
            raise ItemError(f"item: must be an object, got {show(data)}")
        allowed = (
            "kind", "difficulty", "expression", "description", "start", "num_times",
            "question", "gold", "id",
        )  # fmt: skip
        if (problem := field_problem(data, allowed, ("kind", "expression"))) is not None:
            raise ItemError(problem)
        item = cls.build(
            data["kind"],
            data.get("difficulty"),
            data["expression"],
            description=data.get("description") or "",
            start=data.get("start") or "",
            num_times=data.get("num_times") or 0,
            id=data.get("id"),
        )
        for key in ("question", "gold"):
            if key in data and data[key] != getattr(item, key):
                raise ItemError(f"item.{key}: does not match the other fields")
        return item

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict that :meth:`from_dict` turns back into an equal item."""
        out: dict[str, Any] = {"id": self.id, "kind": self.kind, "difficulty": self.difficulty}
        out["expression"] = self.expression
        if self.kind == "write":
            out["description"] = self.description
        else:
            out.update(start=self.start, num_times=self.num_times)
        out.update(question=self.question, gold=self.gold)
        return out

    # ------------------------------------------------------------------ derived facts

    @cached_property
    def cron(self) -> Cron:
        """The parsed expression (the reference of a write task), parsed once."""
        return parse(self.expression)

    @property
    def both_days_restricted(self) -> bool:
        return self.cron.both_days_restricted

    @property
    def times(self) -> tuple[str, ...]:
        """The true run times of a read task (empty for a write task)."""
        return tuple(self.gold.split("\n")) if self.kind == "read" else ()


def _expression(value: Any) -> Cron:
    if not isinstance(value, str):
        raise ItemError(f"item.expression: must be a string, got {show(value)}")
    try:
        cron = parse(value)
    except CronError as exc:
        raise ItemError(f"item.expression: {exc}") from None
    if value != value.strip() or "\t" in value or "  " in value:
        raise ItemError("item.expression: write it with single spaces, nothing around it")
    if day_key(cron) == 0:
        raise ItemError(f"item.expression: {value!r} never fires; a task needs one that does")
    return cron


def _start(value: Any) -> str:
    try:
        when = parse_time(value)
    except ValueError as exc:
        raise ItemError(f"item.start: {exc}") from None
    if when.second or format_time(when) != value:
        raise ItemError(f"item.start: must be written YYYY-MM-DD HH:MM, got {show(value)}")
    return value
