"""The discrete action table: layout, decode/encode round trip, readable text, translation."""

from __future__ import annotations

import pytest

from meeting_gym.envs.meeting_slot.discrete.actions import Action, ActionTable
from meeting_gym.envs.meeting_slot.domain.curated import CURATED_BY_ID


def test_default_layout_counts():
    table = ActionTable()
    assert (table.n_dates, table.n_slots, table.n_tools, table.n) == (7, 480, 37, 518)
    assert table.decode(0) == Action("list_attendees")
    assert table.decode(1) == Action("get_timezone", attendee=0)
    assert table.decode(5) == Action("get_working_hours", attendee=0)
    assert table.decode(9) == Action("get_busy", attendee=0, day=0)
    assert table.decode(36) == Action("get_busy", attendee=3, day=6)
    assert table.decode(37) == Action("answer", slot=0)
    assert table.decode(516) == Action("answer", slot=479)
    assert table.decode(517) == Action("answer")


@pytest.mark.parametrize("bounds", [(4, 5, 15), (1, 1, 60), (3, 2, 30), (6, 7, 5)])
def test_every_index_decodes_and_encodes_back(bounds):
    table = ActionTable(*bounds)
    seen = set()
    for index in range(table.n):
        action = table.decode(index)
        assert table.encode(action) == index
        seen.add(action)
    assert len(seen) == table.n


def test_out_of_range_and_bad_bounds():
    table = ActionTable()
    for bad in (-1, table.n):
        with pytest.raises(IndexError):
            table.decode(bad)
    with pytest.raises(ValueError, match="attendee"):
        table.encode(Action("get_timezone", attendee=4))
    with pytest.raises(ValueError, match="date"):
        table.encode(Action("get_busy", attendee=0, day=7))
    with pytest.raises(ValueError, match="grid_minutes"):
        ActionTable(grid_minutes=7)
    with pytest.raises(ValueError, match="max_attendees"):
        ActionTable(max_attendees=0)


def test_describe_against_a_scenario():
    scenario = CURATED_BY_ID["dst_eu_monday"]  # window starts 2024-03-29
    table = ActionTable()
    first = scenario.attendees[0].name
    assert table.describe(0, scenario) == "list_attendees()"
    assert table.describe(1, scenario) == f"get_timezone({first})"
    assert table.describe(9, scenario) == f"get_busy({first}, 2024-03-28)"
    assert table.describe(10, scenario) == f"get_busy({first}, 2024-03-29)"
    assert table.describe(37, scenario) == "answer(2024-03-29T00:00:00Z)"
    assert table.describe(37 + 4 * 24 + 53, scenario) == "answer(2024-03-30T13:15:00Z)"
    assert table.describe(517, scenario) == "answer(NONE)"
    assert table.describe(4, scenario) == "get_timezone(#3)"  # a slot the scenario leaves empty
    assert table.describe(10) == "get_busy(#0, day+0)"


def test_text_calls_translate_to_indices():
    scenario = CURATED_BY_ID["dst_eu_monday"]
    table = ActionTable()
    first = scenario.attendees[0].name
    for index in range(table.n):
        kind, payload = table.call(index, scenario)
        if kind == "tool":
            name, arguments = payload
            if arguments.get("name", first).startswith("#"):
                assert table.encode_call(name, arguments, scenario) is None
            else:
                assert table.encode_call(name, arguments, scenario) == index
        else:
            content = payload[len("<answer>") : -len("</answer>")]
            assert table.encode_answer(content, scenario) == index
    assert table.encode_call("get_busy", {"name": first, "date": "2024-03-20"}, scenario) is None
    assert table.encode_call("get_timezone", {"name": "Nobody"}, scenario) is None
    assert table.encode_call("get_timezone", {"name": first.lower()}, scenario) == 1
    assert table.encode_answer("2024-03-29T10:05:00Z", scenario) is None  # off the grid
    assert table.encode_answer("2024-03-28T23:45:00Z", scenario) is None  # before the window
    assert table.encode_answer("none", scenario) == table.none_index
