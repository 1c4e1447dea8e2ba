"""The five actions: parsing and coercion, then validation, in the original's order (RULES 4).

:func:`parse_action` turns an untrusted JSON-like action object into an :class:`Action`
or a :class:`Rejected` carrying its ``action_error`` message (the words of the original,
``ajay-sreeram/timetable_planner``, but for the differences listed below); it never
raises. :func:`check_action` then says whether a parsed action is invalid (with its
message), a valid no-op, or valid, against the current timetable; the first failing rule
decides. Neither changes anything:
:mod:`~meeting_gym.envs.timetable_planner.domain.episode` applies the action.

Coercion (RULES 4.1): ids are stripped strings (a non-string becomes its ``str()``); a
day is an integer or a day label matched without case; a start slot is an integer.
Where we differ from the original, deliberately:

* **D16 fixed**: a float day or start slot with a fractional part (``0.9``, ``-0.5``) is
  an ``action_error`` (``day must be an integer ...``), no longer truncated toward zero.
  A float that is a whole number (``2.0``) is that integer, as JSON does not tell
  ``2.0`` from ``2``.
* A day or start slot that is given but is no day or integer (``"Sun"``, ``true``,
  ``"1.5"``) is named with its value and what it may be (``day must be an integer
  (0-based, 0 to 4) or a day name (Mon, Tue, Wed, Thu, Fri), got 'Sun'``). The original
  said ``missing required fields: day ...`` of a field that was there. Only an absent or
  ``null`` field is missing. The penalty is the same (an invalid action).
* An action object with a key outside :data:`ACTION_FIELDS`, or that is not an object at
  all, is an ``action_error`` (``unknown field(s): ...``). The original's pydantic model
  refused it before ``step`` (HTTP 422, no budget used); an env step must answer it.
* Ids echoed in a message are cut at 100 characters, so a huge string does not come back
  whole in every observation.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from meeting_gym.envs.timetable_planner.domain.problem import Problem, Spot
from meeting_gym.envs.timetable_planner.domain.scoring import Timetable

__all__ = [
    "ACTION_FIELDS",
    "ACTION_TYPES",
    "APPLY",
    "INVALID",
    "NOOP",
    "Action",
    "Check",
    "Rejected",
    "check_action",
    "parse_action",
]

ACTION_TYPES = (
    "assign_session",
    "move_session",
    "swap_sessions",
    "unassign_session",
    "submit_timetable",
)
ACTION_FIELDS = (
    "action_type",
    "session_id",
    "day",
    "start_slot",
    "room_id",
    "target_session_id",
    "metadata",
)
"""The keys an action object may have (``metadata`` is accepted and ignored)."""

DAY_FIELD = "day (0-based int or name like Mon)"
"""How a missing day is named in ``missing required fields: ...`` (the original's words)."""

MAX_ECHO = 100

_PLACE = ("session_id", "day", "start_slot", "room_id")
_NEEDS = {
    "assign_session": _PLACE,
    "move_session": _PLACE,
    "swap_sessions": ("session_id", "target_session_id"),
    "unassign_session": ("session_id",),
    "submit_timetable": (),
}

APPLY, NOOP, INVALID = "apply", "noop", "invalid"


@dataclass(frozen=True)
class Action:
    """A parsed action: ``action_type`` and the fields it uses (the others None).

    ``assign_session`` / ``move_session`` use ``session_id``, ``day``, ``start_slot``,
    ``room_id``; ``swap_sessions`` uses ``session_id`` and ``target_session_id``;
    ``unassign_session`` uses ``session_id``; ``submit_timetable`` none.
    """

    action_type: str
    session_id: str | None = None
    day: int | None = None
    start_slot: int | None = None
    room_id: str | None = None
    target_session_id: str | None = None

    def __post_init__(self) -> None:
        needed = _NEEDS.get(self.action_type)
        if needed is None:
            raise ValueError(f"unknown action_type {self.action_type!r}")
        for name in needed:
            if getattr(self, name) is None:
                raise ValueError(f"{self.action_type} needs {name}")

    @classmethod
    def assign(cls, session_id: str, day: int, start_slot: int, room_id: str) -> Action:
        return cls("assign_session", session_id, day, start_slot, room_id)

    @classmethod
    def move(cls, session_id: str, day: int, start_slot: int, room_id: str) -> Action:
        return cls("move_session", session_id, day, start_slot, room_id)

    @classmethod
    def swap(cls, session_id: str, target_session_id: str) -> Action:
        return cls("swap_sessions", session_id, target_session_id=target_session_id)

    @classmethod
    def unassign(cls, session_id: str) -> Action:
        return cls("unassign_session", session_id)

    @classmethod
    def submit(cls) -> Action:
        return cls("submit_timetable")

    def to_dict(self) -> dict[str, Any]:
        """The JSON action object (only the fields this type uses)."""
        out: dict[str, Any] = {"action_type": self.action_type}
        for key in ("session_id", "day", "start_slot", "room_id", "target_session_id"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


@dataclass(frozen=True)
class Rejected:
    """An action that could not be parsed; ``message`` is its ``action_error``."""

    message: str


@dataclass(frozen=True)
class Check:
    """The verdict on a parsed action: :data:`APPLY`, :data:`NOOP` or :data:`INVALID`.

    ``error`` is the ``action_error`` of an invalid action. For a valid one, ``session`` and
    ``target`` are the session indices it names and ``spot`` the (day, start, room index)
    of an assign or move.
    """

    verdict: str
    error: str | None = None
    session: int | None = None
    target: int | None = None
    spot: Spot | None = None


# ---------------------------------------------------------------------------- coercion

_MISSING = object()


@dataclass(frozen=True)
class _Fraction:
    """A float with a fractional part, given for an integer field (defect D16)."""

    value: float


@dataclass(frozen=True)
class _Invalid:
    """A value given for ``day`` or ``start_slot`` that is none of the values it may take.

    The original called such a field missing (``"day": "Sun"`` got ``missing required
    fields: day``); the field is there, so the message names it, its value and what it
    may be instead.
    """

    value: Any


def _echo(text: str) -> str:
    if len(text) <= MAX_ECHO:
        return text
    return f"{text[:MAX_ECHO]}... ({len(text)} characters)"


def _text(value: Any) -> str | None:
    """The original's text coercion: None or blank is missing, anything else str()ipped."""
    if value is None:
        return None
    if isinstance(value, str):
        return value.strip() or None
    try:
        return str(value).strip() or None
    except ValueError:  # str() of an int over 4300 digits
        return None


def _integer(value: Any) -> int | _Fraction | _Invalid | None:
    """The original's integer coercion, except that a fraction is no longer truncated
    and a value given that is no integer is :class:`_Invalid`, not missing (``None``)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return _Invalid(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return _Invalid(value)
        if not value.is_integer():
            return _Fraction(value)
        return int(value)
    try:
        return int(str(value).strip())
    except (ValueError, TypeError, OverflowError):
        return _Invalid(value)


def _day(value: Any, day_labels: Sequence[str]) -> int | _Fraction | _Invalid | None:
    number = _integer(value)
    if not isinstance(number, _Invalid) or isinstance(value, bool):
        return number
    text = _text(value)
    if text is not None:
        needle = text.lower()
        for index, label in enumerate(day_labels):
            if label.lower() == needle:
                return index
    return number


def _shown(value: Any) -> str:
    """``value`` as a message quotes it, cut like an echoed id."""
    try:
        return _echo(repr(value))
    except ValueError:  # repr() of an int over 4300 digits
        return f"a {type(value).__name__}"


def _day_error(value: Any, day_labels: Sequence[str]) -> str:
    names = ", ".join(day_labels)
    last = len(day_labels) - 1
    return (
        f"day must be an integer (0-based, 0 to {last}) or a day name ({names}), "
        f"got {_shown(value)}"
    )


def parse_action(raw: Any, day_labels: Sequence[str]) -> Action | Rejected:
    """Parse an action object (RULES 4.1); never raises.

    ``day_labels`` are the grid's day names, which a ``day`` may be given as.
    """
    if not isinstance(raw, Mapping):
        return Rejected(
            f"an action must be a JSON object with an action_type, got {_echo(_kind(raw))}"
        )
    unknown = [key for key in raw if key not in ACTION_FIELDS]
    if unknown:
        names = ", ".join(_echo(_text(key) or repr(key)) for key in unknown[:5])
        return Rejected(f"unknown field(s): {names} (allowed: {', '.join(ACTION_FIELDS)})")
    metadata = raw.get("metadata")
    if metadata is not None and not isinstance(metadata, Mapping):
        return Rejected("metadata must be an object")

    action_type = _text(raw.get("action_type"))
    if action_type is None:
        return Rejected("action_type is required")
    if action_type not in ACTION_TYPES:
        return Rejected(f"Unknown action_type: {_echo(action_type)}")

    if action_type in ("assign_session", "move_session"):
        session_id = _text(raw.get("session_id"))
        day = _day(raw.get("day"), day_labels)
        start = _integer(raw.get("start_slot"))
        room_id = _text(raw.get("room_id"))
        named = (
            ("session_id", session_id),
            (DAY_FIELD, day),
            ("start_slot", start),
            ("room_id", room_id),
        )
        missing = [name for name, value in named if value is None]
        if missing:
            return Rejected(f"missing required fields: {', '.join(missing)}")
        if isinstance(day, (_Fraction, _Invalid)):
            return Rejected(_day_error(day.value, day_labels))
        if isinstance(start, (_Fraction, _Invalid)):
            return Rejected(f"start_slot must be an integer (0-based), got {_shown(start.value)}")
        assert isinstance(day, int) and isinstance(start, int)
        assert session_id is not None and room_id is not None
        return Action(action_type, session_id, day, start, room_id)

    if action_type == "swap_sessions":
        session_id = _text(raw.get("session_id"))
        target_id = _text(raw.get("target_session_id"))
        if session_id is None or target_id is None:
            return Rejected("swap_sessions requires session_id and target_session_id")
        return Action(action_type, session_id, target_session_id=target_id)

    if action_type == "unassign_session":
        session_id = _text(raw.get("session_id"))
        if session_id is None:
            return Rejected("unassign_session requires session_id")
        return Action(action_type, session_id)

    return Action(action_type)


def _kind(value: Any) -> str:
    if isinstance(value, str):
        return f"a string {value!r}"
    return f"a {type(value).__name__}"


# ---------------------------------------------------------------------------- validation


def check_action(problem: Problem, timetable: Timetable, action: Action) -> Check:
    """Validate a parsed action against the timetable (RULES 4.2); changes nothing."""
    kind = action.action_type
    if kind in ("assign_session", "move_session"):
        session = problem.session_index.get(action.session_id)
        if session is None:
            return Check(INVALID, f"Unknown session_id: {_echo(str(action.session_id))}")
        room = problem.room_index.get(action.room_id)
        if room is None:
            return Check(INVALID, f"Unknown room_id: {_echo(str(action.room_id))}")
        day, start = action.day, action.start_slot
        assert day is not None and start is not None  # Action.__post_init__
        if day < 0 or day >= problem.n_days:
            return Check(INVALID, "day is out of range")
        if start < 0 or start + problem.session_length[session] > problem.per_day:
            return Check(INVALID, "start_slot is out of range for session duration")
        current = timetable.spot(session)
        if kind == "assign_session" and current is not None:
            return Check(INVALID, "session already assigned; use move_session to relocate")
        if kind == "move_session" and current is None:
            return Check(INVALID, "session not assigned yet; use assign_session first")
        spot = (day, start, room)
        if current == spot:
            return Check(NOOP, session=session, spot=spot)
        return Check(APPLY, session=session, spot=spot)

    if kind == "swap_sessions":
        a = problem.session_index.get(action.session_id)
        if a is None:
            return Check(INVALID, f"Unknown session_id: {_echo(str(action.session_id))}")
        b = problem.session_index.get(action.target_session_id)
        if b is None:
            return Check(
                INVALID, f"Unknown target session_id: {_echo(str(action.target_session_id))}"
            )
        spot_a, spot_b = timetable.spot(a), timetable.spot(b)
        if spot_a is None:
            return Check(INVALID, f"session {problem.session_ids[a]} is not assigned")
        if spot_b is None:
            return Check(INVALID, f"session {problem.session_ids[b]} is not assigned")
        if a == b:
            return Check(NOOP, session=a, target=b)
        if spot_a[1] + problem.session_length[b] > problem.per_day:
            return Check(INVALID, "swap target slot is out of range for target duration")
        if spot_b[1] + problem.session_length[a] > problem.per_day:
            return Check(INVALID, "swap target slot is out of range for source duration")
        return Check(APPLY, session=a, target=b)

    if kind == "unassign_session":
        session = problem.session_index.get(action.session_id)
        if session is None:
            return Check(INVALID, f"Unknown session_id: {_echo(str(action.session_id))}")
        if session not in timetable:
            return Check(NOOP, session=session)
        return Check(APPLY, session=session)

    return Check(APPLY)  # submit_timetable: always valid, never a no-op
