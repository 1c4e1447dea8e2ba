"""The timetable scenario as a validated, immutable value (RULES sections 1 and 2).

A :class:`Scenario` is the scenario JSON of ``ajay-sreeram/timetable_planner`` (the env
this one succeeds), checked field by field and with its defaults filled in (a session's
``duration_in_slots`` 1, ``must_schedule`` true, ``valid_room_types`` [],
``required_capacity`` 0; a scenario's ``step_budget`` 30 and ``initial_assignments`` []).
:meth:`Scenario.from_dict` is the one door for untrusted data: it raises only
:class:`ScenarioError`, whose message starts with the path of the offending field, as
``scenario.sessions[3].duration_in_slots: ...``.
:meth:`Scenario.to_dict` writes the canonical JSON form back (defaults written out), and
``Scenario.from_dict(s.to_dict()) == s``.

What a scenario *means* once loaded (availability defaults, the disruption applied) is
:mod:`~meeting_gym.envs.timetable_planner.domain.problem`'s business; this module only says what
a well-formed scenario is. It is stricter than the original, which accepted anything
and failed (or silently did nothing) later:

* ids are non-empty strings without surrounding whitespace (an action's ids are stripped,
  so a padded id could never be named), unique within their list;
* every session names a known teacher and group; its duration fits in a day;
* slot maps have day-index keys ``"0"`` .. ``"D-1"`` and slots in ``0 .. P-1`` (a day-label
  key made the original's reset crash);
* ``task_name`` is one of :data:`DIFFICULTIES`;
* a disruption names a known teacher or room, adds a session with a new id, has one of
  the three types, and appears only in hard and expert scenarios (the original
  silently ignored the other cases);
* placements (``initial_assignments``, ``baseline_assignments``) name known sessions and
  rooms, fit in the grid and place each session at most once;
* unknown keys are refused, at every level (a misspelt ``avaliable_slots`` would
  otherwise mean "available everywhere").

Availability maps keep the original's distinction between absent (or null), which
means every slot, and ``{}``, which means none.

Why one module of about 610 lines: it is the one door for untrusted scenario data, and
every field's check is in it, so that what "well-formed" means is read in one place.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from meeting_gym.core.bounded import show as _show

__all__ = [
    "DIFFICULTIES",
    "DISRUPTION_TYPES",
    "Disruption",
    "Group",
    "Placement",
    "Room",
    "Scenario",
    "ScenarioError",
    "Session",
    "SlotMap",
    "Teacher",
    "cells_of",
    "content_key",
]

DIFFICULTIES = ("easy", "medium", "hard", "expert")
DISRUPTION_TYPES = ("teacher_unavailable", "room_unavailable", "new_session_added")
DISRUPTED_DIFFICULTIES = frozenset({"hard", "expert"})
"""The difficulties whose disruption is applied at load time (RULES section 2, step 4)."""

DEFAULT_STEP_BUDGET = 30
MAX_DAYS = 14
MAX_SLOTS_PER_DAY = 48
MAX_STEP_BUDGET = 100_000
MAX_ENTITIES = 1000
"""The most teachers, groups, rooms or sessions (each) a scenario may list, and the most
initial or baseline assignments: loading and scoring grow faster than linearly with
them, so the bound keeps one reset's work bounded (docs/guides/serving.md)."""

SlotMap = tuple[tuple[int, tuple[int, ...]], ...]
"""A slot map: (day index, slots) pairs, in the order given. JSON: ``{"0": [1, 2]}``."""

Cell = tuple[int, int]


class ScenarioError(ValueError):
    """A scenario's data is malformed; the message starts with the field's path."""


def cells_of(slot_map: SlotMap) -> frozenset[Cell]:
    """The (day, slot) cells of a slot map."""
    return frozenset((day, slot) for day, slots in slot_map for slot in slots)


# ---------------------------------------------------------------------------- the values


@dataclass(frozen=True)
class Teacher:
    teacher_id: str
    available_slots: SlotMap | None = None
    """None: every slot of the grid (the original's default for an absent map)."""
    preferred_slots: SlotMap | None = None
    """None: the same as the (defaulted) available slots."""


@dataclass(frozen=True)
class Group:
    group_id: str
    size: int
    """Shown to the agent; never used by the rules or the score (RULES section 1)."""


@dataclass(frozen=True)
class Room:
    room_id: str
    capacity: int
    room_type: str
    available_slots: SlotMap | None = None


