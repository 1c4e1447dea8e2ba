"""What an episode has revealed so far, rasterised onto the UTC answer grid.

:class:`Revealed` records which tool results the agent has seen (attendee list,
zones, working hours, busy dates) and keeps, per attendee, three boolean rows
over the ``S`` grid cells of the window:

* ``available[i, k]``: cell ``[t_k, t_k + G)`` is free for attendee ``i`` on some
  local date whose busy calendar has been revealed;
* ``unavailable[i, k]``: the cell is busy or outside working hours even if every
  unrevealed date were completely free;
* neither: unknown (zone or hours not yet known, or it depends on an unrevealed date).

``fit[k]`` is true when start ``t_k`` is *known* to fit the duration for every
attendee. It uses the solver's own :func:`~..domain.solver.free_intervals`
per local date, and a start fits an attendee iff it fits one revealed date's
merged interval, so once everything is revealed ``fit[k] == Solution.is_valid(t_k)``.
Real calendar data of a date enter the rows only after that date is revealed.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from meeting_gym.envs.meeting_slot.discrete.actions import ActionTable
from meeting_gym.envs.meeting_slot.domain.scenario import Attendee, Scenario
from meeting_gym.envs.meeting_slot.domain.solver import free_intervals, window_bounds
from meeting_gym.envs.meeting_slot.domain.timeutil import day_number


class Revealed:
    def __init__(self, scenario: Scenario, table: ActionTable) -> None:
        if len(scenario.attendees) > table.max_attendees:
            raise ValueError(
                f"scenario has {len(scenario.attendees)} attendees; this action table "
                f"allows {table.max_attendees} (raise max_attendees)"
            )
        if scenario.window_days > table.max_window_days:
            raise ValueError(
                f"scenario window is {scenario.window_days} days; this action table "
                f"allows {table.max_window_days} (raise max_window_days)"
            )
        self.scenario = scenario
        self.table = table
        self.lo, self.hi = window_bounds(scenario)
        self.count = len(scenario.attendees)
        self.window_slots = scenario.window_days * table.slots_per_day
        self.first_day = day_number(table.first_date(scenario))
        a, s = table.max_attendees, table.n_slots
        self.listed = False
        self.zone_known = [False] * a
        self.hours_known = [False] * a
        self.busy_known = np.zeros((a, table.n_dates), dtype=bool)
        # The rows an observation shows live in one buffer, so an encoder turns them into
        # float32 with a single conversion; the properties below are views of it, made on
        # each access (a stored view would come apart from the buffer in a pickle or copy).
        self.shown = np.zeros((2 * a + 2, s), dtype=bool)
        self.in_window[: self.window_slots] = True
        self.person_fit = np.zeros((a, s), dtype=bool)
        self._rasters: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._maybe = np.zeros((a, s), dtype=np.int16)

    @property
    def available(self) -> np.ndarray:
        return self.shown[: self.table.max_attendees]

    @property
    def unavailable(self) -> np.ndarray:
        a = self.table.max_attendees
        return self.shown[a : 2 * a]

    @property
    def fit(self) -> np.ndarray:
        return self.shown[2 * self.table.max_attendees]

    @property
    def in_window(self) -> np.ndarray:
        return self.shown[2 * self.table.max_attendees + 1]

    # ------------------------------------------------------------------ reveals

    def reveal_list(self) -> None:
        self.listed = True
        self._update_fit()

    def reveal_zone(self, attendee: int) -> None:
        if attendee < self.count:
            self.zone_known[attendee] = True
            self._update(attendee)

    def reveal_hours(self, attendee: int) -> None:
        if attendee < self.count:
            self.hours_known[attendee] = True
            self._update(attendee)

    def reveal_busy(self, attendee: int, day: int) -> None:
        if not (attendee < self.count and 0 <= day < self.table.n_dates):
            return
        if self.busy_known[attendee, day]:
            return
        self.busy_known[attendee, day] = True
        if attendee in self._rasters:  # zone and hours known: update one date's worth
            free, work, fits = self._rasters[attendee]
            i = attendee
            self.available[i] |= free[day]
            self._maybe[i] -= work[day]
            np.logical_and(self.in_window, ~self.available[i], out=self.unavailable[i])
            self.unavailable[i] &= self._maybe[i] == 0
            if fits[day].any():
                self.person_fit[i] |= fits[day]
                self._update_fit()

    def reveal_call(self, name: str, arguments: object, result: str) -> None:
        """Record one text-protocol tool call (for interfaces that speak text)."""
        if result.startswith("error"):
            return
        if name == "list_attendees":
            self.reveal_list()
            return
        index = self.table.encode_call(name, arguments, self.scenario)
        if index is None:
            return
        action = self.table.decode(index)
        if action.kind == "get_timezone":
            self.reveal_zone(action.attendee or 0)
        elif action.kind == "get_working_hours":
            self.reveal_hours(action.attendee or 0)
        elif action.kind == "get_busy":
            self.reveal_busy(action.attendee or 0, action.day or 0)

    # ------------------------------------------------------------------ rows

    def _update(self, i: int) -> None:
        if not (self.zone_known[i] and self.hours_known[i]):
            return
        free, work, fits = self._raster(i)
        known = self.busy_known[i]
        self.available[i] = free[known].any(axis=0)
        self._maybe[i] = work[~known].sum(axis=0)  # unrevealed dates that may free a cell
        self.unavailable[i] = self.in_window & ~self.available[i] & (self._maybe[i] == 0)
        self.person_fit[i] = fits[known].any(axis=0)
        self._update_fit()

    def _update_fit(self) -> None:
        fit = self.fit
        if self.listed:
            np.logical_and.reduce(self.person_fit[: self.count], axis=0, out=fit)
            fit &= self.in_window
        else:
            fit[:] = False

    def _raster(self, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per local date: free cells (real busy), working cells (no busy), fitting starts."""
        if i not in self._rasters:
            person = self.scenario.attendees[i]
            free, fits = self._rasterise(person, fits=True)
            work, _ = self._rasterise(replace(person, busy={}), fits=False)
            self._rasters[i] = (free, work, fits)
        return self._rasters[i]

    def _rasterise(self, person: Attendee, *, fits: bool) -> tuple[np.ndarray, np.ndarray]:
        table, lo, step = self.table, self.lo, self.table.grid_seconds
        cells = np.zeros((table.n_dates, table.n_slots), dtype=bool)
        starts = np.zeros((table.n_dates, table.n_slots), dtype=bool)
        last = self.window_slots
        duration = self.scenario.duration_minutes * 60
        for number, intervals in free_intervals(person, self.lo, self.hi):
            j = number - self.first_day
            if not 0 <= j < table.n_dates:
                continue
            for a, b in intervals:
                first = -((lo - a) // step)  # ceil((a - lo) / step)
                cells[j, max(first, 0) : max(min((b - lo) // step, last), 0)] = True
                if fits and b - a >= duration:
                    top = (b - duration - lo) // step  # floor
                    starts[j, max(first, 0) : max(min(top + 1, last), 0)] = True
        return cells, starts
