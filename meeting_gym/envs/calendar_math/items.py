"""One CalendarMath question as a validated, immutable value.

An :class:`Item` holds its inputs together with the question text and the gold answer
computed from them by :mod:`meeting_gym.envs.calendar_math.dates`; the constructor checks
that the three agree, so no item can carry a gold that its inputs do not imply.
:meth:`Item.from_dict` is the one door for untrusted data (JSON files, user configs): it
raises only :class:`ItemError`, whose message names the offending field.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from meeting_gym.core.bounded import field_problem
from meeting_gym.core.bounded import show as _show
from meeting_gym.envs.calendar_math import dates

__all__ = ["DIFFICULTIES", "INPUT_KEYS", "Item", "ItemError", "default_id"]

DIFFICULTIES = ("easy", "medium", "hard", "expert")

INPUT_KEYS = {
    "add_days": ("start", "n"),
    "days_between": ("start", "end"),
    "weekday": ("start",),
}
"""The input keys each task type takes, in the order they are validated."""

_FIELDS = ("task_type", "inputs", "difficulty", "question", "gold", "id")


class ItemError(ValueError):
    """An item's data is malformed; the message starts with the field, as ``item.inputs.n:``."""


class _FrozenInputs(Mapping[str, Any]):
    """A read-only, hashable, picklable mapping: an item's inputs cannot drift from its gold."""

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, Any]) -> None:
        self._data = dict(data)

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        return hash(frozenset(self._data.items()))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return self._data == dict(other)
        return NotImplemented

    def __repr__(self) -> str:
        return repr(self._data)

    def __reduce__(self) -> tuple[type, tuple[dict[str, Any]]]:
        return (_FrozenInputs, (self._data,))


def default_id(question: str) -> str:
    """``cm-`` and the first 8 hex digits of the SHA-256 of the question text."""
    return "cm-" + hashlib.sha256(question.encode("utf-8")).hexdigest()[:8]


def _task_type(value: Any) -> str:
    if not isinstance(value, str) or value not in dates.TASK_TYPES:
        allowed = ", ".join(repr(t) for t in dates.TASK_TYPES)
        raise ItemError(f"item.task_type: must be one of {allowed}, got {_show(value)}")
    return value


def _date(key: str, value: Any) -> str:
    try:
        dates.parse_date(value)
    except ValueError:
        raise ItemError(
            f"item.inputs.{key}: must be a YYYY-MM-DD date with ASCII digits in years "
            f"0001..9999, got {_show(value)}"
        ) from None
    return value


