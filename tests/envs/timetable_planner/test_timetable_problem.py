"""Loading a scenario for play (RULES section 2): defaults, the disruption, static facts."""

from __future__ import annotations

import pytest

from meeting_gym.envs.timetable_planner.domain.catalogue import CATALOGUE_IDS, get_scenario
from meeting_gym.envs.timetable_planner.domain.problem import Problem, problem_of
from meeting_gym.envs.timetable_planner.domain.scenario import Scenario, cells_of


def _scenario(**changes) -> Scenario:
    data = get_scenario("hard_1").to_dict()
    data.update(changes)
    return Scenario.from_dict(data)


def test_availability_defaults():
    data = get_scenario("easy_1").to_dict()
    data["teachers"][1]["available_slots"] = {}  # present but empty: no slot (is None test)
    data["teachers"][2]["available_slots"] = {"1": [2, 0]}
    problem = Problem(Scenario.from_dict(data))
    full = tuple((d, (0, 1, 2, 3)) for d in range(5))
    assert problem.teacher_available[0] == full and problem.teacher_preferred[0] == full
    assert problem.teacher_available[1] == () and problem.teacher_preferred[1] == ()
    # preferred defaults to an exact copy of available (order kept: it is not re-encoded)
    assert problem.teacher_preferred[2] == problem.teacher_available[2] == ((1, (2, 0)),)
    assert problem.teacher_indifferent == (True, True, True)
    assert problem.room_available[0] == full


def test_teacher_unavailable_disruption_re_encodes_sorted():
    scenario = get_scenario("hard_1")  # HT2 loses Mon 2 and Wed 3
    raw = scenario.teachers[1]
    problem = Problem(scenario)
    left = cells_of(raw.available_slots) - {(0, 2), (2, 3)}
    assert cells_of(problem.teacher_available[1]) == left
    assert cells_of(problem.teacher_preferred[1]) == cells_of(raw.preferred_slots) & left
    assert problem.teacher_available[1] == tuple(sorted(problem.teacher_available[1]))
    assert all(slots for _, slots in problem.teacher_available[1])  # empty days left out
    untouched = Problem(scenario).teacher_available[0]
    assert untouched == scenario.teachers[0].available_slots


def test_room_unavailable_disruption():
    scenario = get_scenario("hard_2")  # HR3 loses Mon 2 and Tue 3
    problem = Problem(scenario)
    r = problem.room_index["HR3"]
    expected = cells_of(scenario.rooms[r].available_slots) - {(0, 2), (1, 3)}
    assert cells_of(problem.room_available[r]) == expected


def test_new_session_disruption_appends_a_must_schedule_session():
    scenario = get_scenario("hard_3")
    problem = Problem(scenario)
    assert problem.session_ids[-1] == "H1_S16"
    assert len(problem.sessions) == len(scenario.sessions) + 1
    assert problem.must_count == sum(s.must_schedule for s in scenario.sessions) + 1
    assert "H1_S16" not in {p.session_id for p in scenario.baseline_assignments}


def test_the_baseline_counts_for_hard_and_expert_only():
    baseline = get_scenario("hard_1").to_dict()["baseline_assignments"]
    medium = _scenario(task_name="medium", disruption=None, baseline_assignments=baseline)
    assert Problem(medium).baseline == {}
    assert Problem(medium).baseline_placements  # still shown
    assert len(Problem(get_scenario("hard_1")).baseline) == len(baseline)


@pytest.mark.parametrize("scenario_id", CATALOGUE_IDS)
def test_room_fit_numerators_are_exact(scenario_id):
    problem = Problem(get_scenario(scenario_id))
    for i, session in enumerate(problem.sessions):
        for r, room in enumerate(problem.rooms):
            slack = (room.capacity - session.required_capacity) / max(1, room.capacity)
            value = 0.7 + 0.3 * (1 - min(1, slack))
            if problem.capacity_ok[i][r]:
                assert problem.fit_num[i][r] / problem.fit_den == pytest.approx(value, abs=1e-15)
            assert problem.type_ok[i][r] == (room.room_type in session.valid_room_types)


def test_problem_of_is_cached_per_scenario():
    scenario = get_scenario("expert_2")
    assert problem_of(scenario) is problem_of(Scenario.from_dict(scenario.to_dict()))
    assert "expert_2" in repr(problem_of(scenario))