@dataclass(frozen=True)
class Session:
    session_id: str
    teacher_id: str
    group_id: str
    valid_room_types: tuple[str, ...] = ()
    required_capacity: int = 0
    duration_in_slots: int = 1
    must_schedule: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "teacher_id": self.teacher_id,
            "group_id": self.group_id,
            "valid_room_types": list(self.valid_room_types),
            "required_capacity": self.required_capacity,
            "duration_in_slots": self.duration_in_slots,
            "must_schedule": self.must_schedule,
        }


@dataclass(frozen=True)
class Placement:
    """One session placed at (day, start_slot, room_id)."""

    session_id: str
    day: int
    start_slot: int
    room_id: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "day": self.day,
            "start_slot": self.start_slot,
            "room_id": self.room_id,
        }


@dataclass(frozen=True)
class Disruption:
    """The one change a hard or expert scenario applies at load time.

    ``teacher_unavailable`` and ``room_unavailable`` set ``target_id`` and ``slots``;
    ``new_session_added`` sets ``session``.
    """

    type: str
    target_id: str | None = None
    slots: SlotMap | None = None
    session: Session | None = None

    def to_dict(self) -> dict[str, Any]:
        if self.type == "new_session_added":
            assert self.session is not None
            return {"type": self.type, "session": self.session.to_dict()}
        key = "teacher_id" if self.type == "teacher_unavailable" else "room_id"
        assert self.slots is not None
        return {"type": self.type, key: self.target_id, "slots": _slot_map_to_dict(self.slots)}


@dataclass(frozen=True)
class Scenario:
    """A well-formed timetable scenario, defaults filled in (see the module docstring)."""

    scenario_id: str
    task_name: str
    days: tuple[str, ...]
    slots_per_day: int
    step_budget: int
    teachers: tuple[Teacher, ...]
    groups: tuple[Group, ...]
    rooms: tuple[Room, ...]
    sessions: tuple[Session, ...]
    initial_assignments: tuple[Placement, ...] = ()
    baseline_assignments: tuple[Placement, ...] = ()
    disruption: Disruption | None = None

    @property
    def difficulty(self) -> str:
        """The original's ``task_name``, under the family's name."""
        return self.task_name

    @classmethod
    def from_dict(cls, data: Any) -> Scenario:
        """Validate untrusted JSON-like data; raises only :class:`ScenarioError`."""
        return _load(data)

    def to_dict(self) -> dict[str, Any]:
        """The canonical JSON form (defaults written out); ``from_dict`` gives it back."""
        out: dict[str, Any] = {
            "scenario_id": self.scenario_id,
            "task_name": self.task_name,
            "grid": {"days": list(self.days), "slots_per_day": self.slots_per_day},
            "step_budget": self.step_budget,
            "teachers": [_teacher_to_dict(t) for t in self.teachers],
            "groups": [{"group_id": g.group_id, "size": g.size} for g in self.groups],
            "rooms": [_room_to_dict(r) for r in self.rooms],
            "sessions": [s.to_dict() for s in self.sessions],
            "initial_assignments": [p.to_dict() for p in self.initial_assignments],
        }
        if self.baseline_assignments:
            out["baseline_assignments"] = [p.to_dict() for p in self.baseline_assignments]
        if self.disruption is not None:
            out["disruption"] = self.disruption.to_dict()
        return out


def _slot_map_to_dict(slot_map: SlotMap) -> dict[str, list[int]]:
    return {str(day): list(slots) for day, slots in slot_map}


def _teacher_to_dict(teacher: Teacher) -> dict[str, Any]:
    out: dict[str, Any] = {"teacher_id": teacher.teacher_id}
    if teacher.available_slots is not None:
        out["available_slots"] = _slot_map_to_dict(teacher.available_slots)
    if teacher.preferred_slots is not None:
        out["preferred_slots"] = _slot_map_to_dict(teacher.preferred_slots)
    return out


def _room_to_dict(room: Room) -> dict[str, Any]:
    out: dict[str, Any] = {
        "room_id": room.room_id,
        "capacity": room.capacity,
        "room_type": room.room_type,
    }
    if room.available_slots is not None:
        out["available_slots"] = _slot_map_to_dict(room.available_slots)
    return out


# ---------------------------------------------------------------------------- validation

_DAY_KEY = re.compile(r"0|[1-9][0-9]*")
_INTEGER_TEXT = re.compile(r"\s*[+-]?[0-9]+\s*")