def _inputs(task_type: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise ItemError(f"item.inputs: must be an object, got {_show(value)}")
    expected = INPUT_KEYS[task_type]
    for key in value:
        if key not in expected:
            raise ItemError(
                f"item.inputs: unexpected key {_show(key)} for {task_type} "
                f"(expected {', '.join(expected)})"
            )
    for key in expected:
        if key not in value:
            raise ItemError(f"item.inputs.{key}: missing (required for {task_type})")
    out = {"start": _date("start", value["start"])}
    if task_type == "days_between":
        out["end"] = _date("end", value["end"])
    if task_type == "add_days":
        n = value["n"]
        if isinstance(n, bool) or not isinstance(n, int) or n == 0:
            raise ItemError(f"item.inputs.n: must be a non-zero integer, got {_show(n)}")
        try:
            dates.add_days(out["start"], n)
        except ValueError as err:
            raise ItemError(f"item.inputs.n: {err}") from None
        # int(n): an int subclass such as IntEnum is stored, compared and dumped as a plain int
        out["n"] = int(n)
    return out


def _difficulty(value: Any) -> str | None:
    if value is not None and (not isinstance(value, str) or value not in DIFFICULTIES):
        allowed = ", ".join(repr(d) for d in DIFFICULTIES)
        raise ItemError(f"item.difficulty: must be one of {allowed} or null, got {_show(value)}")
    return value


def _id(value: Any, question: str) -> str:
    if value is None:
        return default_id(question)
    if not isinstance(value, str) or not value.strip():
        raise ItemError(f"item.id: must be a non-empty string, got {_show(value)}")
    return value


@dataclass(frozen=True)
class Item:
    """One question: its inputs, the question text, the gold answer and an id.

    ``inputs`` holds ``start`` and ``n`` (add_days), ``start`` and ``end`` (days_between)
    or ``start`` (weekday); dates are canonical ``YYYY-MM-DD`` strings, ``n`` a non-zero
    int. Construction checks that ``question`` and ``gold`` are the ones the inputs imply
    and raises :class:`ItemError` otherwise; use :meth:`build` to compute them.
    """

    task_type: str
    inputs: Mapping[str, Any] = field(hash=False)
    difficulty: str | None
    question: str
    gold: str
    id: str

    def __post_init__(self) -> None:
        task_type = _task_type(self.task_type)
        inputs = _inputs(task_type, self.inputs)
        _difficulty(self.difficulty)
        expected_question = dates.question(task_type, inputs)
        expected_gold = dates.gold(task_type, inputs)
        if self.question != expected_question:
            raise ItemError(
                f"item.question: does not match the inputs, expected {_show(expected_question)}"
            )
        if self.gold != expected_gold:
            raise ItemError(
                f"item.gold: does not match the inputs, expected {expected_gold!r}, "
                f"got {_show(self.gold)}"
            )
        # frozen dataclass: object.__setattr__ is the documented way to normalise a field
        object.__setattr__(self, "id", _id(self.id, self.question))
        object.__setattr__(self, "inputs", _FrozenInputs(inputs))

    @classmethod
    def build(
        cls,
        task_type: str,
        inputs: Mapping[str, Any],
        difficulty: str | None,
        id: str | None = None,
    ) -> Item:
        """Compute the question and gold for these inputs (raises :class:`ItemError`).

        ``id`` defaults to :func:`default_id` of the question.
        """
        task_type = _task_type(task_type)
        return cls._computed(task_type, _inputs(task_type, inputs), _difficulty(difficulty), id)

    @classmethod
    def _computed(
        cls, task_type: str, inputs: dict[str, Any], difficulty: str | None, id: str | None
    ) -> Item:
        """An item from validated fields, its question and gold computed here, once.

        The generator calls this directly: its inputs are canonical by construction, and
        ``dates.gold`` still parses them and checks the result's range. Skips the
        constructor's re-check, which would only compute the same question and gold again.
        """
        gold = dates.gold(task_type, inputs)
        text = dates.question_text(task_type, inputs)
        item = object.__new__(cls)
        item.__dict__.update(
            task_type=task_type,
            inputs=_FrozenInputs(inputs),
            difficulty=difficulty,
            question=text,
            gold=gold,
            id=_id(id, text),
        )
        return item

    @classmethod
    def from_dict(cls, data: Any) -> Item:
        """Validate untrusted JSON-like data into an item; raises only :class:`ItemError`.

        Takes ``task_type``, ``inputs``, optional ``difficulty`` and ``id``, and optional
        ``question`` and ``gold`` (as :meth:`to_dict` writes them), which must then equal
        the computed ones. Any other key is refused.
        """
        if not isinstance(data, Mapping):
            raise ItemError(f"item: must be an object, got {_show(data)}")
        if (problem := field_problem(data, _FIELDS, ("task_type", "inputs"))) is not None:
            raise ItemError(problem)
        task_type = _task_type(data["task_type"])
        inputs = _inputs(task_type, data["inputs"])
        difficulty = _difficulty(data.get("difficulty"))
        text = dates.question(task_type, inputs)
        item_id = _id(data.get("id"), text)
        item = cls.build(task_type, inputs, difficulty, item_id)
        for key in ("question", "gold"):
            if key in data and data[key] != getattr(item, key):
                raise ItemError(
                    f"item.{key}: does not match the inputs, expected "
                    f"{_show(getattr(item, key))}, got {_show(data[key])}"
                )
        return item

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict that :meth:`from_dict` turns back into an equal item."""
        return {
            "id": self.id,
            "task_type": self.task_type,
            "difficulty": self.difficulty,
            "inputs": dict(self.inputs),
            "question": self.question,
            "gold": self.gold,
        }
