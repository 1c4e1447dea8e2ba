"""Observation encoders for the discrete interface: ``grid`` and ``raw``.

Both return a flat ``Dict`` of 1-D ``Box`` (float32), ``MultiBinary`` and
``Discrete`` spaces, which stable-baselines3's ``MultiInputPolicy`` accepts as
is. Per-attendee arrays are flattened attendee-major (row ``i`` of ``A`` rows).
Every call returns fresh arrays.

Shared keys (both encodings):

* ``called`` ``MultiBinary(n_tools)``: tool actions already taken (action-table order);
* ``attendees`` ``Discrete(A + 1)``: attendee count, 0 until ``list_attendees``;
* ``window_days`` ``Discrete(D + 1)``; ``duration`` ``Box(0, 1, (1,))``: minutes / 1440;
* ``turns_left`` ``Box(0, 1, (1,))``: turns left / ``max_turns``.

``grid`` adds, on the UTC answer grid of ``S`` cells (cell ``k`` starts ``k*G``
minutes after the window's first UTC midnight):

* ``available`` / ``unavailable`` ``Box(0, 1, (A*S,))``: revealed free / known
  unavailable cells per attendee (neither = unknown), see :mod:`.reveal`;
* ``fit`` ``Box(0, 1, (S,))``: starts known to fit every attendee;
* ``in_window`` ``Box(0, 1, (S,))``: cells inside the window.

``raw`` adds the tool results themselves, in local time, without conversion:

* ``zone`` ``Box(0, 1, (A*(Z+1),))``: one-hot index into :data:`ZONE_VOCAB`, the
  last column meaning "a zone outside the vocabulary" (all zero = not yet known);
* ``hours`` ``Box(0, 1, (A*2,))``: working start and end, minutes / 1440;
* ``weekdays`` ``Box(0, 1, (A*7,))``: working weekdays, Monday first;
* ``busy`` ``Box(0, 1, (A*J*96,))``: per attendee and local date ``j`` (as in the
  action table), 96 quarter-hour cells of the local day, 1 where a busy block
  overlaps the cell; zero until ``get_busy`` for that date is called;
* ``date_weekday`` ``Box(0, 1, (J*7,))``: one-hot weekday of each local date;
* ``day_of_year`` ``Box(0, 1, (1,))``: the window start's day of year / 366.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import numpy as np
from gymnasium import spaces

from meeting_gym.envs.meeting_slot.discrete.actions import ActionTable
from meeting_gym.envs.meeting_slot.discrete.reveal import Revealed

ENCODINGS = ("grid", "raw")

ZONE_VOCAB = (
    "UTC",
    "America/Los_Angeles",
    "America/New_York",
    "America/Santiago",
    "America/Sao_Paulo",
    "America/St_Johns",
    "Asia/Kathmandu",
    "Asia/Kolkata",
    "Asia/Shanghai",
    "Asia/Tehran",
    "Asia/Tokyo",
    "Australia/Adelaide",
    "Australia/Lord_Howe",
    "Australia/Sydney",
    "Europe/Berlin",
    "Europe/London",
    "Pacific/Chatham",
)
"""Zone indices of the ``raw`` encoding; every zone the generator and curated cases use."""
ZONE_INDEX = {name: i for i, name in enumerate(ZONE_VOCAB)}
LOCAL_CELLS = 96


def _box(size: int) -> spaces.Box:
    return spaces.Box(0.0, 1.0, shape=(size,), dtype=np.float32)


def observation_space(table: ActionTable, encoding: str) -> spaces.Dict:
    a, s, j = table.max_attendees, table.n_slots, table.n_dates
    shared: dict[str, spaces.Space[Any]] = {
        "called": spaces.MultiBinary(table.n_tools),
        "attendees": spaces.Discrete(a + 1),
        "window_days": spaces.Discrete(table.max_window_days + 1),
        "duration": _box(1),
        "turns_left": _box(1),
    }
    if encoding == "grid":
        extra = {
            "available": _box(a * s),
            "unavailable": _box(a * s),
            "fit": _box(s),
            "in_window": _box(s),
        }
    elif encoding == "raw":
        extra = {
            "zone": _box(a * (len(ZONE_VOCAB) + 1)),
            "hours": _box(a * 2),
            "weekdays": _box(a * 7),
            "busy": _box(a * j * LOCAL_CELLS),
            "date_weekday": _box(j * 7),
            "day_of_year": _box(1),
        }
    else:
        raise ValueError(f"unknown obs encoding {encoding!r}; choose one of {ENCODINGS}")
    return spaces.Dict({**shared, **extra})


class Encoder:
    """Builds observations for one episode from its :class:`Revealed` state."""

    def __init__(self, encoding: str, revealed: Revealed, max_turns: int) -> None:
        self.encoding = encoding
        self.revealed = revealed
        self.max_turns = max_turns
        table, scenario = revealed.table, revealed.scenario
        self.called = np.zeros(table.n_tools, dtype=np.int8)
        self._duration = np.array([min(scenario.duration_minutes, 1440) / 1440], np.float32)
        if encoding == "raw":
            a, j = table.max_attendees, table.n_dates
            self.zone = np.zeros((a, len(ZONE_VOCAB) + 1), np.float32)
            self.hours = np.zeros((a, 2), np.float32)
            self.weekdays = np.zeros((a, 7), np.float32)
            self.busy = np.zeros((a, j, LOCAL_CELLS), np.float32)
            first = table.first_date(scenario).weekday()
            self.date_weekday = np.zeros((j, 7), np.float32)
            self.date_weekday[np.arange(j), (first + np.arange(j)) % 7] = 1.0
            yday = scenario.window_start.timetuple().tm_yday
            self.day_of_year = np.array([yday / 366], np.float32)

    def record(self, index: int) -> None:
        """Note a tool action taken (and, for ``raw``, copy what it revealed)."""
        table = self.revealed.table
        if index >= table.n_tools:
            return
        self.called[index] = 1
        if self.encoding != "raw":
            return
        action = table.decode(index)
        i = action.attendee
        people = self.revealed.scenario.attendees
        if i is None or i >= len(people):
            return
        person = people[i]
        if action.kind == "get_timezone":
            self.zone[i] = 0.0
            self.zone[i, ZONE_INDEX.get(person.timezone, len(ZONE_VOCAB))] = 1.0
        elif action.kind == "get_working_hours":
            self.hours[i] = (person.work_start / 1440, person.work_end / 1440)
            self.weekdays[i] = 0.0
            self.weekdays[i, list(person.weekdays)] = 1.0
        elif action.kind == "get_busy" and action.day is not None:
            day = table.first_date(self.revealed.scenario) + timedelta(days=action.day)
            row = self.busy[i, action.day]
            row[:] = 0.0
            for start, end in person.busy_on(day):
                row[start // 15 : -(-end // 15)] = 1.0

    def observe(self, turns_left: int) -> dict[str, Any]:
        rev = self.revealed
        obs: dict[str, Any] = {
            "called": self.called.copy(),
            "attendees": rev.count if rev.listed else 0,
            "window_days": rev.scenario.window_days,
            "duration": self._duration.copy(),
            "turns_left": np.array([max(turns_left, 0) / self.max_turns], np.float32),
        }
        if self.encoding == "grid":
            # One fresh float32 copy of Revealed.shown; each key gets its own disjoint part.
            shown, a = rev.shown.astype(np.float32), rev.table.max_attendees
            obs["available"] = shown[:a].reshape(-1)
            obs["unavailable"] = shown[a : 2 * a].reshape(-1)
            obs["fit"] = shown[2 * a]
            obs["in_window"] = shown[2 * a + 1]
        else:
            obs["zone"] = self.zone.ravel().copy()
            obs["hours"] = self.hours.ravel().copy()
            obs["weekdays"] = self.weekdays.ravel().copy()
            obs["busy"] = self.busy.ravel().copy()
            obs["date_weekday"] = self.date_weekday.ravel().copy()
            obs["day_of_year"] = self.day_of_year.copy()
        return obs
