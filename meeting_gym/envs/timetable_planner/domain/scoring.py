"""Conflict counts, the seven component scores and the overall score (RULES section 5).

Two implementations of one definition:

* :class:`Timetable` is the placement map with its scores kept up to date incrementally.
  Placing or removing a session touches only its own cells (``duration_in_slots`` of them),
  its teacher's and group's day, and a handful of integer counters; reading the scores
  then costs O(days). Nothing is proportional to the number of sessions, so a step's cost
  does not grow with the timetable (``cells_touched`` counts the work; the tests check it).
* :func:`reference_scores` recomputes everything from the placements, literally as RULES
  section 5 writes it: the slow path, and the oracle the tests hold the tracker to.

The tracker keeps only integers; every component is computed from them as an exact ratio
(one correctly rounded division), so the same timetable always gives bit-identical scores,
however it was reached. The original, ``ajay-sreeram/timetable_planner``, summed floats
in dictionary order; the two agree to about 1e-16 (RULES 5.5).

The original's shaping quirks (D17) are kept, as the parity contract says: an
unavailable slot counts as "not preferred" (0.5), not worse; an empty preferred map means
"no preference"; room_fit leaves out placements in a room of the wrong type or too small
instead of scoring them 0; stability gives 0.5 to any placement that is not exactly the
baseline one; the empty timetable scores 0.65 in easy.

Why one module of about 630 lines: the two implementations of one definition are kept side
by side on purpose, so that a change to one is read next to the other it must agree with.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from meeting_gym.envs.timetable_planner.domain.problem import Problem, Spot
from meeting_gym.envs.timetable_planner.domain.scenario import Placement

__all__ = [
    "COMPONENTS",
    "CONFLICT_KEYS",
    "HARD_CONSTRAINT_TYPES",
    "SCORE_KEYS",
    "WEIGHTS",
    "Conflicts",
    "Scores",
    "Timetable",
    "overall",
    "reference_scores",
]

COMPONENTS = (
    "hard_constraint_score",
    "coverage_score",
    "compactness_score",
    "room_fit_score",
    "preference_score",
    "daily_balance_score",
    "stability_score",
)
"""The seven component scores, in the order of RULES' weight table."""

WEIGHTS: Mapping[str, Mapping[str, float]] = {
    "easy": {
        "hard_constraint_score": 0.55,
        "coverage_score": 0.25,
        "compactness_score": 0.10,
        "room_fit_score": 0.0,
        "preference_score": 0.0,
        "daily_balance_score": 0.10,
        "stability_score": 0.0,
    },
    "medium": {
        "hard_constraint_score": 0.40,
        "coverage_score": 0.20,
        "compactness_score": 0.10,
        "room_fit_score": 0.10,
        "preference_score": 0.10,
        "daily_balance_score": 0.10,
        "stability_score": 0.0,
    },
    "hard": {
        "hard_constraint_score": 0.35,
        "coverage_score": 0.15,
        "compactness_score": 0.10,
        "room_fit_score": 0.10,
        "preference_score": 0.05,
        "daily_balance_score": 0.10,
        "stability_score": 0.15,
    },
    "expert": {
        "hard_constraint_score": 0.25,
        "coverage_score": 0.15,
        "compactness_score": 0.10,
        "room_fit_score": 0.10,
        "preference_score": 0.10,
        "daily_balance_score": 0.10,
        "stability_score": 0.20,
    },
}
"""Weights of the components in ``overall_score``, per difficulty (RULES 5.3)."""

CONFLICT_KEYS = (
    "teacher_overlap",
    "group_overlap",
    "room_overlap",
    "room_capacity_violation",
    "room_type_violation",
    "teacher_availability_violation",
    "room_availability_violation",
)

HARD_CONSTRAINT_TYPES: Mapping[str, tuple[str, ...]] = {
    "easy": CONFLICT_KEYS[:3],
    "medium": CONFLICT_KEYS,
    "hard": CONFLICT_KEYS,
    "expert": CONFLICT_KEYS,
}
"""The violation types that lower hard_constraint_score, per difficulty (RULES 5.2)."""

_PER_PLACEMENT = frozenset({"room_capacity_violation", "room_type_violation"})


@dataclass(frozen=True)
class Conflicts:
    """The seven violation counts of RULES 5.1 (the observation's ``conflict_summary``)."""

    teacher_overlap: int = 0
    group_overlap: int = 0
    room_overlap: int = 0
    room_capacity_violation: int = 0
    room_type_violation: int = 0
    teacher_availability_violation: int = 0
    room_availability_violation: int = 0

    def as_dict(self) -> dict[str, int]:
        return {key: getattr(self, key) for key in CONFLICT_KEYS}

    @property
    def total(self) -> int:
        return sum(getattr(self, key) for key in CONFLICT_KEYS)


