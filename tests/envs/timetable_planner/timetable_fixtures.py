"""The predecessor's recorded behaviour, read from the copies in ``tests/data/timetable_planner/``.

``scenarios.json`` (its 15 hand-crafted scenarios) and ``trajectories.json.gz`` (98
trajectories recorded from it under PYTHONHASHSEED=0, gzipped byte for byte) are copied
from the project's reference folder; ``tests/data/README.md`` names their source and
licence. The package never reads them at run time.
"""

from __future__ import annotations

import gzip
import json
from functools import cache
from typing import Any

from hypothesis import strategies as st
from paths import DATA

DATA = DATA / "timetable_planner"


@cache
def reference(name: str) -> Any:
    """A reference JSON file by its name (``trajectories.json`` is stored gzipped)."""
    path = DATA / name
    if not path.is_file():  # stored compressed: 1.6 MB of JSON is 96 kB gzipped
        path = DATA / f"{name}.gz"
        return json.loads(gzip.decompress(path.read_bytes()).decode("utf-8"))
    return json.loads(path.read_text(encoding="utf-8"))


def trajectories() -> list[tuple[str, dict[str, Any]]]:
    """(scenario_id, trajectory) of every recording: 15 x 6 hand-crafted, 8 generated."""
    data = reference("trajectories.json")
    out = [(s["scenario_id"], t) for s in data["scenarios"] for t in s["trajectories"]]
    out += [(g["scenario_id"], t) for g in data["generated"] for t in g["trajectories"]]
    return out


def trajectory_keys() -> list[str]:
    """``scenario_id-name`` of every recording, in :func:`trajectories` order (test ids)."""
    return [f"{sid}-{t['name']}" for sid, t in trajectories()]


def recording(key: str) -> tuple[str, dict[str, Any]]:
    """The (scenario_id, trajectory) whose :func:`trajectory_keys` entry is ``key``."""
    for sid, t in trajectories():
        if f"{sid}-{t['name']}" == key:
            return sid, t
    raise KeyError(key)


def has_fraction(action: dict[str, Any]) -> bool:
    """Whether a recorded action gives day or start_slot as a float with a fraction (D16)."""
    return any(
        isinstance(action.get(key), float) and not float(action[key]).is_integer()
        for key in ("day", "start_slot")
    )


def given_but_refused(step: dict[str, Any]) -> str | None:
    """The field (``day`` or ``start_slot``) that the predecessor called missing although the
    recorded action gave it (``"Someday"``, ``true``, ``"1.5"``); ``None`` for other steps.

    Here such a field is named with its value and what it may be, at the same penalty.
    """
    error, action = step["action_error"] or "", step["action"]
    if not error.startswith("missing required fields: "):
        return None
    for field in ("day", "start_slot"):
        if action.get(field) is not None and field in error:
            return field
    return None


def placement(action_type: str, session_id: str, day: Any, start: Any, room: str) -> dict[str, Any]:
    """A JSON action that puts ``session_id`` at (day, start_slot, room_id)."""
    return {
        "action_type": action_type,
        "session_id": session_id,
        "day": day,
        "start_slot": start,
        "room_id": room,
    }


ASSIGN = placement("assign_session", "E1_S1", 0, 0, "R2")
"""A valid first assignment in catalogue scenario ``easy_1``."""


def random_action(rng: Any, problem: Any, timetable: Any) -> dict[str, Any]:
    """A random JSON action, mostly valid, often conflicting, sometimes invalid or a no-op.

    Draws only from ``rng``; never submits (the caller decides when to end).
    """
    sessions = problem.session_ids
    placed = [problem.session_ids[s] for s, _ in timetable.items()]
    unplaced = [sid for i, sid in enumerate(sessions) if i not in timetable]
    roll = rng.random()
    day = rng.randrange(problem.n_days)
    start = rng.randrange(problem.per_day)
    room = rng.choice(problem.room_ids)
    if roll < 0.45 and unplaced:
        return placement("assign_session", rng.choice(unplaced), day, start, room)
    if roll < 0.65 and placed:
        return placement("move_session", rng.choice(placed), day, start, room)
    if roll < 0.8 and placed:
        return {
            "action_type": "swap_sessions",
            "session_id": rng.choice(placed),
            "target_session_id": rng.choice(placed),
        }
    if roll < 0.9 and placed:
        return {"action_type": "unassign_session", "session_id": rng.choice(placed)}
    # the arguments are drawn left to right, in the order the dict used to draw them
    return placement(
        rng.choice(["assign_session", "move_session", "unassign_session"]),
        rng.choice(sessions),
        rng.randrange(-1, problem.n_days + 1),
        rng.randrange(-1, problem.per_day + 1),
        room,
    )


def json_strategy(words: list[str], *, text: int, keys: int, leaves: int) -> Any:
    """A hypothesis strategy for any JSON value, often one of ``words``.

    Strings have at most ``text`` characters, dict keys at most ``keys``; lists and dicts
    hold at most three entries, and a value at most ``leaves`` leaves.
    """
    return st.recursive(
        st.none()
        | st.booleans()
        | st.integers(-(2**70), 2**70)
        | st.floats()
        | st.text(max_size=text)
        | st.sampled_from(words),
        lambda children: (
            st.lists(children, max_size=3)
            | st.dictionaries(st.text(max_size=keys), children, max_size=3)
        ),
        max_leaves=leaves,
    )
