"""The solver's documented results on the 23 catalogue scenarios (package data).

``data/solver_best.json`` holds, for each of the 23 scenarios, the best timetable the
solver found (``python -m meeting_gym.bench.timetable_table`` wrote it; :mod:`.solver`
says how), its overall score as the env computes it, and whether the solver proved it optimal. The
``solver`` policy replays these timetables for the catalogue's scenarios instead of
solving again (OR-Tools is an optional extra), and the registry tests hold the solver
policy to them. Keys are :func:`~.scenario.content_key` values, so a changed scenario never
matches a stale entry.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from meeting_gym.envs.timetable_planner.domain.catalogue import data_file
from meeting_gym.envs.timetable_planner.domain.scenario import content_key

DATA = "data/solver_best.json"


@cache
def known_best() -> dict[str, dict[str, Any]]:
    """``{content key: {"scenario_id", "score", "timetable", "optimal", ...}}``."""
    path = data_file(DATA)
    if not path.is_file():
        return {}
    payload = json.loads(path.read_text(encoding="utf-8"))
    return {row["key"]: row for row in payload["scenarios"]}


def documented_timetable(problem: Any) -> dict[int, tuple[int, int, int]] | None:
    """The documented solver timetable of ``problem``'s scenario, by session index, or None.

    ``problem`` may be built from the scenario itself or from its first observation
    (:func:`~.view.scenario_from_view`): rows carry both keys.
    """
    rows = _by_any_key()
    row = rows.get(content_key(problem.scenario))
    if row is None:
        return None
    return {
        problem.session_index[sid]: (day, start, problem.room_index[room])
        for sid, day, start, room in row["timetable"]
    }


@cache
def _by_any_key() -> dict[str, dict[str, Any]]:
    rows = known_best()
    return {**rows, **{row["view_key"]: row for row in rows.values()}}
