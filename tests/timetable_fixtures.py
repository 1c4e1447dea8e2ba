"""The predecessor's recorded behaviour, read from the shared reference folder beside the repo.

``../shared/reference/timetable_planner/`` holds RULES.md, scenarios.json and
trajectories.json (recorded from the predecessor under PYTHONHASHSEED=0). Tests that
need them skip with a clear reason when the folder is absent; the package never reads
it at run time.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

REFERENCE = (
    Path(__file__).resolve().parents[1].parent / "shared" / "reference" / "timetable_planner"
)


@cache
def _load(name: str) -> Any:
    path = REFERENCE / name
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def reference(name: str) -> Any:
    """A reference JSON file, or skip the test saying where it was looked for."""
    data = _load(name)
    if data is None:
        pytest.skip(f"reference data {REFERENCE / name} is not checked out beside the repo")
    return data


def trajectories() -> list[tuple[str, dict[str, Any]]]:
    """(scenario_id, trajectory) of every recording: 15 x 6 hand-crafted, 8 generated."""
    data = reference("trajectories.json")
    out = [(s["scenario_id"], t) for s in data["scenarios"] for t in s["trajectories"]]
    out += [(g["scenario_id"], t) for g in data["generated"] for t in g["trajectories"]]
    return out


def has_fraction(action: dict[str, Any]) -> bool:
    """Whether a recorded action gives day or start_slot as a float with a fraction (D16)."""
    return any(
        isinstance(action.get(key), float) and not float(action[key]).is_integer()
        for key in ("day", "start_slot")
    )
