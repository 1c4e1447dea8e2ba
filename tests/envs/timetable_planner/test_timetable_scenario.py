"""The scenario model: valid data loads and round-trips; malformed data raises ScenarioError only.

Every malformed scenario, hand-written or fuzzed, raises :class:`ScenarioError` whose
message starts with the path of the field (``scenario.sessions[3].duration_in_slots: ``).
"""

from __future__ import annotations

import copy
import json
import random
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from json_paths import paths
from timetable_fixtures import json_strategy

from meeting_gym.envs.timetable_planner.domain.catalogue import handcrafted, handcrafted_dicts
from meeting_gym.envs.timetable_planner.domain.episode import TimetableEpisode
from meeting_gym.envs.timetable_planner.domain.generator import SIZES, generate_dict
from meeting_gym.envs.timetable_planner.domain.problem import Problem
from meeting_gym.envs.timetable_planner.domain.scenario import Scenario, ScenarioError, Session

MESSAGE = re.compile(r'scenario(\.[a-z_]+|\[\d+\]|\["\d+"\])*: \S')


def _normalised(data: dict[str, Any]) -> dict[str, Any]:
    """The predecessor's loader defaults, written out (what to_dict gives back)."""
    out = copy.deepcopy(data)
    out.setdefault("step_budget", 30)
    out.setdefault("initial_assignments", [])
    sessions = out["sessions"] + (
        [out["disruption"]["session"]] if "session" in out.get("disruption", {}) else []
    )
    for session in sessions:
        session.setdefault("valid_room_types", [])
        session.setdefault("required_capacity", 0)
        session.setdefault("duration_in_slots", 1)
        session.setdefault("must_schedule", True)
    return out


def test_the_15_handcrafted_scenarios_load_and_round_trip():
    for data in handcrafted_dicts():
        scenario = Scenario.from_dict(data)
        assert scenario.to_dict() == _normalised(data)
        assert Scenario.from_dict(scenario.to_dict()) == scenario
        assert hash(scenario) == hash(Scenario.from_dict(json.loads(json.dumps(data))))


@pytest.mark.parametrize("difficulty", sorted(SIZES))
def test_generated_scenarios_round_trip(difficulty):
    for seed in range(5):
        data = generate_dict(random.Random(seed), difficulty, f"g{seed}")
        scenario = Scenario.from_dict(data)
        assert scenario.to_dict() == data
        assert Scenario.from_dict(scenario.to_dict()) == scenario


def _base() -> dict[str, Any]:
    return next(d for d in handcrafted_dicts() if d["scenario_id"] == "expert_1")


def _with(path: str, value: Any = None, *, delete: bool = False) -> dict[str, Any]:
    """expert_1 with one field (a dotted path, list indices as numbers) replaced or deleted."""
    data = _base()
    keys = [int(k) if k.isdigit() else k for k in path.split(".")]
    target = data
    for key in keys[:-1]:
        target = target[key]
    if delete:
        del target[keys[-1]]
    else:
        target[keys[-1]] = value
    return data


