"""The scenario model: attendees, working hours, busy calendars, window, duration.

A scenario is loaded from (and exported to) the plain JSON shape that
meeting-slot, the verifiers environment MeetingSlot succeeds, used. Loading
validates everything and raises one :class:`ScenarioError` that names the
offending field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from meeting_gym.envs.meeting_slot.domain import zones
from meeting_gym.envs.meeting_slot.domain.timeutil import format_hm, parse_date, parse_hm

MIN_YEAR, MAX_YEAR = 1900, 2200
MAX_WINDOW_DAYS = 366

Block = tuple[int, int]
"""A local interval [start, end) in minutes after local midnight."""


class ScenarioError(ValueError):
    """A scenario dict is malformed; the message names the field."""


@dataclass(frozen=True)
class Attendee:
    name: str
    timezone: str
    work_start: int
    work_end: int
    weekdays: tuple[int, ...]
    busy: Mapping[date, tuple[Block, ...]] = field(default_factory=dict)

    def busy_on(self, day: date) -> tuple[Block, ...]:
        return self.busy.get(day, ())


@dataclass(frozen=True)
class Scenario:
    duration_minutes: int
    window_start: date
    window_days: int
    attendees: tuple[Attendee, ...]
    id: str | None = None
    difficulty: str | None = None

    @property
    def window_end(self) -> date:
        """The last UTC date of the window (inclusive)."""
        return self.window_start + timedelta(days=self.window_days - 1)

    def attendee(self, name: str) -> Attendee | None:
        """Look an attendee up by name, exactly first, then case-insensitively."""
        for person in self.attendees:
            if person.name == name:
                return person
        folded = name.strip().casefold()
        for person in self.attendees:
            if person.name.casefold() == folded:
                return person
        return None

    @classmethod
    def from_dict(cls, data: Any) -> Scenario:
        return _load(data)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.id is not None:
            out["id"] = self.id
        if self.difficulty is not None:
            out["difficulty"] = self.difficulty
        out.update(
            duration_minutes=self.duration_minutes,
            window_start=self.window_start.isoformat(),
            window_days=self.window_days,
            world={"attendees": [_attendee_dict(a) for a in self.attendees]},
        )
        return out


def _attendee_dict(person: Attendee) -> dict[str, Any]:
    return {
        "name": person.name,
        "timezone": person.timezone,
        "working_hours": {
            "start": format_hm(person.work_start),
            "end": format_hm(person.work_end),
            "weekdays": list(person.weekdays),
        },
        "busy": {
            day.isoformat(): [{"start": format_hm(s), "end": format_hm(e)} for s, e in blocks]
            for day, blocks in sorted(person.busy.items())
        },
    }


# --------------------------------------------------------------------------- loading


def _fail(where: str, why: str) -> ScenarioError:
    return ScenarioError(f"scenario.{where}: {why}")


def _get(obj: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in obj:
        raise _fail(f"{where}.{key}" if where else key, "missing")
    return obj[key]


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _fail(where, f"expected an object, got {type(value).__name__}")
    return value


def _positive_int(value: Any, where: str, upper: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(where, f"expected a positive integer, got {value!r}")
    if value <= 0:
        raise _fail(where, f"must be positive, got {value}")
    if upper is not None and value > upper:
        raise _fail(where, f"must be at most {upper}, got {value}")
    return value


def _time(value: Any, where: str, *, end: bool) -> int:
    try:
        return parse_hm(value, allow_24=end)
    except ValueError as exc:
        raise _fail(where, str(exc)) from None


def _day(value: Any, where: str) -> date:
    try:
        day = parse_date(value)
    except ValueError as exc:
        raise _fail(where, str(exc)) from None
    if not MIN_YEAR <= day.year <= MAX_YEAR:
        raise _fail(where, f"year must be within {MIN_YEAR}..{MAX_YEAR}, got {value!r}")
    return day


def _interval(value: Any, where: str) -> Block:
    obj = _mapping(value, where)
    start = _time(_get(obj, "start", where), f"{where}.start", end=False)
    end = _time(_get(obj, "end", where), f"{where}.end", end=True)
    if start >= end:
        raise _fail(where, f"start {obj['start']} must be before end {obj['end']}")
    return start, end


def _load_attendee(value: Any, where: str) -> Attendee:
    obj = _mapping(value, where)
    name = _get(obj, "name", where)
    if not isinstance(name, str) or not name.strip():
        raise _fail(f"{where}.name", f"expected a non-empty string, got {name!r}")
    tz = _get(obj, "timezone", where)
    if not isinstance(tz, str) or not zones.is_known(tz):
        raise _fail(f"{where}.timezone", f"unknown IANA time zone {tz!r}")
    hours_where = f"{where}.working_hours"
    hours = _mapping(_get(obj, "working_hours", where), hours_where)
    work_start, work_end = _interval(hours, hours_where)
    weekdays = _get(hours, "weekdays", hours_where)
    if not isinstance(weekdays, list | tuple):
        raise _fail(f"{hours_where}.weekdays", f"expected a list, got {weekdays!r}")
    for wd in weekdays:
        if isinstance(wd, bool) or not isinstance(wd, int) or not 0 <= wd <= 6:
            raise _fail(f"{hours_where}.weekdays", f"weekday must be an integer 0..6, got {wd!r}")
    busy_raw = obj.get("busy")
    busy_raw = {} if busy_raw is None else busy_raw
    busy_where = f"{where}.busy"
    busy: dict[date, tuple[Block, ...]] = {}
    for key, blocks in _mapping(busy_raw, busy_where).items():
        day = _day(key, f"{busy_where}[{key!r}]")
        if not isinstance(blocks, list | tuple):
            raise _fail(f"{busy_where}[{key!r}]", f"expected a list of blocks, got {blocks!r}")
        parsed = tuple(_interval(b, f"{busy_where}[{key!r}][{i}]") for i, b in enumerate(blocks))
        if parsed:
            busy[day] = tuple(sorted(parsed))
    return Attendee(
        name=name,
        timezone=tz,
        work_start=work_start,
        work_end=work_end,
        weekdays=tuple(sorted(set(weekdays))),
        busy=busy,
    )


def _load(data: Any) -> Scenario:
    obj = _mapping(data, "<root>")
    duration = _positive_int(_get(obj, "duration_minutes", ""), "duration_minutes")
    window_start = _day(_get(obj, "window_start", ""), "window_start")
    window_days = _positive_int(_get(obj, "window_days", ""), "window_days", MAX_WINDOW_DAYS)
    world = _mapping(_get(obj, "world", ""), "world")
    people = _get(world, "attendees", "world")
    if not isinstance(people, list | tuple):
        raise _fail("world.attendees", f"expected a list, got {type(people).__name__}")
    if not people:
        raise _fail("world.attendees", "needs at least one attendee")
    attendees = tuple(_load_attendee(p, f"world.attendees[{i}]") for i, p in enumerate(people))
    seen: set[str] = set()
    for i, person in enumerate(attendees):
        folded = person.name.casefold()
        if folded in seen:
            raise _fail(f"world.attendees[{i}].name", f"duplicate attendee name {person.name!r}")
        seen.add(folded)
    for key in ("id", "difficulty"):
        if obj.get(key) is not None and not isinstance(obj[key], str):
            raise _fail(key, f"expected a string, got {obj[key]!r}")
    return Scenario(
        duration_minutes=duration,
        window_start=window_start,
        window_days=window_days,
        attendees=attendees,
        id=obj.get("id"),
        difficulty=obj.get("difficulty"),
    )