_TOP_KEYS = (
    "scenario_id",
    "task_name",
    "grid",
    "step_budget",
    "teachers",
    "groups",
    "rooms",
    "sessions",
    "initial_assignments",
    "baseline_assignments",
    "disruption",
)
_REQUIRED_TOP = ("scenario_id", "task_name", "grid", "teachers", "groups", "rooms", "sessions")
_SESSION_KEYS = (
    "session_id",
    "teacher_id",
    "group_id",
    "valid_room_types",
    "required_capacity",
    "duration_in_slots",
    "must_schedule",
)
_PLACEMENT_KEYS = ("session_id", "day", "start_slot", "room_id")


def _fail(path: str, message: str) -> ScenarioError:
    return ScenarioError(f"{path}: {message}")


def _object(path: str, value: Any, allowed: Sequence[str], required: Sequence[str]) -> Mapping:
    if not isinstance(value, Mapping):
        raise _fail(path, f"must be an object, got {_show(value)}")
    for key in value:
        if key not in allowed:
            raise _fail(path, f"unknown field {_show(key)} (allowed: {', '.join(allowed)})")
    for key in required:
        if key not in value:
            raise _fail(f"{path}.{key}", "missing")
    return value


def _entities(path: str, value: Any) -> list[Any]:
    """A list of at most :data:`MAX_ENTITIES` entries."""
    items = _list(path, value)
    if len(items) > MAX_ENTITIES:
        raise _fail(path, f"lists {len(items)} entries, over MAX_ENTITIES ({MAX_ENTITIES})")
    return items


def _list(path: str, value: Any) -> list[Any]:
    if not isinstance(value, list | tuple):
        raise _fail(path, f"must be a list, got {_show(value)}")
    return list(value)