SCORE_KEYS = (
    "overall_score",
    "hard_constraint_score",
    "coverage_score",
    "compactness_score",
    "room_fit_score",
    "stability_score",
    "preference_score",
    "daily_balance_score",
)
"""The observation's ``score_breakdown`` keys, in the original's order."""


@dataclass(frozen=True)
class Scores:
    """``overall_score`` and the seven components (the observation's ``score_breakdown``)."""

    overall_score: float
    hard_constraint_score: float
    coverage_score: float
    compactness_score: float
    room_fit_score: float
    stability_score: float
    preference_score: float
    daily_balance_score: float

    def as_dict(self) -> dict[str, float]:
        """The eight scores, in the original's key order (overall first)."""
        return {name: getattr(self, name) for name in SCORE_KEYS}

    def components(self) -> dict[str, float]:
        """The seven components, in :data:`COMPONENTS` order."""
        return {name: getattr(self, name) for name in COMPONENTS}


def overall(task_name: str, components: Mapping[str, float]) -> float:
    """``clamp(sum(weight * component), 0, 1)`` with ``task_name``'s weights; no rounding."""
    weights = WEIGHTS[task_name]
    total = 0.0
    for name in COMPONENTS:
        total += weights[name] * components[name]
    return min(1.0, max(0.0, total))


def _hard_constraint(
    task_name: str, counts: Mapping[str, int], n_sessions: int, n_cells: int
) -> float:
    active = HARD_CONSTRAINT_TYPES[task_name]
    rate_sum = 0.0
    for key in active:
        n = n_sessions if key in _PER_PLACEMENT else n_cells
        rate_sum += min(1.0, counts[key] / max(1, n))
    return max(0.0, 1.0 - rate_sum / len(active))


def _pair_score(mask: int, per_day: int) -> tuple[int, int] | None:
    """Compactness of one (entity, day) as (maxgap - gaps, maxgap), or None if not scored."""
    k = mask.bit_count()
    if k < 2:
        return None
    span = mask.bit_length() - ((mask & -mask).bit_length() - 1)
    maxgap = per_day - k
    if maxgap <= 0:
        return (1, 1)
    return (maxgap - (span - k), maxgap)