MALFORMED = [
    (None, "scenario: must be an object, got None"),
    ([], "scenario: must be an object, got []"),
    ({**_base(), "seed": 1}, "scenario: unknown field 'seed' (allowed: "),
    (_with("scenario_id", delete=True), "scenario.scenario_id: missing"),
    (_with("scenario_id", " x"), "scenario.scenario_id: must be a non-empty string"),
    (
        _with("task_name", "Expert"),
        "scenario.task_name: must be one of easy, medium, hard, expert, got 'Expert'",
    ),
    (_with("grid.days", []), "scenario.grid.days: must list 1 to 14 day labels, got 0"),
    (
        _with("grid.days", ["Mon", "mon"]),
        "scenario.grid.days[1]: duplicate label 'mon' (ignoring case)",
    ),
    (
        _with("grid.days", ["Mon", " 3 "]),
        "scenario.grid.days[1]: must be a non-empty string without",
    ),
    (
        _with("grid.days", ["Mon", "3"]),
        "scenario.grid.days[1]: a label cannot be an integer, got '3'",
    ),
    (
        _with("grid.slots_per_day", 0),
        "scenario.grid.slots_per_day: must be an integer from 1 to 48, got 0",
    ),
    (_with("grid.slots_per_day", 6.0), "scenario.grid.slots_per_day: must be an integer, got 6.0"),
    (_with("step_budget", "50"), "scenario.step_budget: must be an integer, got '50'"),
    (_with("step_budget", True), "scenario.step_budget: must be an integer, got True"),
    (_with("step_budget", 0), "scenario.step_budget: must be an integer from 1 to 100000, got 0"),
    (_with("teachers", {}), "scenario.teachers: must be a list, got {}"),
    (_with("teachers.1.teacher_id", "ET1"), "scenario.teachers[1].teacher_id: duplicate id 'ET1'"),
    (
        _with("teachers.0.available_slots", {"Mon": [0]}),
        "scenario.teachers[0].available_slots: day key 'Mon' must be a day index",
    ),
    (
        _with("teachers.0.available_slots", {"5": [0]}),
        "scenario.teachers[0].available_slots: day key '5' must be a day index",
    ),
    (
        _with("teachers.0.available_slots", {"01": [0]}),
        "scenario.teachers[0].available_slots: day key '01' must be",
    ),
    (
        _with("teachers.0.available_slots", {"0": [6]}),
        'scenario.teachers[0].available_slots["0"][0]: must be an integer from 0 to 5, got 6',
    ),
    (
        _with("teachers.0.preferred_slots", {"0": 1}),
        'scenario.teachers[0].preferred_slots["0"]: must be a list, got 1',
    ),
    (_with("teachers.0.room_type", "lab"), "scenario.teachers[0]: unknown field 'room_type'"),
    (_with("groups.0.size", delete=True), "scenario.groups[0].size: missing"),
    (_with("groups.0.size", -1), "scenario.groups[0].size: must be an integer >= 0, got -1"),
    (_with("rooms.0.capacity", 1.5), "scenario.rooms[0].capacity: must be an integer, got 1.5"),
    (_with("rooms.0.room_type", ""), "scenario.rooms[0].room_type: must be a non-empty string"),
    (_with("rooms.2.avaliable_slots", {}), "scenario.rooms[2]: unknown field 'avaliable_slots'"),
    (
        _with("sessions.3.duration_in_slots", 0),
        "scenario.sessions[3].duration_in_slots: must be an integer from 1 to 6, got 0",
    ),
    (
        _with("sessions.3.duration_in_slots", 7),
        "scenario.sessions[3].duration_in_slots: must be an integer from 1 to 6, got 7",
    ),
    (_with("sessions.0.teacher_id", "ZZ"), "scenario.sessions[0].teacher_id: unknown teacher 'ZZ'"),
    (_with("sessions.0.group_id", "ZZ"), "scenario.sessions[0].group_id: unknown group 'ZZ'"),
    (
        _with("sessions.0.must_schedule", "yes"),
        "scenario.sessions[0].must_schedule: must be true or false, got 'yes'",
    ),
    (
        _with("sessions.0.required_capacity", -3),
        "scenario.sessions[0].required_capacity: must be an integer >= 0",
    ),
    (
        _with("sessions.0.valid_room_types", "lab"),
        "scenario.sessions[0].valid_room_types: must be a list, got 'lab'",
    ),
    (
        _with("sessions.1.session_id", "EX1_S1"),
        "scenario.sessions[1].session_id: duplicate id 'EX1_S1'",
    ),
    (_with("initial_assignments", 0), "scenario.initial_assignments: must be a list, got 0"),
    (
        _with(
            "initial_assignments",
            [{"session_id": "NOPE", "day": 0, "start_slot": 0, "room_id": "ER1"}],
        ),
        "scenario.initial_assignments[0].session_id: unknown session 'NOPE'",
    ),
    (
        _with("baseline_assignments.0.start_slot", 6),
        "scenario.baseline_assignments[0].start_slot: must be an integer from 0 to ",
    ),
    (
        _with("baseline_assignments.0.day", 5),
        "scenario.baseline_assignments[0].day: must be an integer from 0 to 4, got 5",
    ),
    (
        _with("baseline_assignments.0.room_id", "NOPE"),
        "scenario.baseline_assignments[0].room_id: unknown room 'NOPE'",
    ),
    (
        _with("baseline_assignments.0.extra", 1),
        "scenario.baseline_assignments[0]: unknown field 'extra'",
    ),
    (_with("disruption", []), "scenario.disruption: must be an object, got []"),
    (_with("disruption.type", delete=True), "scenario.disruption.type: missing"),
    (
        _with("disruption.type", "flood"),
        "scenario.disruption.type: must be one of teacher_unavailable, room_unavailable, "
        "new_session_added, got 'flood'",
    ),
    (_with("disruption.teacher_id", "ZZ"), "scenario.disruption.teacher_id: unknown teacher 'ZZ'"),
    (
        _with("disruption.slots", {"9": [0]}),
        "scenario.disruption.slots: day key '9' must be a day index",
    ),
    (_with("disruption.room_id", "ER1"), "scenario.disruption: unknown field 'room_id'"),
    (
        _with("task_name", "medium"),
        "scenario.disruption: only hard and expert scenarios have a disruption "
        "(task_name is 'medium')",
    ),
    (
        _with(
            "disruption",
            {
                "type": "new_session_added",
                "session": {"session_id": "EX1_S2", "teacher_id": "ET1", "group_id": "EG1"},
            },
        ),
        "scenario.disruption.session.session_id: duplicate id 'EX1_S2'",
    ),
    (
        _with(
            "disruption",
            {
                "type": "new_session_added",
                "session": {
                    "session_id": "N",
                    "teacher_id": "ET1",
                    "group_id": "EG1",
                    "duration_in_slots": 9,
                },
            },
        ),
        "scenario.disruption.session.duration_in_slots: must be an integer from 1 to 6, got 9",
    ),
]


