"""The discrete action table of MeetingSlot: every tool call and every answer, one index each.

For bounds ``A`` attendees, ``D`` window days and a ``G``-minute answer grid
(``S = D * 1440 // G`` answer slots, ``J = D + 2`` local dates), the layout is::

    0                              list_attendees()
    1 + i                          get_timezone(attendee i)            i < A
    1 + A + i                      get_working_hours(attendee i)       i < A
    1 + 2A + i*J + j               get_busy(attendee i, local date j)  j < J
    1 + 2A + A*J + k               answer(window start + k*G minutes)  k < S
    1 + 2A + A*J + S               answer(NONE)

Attendee ``i`` is the i-th name ``list_attendees`` returns; local date ``j`` is
the day before the UTC window plus ``j`` days (so ``j = 0`` is the day before
the window and ``j = window_days + 1`` the day after it). With the defaults
(4, 5, 15) there are 37 tool actions and 481 answer actions, 518 in all.

Everything here is plain Python over a scenario; no gymnasium, no numpy.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from meeting_gym.envs.meeting_slot.domain.scenario import Scenario
from meeting_gym.envs.meeting_slot.domain.solver import window_bounds
from meeting_gym.envs.meeting_slot.domain.timeutil import format_utc
from meeting_gym.envs.meeting_slot.rubric import NONE, parse_answer

ATTENDEE_TOOLS = ("get_timezone", "get_working_hours")
KINDS = ("list_attendees", "get_timezone", "get_working_hours", "get_busy", "answer")


@dataclass(frozen=True)
class Action:
    """A decoded action. ``slot`` is the answer index ``k`` (None for answer(NONE))."""

    kind: str
    attendee: int | None = None
    day: int | None = None
    slot: int | None = None


def placeholder_name(attendee: int) -> str:
    """The name sent for an attendee slot the scenario does not fill (the tool says so)."""
    return f"#{attendee}"


class ActionTable:
    """Index <-> action for fixed bounds; :meth:`call` turns an index into a tool call or answer."""

    def __init__(self, max_attendees: int = 4, max_window_days: int = 5, grid_minutes: int = 15):
        for label, value in (
            ("max_attendees", max_attendees),
            ("max_window_days", max_window_days),
            ("grid_minutes", grid_minutes),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{label} must be a positive integer, got {value!r}")
        if 1440 % grid_minutes:
            raise ValueError(f"grid_minutes must divide 1440, got {grid_minutes}")
        self.max_attendees = max_attendees
        self.max_window_days = max_window_days
        self.grid_minutes = grid_minutes
        self.grid_seconds = grid_minutes * 60
        self.slots_per_day = 1440 // grid_minutes
        self.n_dates = max_window_days + 2
        self.n_slots = max_window_days * self.slots_per_day
        a = max_attendees
        self.timezone_offset = 1
        self.hours_offset = 1 + a
        self.busy_offset = 1 + 2 * a
        self.answer_offset = self.busy_offset + a * self.n_dates
        self.none_index = self.answer_offset + self.n_slots
        self.n = self.none_index + 1
        # The layout is fixed, so every index is decoded once here, not on every step.
        self._actions = tuple(self._decode(index) for index in range(self.n))

    @property
    def n_tools(self) -> int:
        """Tool actions come first: indices ``0 .. n_tools - 1``."""
        return self.answer_offset

    # ------------------------------------------------------------------ index <-> action

    def decode(self, index: int) -> Action:
        if not 0 <= index < self.n:
            raise IndexError(f"action {index} outside 0..{self.n - 1}")
        return self._actions[index]

    def _decode(self, index: int) -> Action:
        if index == 0:
            return Action("list_attendees")
        if index < self.hours_offset:
            return Action("get_timezone", attendee=index - self.timezone_offset)
        if index < self.busy_offset:
            return Action("get_working_hours", attendee=index - self.hours_offset)
        if index < self.answer_offset:
            attendee, day = divmod(index - self.busy_offset, self.n_dates)
            return Action("get_busy", attendee=attendee, day=day)
        if index < self.none_index:
            return Action("answer", slot=index - self.answer_offset)
        return Action("answer")

    def encode(self, action: Action) -> int:
        kind, i, j, k = action.kind, action.attendee, action.day, action.slot
        if kind == "list_attendees":
            return 0
        if kind in ATTENDEE_TOOLS or kind == "get_busy":
            if i is None or not 0 <= i < self.max_attendees:
                raise ValueError(f"attendee slot {i!r} outside 0..{self.max_attendees - 1}")
            if kind == "get_timezone":
                return self.timezone_offset + i
            if kind == "get_working_hours":
                return self.hours_offset + i
            if j is None or not 0 <= j < self.n_dates:
                raise ValueError(f"date index {j!r} outside 0..{self.n_dates - 1}")
            return self.busy_offset + i * self.n_dates + j
        if kind == "answer":
            if k is None:
                return self.none_index
            if not 0 <= k < self.n_slots:
                raise ValueError(f"answer slot {k!r} outside 0..{self.n_slots - 1}")
            return self.answer_offset + k
        raise ValueError(f"unknown action kind {kind!r}; choose one of {KINDS}")

    # ------------------------------------------------------------------ against a scenario

    def first_date(self, scenario: Scenario) -> date:
        return scenario.window_start - timedelta(days=1)

    def attendee_name(self, scenario: Scenario, attendee: int) -> str:
        people = scenario.attendees
        return people[attendee].name if attendee < len(people) else placeholder_name(attendee)

    def call(self, index: int, scenario: Scenario) -> tuple[str, Any]:
        """``("tool", (name, arguments))`` or ``("answer", "<answer>...</answer>")``."""
        action = self.decode(index)
        if action.kind == "answer":
            if action.slot is None:
                return "answer", f"<answer>{NONE}</answer>"
            start = window_bounds(scenario)[0] + action.slot * self.grid_seconds
            return "answer", f"<answer>{format_utc(start)}</answer>"
        arguments: dict[str, str] = {}
        if action.attendee is not None:
            arguments["name"] = self.attendee_name(scenario, action.attendee)
        if action.day is not None:
            day = self.first_date(scenario) + timedelta(days=action.day)
            arguments["date"] = day.isoformat()
        return "tool", (action.kind, arguments)

    def describe(self, index: int, scenario: Scenario | None = None) -> str:
        """Readable text for an index, e.g. ``get_busy(Ava, 2024-03-11)``.

        Without a scenario, attendees show as ``#i`` and dates as ``day-1``,
        ``day+0``, ... relative to the window start.
        """
        action = self.decode(index)
        if scenario is not None:
            return self.describe_call(*self.call(index, scenario))
        parts = []
        if action.attendee is not None:
            parts.append(placeholder_name(action.attendee))
        if action.day is not None:
            parts.append(f"day{action.day - 1:+d}")
        if action.kind == "answer":
            parts.append(NONE if action.slot is None else f"+{action.slot * self.grid_minutes}min")
        return f"{action.kind}({', '.join(parts)})"

    @staticmethod
    def describe_call(kind: str, payload: Any) -> str:
        """Readable text for the output of :meth:`call`."""
        if kind == "answer":
            return f"answer({payload[len('<answer>') : -len('</answer>')]})"
        name, arguments = payload
        return f"{name}({', '.join(arguments.values())})"

    def encode_call(self, name: str, arguments: Any, scenario: Scenario) -> int | None:
        """The index of a text tool call on ``scenario``, or None if no action expresses it."""
        if not isinstance(arguments, dict):
            return None
        if name == "list_attendees":
            return 0 if not arguments else None
        who = arguments.get("name")
        person = scenario.attendee(who) if isinstance(who, str) else None
        if person is None:
            return None
        attendee = scenario.attendees.index(person)
        if attendee >= self.max_attendees:
            return None
        if name in ATTENDEE_TOOLS and set(arguments) == {"name"}:
            return self.encode(Action(name, attendee=attendee))
        if name == "get_busy" and set(arguments) == {"name", "date"}:
            try:
                day = (date.fromisoformat(str(arguments["date"])) - self.first_date(scenario)).days
            except ValueError:
                return None
            if 0 <= day < self.n_dates:
                return self.encode(Action("get_busy", attendee=attendee, day=day))
        return None

    def encode_answer(self, content: str, scenario: Scenario) -> int | None:
        """The index of an answer's content (as inside ``<answer>``), or None off the grid."""
        parsed = parse_answer(content)
        if parsed == NONE:
            return self.none_index
        if not isinstance(parsed, int):
            return None
        offset = parsed - window_bounds(scenario)[0]
        if offset < 0 or offset % self.grid_seconds:
            return None
        slot = offset // self.grid_seconds
        return self.answer_offset + slot if slot < self.n_slots else None
