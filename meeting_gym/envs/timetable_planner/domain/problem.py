"""A scenario as loaded for play (RULES section 2): defaults applied, disruption applied, indexed.

:class:`Problem` is built once per scenario (``Problem(scenario)``, or the cached
:func:`problem_of`) and never changes. It holds what the rules and the score read, by
integer index: teachers, groups, rooms and sessions (a disruption-added session last),
each teacher's and room's *effective* availability, each teacher's preference rule, and
the static facts of every (session, room) pair (room type allowed, capacity enough, the
room_fit value). Availability is kept twice: as slot maps in the shape of
``ajay-sreeram/timetable_planner``, the env this one succeeds (for the observation), and
as one bitmask per day (bit ``s`` set: slot ``s`` available), which is what the
incremental scorer uses.

Loading, in the original's order:

1. availability defaults: a teacher or room whose ``available_slots`` is absent or null
   gets every slot of the grid (``{}`` stays "no slot": the original tests ``is None``);
   a teacher whose ``preferred_slots`` is absent gets a copy of their available map;
2. then, for hard and expert only, the disruption: ``teacher_unavailable`` removes slots
   from the teacher's available set and intersects their preferred set with what is left,
   both re-encoded sorted with empty days left out; ``room_unavailable`` removes slots from
   the room's available set, re-encoded the same way; ``new_session_added`` appends its
   session (with the same defaults as every session: defect D11 fixed).
"""

from __future__ import annotations

import math
from functools import lru_cache

from meeting_gym.envs.timetable_planner.domain.scenario import (
    DISRUPTED_DIFFICULTIES,
    Placement,
    Scenario,
    Session,
    SlotMap,
    cells_of,
)

__all__ = ["Problem", "Spot", "problem_of"]

Spot = tuple[int, int, int]
"""A placement by index: (day, start_slot, room index)."""


def _sorted_map(cells: frozenset[tuple[int, int]]) -> SlotMap:
    by_day: dict[int, list[int]] = {}
    for day, slot in sorted(cells):
        by_day.setdefault(day, []).append(slot)
    return tuple((day, tuple(slots)) for day, slots in by_day.items())


def _masks(slot_map: SlotMap, n_days: int) -> tuple[int, ...]:
    masks = [0] * n_days
    for day, slots in slot_map:
        for slot in slots:
            masks[day] |= 1 << slot
    return tuple(masks)


