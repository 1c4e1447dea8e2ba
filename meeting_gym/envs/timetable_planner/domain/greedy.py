"""The greedy baseline: a constructive first fit, the kind timetable_planner's generator uses.

:func:`first_fit` builds a timetable one session at a time and never revisits a choice.
A session goes to the first *clean* spot in the generator's baseline order (RULES 10,
step 6): rooms of an allowed type in room order, too small ones skipped, then day, then
start slot; clean means every cell is available to the teacher and the room and free of
the teacher, the group and the room. A session with no clean spot is left out. Two
choices the generator's baseline does not make, both in the heuristic's favour:
must_schedule sessions go first, longer ones first within each kind (first-fit
decreasing: a 2-slot session is the harder one to fit), then optional sessions the same
way; and a timetable that is already there (``start="baseline"``) keeps every placement
that is clean against the ones kept before it, in its order, and first-fits the rest.

:func:`plan_actions` turns a target timetable into the actions that reach it from the
current one (unassigns, then moves, then assigns). Pure: no gymnasium, no numpy.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from meeting_gym.envs.timetable_planner.domain.problem import Problem, Spot

__all__ = ["first_fit", "plan_actions"]


class _Occupancy:
    """Which (day, slot) cells each teacher, group and room already uses, as day bitmasks."""

    def __init__(self, problem: Problem) -> None:
        self.p = problem
        days = problem.n_days
        self.teacher = [[0] * days for _ in problem.teacher_ids]
        self.group = [[0] * days for _ in problem.group_ids]
        self.room = [[0] * days for _ in problem.room_ids]

    def clean(self, session: int, spot: Spot) -> bool:
        p = self.p
        day, start, room = spot
        length = p.session_length[session]
        if not (0 <= day < p.n_days and start >= 0 and start + length <= p.per_day):
            return False
        if not (p.type_ok[session][room] and p.capacity_ok[session][room]):
            return False
        cells = ((1 << length) - 1) << start
        teacher, group = p.session_teacher[session], p.session_group[session]
        return (
            p.teacher_avail_mask[teacher][day] & cells == cells
            and p.room_avail_mask[room][day] & cells == cells
            and not self.teacher[teacher][day] & cells
            and not self.group[group][day] & cells
            and not self.room[room][day] & cells
        )

    def take(self, session: int, spot: Spot) -> None:
        p = self.p
        day, start, room = spot
        cells = ((1 << p.session_length[session]) - 1) << start
        self.teacher[p.session_teacher[session]][day] |= cells
        self.group[p.session_group[session]][day] |= cells
        self.room[room][day] |= cells


def first_fit(problem: Problem, current: Iterable[tuple[int, Spot]] = ()) -> dict[int, Spot]:
    """The greedy timetable (see the module docstring): ``{session index: spot}``."""
    p = problem
    taken = _Occupancy(p)
    target: dict[int, Spot] = {}
    for session, spot in current:
        if taken.clean(session, spot):
            taken.take(session, spot)
            target[session] = spot
    order = sorted(
        (s for s in range(len(p.sessions)) if s not in target),
        key=lambda s: (not p.session_must[s], -p.session_length[s], s),
    )
    for session in order:
        length = p.session_length[session]
        for room in range(len(p.room_ids)):
            if not (p.type_ok[session][room] and p.capacity_ok[session][room]):
                continue
            spot = next(
                (
                    (day, start, room)
                    for day in range(p.n_days)
                    for start in range(p.per_day - length + 1)
                    if taken.clean(session, (day, start, room))
                ),
                None,
            )
            if spot is not None:
                taken.take(session, spot)
                target[session] = spot
                break
    return target


def plan_actions(
    problem: Problem, current: Mapping[int, Spot], target: Mapping[int, Spot]
) -> list[dict[str, Any]]:
    """JSON action objects that turn ``current`` into ``target`` (no submit)."""
    p = problem
    actions: list[dict[str, Any]] = []
    for session in sorted(current):
        if session not in target:
            actions.append(
                {"action_type": "unassign_session", "session_id": p.session_ids[session]}
            )
    for kind, sessions in (
        ("move_session", [s for s in sorted(target) if s in current and current[s] != target[s]]),
        ("assign_session", [s for s in sorted(target) if s not in current]),
    ):
        for session in sessions:
            day, start, room = target[session]
            actions.append(
                {
                    "action_type": kind,
                    "session_id": p.session_ids[session],
                    "day": day,
                    "start_slot": start,
                    "room_id": p.room_ids[room],
                }
            )
    return actions