class Timetable:
    """A placement map with its conflicts and scores maintained incrementally.

    Sessions and rooms are addressed by index (see :class:`Problem`); a placement is a
    :data:`Spot` ``(day, start_slot, room)``. :meth:`place` and :meth:`remove` are the only
    mutators (a move is a remove and a place); they assume the caller validated the
    action (the session unplaced or placed, the slots inside the day). Iteration order is
    the order the sessions were placed, a move keeping its position (as a dict update
    does in the original).
    """

    def __init__(self, problem: Problem, placements: Iterable[tuple[int, Spot]] = ()) -> None:
        self.problem = problem
        p = problem
        self._at: dict[int, Spot] = {}
        cells = p.n_days * p.per_day
        self._teacher_count = [0] * (len(p.teacher_ids) * cells)
        self._group_count = [0] * (len(p.group_ids) * cells)
        self._room_count = [0] * (len(p.room_ids) * cells)
        # occupied-slot mask per (teacher, day) then (group, day): compactness
        self._occupied = [0] * ((len(p.teacher_ids) + len(p.group_ids)) * p.n_days)
        self._group_offset = len(p.teacher_ids) * p.n_days
        self._compact_lcm = math.lcm(*range(1, p.per_day + 1))
        self._compact_num = 0
        self._compact_pairs = 0
        self._per_day_count = [0] * p.n_days
        self.teacher_overlap = 0
        self.group_overlap = 0
        self.room_overlap = 0
        self.capacity_violations = 0
        self.type_violations = 0
        self.teacher_unavailable = 0
        self.room_unavailable = 0
        self.n_cells = 0
        self.must_placed = 0
        self.fit_num = 0
        self.fit_count = 0
        self.preferred_full = 0
        self.baseline_exact = 0
        self.baseline_moved = 0
        self.cells_touched = 0
        """Work done so far: cells updated by place/remove (what the speed tests count)."""
        for session, spot in placements:
            self.place(session, spot)
        self.cells_touched = 0

    # ------------------------------------------------------------------ reading

    def __len__(self) -> int:
        return len(self._at)

    def __contains__(self, session: object) -> bool:
        return session in self._at

    def spot(self, session: int) -> Spot | None:
        """Where session index ``session`` is placed, or None."""
        return self._at.get(session)

    def items(self) -> Iterable[tuple[int, Spot]]:
        """(session index, spot) pairs in placement order (a fresh list)."""
        return list(self._at.items())

    def placements(self) -> tuple[Placement, ...]:
        """The placements with ids, in placement order."""
        return tuple(self.problem.placement(s, spot) for s, spot in self._at.items())

    def as_dict(self) -> dict[str, list[Any]]:
        """``{session_id: [day, start_slot, room_id]}``, the fixtures' timetable shape."""
        p = self.problem
        return {p.session_ids[s]: [d, t, p.room_ids[r]] for s, (d, t, r) in self._at.items()}

    def copy(self) -> Timetable:
        """An independent copy (rebuilt from the placements, in the same order)."""
        return Timetable(self.problem, self._at.items())

    def state(self) -> tuple[Any, ...]:
        """Every counter, exactly: two timetables with equal placements have equal states."""
        return (
            sorted(self._at.items()),
            self._teacher_count,
            self._group_count,
            self._room_count,
            self._occupied,
            self._compact_num,
            self._compact_pairs,
            self._per_day_count,
            self.conflicts(),
            self.n_cells,
            self.must_placed,
            self.fit_num,
            self.fit_count,
            self.preferred_full,
            self.baseline_exact,
            self.baseline_moved,
        )

    # ------------------------------------------------------------------ mutating

    def place(self, session: int, spot: Spot) -> None:
        """Place an unplaced session at ``spot``."""
        if session in self._at:
            raise ValueError(f"session {self.problem.session_ids[session]} is already placed")
        self._at[session] = spot
        self._update(session, spot, +1)

    def remove(self, session: int) -> Spot:
        """Remove a placed session; returns where it was."""
        spot = self._at.pop(session)
        self._update(session, spot, -1)
        return spot

    def move(self, session: int, spot: Spot) -> None:
        """Move a placed session to ``spot``, keeping its position in the order."""
        old = self._at[session]
        self._update(session, old, -1)
        self._at[session] = spot
        self._update(session, spot, +1)

    def swap(self, a: int, b: int) -> None:
        """Exchange the (day, start, room) of two placed sessions (durations stay)."""
        spot_a, spot_b = self._at[a], self._at[b]
        self._update(a, spot_a, -1)
        self._update(b, spot_b, -1)
        self._at[a], self._at[b] = spot_b, spot_a
        self._update(a, spot_b, +1)
        self._update(b, spot_a, +1)

    def _update(self, session: int, spot: Spot, sign: int) -> None:
        p = self.problem
        day, start, room = spot
        length = p.session_length[session]
        teacher = p.session_teacher[session]
        group = p.session_group[session]
        per_day = p.per_day
        cells = p.n_days * per_day
        base = day * per_day + start
        self.cells_touched += length

        # overlaps: a cell with n occupants contributes n - 1
        tc, gc, rc = self._teacher_count, self._group_count, self._room_count
        t0, g0, r0 = teacher * cells + base, group * cells + base, room * cells + base
        t_mask = g_mask = 0
        for k in range(length):
            if sign > 0:
                if tc[t0 + k]:
                    self.teacher_overlap += 1
                else:
                    t_mask |= 1 << (start + k)
                if gc[g0 + k]:
                    self.group_overlap += 1
                else:
                    g_mask |= 1 << (start + k)
                if rc[r0 + k]:
                    self.room_overlap += 1
                tc[t0 + k] += 1
                gc[g0 + k] += 1
                rc[r0 + k] += 1
            else:
                tc[t0 + k] -= 1
                gc[g0 + k] -= 1
                rc[r0 + k] -= 1
                if tc[t0 + k]:
                    self.teacher_overlap -= 1
                else:
                    t_mask |= 1 << (start + k)
                if gc[g0 + k]:
                    self.group_overlap -= 1
                else:
                    g_mask |= 1 << (start + k)
                if rc[r0 + k]:
                    self.room_overlap -= 1

        # compactness: the slots that became (un)occupied flip bits of two day masks
        if t_mask:
            self._flip(teacher * p.n_days + day, t_mask)
        if g_mask:
            self._flip(self._group_offset + group * p.n_days + day, g_mask)

        cell_mask = ((1 << length) - 1) << start
        self.teacher_unavailable += sign * (
            length - (cell_mask & p.teacher_avail_mask[teacher][day]).bit_count()
        )
        self.room_unavailable += sign * (
            length - (cell_mask & p.room_avail_mask[room][day]).bit_count()
        )
        type_ok = p.type_ok[session][room]
        capacity_ok = p.capacity_ok[session][room]
        self.type_violations += sign * (not type_ok)
        self.capacity_violations += sign * (not capacity_ok)
        if type_ok and capacity_ok:
            self.fit_num += sign * p.fit_num[session][room]
            self.fit_count += sign
        if (
            p.teacher_indifferent[teacher]
            or cell_mask & p.teacher_pref_mask[teacher][day] == cell_mask
        ):
            self.preferred_full += sign
        self.n_cells += sign * length
        self.must_placed += sign * p.session_must[session]
        self._per_day_count[day] += sign
        target = p.baseline.get(session)
        if target is not None:
            if target == spot:
                self.baseline_exact += sign
            else:
                self.baseline_moved += sign

    def _flip(self, index: int, bits: int) -> None:
        occupied = self._occupied
        per_day = self.problem.per_day
        before = _pair_score(occupied[index], per_day)
        occupied[index] ^= bits
        after = _pair_score(occupied[index], per_day)
        lcm = self._compact_lcm
        if before is not None:
            self._compact_pairs -= 1
            self._compact_num -= before[0] * (lcm // before[1])
        if after is not None:
            self._compact_pairs += 1
            self._compact_num += after[0] * (lcm // after[1])

    # ------------------------------------------------------------------ scores

    def conflicts(self) -> Conflicts:
        return Conflicts(
            self.teacher_overlap,
            self.group_overlap,
            self.room_overlap,
            self.capacity_violations,
            self.type_violations,
            self.teacher_unavailable,
            self.room_unavailable,
        )

    def scores(self) -> Scores:
        """The eight scores of the current timetable, O(days)."""
        p = self.problem
        n = len(self._at)
        counts = {
            "teacher_overlap": self.teacher_overlap,
            "group_overlap": self.group_overlap,
            "room_overlap": self.room_overlap,
            "room_capacity_violation": self.capacity_violations,
            "room_type_violation": self.type_violations,
            "teacher_availability_violation": self.teacher_unavailable,
            "room_availability_violation": self.room_unavailable,
        }
        components = {
            "hard_constraint_score": _hard_constraint(p.task_name, counts, n, self.n_cells),
            "coverage_score": self.must_placed / p.must_count if p.must_count else 1.0,
            "compactness_score": (
                self._compact_num / (self._compact_pairs * self._compact_lcm)
                if self._compact_pairs
                else 1.0
            ),
            "room_fit_score": self.fit_num / (self.fit_count * p.fit_den)
            if self.fit_count
            else 0.0,
            "preference_score": (n + self.preferred_full) / (2 * n) if n else 0.0,
            "daily_balance_score": _daily_balance(self._per_day_count, n),
            "stability_score": (
                (2 * self.baseline_exact + self.baseline_moved) / (2 * len(p.baseline))
                if p.baseline
                else 1.0
            ),
        }
        return Scores(overall_score=overall(p.task_name, components), **components)


def _daily_balance(per_day: list[int], total: int) -> float:
    """``max(0, 1 - dev / maxdev)`` as one exact ratio of integers (RULES 5.2)."""
    if total == 0:
        return 0.0
    n_days = len(per_day)
    if n_days < 2:
        return 1.0
    # dev / maxdev = sum |D c_d - total| / (2 total (D - 1)), both sides times D
    dev = sum(abs(n_days * c - total) for c in per_day)
    maxdev = 2 * total * (n_days - 1)
    return max(0, maxdev - dev) / maxdev


# ---------------------------------------------------------------------------- the slow path


def reference_scores(problem: Problem, placements: Iterable[Placement]) -> tuple[Conflicts, Scores]:
    """Conflicts and scores recomputed from scratch, literally as RULES section 5 says.

    Independent of :class:`Timetable` (sets and floats, no masks, no counters): the
    oracle the incremental tracker is tested against, and the slow path it replaces.
    """
    p = problem
    placed = list(placements)
    sessions = {s.session_id: s for s in p.sessions}
    rooms = {r.room_id: r for r in p.rooms}
    teacher_of = {tid: i for i, tid in enumerate(p.teacher_ids)}
    available = {tid: _cells(p.teacher_available[i]) for tid, i in teacher_of.items()}
    preferred = {tid: _cells(p.teacher_preferred[i]) for tid, i in teacher_of.items()}
    preferred_map_empty = {tid: len(p.teacher_preferred[i]) == 0 for tid, i in teacher_of.items()}
    room_available = {rid: _cells(p.room_available[i]) for i, rid in enumerate(p.room_ids)}

    def cells(a: Placement) -> list[tuple[int, int]]:
        length = sessions[a.session_id].duration_in_slots
        return [(a.day, a.start_slot + k) for k in range(length)]

    def overlaps(key: Any) -> int:
        occupancy: dict[tuple[Any, int, int], int] = {}
        for a in placed:
            for d, s in cells(a):
                occupancy[(key(a), d, s)] = occupancy.get((key(a), d, s), 0) + 1
        return sum(max(0, n - 1) for n in occupancy.values())

    counts = {
        "teacher_overlap": overlaps(lambda a: sessions[a.session_id].teacher_id),
        "group_overlap": overlaps(lambda a: sessions[a.session_id].group_id),
        "room_overlap": overlaps(lambda a: a.room_id),
        "room_capacity_violation": sum(
            rooms[a.room_id].capacity < sessions[a.session_id].required_capacity for a in placed
        ),
        "room_type_violation": sum(
            rooms[a.room_id].room_type not in sessions[a.session_id].valid_room_types
            for a in placed
        ),
        "teacher_availability_violation": sum(
            c not in available[sessions[a.session_id].teacher_id] for a in placed for c in cells(a)
        ),
        "room_availability_violation": sum(
            c not in room_available[a.room_id] for a in placed for c in cells(a)
        ),
    }
    conflicts = Conflicts(**counts)
    n_sessions = len(placed)
    n_cells = sum(len(cells(a)) for a in placed)

    must = [s.session_id for s in p.sessions if s.must_schedule]
    placed_ids = {a.session_id for a in placed}
    coverage = sum(sid in placed_ids for sid in must) / len(must) if must else 1.0

    pair_scores = []
    for entity_key, ids in (("teacher_id", p.teacher_ids), ("group_id", p.group_ids)):
        for entity in ids:
            for day in range(p.n_days):
                occupied = {
                    s
                    for a in placed
                    if getattr(sessions[a.session_id], entity_key) == entity
                    for d, s in cells(a)
                    if d == day
                }
                k = len(occupied)
                if k < 2:
                    continue
                gaps = (max(occupied) - min(occupied) + 1) - k
                maxgap = max(0, p.per_day - k)
                pair_scores.append(1.0 if maxgap == 0 else 1.0 - min(1.0, gaps / maxgap))
    compactness = sum(pair_scores) / len(pair_scores) if pair_scores else 1.0

    fits = []
    for a in placed:
        room, session = rooms[a.room_id], sessions[a.session_id]
        if (
            room.room_type in session.valid_room_types
            and room.capacity >= session.required_capacity
        ):
            slack = (room.capacity - session.required_capacity) / max(1, room.capacity)
            fits.append(0.7 + 0.3 * (1.0 - min(1.0, slack)))
    room_fit = sum(fits) / len(fits) if fits and placed else 0.0

    by_session = {a.session_id: a for a in placed}
    if p.baseline:
        values = []
        for b in p.baseline_placements:
            a = by_session.get(b.session_id)
            if a is None:
                values.append(0.0)
            elif (a.day, a.start_slot, a.room_id) == (b.day, b.start_slot, b.room_id):
                values.append(1.0)
            else:
                values.append(0.5)
        stability = sum(values) / len(values)
    else:
        stability = 1.0

    prefs = []
    for a in placed:
        tid = sessions[a.session_id].teacher_id
        if (
            preferred_map_empty[tid]
            or preferred[tid] == available[tid]
            or all(c in preferred[tid] for c in cells(a))
        ):
            prefs.append(1.0)
        else:
            prefs.append(0.5)
    preference = sum(prefs) / len(prefs) if prefs else 0.0

    if not placed:
        balance = 0.0
    else:
        per_day = [sum(a.day == d for a in placed) for d in range(p.n_days)]
        total = sum(per_day)
        ideal = total / p.n_days
        dev = sum(abs(c - ideal) for c in per_day)
        maxdev = 2 * total * (p.n_days - 1) / p.n_days
        balance = 1.0 if maxdev == 0 else max(0.0, 1.0 - dev / maxdev)

    components = {
        "hard_constraint_score": _hard_constraint(p.task_name, counts, n_sessions, n_cells),
        "coverage_score": coverage,
        "compactness_score": compactness,
        "room_fit_score": room_fit,
        "preference_score": preference,
        "daily_balance_score": balance,
        "stability_score": stability,
    }
    return conflicts, Scores(overall_score=overall(p.task_name, components), **components)


def _cells(slot_map: Any) -> frozenset[tuple[int, int]]:
    return frozenset((d, s) for d, slots in slot_map for s in slots)
