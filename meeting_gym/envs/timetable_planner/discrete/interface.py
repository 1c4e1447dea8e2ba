"""The discrete interface: one ``Discrete(N)`` action per (action type, session, day, slot, room).

The spaces are fixed when the env is made, from size :class:`Bounds` (defaults cover the
23 scenarios and everything the generator draws); a scenario's absent sessions, rooms,
days and slots are masked. Layout of the action index (``S`` sessions, ``D`` days, ``P``
slots, ``R`` rooms, ``PLACE = S*D*P*R``):

* ``[0, PLACE)``: ``assign_session(s, d, t, r)`` at ``((s*D + d)*P + t)*R + r``;
* ``[PLACE, 2*PLACE)``: ``move_session(s, d, t, r)``, same order;
* ``[2*PLACE, 2*PLACE + S*S)``: ``swap_sessions(a, b)`` at ``a*S + b``;
* then ``S`` of ``unassign_session(s)``, and the last index ``submit_timetable``.

Every action goes through the same engine as text mode (:class:`~.episode.TimetableEpisode`),
so rewards, penalties and messages are those of ``ajay-sreeram/timetable_planner``, the
env this one succeeds.

**Masks** (:meth:`DiscreteInterface.action_mask`, a fresh int8 array; the env's
``action_masks()`` as booleans) allow exactly what is valid and changes something, minus
placements that break a hard constraint of the scenario's difficulty that the action
itself decides: a room of a type the session does not allow or too small, and a cell
outside the teacher's or the room's availability (medium, hard, expert: in easy none of
these counts as a violation, so none is masked). So: assign an unplaced session, move a
placed one anywhere but where it is, swap two different placed sessions whose exchanged
spots both pass the same tests, unassign a placed one, submit. Overlaps are never masked:
where to put what is the agent's problem. A masked action is still played if sent (it
gets the engine's ``action_error`` and penalty); an index for an absent session or room
names it ``#i``, which the engine rejects as unknown. A value that is not an integer in
``0..N-1`` is an invalid action too (one unit of budget, the invalid penalty).

**Observation**: a flat ``Dict`` that SB3's ``MultiInputPolicy`` takes as is (see
:meth:`Encoder.space`): occupancy counts per (teacher | group | room, day, slot), teacher
availability and preference and room availability, static session features (present,
must, duration, teacher, group, per room its room_fit value or 0 where the room is of a
wrong type or too small, its baseline spot), each session's
current spot, the grid's present days and slots, present entities, the difficulty, the
budget left, the eight scores and the seven conflict rates. Masks and observations are
updated incrementally: a step touches the rows of the one or two sessions it changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

from meeting_gym.core.bounded import show
from meeting_gym.core.spaces import coerce_action
from meeting_gym.envs.timetable_planner.domain.actions import Action, Rejected
from meeting_gym.envs.timetable_planner.domain.episode import TimetableEpisode
from meeting_gym.envs.timetable_planner.domain.generator import SIZES
from meeting_gym.envs.timetable_planner.domain.problem import Problem
from meeting_gym.envs.timetable_planner.domain.scenario import DIFFICULTIES
from meeting_gym.envs.timetable_planner.domain.scoring import CONFLICT_KEYS, SCORE_KEYS

__all__ = ["DEFAULT_BOUNDS", "ActionTable", "Bounds", "DiscreteInterface", "Encoder"]

HARD_MASKED = frozenset({"medium", "hard", "expert"})
"""Difficulties where room type, capacity and availability count as hard constraints."""


@dataclass(frozen=True)
class Bounds:
    """The largest scenario the spaces hold."""

    sessions: int = 25
    teachers: int = 7
    groups: int = 7
    rooms: int = 8
    days: int = 5
    slots: int = 6

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"max_{name} must be a positive integer, got {value!r}")

    def check(self, problem: Problem) -> None:
        """Raise ``ValueError`` naming the first bound ``problem`` exceeds."""
        sizes = {
            "sessions": len(problem.sessions),
            "teachers": len(problem.teacher_ids),
            "groups": len(problem.group_ids),
            "rooms": len(problem.room_ids),
            "days": problem.n_days,
            "slots": problem.per_day,
        }
        for name, size in sizes.items():
            if size > getattr(self, name):
                raise ValueError(
                    f"scenario {problem.scenario_id!r} has {size} {name}, more than the "
                    f"discrete spaces hold (max_{name}={getattr(self, name)}): make the env "
                    f"with a larger max_{name}"
                )


def _default_bounds() -> Bounds:
    biggest = max(SIZES.values(), key=lambda s: s.sessions)
    # +1 session: a hard or expert disruption may add one
    return Bounds(
        sessions=max(s.sessions for s in SIZES.values()) + 1,
        teachers=max(s.teachers for s in SIZES.values()),
        groups=max(s.groups for s in SIZES.values()),
        rooms=max(s.rooms for s in SIZES.values()),
        days=5,
        slots=max(biggest.slots_per_day, 6),
    )


DEFAULT_BOUNDS = _default_bounds()


class ActionTable:
    """The index layout of the module docstring, and the translation to and from actions."""

    def __init__(self, bounds: Bounds) -> None:
        self.bounds = b = bounds
        self.cells = b.days * b.slots
        self.place = b.sessions * self.cells * b.rooms
        self.move_offset = self.place
        self.swap_offset = 2 * self.place
        self.unassign_offset = self.swap_offset + b.sessions * b.sessions
        self.submit_index = self.unassign_offset + b.sessions
        self.n = self.submit_index + 1

    def counts(self, problem: Problem) -> dict[str, int]:
        """How many actions of each type exist for ``problem`` (absent ones left out)."""
        s, r = len(problem.sessions), len(problem.room_ids)
        spots = sum(
            problem.n_days * (problem.per_day - length + 1) * r for length in problem.session_length
        )
        return {
            "assign_session": spots,
            "move_session": spots,
            "swap_sessions": s * (s - 1),
            "unassign_session": s,
            "submit_timetable": 1,
        }

    def index(self, kind: str, session: int, day: int = 0, start: int = 0, room: int = 0) -> int:
        b = self.bounds
        if kind in ("assign_session", "move_session"):
            base = 0 if kind == "assign_session" else self.move_offset
            return base + ((session * b.days + day) * b.slots + start) * b.rooms + room
        if kind == "unassign_session":
            return self.unassign_offset + session
        raise ValueError(kind)

    def swap_index(self, a: int, b: int) -> int:
        return self.swap_offset + a * self.bounds.sessions + b

    def decode(self, index: int, problem: Problem) -> Action:
        """The action of an index in ``0..n-1`` (absent ids written ``#i``)."""
        b = self.bounds

        def session(i: int) -> str:
            return problem.session_ids[i] if i < len(problem.session_ids) else f"#{i}"

        if index < self.swap_offset:
            kind = "assign_session" if index < self.move_offset else "move_session"
            rest = index % self.place
            rest, r = divmod(rest, b.rooms)
            rest, t = divmod(rest, b.slots)
            s, d = divmod(rest, b.days)
            room = problem.room_ids[r] if r < len(problem.room_ids) else f"#{r}"
            return Action(kind, session(s), d, t, room)
        if index < self.unassign_offset:
            a, t = divmod(index - self.swap_offset, b.sessions)
            return Action.swap(session(a), session(t))
        if index < self.submit_index:
            return Action.unassign(session(index - self.unassign_offset))
        return Action.submit()

    def encode(self, action: Action, problem: Problem) -> int | None:
        """The index of a parsed action, or None if no index expresses it."""
        kind = action.action_type
        if kind == "submit_timetable":
            return self.submit_index
        s = problem.session_index.get(action.session_id)
        if s is None or s >= self.bounds.sessions:
            return None
        if kind == "unassign_session":
            return self.unassign_offset + s
        if kind == "swap_sessions":
            t = problem.session_index.get(action.target_session_id)
            return None if t is None else self.swap_index(s, t)
        r = problem.room_index.get(action.room_id)
        day, start = action.day, action.start_slot
        b = self.bounds
        if r is None or day is None or start is None:
            return None
        if not (0 <= day < b.days and 0 <= start < b.slots and r < b.rooms):
            return None
        return self.index(kind, s, day, start, r)

    def describe(self, index: int, problem: Problem) -> str:
        """Readable text, e.g. ``assign_session(S3, Tue, 2, R1)``."""
        return _describe(self.decode(index, problem), problem)


def _bits(masks: tuple[tuple[int, ...], ...], bounds: Bounds) -> np.ndarray:
    """bool[entity, D, P] from per-day slot bitmasks."""
    out = np.zeros((len(masks), bounds.days, bounds.slots), dtype=bool)
    for i, by_day in enumerate(masks):
        for d, bits in enumerate(by_day):
            out[i, d] = [(bits >> t) & 1 for t in range(bounds.slots)]
    return out


def _windows(free: np.ndarray, length: int) -> np.ndarray:
    """bool[entity, D, P]: every cell of [t, t + length) is free (False past the day)."""
    out = free.copy()
    for k in range(1, length):
        out[..., : out.shape[-1] - k] &= free[..., k:]
        out[..., out.shape[-1] - k :] = False
    return out


def placeable(problem: Problem, bounds: Bounds) -> np.ndarray:
    """bool[S, D, P, R]: where each session may be placed (the mask's static part)."""
    b, p = bounds, problem
    out = np.zeros((b.sessions, b.days, b.slots, b.rooms), dtype=bool)
    n_rooms = len(p.room_ids)
    grid = np.zeros((1, b.days, b.slots), dtype=bool)
    grid[0, : p.n_days, : p.per_day] = True
    hard = p.task_name in HARD_MASKED
    teachers = _bits(p.teacher_avail_mask, b) & grid if hard else None
    rooms = _bits(p.room_avail_mask, b) & grid if hard else None
    cache: dict[int, tuple[np.ndarray, np.ndarray | None, np.ndarray | None]] = {}
    for s in range(len(p.sessions)):
        length = p.session_length[s]
        if length not in cache:
            cache[length] = (
                _windows(grid, length)[0],
                None if teachers is None else _windows(teachers, length),
                None if rooms is None else _windows(rooms, length).transpose(1, 2, 0),
            )
        in_grid, teacher_ok, room_ok = cache[length]
        if not hard:
            out[s, :, :, :n_rooms] = in_grid[:, :, None]
            continue
        assert teacher_ok is not None and room_ok is not None
        allowed = np.array([p.type_ok[s][r] and p.capacity_ok[s][r] for r in range(n_rooms)])
        out[s, :, :, :n_rooms] = (
            teacher_ok[p.session_teacher[s]][:, :, None] & room_ok & allowed[None, None, :]
        )
    return out


class Masker:
    """The action mask of one episode, kept up to date session by session."""

    def __init__(self, table: ActionTable, problem: Problem) -> None:
        self.table = table
        b = table.bounds
        self.n_sessions = len(problem.sessions)
        # int8 like the mask (row copies are plain copies); by_spot[cell-room] is a column
        self.placeable = placeable(problem, b).astype(np.int8)
        self.by_spot = np.ascontiguousarray(self.placeable.reshape(b.sessions, -1).T)
        self.mask = np.zeros(table.n, dtype=np.int8)
        self.mask[table.submit_index] = 1
        # each session's spot as (day, start, room) and as a flat cell-room index; -1 unplaced
        self.spot = np.full((b.sessions, 3), -1, dtype=np.int64)
        self.where = np.full(b.sessions, -1, dtype=np.int64)
        self._views()
        self.assign[: self.n_sessions] = self.flat[: self.n_sessions]

    def _views(self) -> None:
        """Sections of the one flat mask (rebuilt after unpickling: views do not survive)."""
        t, n = self.table, self.table.bounds.sessions
        self.flat = self.placeable.reshape(n, -1)
        self.assign = self.mask[: t.place].reshape(n, -1)
        self.move = self.mask[t.move_offset : t.swap_offset].reshape(n, -1)
        self.swap = self.mask[t.swap_offset : t.unassign_offset].reshape(n, n)
        self.unassign = self.mask[t.unassign_offset : t.submit_index]

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        for name in ("flat", "assign", "move", "swap", "unassign"):
            del state[name]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._views()

    def set_spot(self, session: int, spot: tuple[int, int, int] | None) -> None:
        """Record where ``session`` now is (None: unplaced); its rows change later."""
        if spot is None:
            self.spot[session] = -1
            self.where[session] = -1
        else:
            b = self.table.bounds
            self.spot[session] = spot
            self.where[session] = (spot[0] * b.slots + spot[1]) * b.rooms + spot[2]

    def refresh(self, sessions: list[int]) -> None:
        """Recompute the rows of ``sessions`` (after they moved) and their swap pairs.

        A handful of whole-row numpy operations per session, whatever the number of
        sessions placed (one gather over every session's spot, no fancy 2-D indexing):
        the step's largest cost after scoring, so it is kept lean."""
        where = self.where
        flat, swap = self.flat, self.swap
        placed = where >= 0
        for s in sessions:
            at = int(where[s])
            if at >= 0:
                # a <-> b: both placed, a != b, each allowed at the other's spot (an
                # unplaced b's where is -1: whatever take() reads there, placed drops it)
                row = self.by_spot[at] & flat[s].take(where) & placed
                row[s] = 0
                swap[s] = row
                swap[:, s] = row
                self.assign[s] = 0
                move = self.move[s]
                move[:] = flat[s]
                move[at] = 0
                self.unassign[s] = 1
            else:
                swap[s] = 0
                swap[:, s] = 0
                self.assign[s] = flat[s]
                self.move[s] = 0
                self.unassign[s] = 0


class Encoder:
    """The flat ``Dict`` observation of one env's bounds (see the module docstring).

    All keys live in two buffers, one per dtype (``MultiBinary`` keys int8, ``Box`` keys
    float32), which the episode keeps up to date in place; an observation is one copy of
    each, handed out as views. So no array is shared between steps, and a step copies two
    arrays whatever the bounds.
    """

    def __init__(self, bounds: Bounds) -> None:
        self.bounds = b = bounds
        cells = b.days * b.slots
        self.session_static = 3 + b.teachers + b.groups + b.rooms + b.days + b.slots + b.rooms
        self.session_spot = 1 + b.days + b.slots + b.rooms
        s = float(b.sessions)
        self.layout: dict[str, tuple[str, int, int]] = {}  # key: (buffer, start, stop)
        sizes = {
            "teacher_load": (b.teachers * cells, s),
            "group_load": (b.groups * cells, s),
            "room_load": (b.rooms * cells, s),
            "teacher_available": (b.teachers * cells, None),
            "teacher_preferred": (b.teachers * cells, None),
            "room_available": (b.rooms * cells, None),
            "sessions": (b.sessions * self.session_static, 1.0),
            "session_spot": (b.sessions * self.session_spot, None),
            "grid": (b.days + b.slots, None),
            "present": (b.teachers + b.groups + b.rooms, None),
            "difficulty": (len(DIFFICULTIES), None),
            "budget": (1, 1.0),
            "scores": (len(SCORE_KEYS), 1.0),
            "conflicts": (len(CONFLICT_KEYS), 1.0),
        }
        ends = {"i8": 0, "f32": 0}
        space = {}
        for key, (size, high) in sizes.items():
            kind = "i8" if high is None else "f32"
            self.layout[key] = (kind, ends[kind], ends[kind] + size)
            ends[kind] += size
            space[key] = (
                spaces.MultiBinary(size)
                if high is None
                else spaces.Box(0.0, high, (size,), np.float32)
            )
        self._space = spaces.Dict(space)
        self._sizes = ends

    def space(self) -> spaces.Dict:
        return self._space

    def _view(self, key: str) -> np.ndarray:
        kind, start, stop = self.layout[key]
        return (self.i8 if kind == "i8" else self.f32)[start:stop]

    def begin(self, problem: Problem) -> None:
        """Build the buffers of a new episode (everything static, and empty loads)."""
        b, p = self.bounds, problem
        self.problem = p
        self.i8 = np.zeros(self._sizes["i8"], np.int8)
        self.f32 = np.zeros(self._sizes["f32"], np.float32)
        shape = (b.days, b.slots)
        self.tail = self.layout["budget"][1]  # budget, scores, conflicts: the last 16

        def grid(key: str, masks: tuple[tuple[int, ...], ...], rows: int) -> None:
            out = self._view(key).reshape(rows, *shape)
            for i, by_day in enumerate(masks):
                for d, bits in enumerate(by_day):
                    for t in range(p.per_day):
                        out[i, d, t] = (bits >> t) & 1

        grid("teacher_available", p.teacher_avail_mask, b.teachers)
        grid("teacher_preferred", p.teacher_pref_mask, b.teachers)
        grid("room_available", p.room_avail_mask, b.rooms)
        sessions = self._view("sessions").reshape(b.sessions, self.session_static)
        n_rooms = len(p.room_ids)
        for s in range(len(p.sessions)):
            row = sessions[s]
            row[0] = 1.0
            row[1] = float(p.session_must[s])
            row[2] = (p.session_length[s] - 1) / max(1, b.slots - 1)
            col = 3
            row[col + p.session_teacher[s]] = 1.0
            col += b.teachers
            row[col + p.session_group[s]] = 1.0
            col += b.groups
            for r in range(n_rooms):  # room_fit's value where the room qualifies, else 0
                if p.type_ok[s][r] and p.capacity_ok[s][r]:
                    row[col + r] = p.fit_num[s][r] / p.fit_den
            col += b.rooms
            base = p.baseline.get(s)
            if base is not None:
                row[col + base[0]] = 1.0
                row[col + b.days + base[1]] = 1.0
                row[col + b.days + b.slots + base[2]] = 1.0
        grid_bits = self._view("grid")
        grid_bits[: p.n_days] = 1
        grid_bits[b.days : b.days + p.per_day] = 1
        present = self._view("present")
        present[: len(p.teacher_ids)] = 1
        present[b.teachers : b.teachers + len(p.group_ids)] = 1
        present[b.teachers + b.groups : b.teachers + b.groups + n_rooms] = 1
        self._view("difficulty")[DIFFICULTIES.index(p.task_name)] = 1
        self.placed: dict[int, tuple[int, int, int]] = {}
        # per session: its teacher's, group's and room 0's load offsets, its spot row, length
        cells = b.days * b.slots
        self._offsets = [
            (
                self.layout["teacher_load"][1] + p.session_teacher[s] * cells,
                self.layout["group_load"][1] + p.session_group[s] * cells,
                self.layout["room_load"][1],
                self.layout["session_spot"][1] + s * self.session_spot,
                p.session_length[s],
            )
            for s in range(len(p.sessions))
        ]

    def set_spot(self, session: int, spot: tuple[int, int, int] | None) -> None:
        """Move ``session``'s contribution from where it was to ``spot`` (None: unplaced).

        Scalar updates of the two buffers at offsets worked out at :meth:`begin` (a
        placement touches 3 x its duration load cells and 4 spot bits): cheaper than any
        array operation at these sizes, and the mask's and the observation's upkeep is
        most of a discrete step's cost."""
        old = self.placed.pop(session, None)
        if old is not None:
            self._put(session, old, -1.0, 0)
        if spot is not None:
            self._put(session, spot, 1.0, 1)
            self.placed[session] = spot

    def _put(self, session: int, spot: tuple[int, int, int], delta: float, bit: int) -> None:
        d, t, r = spot
        teacher, group, room, row, length = self._offsets[session]
        b = self.bounds
        cell = d * b.slots + t
        room += r * b.days * b.slots
        f32 = self.f32
        for k in range(cell, cell + length):
            f32[teacher + k] += delta
            f32[group + k] += delta
            f32[room + k] += delta
        i8 = self.i8
        i8[row] = bit
        i8[row + 1 + d] = bit
        i8[row + 1 + b.days + t] = bit
        i8[row + 1 + b.days + b.slots + r] = bit

    def observe(self, episode: TimetableEpisode) -> dict[str, np.ndarray]:
        """A fresh observation of the episode's state (no array is shared between steps)."""
        scores, c = episode.scores, episode.conflicts
        table = episode.timetable
        n_s = max(1, len(table))
        n_c = max(1, table.n_cells)
        f32 = self.f32.copy()
        f32[self.tail :] = (
            episode.remaining_budget / max(1, self.problem.step_budget),
            scores.overall_score,
            scores.hard_constraint_score,
            scores.coverage_score,
            scores.compactness_score,
            scores.room_fit_score,
            scores.stability_score,
            scores.preference_score,
            scores.daily_balance_score,
            min(1.0, c.teacher_overlap / n_c),
            min(1.0, c.group_overlap / n_c),
            min(1.0, c.room_overlap / n_c),
            min(1.0, c.room_capacity_violation / n_s),
            min(1.0, c.room_type_violation / n_s),
            min(1.0, c.teacher_availability_violation / n_c),
            min(1.0, c.room_availability_violation / n_c),
        )
        buffers = {"i8": self.i8.copy(), "f32": f32}
        return {key: buffers[kind][a:b] for key, (kind, a, b) in self.layout.items()}


class DiscreteInterface:
    """Discrete actions and dict observations over a :class:`~.task.PlannerEpisode`."""

    name = "discrete"

    def __init__(self, bounds: Bounds = DEFAULT_BOUNDS) -> None:
        self.bounds = bounds
        self.table = ActionTable(bounds)
        self.encoder = Encoder(bounds)
        self.action_space = spaces.Discrete(self.table.n)
        self.observation_space = self.encoder.space()
        self.last_action: str | None = None
        self.last_result: str | None = None
        self.episode: Any = None
        self.masker: Masker | None = None

    def begin(self, episode: Any) -> dict[str, np.ndarray]:
        problem = episode.engine.problem
        self.bounds.check(problem)
        self.episode = episode
        self.encoder.begin(problem)
        self.masker = Masker(self.table, problem)
        self.last_action = self.last_result = None
        changed = []
        for session, spot in episode.engine.timetable.items():
            self.encoder.set_spot(session, spot)
            self.masker.set_spot(session, spot)
            changed.append(session)
        if changed:
            self.masker.refresh(changed)
        return self.encoder.observe(episode.engine)

    def apply(self, episode: Any, action: Any) -> tuple[dict[str, np.ndarray], bool]:
        if episode is not self.episode or self.masker is None:
            raise RuntimeError("call begin(episode) before apply()")
        engine = episode.engine
        problem = engine.problem
        index = coerce_action(action, self.table.n)
        if index is None:
            played: Action | Rejected = Rejected(
                f"action {_short(action)} is not an integer in 0..{self.table.n - 1}"
            )
            self.last_action = _short(action)
        else:
            played = self.table.decode(index, problem)
            self.last_action = _describe(played, problem)
        result = episode.play(played)
        self.last_result = result.action_error
        if result.outcome == "apply" and result.action is not None:
            kind = result.action.action_type
            if kind != "submit_timetable":
                touched = [problem.session_index[result.action.session_id]]
                if kind == "swap_sessions":
                    touched.append(problem.session_index[result.action.target_session_id])
                table = engine.timetable
                for session in touched:
                    spot = table.spot(session)
                    self.encoder.set_spot(session, spot)
                    self.masker.set_spot(session, spot)
                self.masker.refresh(touched)
        return self.encoder.observe(engine), engine.terminated

    def reset_info(self) -> dict[str, Any]:
        return {"action_mask": self.action_mask()}

    def step_info(self) -> dict[str, Any]:
        info = self.episode.step_info()
        info["action_mask"] = self.action_mask()
        return info

    def action_mask(self) -> np.ndarray:
        """A fresh int8 array, 1 where an action is allowed (see the module docstring)."""
        assert self.masker is not None
        return self.masker.mask.copy()

    def describe_action(self, index: int, episode: Any) -> str:
        """Readable text for ``index``, e.g. ``assign_session(S3, Tue, 2, R1)``."""
        if episode is None:
            raise RuntimeError("describe() needs an episode: call reset() first")
        return self.table.describe(index, episode.engine.problem)


def _describe(action: Action, problem: Problem) -> str:
    kind = action.action_type
    if kind in ("assign_session", "move_session"):
        d = action.day
        day = problem.day_labels[d] if d is not None and d < problem.n_days else f"#{d}"
        return f"{kind}({action.session_id}, {day}, {action.start_slot}, {action.room_id})"
    if kind == "swap_sessions":
        return f"swap_sessions({action.session_id}, {action.target_session_id})"
    if kind == "unassign_session":
        return f"unassign_session({action.session_id})"
    return "submit_timetable()"


def _short(value: Any) -> str:
    return show(value, 60)