class Problem:
    """The loaded, indexed, immutable form of a :class:`Scenario` (see the module docstring)."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.scenario_id = scenario.scenario_id
        self.task_name = scenario.task_name
        self.day_labels = scenario.days
        self.n_days = len(scenario.days)
        self.per_day = scenario.slots_per_day
        self.step_budget = scenario.step_budget

        full: SlotMap = tuple((d, tuple(range(self.per_day))) for d in range(self.n_days))
        teachers = scenario.teachers
        self.teacher_ids = tuple(t.teacher_id for t in teachers)
        self.group_ids = tuple(g.group_id for g in scenario.groups)
        self.rooms = scenario.rooms
        self.room_ids = tuple(r.room_id for r in scenario.rooms)
        available = [full if t.available_slots is None else t.available_slots for t in teachers]
        preferred = [
            available[i] if t.preferred_slots is None else t.preferred_slots
            for i, t in enumerate(teachers)
        ]
        room_available = [
            full if r.available_slots is None else r.available_slots for r in self.rooms
        ]
        sessions: list[Session] = list(scenario.sessions)

        disruption = scenario.disruption if scenario.task_name in DISRUPTED_DIFFICULTIES else None
        if disruption is not None:
            if disruption.type == "teacher_unavailable":
                assert disruption.slots is not None
                t = self.teacher_ids.index(disruption.target_id)
                left = cells_of(available[t]) - cells_of(disruption.slots)
                available[t] = _sorted_map(left)
                preferred[t] = _sorted_map(cells_of(preferred[t]) & left)
            elif disruption.type == "room_unavailable":
                assert disruption.slots is not None
                r = self.room_ids.index(disruption.target_id)
                room_available[r] = _sorted_map(
                    cells_of(room_available[r]) - cells_of(disruption.slots)
                )
            elif disruption.session is not None:
                sessions.append(disruption.session)

        self.teacher_available: tuple[SlotMap, ...] = tuple(available)
        self.teacher_preferred: tuple[SlotMap, ...] = tuple(preferred)
        self.room_available: tuple[SlotMap, ...] = tuple(room_available)
        self.teacher_avail_mask = tuple(_masks(m, self.n_days) for m in available)
        self.teacher_pref_mask = tuple(_masks(m, self.n_days) for m in preferred)
        self.room_avail_mask = tuple(_masks(m, self.n_days) for m in room_available)
        # RULES 5.2 preference: an empty preferred map, or one equal (as a set) to the
        # available one, means "no preference": every placement of that teacher scores 1
        self.teacher_indifferent = tuple(
            len(preferred[i]) == 0 or cells_of(preferred[i]) == cells_of(available[i])
            for i in range(len(teachers))
        )

        self.sessions: tuple[Session, ...] = tuple(sessions)
        self.session_ids = tuple(s.session_id for s in sessions)
        self.session_index = {sid: i for i, sid in enumerate(self.session_ids)}
        self.room_index = {rid: i for i, rid in enumerate(self.room_ids)}
        teacher_index = {tid: i for i, tid in enumerate(self.teacher_ids)}
        group_index = {gid: i for i, gid in enumerate(self.group_ids)}
        self.session_teacher = tuple(teacher_index[s.teacher_id] for s in sessions)
        self.session_group = tuple(group_index[s.group_id] for s in sessions)
        self.session_length = tuple(s.duration_in_slots for s in sessions)
        self.session_must = tuple(s.must_schedule for s in sessions)
        self.must_count = sum(self.session_must)
        self.max_length = max(self.session_length, default=1)

        # static (session, room) facts; room_fit as an exact integer numerator over FIT_DEN
        fit_scale = 10 * math.lcm(*(max(1, r.capacity) for r in self.rooms)) if self.rooms else 10
        self.fit_den = fit_scale
        type_ok: list[tuple[bool, ...]] = []
        capacity_ok: list[tuple[bool, ...]] = []
        fit_num: list[tuple[int, ...]] = []
        for s in sessions:
            allowed = frozenset(s.valid_room_types)
            type_ok.append(tuple(r.room_type in allowed for r in self.rooms))
            capacity_ok.append(tuple(r.capacity >= s.required_capacity for r in self.rooms))
            row = []
            for r in self.rooms:
                # 0.7 + 0.3 (1 - min(1, w / m)) with w = capacity - required in [0, m]
                # is (10m - 3w) / (10m), exact over the common denominator
                m, w = max(1, r.capacity), max(0, r.capacity - s.required_capacity)
                row.append((10 * m - 3 * min(w, m)) * (fit_scale // (10 * m)))
            fit_num.append(tuple(row))
        self.type_ok = tuple(type_ok)
        self.capacity_ok = tuple(capacity_ok)
        self.fit_num = tuple(fit_num)

        self.initial: tuple[tuple[int, Spot], ...] = tuple(
            self.spot_of(p) for p in scenario.initial_assignments
        )
        self.baseline_placements: tuple[Placement, ...] = scenario.baseline_assignments
        # the stability score reads the baseline of hard and expert scenarios only
        self.baseline: dict[int, Spot] = (
            dict(self.spot_of(p) for p in scenario.baseline_assignments)
            if scenario.task_name in DISRUPTED_DIFFICULTIES
            else {}
        )

    def spot_of(self, placement: Placement) -> tuple[int, Spot]:
        return (
            self.session_index[placement.session_id],
            (placement.day, placement.start_slot, self.room_index[placement.room_id]),
        )

    def placement(self, session: int, spot: Spot) -> Placement:
        """The :class:`Placement` of session index ``session`` at ``spot``."""
        day, start, room = spot
        return Placement(self.session_ids[session], day, start, self.room_ids[room])

    def __repr__(self) -> str:
        return f"Problem({self.scenario_id!r}, {len(self.sessions)} sessions)"


@lru_cache(maxsize=256)
def problem_of(scenario: Scenario) -> Problem:
    """The :class:`Problem` of a scenario, built once per distinct scenario (cached)."""
    return Problem(scenario)
