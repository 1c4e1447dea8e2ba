"""Action parsing and validation (RULES section 4), table-driven, and fuzzed never to raise."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from timetable_fixtures import json_strategy

from meeting_gym.envs.timetable_planner.domain.actions import (
    ACTION_FIELDS,
    ACTION_TYPES,
    APPLY,
    INVALID,
    NOOP,
    Action,
    Rejected,
    check_action,
    parse_action,
)
from meeting_gym.envs.timetable_planner.domain.catalogue import get_scenario
from meeting_gym.envs.timetable_planner.domain.episode import TimetableEpisode
from meeting_gym.envs.timetable_planner.domain.problem import Problem
from meeting_gym.envs.timetable_planner.domain.scoring import Timetable

DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri")
MISSING_ALL = (
    "missing required fields: session_id, day (0-based int or name like Mon), start_slot, room_id"
)
BAD_DAY = "day must be an integer (0-based, 0 to 4) or a day name (Mon, Tue, Wed, Thu, Fri), got "


def assign(**changes):
    action = {
        "action_type": "assign_session",
        "session_id": "S1",
        "day": 0,
        "start_slot": 0,
        "room_id": "R1",
    }
    action.update(changes)
    return action


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # action_type
        ({"action_type": None}, "action_type is required"),
        ({"action_type": "   "}, "action_type is required"),
        ({}, "action_type is required"),
        ({"action_type": 123}, "Unknown action_type: 123"),
        ({"action_type": "teleport_session"}, "Unknown action_type: teleport_session"),
        ({"action_type": "Submit_Timetable"}, "Unknown action_type: Submit_Timetable"),
        ({"action_type": " submit_timetable "}, Action.submit()),
        ({"action_type": "submit_timetable", "session_id": "x", "day": "??"}, Action.submit()),
        # text coercion
        (assign(session_id=123), Action.assign("123", 0, 0, "R1")),
        (assign(session_id=True), Action.assign("True", 0, 0, "R1")),
        (assign(room_id=" R2 "), Action.assign("S1", 0, 0, "R2")),
        (assign(session_id="  "), "missing required fields: session_id"),
        # integer coercion
        (assign(start_slot="0"), Action.assign("S1", 0, 0, "R1")),
        (assign(start_slot=" 2 "), Action.assign("S1", 0, 2, "R1")),
        (assign(start_slot="+2"), Action.assign("S1", 0, 2, "R1")),
        # given but no integer: named with its value (the predecessor said "missing")
        (assign(start_slot="1.5"), "start_slot must be an integer (0-based), got '1.5'"),
        (assign(start_slot=True), "start_slot must be an integer (0-based), got True"),
        (assign(start_slot=[1]), "start_slot must be an integer (0-based), got [1]"),
        (assign(start_slot=math.nan), "start_slot must be an integer (0-based), got nan"),
        (assign(start_slot=math.inf), "start_slot must be an integer (0-based), got inf"),
        (assign(start_slot=""), "start_slot must be an integer (0-based), got ''"),
        (assign(start_slot=None), "missing required fields: start_slot"),
        (assign(start_slot=2.0), Action.assign("S1", 0, 2, "R1")),
        (assign(start_slot=1.5), "start_slot must be an integer (0-based), got 1.5"),
        # day: integer first, then a label without case
        (assign(day="tue"), Action.assign("S1", 1, 0, "R1")),
        (assign(day=" Tue "), Action.assign("S1", 1, 0, "R1")),
        (assign(day="FRI"), Action.assign("S1", 4, 0, "R1")),
        (assign(day="3"), Action.assign("S1", 3, 0, "R1")),
        (assign(day=-1), Action.assign("S1", -1, 0, "R1")),
        # a day given but no day: the field, its value and the allowed values are named
        (assign(day="Sun"), f"{BAD_DAY}'Sun'"),
        (assign(day="Someday"), f"{BAD_DAY}'Someday'"),
        (assign(day=True), f"{BAD_DAY}True"),
        (assign(day="  "), f"{BAD_DAY}'  '"),
        (assign(day=[0]), f"{BAD_DAY}[0]"),
        (assign(day="x" * 500), f"{BAD_DAY}'{'x' * 99}... (502 characters)"),
        (assign(day=None), "missing required fields: day (0-based int or name like Mon)"),
        (assign(day=0.9), f"{BAD_DAY}0.9"),
        (assign(day=-0.5), f"{BAD_DAY}-0.5"),
        (assign(day=1.9, start_slot=0.5), f"{BAD_DAY}1.9"),
        (assign(day="Sun", start_slot="x"), f"{BAD_DAY}'Sun'"),
        (assign(day="Sun", room_id=None), "missing required fields: room_id"),
        (assign(day=0.9, room_id=None), "missing required fields: room_id"),
        # missing fields, named in the predecessor's order
        ({"action_type": "move_session"}, MISSING_ALL),
        (
            {"action_type": "assign_session", "session_id": "S1"},
            MISSING_ALL.replace("session_id, ", ""),
        ),
        (
            {"action_type": "swap_sessions", "session_id": "S1"},
            "swap_sessions requires session_id and target_session_id",
        ),
        (
            {"action_type": "swap_sessions", "target_session_id": "S1"},
            "swap_sessions requires session_id and target_session_id",
        ),
        (
            {"action_type": "swap_sessions", "session_id": "A", "target_session_id": " B "},
            Action.swap("A", "B"),
        ),
        ({"action_type": "unassign_session"}, "unassign_session requires session_id"),
        ({"action_type": "unassign_session", "session_id": "S9"}, Action.unassign("S9")),
        # the object itself
        ({"action_type": "submit_timetable", "metadata": {"note": 1}}, Action.submit()),
        ({"action_type": "submit_timetable", "metadata": None}, Action.submit()),
        ({"action_type": "submit_timetable", "metadata": 3}, "metadata must be an object"),
        (assign(room="R1"), f"unknown field(s): room (allowed: {', '.join(ACTION_FIELDS)})"),
        (
            "submit_timetable",
            "an action must be a JSON object with an action_type, got a string 'submit_timetable'",
        ),
        (None, "an action must be a JSON object with an action_type, got a NoneType"),
        (
            [{"action_type": "submit_timetable"}],
            "an action must be a JSON object with an action_type, got a list",
        ),
    ],
)
def test_parse(raw, expected):
    result = parse_action(raw, DAYS)
    if isinstance(expected, str):
        assert result == Rejected(expected)
    else:
        assert result == expected


def test_huge_values_are_cut_in_messages():
    result = parse_action({"action_type": "x" * 10_000}, DAYS)
    assert isinstance(result, Rejected)
    assert len(result.message) < 200 and result.message.endswith("(10000 characters)")
    huge = 10**5000  # str() of it raises in CPython: treated as missing, as the predecessor did
    assert parse_action(assign(session_id=huge), DAYS) == Rejected(
        "missing required fields: session_id"
    )
    assert parse_action(assign(day=huge), DAYS) == Action.assign("S1", huge, 0, "R1")


def test_to_dict_parses_back():
    for action in (
        Action.assign("S1", 2, 1, "R3"),
        Action.move("S1", 0, 0, "R1"),
        Action.swap("S1", "S2"),
        Action.unassign("S4"),
        Action.submit(),
    ):
        assert parse_action(action.to_dict(), DAYS) == action


# ---------------------------------------------------------------------------- validation


@pytest.fixture
def problem() -> Problem:
    return Problem(get_scenario("medium_4"))  # 5 slots a day, one 2-slot session (M4_S20)


def _check(problem, table, raw):
    action = parse_action(raw, problem.day_labels)
    assert isinstance(action, Action), action
    return check_action(problem, table, action)


def test_validation_order_and_messages(problem):
    table = Timetable(problem)
    sid = problem.session_ids[0]
    two_slot = next(s for i, s in enumerate(problem.session_ids) if problem.session_length[i] == 2)
    room = problem.room_ids[0]
    cases = [
        (assign(session_id="NOPE", room_id="NOPE", day=9), "Unknown session_id: NOPE"),
        (assign(session_id=sid, room_id="NOPE", day=9), "Unknown room_id: NOPE"),
        (assign(session_id=sid, room_id=room, day=5, start_slot=9), "day is out of range"),
        (assign(session_id=sid, room_id=room, day=-1), "day is out of range"),
        (
            assign(session_id=sid, room_id=room, start_slot=5),
            "start_slot is out of range for session duration",
        ),
        (
            assign(session_id=sid, room_id=room, start_slot=-1),
            "start_slot is out of range for session duration",
        ),
        (
            assign(session_id=two_slot, room_id=room, start_slot=4),
            "start_slot is out of range for session duration",
        ),
        (
            {
                "action_type": "move_session",
                "session_id": sid,
                "day": 0,
                "start_slot": 0,
                "room_id": room,
            },
            "session not assigned yet; use assign_session first",
        ),
        ({"action_type": "unassign_session", "session_id": "NOPE"}, "Unknown session_id: NOPE"),
        (
            {"action_type": "swap_sessions", "session_id": "NOPE", "target_session_id": "NOPE2"},
            "Unknown session_id: NOPE",
        ),
        (
            {"action_type": "swap_sessions", "session_id": sid, "target_session_id": "NOPE"},
            "Unknown target session_id: NOPE",
        ),
        (
            {"action_type": "swap_sessions", "session_id": sid, "target_session_id": sid},
            f"session {sid} is not assigned",
        ),
    ]
    for raw, message in cases:
        check = _check(problem, table, raw)
        assert (check.verdict, check.error) == (INVALID, message), raw
    assert (
        _check(problem, table, assign(session_id=two_slot, room_id=room, start_slot=3)).verdict
        == APPLY
    )


def test_assign_move_swap_unassign_verdicts(problem):
    a, b = problem.session_index["M4_S1"], problem.session_index["M4_S2"]
    long_ = problem.session_index["M4_S20"]
    table = Timetable(problem, [(a, (0, 0, 0)), (long_, (1, 3, 1))])
    s1, s2, s20 = "M4_S1", "M4_S2", "M4_S20"
    r0, r1 = problem.room_ids[0], problem.room_ids[1]
    move = {
        "action_type": "move_session",
        "session_id": s1,
        "day": 0,
        "start_slot": 0,
        "room_id": r0,
    }
    # assigning a placed session is invalid even onto its own place
    assert _check(problem, table, assign(session_id=s1, room_id=r0)).error == (
        "session already assigned; use move_session to relocate"
    )
    assert _check(problem, table, move).verdict == NOOP
    assert _check(problem, table, {**move, "room_id": r1}).verdict == APPLY  # room only: a move
    assert _check(problem, table, {**move, "start_slot": 1}).verdict == APPLY
    swap = {"action_type": "swap_sessions", "session_id": s1, "target_session_id": s2}
    assert _check(problem, table, swap).error == f"session {s2} is not assigned"
    assert _check(problem, table, {**swap, "session_id": s2, "target_session_id": s1}).error == (
        f"session {s2} is not assigned"
    )
    assert _check(problem, table, {**swap, "target_session_id": s1}).verdict == NOOP
    # M4_S1 at slot 0, M4_S20 (2 slots) at slot 3 of 5: fine both ways
    assert _check(problem, table, {**swap, "target_session_id": s20}).verdict == APPLY
    table.move(a, (0, 4, 0))  # now M4_S20 would run past the end of the day at slot 4
    assert _check(problem, table, {**swap, "target_session_id": s20}).error == (
        "swap target slot is out of range for target duration"
    )
    assert _check(problem, table, {**swap, "session_id": s20, "target_session_id": s1}).error == (
        "swap target slot is out of range for source duration"
    )
    table.place(b, (0, 4, 0))  # two sessions in the same place swap validly (not a no-op)
    assert _check(problem, table, {**swap, "target_session_id": s2}).verdict == APPLY
    unassign = {"action_type": "unassign_session", "session_id": s1}
    assert _check(problem, table, unassign).verdict == APPLY
    table.remove(a)
    assert _check(problem, table, unassign).verdict == NOOP
    assert _check(problem, table, {"action_type": "submit_timetable"}).verdict == APPLY


# ---------------------------------------------------------------------------- fuzz

# the words the action parser knows, so that near misses are common
WORDS = [
    "assign_session",
    "move_session",
    "swap_sessions",
    "unassign_session",
    "submit_timetable",
    "Mon",
    " tue ",
    "M4_S1",
    "R1",
]
json_values = json_strategy(WORDS, text=30, keys=5, leaves=6)
actions = (
    st.dictionaries(st.sampled_from([*ACTION_FIELDS, "room", "x"]), json_values, max_size=7)
    | json_values
)


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)
@given(raw=actions)
def test_parse_never_raises(raw):
    result = parse_action(raw, DAYS)
    assert isinstance(result, Action | Rejected)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)
@given(raws=st.lists(actions, min_size=1, max_size=10))
def test_any_action_is_a_step_never_an_exception(raws):
    episode = TimetableEpisode(get_scenario("medium_4"))
    for raw in raws:
        if episode.done:
            break
        before = episode.remaining_budget
        result = episode.step(raw)
        assert result.remaining_budget == before - 1
        if result.action is None:
            assert result.outcome == INVALID and result.action_penalty == -0.02
            assert result.action_error


def test_an_action_needs_the_fields_of_its_type():
    with pytest.raises(ValueError, match="unknown action_type 'teleport'"):
        Action("teleport")
    with pytest.raises(ValueError, match="assign_session needs day"):
        Action("assign_session", "S1", None, 0, "R1")
    with pytest.raises(ValueError, match="swap_sessions needs target_session_id"):
        Action("swap_sessions", "S1")


def test_tool_schemas_are_the_action_objects_one_tool_per_action_type():
    """Issue 10's text interface: the five action types as OpenAI tools, each schema's
    required arguments exactly those its action object needs (all present: it parses;
    any one missing: the parser refuses it), and the text env offers these schemas."""
    import gymnasium as gym

    import meeting_gym  # noqa: F401  (registers the env ids)
    from meeting_gym.envs.timetable_planner.tools import TOOLSET

    schemas = TOOLSET.schemas()
    assert [s["function"]["name"] for s in schemas] == list(ACTION_TYPES)
    sample = {
        "session_id": "E1_S1",
        "target_session_id": "E1_S2",
        "day": 1,
        "start_slot": 2,
        "room_id": "R1",
    }
    for schema in schemas:
        function = schema["function"]
        name, parameters = function["name"], function["parameters"]
        assert function["description"] and parameters["additionalProperties"] is False
        properties, required = parameters["properties"], parameters["required"]
        assert set(properties) <= set(ACTION_FIELDS) and set(required) == set(properties)
        for key, spec in properties.items():
            assert spec["type"] == ("integer" if key in ("day", "start_slot") else "string")
            assert spec["description"]
        call = {key: sample[key] for key in required}
        parsed = parse_action({"action_type": name, **call}, DAYS)
        assert isinstance(parsed, Action) and parsed.action_type == name
        for key in required:
            less = {k: v for k, v in call.items() if k != key}
            assert isinstance(parse_action({"action_type": name, **less}, DAYS), Rejected)
    env = gym.make("TimetablePlanner-v0", mode="text", disable_env_checker=True)
    _, info = env.reset(options={"scenario_id": "easy_1"})
    assert info["tools"] == schemas