def _int(path: str, value: Any, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(path, f"must be an integer, got {_show(value)}")
    if value < low or (high is not None and value > high):
        bounds = f"from {low} to {high}" if high is not None else f">= {low}"
        raise _fail(path, f"must be an integer {bounds}, got {_show(value)}")
    return int(value)


def _id(path: str, value: Any) -> str:
    if not isinstance(value, str) or not value or value != value.strip():
        raise _fail(
            path, f"must be a non-empty string without surrounding spaces, got {_show(value)}"
        )
    return value


def _bool(path: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise _fail(path, f"must be true or false, got {_show(value)}")
    return value


def _unique(path: str, ids: Sequence[str], what: str) -> None:
    seen: set[str] = set()
    for index, item_id in enumerate(ids):
        if item_id in seen:
            raise _fail(f"{path}[{index}].{what}", f"duplicate id {_show(item_id)}")
        seen.add(item_id)


def _slot_map(path: str, value: Any, days: int, slots_per_day: int) -> SlotMap:
    if not isinstance(value, Mapping):
        raise _fail(path, f"must be an object mapping a day index to slots, got {_show(value)}")
    out = []
    for key, slots in value.items():
        if not isinstance(key, str) or not _DAY_KEY.fullmatch(key) or int(key) >= days:
            raise _fail(
                path,
                f"day key {_show(key)} must be a day index written as a string, "
                f'"0" .. "{days - 1}"',
            )
        items = _list(f'{path}["{key}"]', slots)
        checked = tuple(
            _int(f'{path}["{key}"][{i}]', slot, 0, slots_per_day - 1)
            for i, slot in enumerate(items)
        )
        out.append((int(key), checked))
    return tuple(out)


def _optional_slot_map(path: str, data: Mapping, key: str, days: int, per_day: int) -> Any:
    value = data.get(key)
    return None if value is None else _slot_map(f"{path}.{key}", value, days, per_day)


def _session(path: str, value: Any, teachers: set[str], groups: set[str], per_day: int) -> Session:
    data = _object(path, value, _SESSION_KEYS, ("session_id", "teacher_id", "group_id"))
    session_id = _id(f"{path}.session_id", data["session_id"])
    teacher_id = _id(f"{path}.teacher_id", data["teacher_id"])
    if teacher_id not in teachers:
        raise _fail(f"{path}.teacher_id", f"unknown teacher {_show(teacher_id)}")
    group_id = _id(f"{path}.group_id", data["group_id"])
    if group_id not in groups:
        raise _fail(f"{path}.group_id", f"unknown group {_show(group_id)}")
    types = _list(f"{path}.valid_room_types", data.get("valid_room_types", []))
    valid = tuple(_id(f"{path}.valid_room_types[{i}]", t) for i, t in enumerate(types))
    return Session(
        session_id=session_id,
        teacher_id=teacher_id,
        group_id=group_id,
        valid_room_types=valid,
        required_capacity=_int(f"{path}.required_capacity", data.get("required_capacity", 0), 0),
        duration_in_slots=_int(
            f"{path}.duration_in_slots", data.get("duration_in_slots", 1), 1, per_day
        ),
        must_schedule=_bool(f"{path}.must_schedule", data.get("must_schedule", True)),
    )


def _placements(
    path: str,
    value: Any,
    sessions: Mapping[str, Session],
    rooms: set[str],
    days: int,
    per_day: int,
) -> tuple[Placement, ...]:
    out = []
    placed: set[str] = set()
    for index, item in enumerate(_entities(path, value)):
        where = f"{path}[{index}]"
        data = _object(where, item, _PLACEMENT_KEYS, _PLACEMENT_KEYS)
        session_id = _id(f"{where}.session_id", data["session_id"])
        session = sessions.get(session_id)
        if session is None:
            raise _fail(f"{where}.session_id", f"unknown session {_show(session_id)}")
        if session_id in placed:
            raise _fail(f"{where}.session_id", f"session {session_id} is placed twice")
        placed.add(session_id)
        day = _int(f"{where}.day", data["day"], 0, days - 1)
        last_start = per_day - session.duration_in_slots
        start = _int(f"{where}.start_slot", data["start_slot"], 0, last_start)
        room_id = _id(f"{where}.room_id", data["room_id"])
        if room_id not in rooms:
            raise _fail(f"{where}.room_id", f"unknown room {_show(room_id)}")
        out.append(Placement(session_id, day, start, room_id))
    return tuple(out)


def _disruption(
    value: Any,
    task_name: str,
    teachers: set[str],
    groups: set[str],
    rooms: set[str],
    sessions: set[str],
    days: int,
    per_day: int,
) -> Disruption:
    path = "scenario.disruption"
    if not isinstance(value, Mapping):
        raise _fail(path, f"must be an object, got {_show(value)}")
    if "type" not in value:
        raise _fail(f"{path}.type", "missing")
    kind = value["type"]
    if kind not in DISRUPTION_TYPES:
        raise _fail(
            f"{path}.type", f"must be one of {', '.join(DISRUPTION_TYPES)}, got {_show(kind)}"
        )
    if task_name not in DISRUPTED_DIFFICULTIES:
        raise _fail(
            path, f"only hard and expert scenarios have a disruption (task_name is {task_name!r})"
        )
    if kind == "new_session_added":
        data = _object(path, value, ("type", "session"), ("session",))
        session = _session(f"{path}.session", data["session"], teachers, groups, per_day)
        if session.session_id in sessions:
            raise _fail(f"{path}.session.session_id", f"duplicate id {_show(session.session_id)}")
        return Disruption(kind, session=session)
    key, known, what = (
        ("teacher_id", teachers, "teacher")
        if kind == "teacher_unavailable"
        else ("room_id", rooms, "room")
    )
    data = _object(path, value, ("type", key, "slots"), (key, "slots"))
    target = _id(f"{path}.{key}", data[key])
    if target not in known:
        raise _fail(f"{path}.{key}", f"unknown {what} {_show(target)}")
    slots = _slot_map(f"{path}.slots", data["slots"], days, per_day)
    return Disruption(kind, target_id=target, slots=slots)


def _or_empty(value: Any) -> Any:
    return [] if value is None else value


def _load(data: Any) -> Scenario:
    top = _object("scenario", data, _TOP_KEYS, _REQUIRED_TOP)
    scenario_id = _id("scenario.scenario_id", top["scenario_id"])
    task_name = top["task_name"]
    if task_name not in DIFFICULTIES:
        raise _fail(
            "scenario.task_name",
            f"must be one of {', '.join(DIFFICULTIES)}, got {_show(task_name)}",
        )

    grid = _object(
        "scenario.grid", top["grid"], ("days", "slots_per_day"), ("days", "slots_per_day")
    )
    labels = _list("scenario.grid.days", grid["days"])
    if not 1 <= len(labels) <= MAX_DAYS:
        raise _fail(
            "scenario.grid.days", f"must list 1 to {MAX_DAYS} day labels, got {len(labels)}"
        )
    days = tuple(_id(f"scenario.grid.days[{i}]", label) for i, label in enumerate(labels))
    folded: set[str] = set()
    for index, label in enumerate(days):
        # actions name a day by a case-insensitive label or by its index: both must be unambiguous
        if label.lower() in folded:
            raise _fail(
                f"scenario.grid.days[{index}]", f"duplicate label {label!r} (ignoring case)"
            )
        if _INTEGER_TEXT.fullmatch(label):
            raise _fail(
                f"scenario.grid.days[{index}]", f"a label cannot be an integer, got {label!r}"
            )
        folded.add(label.lower())
    per_day = _int("scenario.grid.slots_per_day", grid["slots_per_day"], 1, MAX_SLOTS_PER_DAY)
    n_days = len(days)
    budget = _int(
        "scenario.step_budget", top.get("step_budget", DEFAULT_STEP_BUDGET), 1, MAX_STEP_BUDGET
    )

    teachers = []
    for index, item in enumerate(_entities("scenario.teachers", top["teachers"])):
        path = f"scenario.teachers[{index}]"
        entry = _object(
            path, item, ("teacher_id", "available_slots", "preferred_slots"), ("teacher_id",)
        )
        teachers.append(
            Teacher(
                _id(f"{path}.teacher_id", entry["teacher_id"]),
                _optional_slot_map(path, entry, "available_slots", n_days, per_day),
                _optional_slot_map(path, entry, "preferred_slots", n_days, per_day),
            )
        )
    _unique("scenario.teachers", [t.teacher_id for t in teachers], "teacher_id")

    groups = []
    for index, item in enumerate(_entities("scenario.groups", top["groups"])):
        path = f"scenario.groups[{index}]"
        entry = _object(path, item, ("group_id", "size"), ("group_id", "size"))
        groups.append(
            Group(
                _id(f"{path}.group_id", entry["group_id"]), _int(f"{path}.size", entry["size"], 0)
            )
        )
    _unique("scenario.groups", [g.group_id for g in groups], "group_id")

    rooms = []
    for index, item in enumerate(_entities("scenario.rooms", top["rooms"])):
        path = f"scenario.rooms[{index}]"
        allowed = ("room_id", "capacity", "room_type", "available_slots")
        entry = _object(path, item, allowed, allowed[:3])
        rooms.append(
            Room(
                _id(f"{path}.room_id", entry["room_id"]),
                _int(f"{path}.capacity", entry["capacity"], 0),
                _id(f"{path}.room_type", entry["room_type"]),
                _optional_slot_map(path, entry, "available_slots", n_days, per_day),
            )
        )
    _unique("scenario.rooms", [r.room_id for r in rooms], "room_id")

    teacher_ids = {t.teacher_id for t in teachers}
    group_ids = {g.group_id for g in groups}
    room_ids = {r.room_id for r in rooms}
    session_items = _entities("scenario.sessions", top["sessions"])
    sessions = tuple(
        _session(f"scenario.sessions[{i}]", item, teacher_ids, group_ids, per_day)
        for i, item in enumerate(session_items)
    )
    _unique("scenario.sessions", [s.session_id for s in sessions], "session_id")

    disruption = None
    if top.get("disruption") is not None:
        disruption = _disruption(
            top["disruption"],
            task_name,
            teacher_ids,
            group_ids,
            room_ids,
            {s.session_id for s in sessions},
            n_days,
            per_day,
        )
    by_id = {s.session_id: s for s in sessions}
    if disruption is not None and disruption.session is not None:
        by_id[disruption.session.session_id] = disruption.session

    initial = _placements(
        "scenario.initial_assignments",
        _or_empty(top.get("initial_assignments")),
        by_id,
        room_ids,
        n_days,
        per_day,
    )
    baseline = _placements(
        "scenario.baseline_assignments",
        _or_empty(top.get("baseline_assignments")),
        by_id,
        room_ids,
        n_days,
        per_day,
    )
    return Scenario(
        scenario_id=scenario_id,
        task_name=task_name,
        days=days,
        slots_per_day=per_day,
        step_budget=budget,
        teachers=tuple(teachers),
        groups=tuple(groups),
        rooms=tuple(rooms),
        sessions=sessions,
        initial_assignments=initial,
        baseline_assignments=baseline,
        disruption=disruption,
    )


def content_key(scenario: Scenario) -> str:
    """An id of a scenario's content (its id left out): equal content, equal key."""
    data = scenario.to_dict()
    data.pop("scenario_id")
    text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return f"{scenario.task_name}:{hashlib.sha256(text.encode()).hexdigest()[:20]}"
