"""The original's procedural generator (RULES section 10), deterministic in every process.

:func:`generate` draws one scenario of a difficulty from the ``random.Random`` passed in,
and nothing else (never the global ``random``), in the exact order of draws of
``ajay-sreeram/timetable_planner`` (the env this one succeeds), so
``generate(random.Random(seed), difficulty)`` is that env's
``generate_scenario(difficulty, seed)``. :func:`predecessor_scenario` does exactly that,
with the original's id ``gen_<difficulty>_<seed>``; :data:`PREDECESSOR_SEEDS` are the
8 its catalogue ships (``gen_easy_1001`` ... ``gen_expert_4002``).

**D1 fixed**: the original generator listed the room types from a set, so its
``rng.choice`` saw a ``PYTHONHASHSEED``-dependent order and the "same" seed gave different
scenarios in different processes. Here the types are sorted, which reproduces the
original's output under ``PYTHONHASHSEED=0`` (the recorded trajectories) under any hash
seed.

**D18 fixed (second half)**: the original tested ``seed or <random>``, so seed 0 got a
random id suffix; here seed 0 is ``gen_<difficulty>_0`` like any other.

The draws, in order (``randint`` bounds inclusive; "sample" is ``rng.sample``):

1. teachers ``T1..Tn``: easy draws nothing (every slot available, preferred = available);
   otherwise the *random availability* below, then for each available day in ascending
   order with more than one slot ``m = randint(1, slots - 1)`` and a sorted sample of m of
   them as preferred (a day with one slot is copied);
   *random availability*: ``randint(3, 5)`` days, a sorted sample of that many day
   indices, then per chosen day ``randint(2, P)`` slots, a sorted sample of ``range(P)``;
2. groups ``G1..Gn``: size ``randint(12, 32)``;
3. rooms ``R1..Rn``: the types [lecture, lab, seminar] repeated n // 3 + 1 times and
   shuffled; per room, capacity ``randint(18, 40)``, then (not easy) random availability;
4. sessions: up to 20 n attempts ``S1, S2, ...``: a teacher, a group, a room type
   (``choice`` each; types sorted), required capacity min(group size, largest room of the
   type), duration ``choice([1, 1, 1, 2])`` (easy: 1, no draw), must_schedule
   ``random() < 0.85``; a must_schedule session with no spot inside its teacher's and a
   big-enough room's availability is dropped (its index skipped); stop at n sessions;
5. hard and expert: the baseline, a first fit of the shuffled must_schedule sessions
   (rooms of the type in order, too small skipped, then day, then start; every cell
   available and free for the teacher, group and room; a session with no spot is left
   out, D10); then the disruption: its type by ``choice``; for teacher_unavailable /
   room_unavailable a teacher (room) by ``choice`` and a sample of
   ``max(1, cells // 6)`` of its available cells in (day, slot) order, grouped by day in
   sample order; for new_session_added a type, ``randint(100, 999)`` for the id
   ``S_new_<n>``, a teacher, a group, and ``min(randint(14, 28), largest room of the
   type)`` as capacity (duration 1, must_schedule, not checked for feasibility: D9).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from meeting_gym.envs.timetable_planner.domain.scenario import DIFFICULTIES, Scenario

__all__ = [
    "DIFFICULTIES",
    "PREDECESSOR_SEEDS",
    "ROOM_TYPES",
    "SIZES",
    "Sizes",
    "generate",
    "generate_dict",
    "predecessor_id",
    "predecessor_scenario",
]

DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri")
ROOM_TYPES = ("lecture", "lab", "seminar")
"""The room types in the order the room list repeats them (before the shuffle)."""
DISRUPTIONS = ("teacher_unavailable", "room_unavailable", "new_session_added")


@dataclass(frozen=True)
class Sizes:
    """How big a generated scenario is (the original's per-difficulty constants)."""

    teachers: int
    groups: int
    rooms: int
    sessions: int
    slots_per_day: int
    step_budget: int


SIZES = {
    "easy": Sizes(4, 4, 5, 14, 4, 25),
    "medium": Sizes(5, 5, 6, 18, 5, 35),
    "hard": Sizes(6, 6, 7, 20, 5, 45),
    "expert": Sizes(7, 7, 8, 24, 6, 55),
}

PREDECESSOR_SEEDS = (
    ("easy", 1001),
    ("easy", 1002),
    ("medium", 2001),
    ("medium", 2002),
    ("hard", 3001),
    ("hard", 3002),
    ("expert", 4001),
    ("expert", 4002),
)
"""The (difficulty, seed) of the 8 generated scenarios in the original's catalogue."""


def predecessor_id(difficulty: str, seed: int) -> str:
    return f"gen_{difficulty}_{seed}"


def predecessor_scenario(difficulty: str, seed: int) -> Scenario:
    """The original's ``generate_scenario(difficulty, seed)``, id ``gen_<difficulty>_<seed>``."""
    return generate(random.Random(seed), difficulty, scenario_id=predecessor_id(difficulty, seed))


def generate(
    rng: random.Random,
    difficulty: str | None = None,
    scenario_id: str | None = None,
    sizes: Sizes | None = None,
) -> Scenario:
    """Draw one scenario from ``rng`` (see the module docstring for the draws).

    ``difficulty`` None draws one uniformly from :data:`DIFFICULTIES` first. ``scenario_id``
    None names it ``tt_<difficulty>_<8 hex digits of its content's SHA-256>``, so equal
    scenarios get equal ids. ``sizes`` overrides the difficulty's :data:`SIZES` (for
    scaling studies); the rules stay the difficulty's.
    """
    return Scenario.from_dict(generate_dict(rng, difficulty, scenario_id, sizes))


def generate_dict(
    rng: random.Random,
    difficulty: str | None = None,
    scenario_id: str | None = None,
    sizes: Sizes | None = None,
) -> dict[str, Any]:
    """:func:`generate`'s scenario as the original's JSON dict (same key order)."""
    if difficulty is None:
        difficulty = rng.choice(DIFFICULTIES)
    if difficulty not in SIZES:
        raise ValueError(
            f"unknown difficulty {difficulty!r}; choose one of {', '.join(DIFFICULTIES)}"
        )
    size = sizes or SIZES[difficulty]
    per_day = size.slots_per_day
    easy = difficulty == "easy"

    teachers: list[dict[str, Any]] = []
    for i in range(1, size.teachers + 1):
        teacher: dict[str, Any] = {"teacher_id": f"T{i}"}
        if not easy:
            available = _random_availability(rng, per_day)
            preferred: dict[str, list[int]] = {}
            for day in sorted(available, key=int):
                slots = available[day]
                if len(slots) > 1:
                    preferred[day] = sorted(rng.sample(slots, rng.randint(1, len(slots) - 1)))
                else:
                    preferred[day] = list(slots)
            teacher["available_slots"] = available
            teacher["preferred_slots"] = preferred
        teachers.append(teacher)

    groups = [{"group_id": f"G{i}", "size": rng.randint(12, 32)} for i in range(1, size.groups + 1)]

    types = list(ROOM_TYPES) * (size.rooms // 3 + 1)
    rng.shuffle(types)
    rooms: list[dict[str, Any]] = []
    for i in range(1, size.rooms + 1):
        room: dict[str, Any] = {
            "room_id": f"R{i}",
            "capacity": rng.randint(18, 40),
            "room_type": types[i - 1],
        }
        if not easy:
            room["available_slots"] = _random_availability(rng, per_day)
        rooms.append(room)

    distinct_types = sorted({r["room_type"] for r in rooms})  # D1: sorted, not set order
    largest = {t: max(r["capacity"] for r in rooms if r["room_type"] == t) for t in distinct_types}
    group_size = {g["group_id"]: g["size"] for g in groups}
    sessions: list[dict[str, Any]] = []
    for index in range(1, 20 * size.sessions + 1):
        if len(sessions) >= size.sessions:
            break
        teacher = rng.choice(teachers)
        group = rng.choice(groups)
        room_type = rng.choice(distinct_types)
        duration = 1 if easy else rng.choice([1, 1, 1, 2])
        must = rng.random() < 0.85
        session = {
            "session_id": f"S{index}",
            "teacher_id": teacher["teacher_id"],
            "group_id": group["group_id"],
            "valid_room_types": [room_type],
            "required_capacity": min(group_size[group["group_id"]], largest[room_type]),
            "duration_in_slots": duration,
            "must_schedule": must,
        }
        if must and not _has_spot(session, teacher, rooms, per_day):
            continue
        sessions.append(session)

    if scenario_id is None:
        scenario_id = "?"  # replaced by the content hash below
        hashed = True
    else:
        hashed = False
    scenario: dict[str, Any] = {
        "scenario_id": scenario_id,
        "task_name": difficulty,
        "grid": {"days": list(DAYS), "slots_per_day": per_day},
        "step_budget": size.step_budget,
        "teachers": teachers,
        "groups": groups,
        "rooms": rooms,
        "sessions": sessions,
        "initial_assignments": [],
    }
    if difficulty in ("hard", "expert"):
        scenario["baseline_assignments"] = _baseline(rng, sessions, teachers, rooms, per_day)
        scenario["disruption"] = _disruption(rng, teachers, groups, rooms, per_day)
    if hashed:
        text = json.dumps(scenario, sort_keys=True, separators=(",", ":"))
        scenario["scenario_id"] = f"tt_{difficulty}_{hashlib.sha256(text.encode()).hexdigest()[:8]}"
    return scenario


def _random_availability(rng: random.Random, per_day: int) -> dict[str, list[int]]:
    days = sorted(rng.sample(range(len(DAYS)), rng.randint(3, 5)))
    return {str(day): sorted(rng.sample(range(per_day), rng.randint(2, per_day))) for day in days}


def _cells(slot_map: dict[str, list[int]] | None, per_day: int) -> set[tuple[int, int]]:
    if slot_map is None:
        return {(d, s) for d in range(len(DAYS)) for s in range(per_day)}
    return {(int(d), s) for d, slots in slot_map.items() for s in slots}


def _starts(
    session: dict[str, Any],
    rooms: list[dict[str, Any]],
    per_day: int,
    fits: Callable[[dict[str, Any]], Callable[[tuple[int, int]], bool]],
) -> Iterator[tuple[dict[str, Any], int, int]]:
    """Each (room, day, start) of ``session`` in a room of its type and size whose cells
    all pass ``fits(room)``, in room, day and start order."""
    length = session["duration_in_slots"]
    for room in rooms:
        if room["room_type"] not in session["valid_room_types"]:
            continue
        if room["capacity"] < session["required_capacity"]:
            continue
        free = fits(room)
        for day in range(len(DAYS)):
            for start in range(per_day - length + 1):
                if all(free((day, start + k)) for k in range(length)):
                    yield room, day, start


def _has_spot(
    session: dict[str, Any], teacher: dict[str, Any], rooms: list[dict[str, Any]], per_day: int
) -> bool:
    teacher_cells = _cells(teacher.get("available_slots"), per_day)

    def fits(room: dict[str, Any]) -> Callable[[tuple[int, int]], bool]:
        return (teacher_cells & _cells(room.get("available_slots"), per_day)).__contains__

    return next(_starts(session, rooms, per_day, fits), None) is not None


def _baseline(
    rng: random.Random,
    sessions: list[dict[str, Any]],
    teachers: list[dict[str, Any]],
    rooms: list[dict[str, Any]],
    per_day: int,
) -> list[dict[str, Any]]:
    must = [s for s in sessions if s["must_schedule"]]
    rng.shuffle(must)
    teacher_cells = {t["teacher_id"]: _cells(t.get("available_slots"), per_day) for t in teachers}
    room_cells = {r["room_id"]: _cells(r.get("available_slots"), per_day) for r in rooms}
    busy: set[tuple[str, str, int, int]] = set()
    placed = []
    for session in must:
        spot = _first_fit(session, rooms, teacher_cells, room_cells, busy, per_day)
        if spot is None:
            continue  # D10: left out of the baseline
        room_id, day, start = spot
        for k in range(session["duration_in_slots"]):
            busy.add(("teacher", session["teacher_id"], day, start + k))
            busy.add(("group", session["group_id"], day, start + k))
            busy.add(("room", room_id, day, start + k))
        placed.append(
            {
                "session_id": session["session_id"],
                "day": day,
                "start_slot": start,
                "room_id": room_id,
            }
        )
    return placed


def _first_fit(
    session: dict[str, Any],
    rooms: list[dict[str, Any]],
    teacher_cells: dict[str, set[tuple[int, int]]],
    room_cells: dict[str, set[tuple[int, int]]],
    busy: set[tuple[str, str, int, int]],
    per_day: int,
) -> tuple[str, int, int] | None:
    teacher, group = session["teacher_id"], session["group_id"]

    def fits(room: dict[str, Any]) -> Callable[[tuple[int, int]], bool]:
        room_id = room["room_id"]
        return lambda c: (
            c in teacher_cells[teacher]
            and c in room_cells[room_id]
            and ("teacher", teacher, *c) not in busy
            and ("group", group, *c) not in busy
            and ("room", room_id, *c) not in busy
        )

    for room, day, start in _starts(session, rooms, per_day, fits):
        return room["room_id"], day, start
    return None


def _disruption(
    rng: random.Random,
    teachers: list[dict[str, Any]],
    groups: list[dict[str, Any]],
    rooms: list[dict[str, Any]],
    per_day: int,
) -> dict[str, Any]:
    kind = rng.choice(DISRUPTIONS)
    if kind in ("teacher_unavailable", "room_unavailable"):
        pool, key = (
            (teachers, "teacher_id") if kind == "teacher_unavailable" else (rooms, "room_id")
        )
        target = rng.choice(pool)
        cells = sorted(_cells(target.get("available_slots"), per_day))
        picked = rng.sample(cells, max(1, len(cells) // 6))
        slots: dict[str, list[int]] = {}
        for day, slot in picked:
            slots.setdefault(str(day), []).append(slot)
        return {"type": kind, key: target[key], "slots": slots}
    distinct_types = sorted({r["room_type"] for r in rooms})  # D1: sorted, not set order
    room_type = rng.choice(distinct_types)
    number = rng.randint(100, 999)
    teacher = rng.choice(teachers)
    group = rng.choice(groups)
    largest = max(r["capacity"] for r in rooms if r["room_type"] == room_type)
    capacity = min(rng.randint(14, 28), largest)
    return {
        "type": kind,
        "session": {
            "session_id": f"S_new_{number}",
            "teacher_id": teacher["teacher_id"],
            "group_id": group["group_id"],
            "valid_room_types": [room_type],
            "required_capacity": capacity,
            "duration_in_slots": 1,
            "must_schedule": True,
        },
    }