@pytest.mark.parametrize(("data", "message"), MALFORMED)
def test_malformed_scenarios_name_the_field(data, message):
    with pytest.raises(ScenarioError) as caught:
        Scenario.from_dict(data)
    assert str(caught.value).startswith(message)
    assert MESSAGE.match(str(caught.value))


def test_huge_values_are_shown_short():
    with pytest.raises(ScenarioError) as caught:
        Scenario.from_dict(_with("scenario_id", "x" * 100_000 + " "))
    assert len(str(caught.value)) < 200
    with pytest.raises(ScenarioError, match="<int of 16610 bits>"):
        Scenario.from_dict(_with("step_budget", 10**5000))


def test_defect_D11_the_added_session_gets_the_defaults():
    """Old: hard_3's added session H1_S16 has no duration_in_slots; the predecessor's loader
    filled defaults only into the listed sessions, and every reader fell back to 1/true.

    New: the added session is validated and defaulted like any other (duration 1,
    must_schedule true), and a malformed one is refused at load time, naming the field,
    instead of failing (or silently working) during play.
    """
    raw = next(d for d in handcrafted_dicts() if d["scenario_id"] == "hard_3")
    assert "duration_in_slots" not in raw["disruption"]["session"]
    scenario = next(s for s in handcrafted() if s.scenario_id == "hard_3")
    added = Session("H1_S16", "HT1", "HG5", ("seminar",), 24, 1, True)
    assert scenario.disruption is not None and scenario.disruption.session == added
    assert Problem(scenario).sessions[-1] == added
    assert scenario.to_dict()["disruption"]["session"]["duration_in_slots"] == 1
    raw["disruption"]["session"]["must_schedule"] = "true"
    with pytest.raises(ScenarioError, match=r"^scenario\.disruption\.session\.must_schedule: "):
        Scenario.from_dict(raw)


# ---------------------------------------------------------------------------- fuzz

FUZZ = settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)

BASES = [
    d
    for d in handcrafted_dicts()
    if d["scenario_id"] in ("easy_1", "medium_4", "hard_3", "expert_2")
]
BASES += [generate_dict(random.Random(i), d, f"g{i}") for i, d in enumerate(sorted(SIZES))]

json_values = json_strategy(
    ["0", "4", "Mon", "lab", "T1", "ET1", "R1", "S1", "hard", "teacher_unavailable", ""],
    text=8,
    keys=4,
    leaves=5,
)


@st.composite
def damaged(draw):
    data = copy.deepcopy(draw(st.sampled_from(BASES)))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(paths(data)))
        if not path:
            continue
        parent = data
        for key in path[:-1]:
            parent = parent[key]
        how = draw(st.sampled_from(["delete", "replace", "wrap", "duplicate"]))
        if how == "delete":
            del parent[path[-1]]
        elif how == "replace":
            parent[path[-1]] = draw(json_values)
        elif how == "wrap":
            parent[path[-1]] = [parent[path[-1]]]
        elif isinstance(parent, list):
            parent.append(copy.deepcopy(parent[path[-1]]))
    return data


@FUZZ
@given(data=damaged())
def test_damaged_scenarios_load_or_raise_scenario_error(data):
    try:
        scenario = Scenario.from_dict(data)
    except ScenarioError as error:
        assert MESSAGE.match(str(error)), str(error)
        return
    # it loaded: it must round-trip and be playable
    assert Scenario.from_dict(scenario.to_dict()) == scenario
    episode = TimetableEpisode(scenario, start="baseline")
    episode.step({"action_type": "submit_timetable"})
    for value in episode.scores.as_dict().values():
        assert 0.0 <= value <= 1.0
