"""Scenario loading: every malformed field gives one ScenarioError naming it."""

from __future__ import annotations

import copy

import pytest
from scenarios import one_person

from meeting_gym.envs.meeting_slot.domain.curated import curated_dicts
from meeting_gym.envs.meeting_slot.domain.scenario import Scenario, ScenarioError

BASE = one_person(
    "America/New_York", "09:00", "17:00", "2024-03-11", 30, {"2024-03-11": [("09:00", "10:00")]}
)


def mutate(path: str, value):
    data = copy.deepcopy(BASE)
    *parents, last = path.split("/")
    node = data
    for key in parents:
        node = node[int(key)] if key.isdigit() else node[key]
    if value is KeyError:
        del node[last]
    else:
        node[int(last) if last.isdigit() else last] = value
    return data


CASES = [
    ("world/attendees/0/timezone", "Mars/Olympus", "timezone"),
    ("world/attendees/0/timezone", "../../etc/passwd", "timezone"),
    ("world/attendees/0/timezone", 5, "timezone"),
    ("world/attendees/0/working_hours/start", "9:00", "working_hours.start"),
    ("world/attendees/0/working_hours/start", "25:00", "working_hours.start"),
    ("world/attendees/0/working_hours/start", "24:00", "working_hours.start"),
    ("world/attendees/0/working_hours/end", "17:60", "working_hours.end"),
    ("world/attendees/0/working_hours/end", "08:00", "working_hours"),
    ("world/attendees/0/working_hours/end", "09:00", "working_hours"),
    ("world/attendees/0/working_hours/weekdays", [0, 7], "weekdays"),
    ("world/attendees/0/working_hours/weekdays", [-1], "weekdays"),
    ("world/attendees/0/working_hours/weekdays", [True], "weekdays"),
    ("world/attendees/0/working_hours/weekdays", "01234", "weekdays"),
    ("world/attendees/0/busy", {"2024-03-11": [{"start": "10:00", "end": "10:00"}]}, "busy"),
    ("world/attendees/0/busy", {"2024-03-11": [{"start": "11:00", "end": "10:00"}]}, "busy"),
    ("world/attendees/0/busy", {"2024-3-11": []}, "busy"),
    ("world/attendees/0/busy", {"2024-03-11": [{"start": "24:00", "end": "24:00"}]}, "busy"),
    ("world/attendees/0/busy", {"2024-03-11": "all day"}, "busy"),
    ("world/attendees/0/busy", [], "busy"),
    ("world/attendees/0/name", "", "name"),
    ("world/attendees/0/name", KeyError, "name"),
    ("world/attendees/0/working_hours", KeyError, "working_hours"),
    ("world/attendees", [], "world.attendees"),
    ("world/attendees", "Ava", "world.attendees"),
    ("world", KeyError, "world"),
    ("duration_minutes", 0, "duration_minutes"),
    ("duration_minutes", -30, "duration_minutes"),
    ("duration_minutes", 30.0, "duration_minutes"),
    ("duration_minutes", True, "duration_minutes"),
    ("duration_minutes", KeyError, "duration_minutes"),
    ("window_days", 0, "window_days"),
    ("window_days", 10_000, "window_days"),
    ("window_start", "2024-02-30", "window_start"),
    ("window_start", "11/03/2024", "window_start"),
    ("window_start", "0001-01-01", "window_start"),
    ("id", 7, "id"),
]


@pytest.mark.parametrize("path, value, field", CASES, ids=lambda x: str(x)[:30])
def test_malformed_field_is_named(path, value, field):
    with pytest.raises(ScenarioError) as excinfo:
        Scenario.from_dict(mutate(path, value))
    assert field in str(excinfo.value)


def test_duplicate_names_rejected_case_insensitively():
    data = copy.deepcopy(BASE)
    twin = copy.deepcopy(data["world"]["attendees"][0])
    twin["name"] = "ava"
    data["world"]["attendees"].append(twin)
    with pytest.raises(ScenarioError, match=r"attendees\[1\]\.name.*duplicate"):
        Scenario.from_dict(data)


@pytest.mark.parametrize("value", [None, [], "scenario", 3])
def test_non_object_root(value):
    with pytest.raises(ScenarioError, match="expected an object"):
        Scenario.from_dict(value)


def test_24_00_allowed_as_end_only():
    ok = mutate("world/attendees/0/working_hours/end", "24:00")
    assert Scenario.from_dict(ok).attendees[0].work_end == 1440


@pytest.mark.parametrize("data", curated_dicts(), ids=lambda d: d["id"])
def test_round_trip(data):
    assert Scenario.from_dict(data).to_dict() == data


def test_scenario_error_is_a_value_error():
    assert issubclass(ScenarioError, ValueError)
