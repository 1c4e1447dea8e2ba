"""Chat message <-> text-protocol action conversion (pure functions, no client)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from meeting_gym.agentkit import (
    assistant_turn,
    initial_messages,
    message_to_action,
    observation_messages,
    split_results,
    tools_for,
)
from meeting_gym.core.protocol import AnswerAction, InvalidAction, ToolCallsAction, parse_action

TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
INFO = {"system_prompt": "be brief", "tools": TOOLS}


def call(call_id, name, arguments):
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def test_initial_messages_and_tools():
    assert initial_messages("question?", INFO) == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "question?"},
    ]
    assert initial_messages("q", INFO, system_prompt="other")[0]["content"] == "other"
    assert initial_messages("q", {}) == [{"role": "user", "content": "q"}]
    assert tools_for(INFO, "native") == TOOLS
    assert tools_for(INFO, "text") is None
    assert tools_for({}, "native") is None
    with pytest.raises(ValueError, match="tool_protocol"):
        tools_for(INFO, "xml")


def test_several_native_calls_are_one_env_turn_in_order():
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [call("a", "f", '{"x": 1}'), call("b", "g", "{bad json")],
    }
    turn = assistant_turn(message)
    assert turn.tool_call_ids == ("a", "b")
    assert json.loads(turn.action) == [
        {"name": "f", "arguments": '{"x": 1}'},
        {"name": "g", "arguments": "{bad json"},
    ]
    parsed = parse_action(turn.action)
    assert isinstance(parsed, ToolCallsAction) and [c.name for c in parsed.calls] == ["f", "g"]
    assert turn.message == {
        "role": "assistant",
        "content": None,
        "tool_calls": message["tool_calls"],
    }


def test_client_objects_are_read_like_dicts_and_missing_ids_are_filled():
    function = SimpleNamespace(name="f", arguments={"x": 1})
    message = SimpleNamespace(
        content="thinking", tool_calls=[SimpleNamespace(id=None, function=function)]
    )
    turn = assistant_turn(message, id_prefix="call_3")
    assert turn.tool_call_ids == ("call_3_0",)
    assert turn.message["tool_calls"][0]["function"] == {"name": "f", "arguments": '{"x": 1}'}
    assert turn.message["content"] == "thinking"


def test_missing_or_repeated_ids_are_replaced_so_results_can_be_matched():
    calls = [call("same", "f", "{}"), call("same", "f", "{}"), call("", "f", "{}")]
    turn = assistant_turn({"content": None, "tool_calls": calls}, id_prefix="call_7")
    assert turn.tool_call_ids == ("same", "call_7_1", "call_7_2")
    assert [c["id"] for c in turn.message["tool_calls"]] == list(turn.tool_call_ids)


def test_an_answer_in_content_wins_over_tool_calls():
    message = {"content": "done <answer>NONE</answer>", "tool_calls": [call("a", "f", "{}")]}
    turn = assistant_turn(message)
    assert turn.tool_call_ids == ()
    assert isinstance(parse_action(turn.action), AnswerAction)
    assert turn.message["tool_calls"]  # kept in the transcript, not run


@pytest.mark.parametrize("content", [None, "", "I am not sure yet."])
def test_a_message_with_neither_calls_nor_answer_goes_through_the_text_protocol(content):
    turn = assistant_turn({"content": content, "tool_calls": []})
    assert turn.action == (content or "") and turn.tool_call_ids == ()
    assert isinstance(parse_action(turn.action), InvalidAction)
    assert "tool_calls" not in turn.message and turn.message["content"] == (content or "")
    assert observation_messages("error: hint", turn) == [{"role": "user", "content": "error: hint"}]


def test_text_protocol_uses_content_and_ignores_native_calls():
    text = '<tool_call>{"name": "f", "arguments": {}}</tool_call>'
    message = {"content": text, "tool_calls": [call("a", "g", "{}")]}
    turn = assistant_turn(message, "text")
    assert turn == assistant_turn({"content": text}, "text")
    assert turn.action == text and turn.message == {"role": "assistant", "content": text}
    assert message_to_action(message, "text") == text
    # native mode runs text-protocol calls in content too when there are no native calls
    assert message_to_action({"content": text}, "native") == text


@pytest.mark.parametrize(
    "observation, count, expected",
    [
        ("plain result", 1, ["plain result"]),
        ('["x", "y"]', 1, ['["x", "y"]']),
        ('["x", "error: y"]', 2, ["x", "error: y"]),
        ("error: the whole turn was rejected", 2, ["error: the whole turn was rejected"] * 2),
        ('["x"]', 2, ['["x"]'] * 2),
        ("[1, 2]", 2, ["[1, 2]"] * 2),
    ],
)
def test_split_results(observation, count, expected):
    assert split_results(observation, count) == expected


def test_observation_messages_answer_each_tool_call_id():
    turn = assistant_turn({"tool_calls": [call("a", "f", "{}"), call("b", "f", "{}")]})
    assert observation_messages('["one", "two"]', turn) == [
        {"role": "tool", "tool_call_id": "a", "content": "one"},
        {"role": "tool", "tool_call_id": "b", "content": "two"},
    ]
    single = assistant_turn({"tool_calls": [call("only", "f", "{}")]})
    assert observation_messages('["a list", "as one result"]', single) == [
        {"role": "tool", "tool_call_id": "only", "content": '["a list", "as one result"]'}
    ]
