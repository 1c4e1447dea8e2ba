"""The text protocol: extract_answer, parse_action, formatting and instructions."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meeting_gym.core.protocol import (
    ACCEPTED_FORMS,
    AnswerAction,
    InvalidAction,
    ToolCall,
    ToolCallsAction,
    extract_answer,
    format_answer,
    format_tool_call,
    parse_action,
    protocol_instructions,
)
from meeting_gym.core.tools import ToolSet

MB = 1_000_000
ANSWER_TAG = re.compile(r"<\s*(/\s*)?answer\s*>", re.IGNORECASE | re.ASCII)
ANY_CHAR = st.characters(exclude_categories=())  # includes lone surrogates and NUL


def echo(world: Any, text: str, times: int = 1) -> str:
    """Repeat a text.

    Args:
        text: The text to repeat.
        times: How many times.
    """
    return text * times


def peek(world: Any, names: list[str], day: str | None = None) -> str:
    """Show the entries of some names.

    Args:
        names: Whose entries to show.
        day: Only this day (YYYY-MM-DD).
    """
    return ""


# ------------------------------------------------------------------ extract_answer


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<answer>42</answer>", "42"),
        ("<answer>  42 \n</answer>", "42"),
        ("reasoning first.\n<answer>2024-05-01 09:00</answer>", "2024-05-01 09:00"),
        ("<ANSWER>x</Answer>", "x"),
        ("<Answer>x</ANSWER>", "x"),
        ("< answer >x</ answer >", "x"),
        ("<answer>x< / answer >", "x"),
        ("<\tanswer\n>x<\n/\nanswer\t>", "x"),
        ("<answer>first</answer> <answer>second</answer>", "first"),
        ("<answer>line 1\nline 2\n</answer>", "line 1\nline 2"),
        ("<answer></answer>", ""),
        ("<answer>   </answer>", ""),
        ("<answer>a<answer>b</answer>", "b"),  # a block holds no opening tag
        ("</answer><answer>x</answer>", "x"),  # a stray closing tag before is skipped
        ("<answer>x", None),
        ("<answer>x</answe>", None),
        ("answer>x</answer>", None),
        ("</answer>", None),
        ("no tags", None),
        ("", None),
        ("<answerx>y</answerx>", None),
        ("<answer >\x00</answer>", "\x00"),
        ("<answer>\ud800</answer>", "\ud800"),
    ],
)
def test_extract_answer(text: str, expected: str | None) -> None:
    assert extract_answer(text) == expected


def test_extract_answer_rejects_non_str() -> None:
    with pytest.raises(TypeError):
        extract_answer(b"<answer>x</answer>")  # type: ignore[arg-type]


# ------------------------------------------------------------------ parse_action: calls


def calls(*pairs: tuple[str, Any]) -> ToolCallsAction:
    return ToolCallsAction(tuple(ToolCall(name, args) for name, args in pairs))


ECHO = '{"name": "echo", "arguments": {"text": "hi"}}'
PEEK = '{"name": "peek", "arguments": {"names": ["Ann"]}}'


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (ECHO, calls(("echo", {"text": "hi"}))),
        (f"  \n{ECHO}\n ", calls(("echo", {"text": "hi"}))),
        (f"<tool_call>{ECHO}</tool_call>", calls(("echo", {"text": "hi"}))),
        (f"<TOOL_CALL>\n{ECHO}\n</Tool_Call>", calls(("echo", {"text": "hi"}))),
        (f"< tool_call >{ECHO}< / tool_call >", calls(("echo", {"text": "hi"}))),
        (f"[{ECHO}, {PEEK}]", calls(("echo", {"text": "hi"}), ("peek", {"names": ["Ann"]}))),
        (
            f"<tool_call>[{ECHO}, {PEEK}]</tool_call>",
            calls(("echo", {"text": "hi"}), ("peek", {"names": ["Ann"]})),
        ),
        (
            f"<tool_call>{PEEK}</tool_call>\n<tool_call>{ECHO}</tool_call>",
            calls(("peek", {"names": ["Ann"]}), ("echo", {"text": "hi"})),
        ),
        (
            f"I need Ann's calendar first.\n<tool_call>{PEEK}</tool_call>\n"
            f"Then an echo:<tool_call>{ECHO}</tool_call> and that's all.",
            calls(("peek", {"names": ["Ann"]}), ("echo", {"text": "hi"})),
        ),
        (f"```json\n{ECHO}\n```", calls(("echo", {"text": "hi"}))),
        (f"```JSON\n[{ECHO}]\n```", calls(("echo", {"text": "hi"}))),
        (f"```\n{ECHO}\n```", calls(("echo", {"text": "hi"}))),
        (f"<tool_call>\n```json\n{ECHO}\n```\n</tool_call>", calls(("echo", {"text": "hi"}))),
        ('{"name": "count"}', calls(("count", {}))),
        ('{"name": "count", "arguments": null}', calls(("count", {}))),
        (
            '{"name": "echo", "arguments": "{\\"text\\": \\"hi\\"}"}',
            calls(("echo", '{"text": "hi"}')),
        ),
        (
            '{"type": "function", "function": {"name": "echo", "arguments": "{}"}}',
            calls(("echo", "{}")),
        ),
        (
            '[{"id": "call_1", "type": "function", "function": {"name": "echo"}}]',
            calls(("echo", {})),
        ),
        (
            '{"function": {"name": "echo", "arguments": {"text": "x"}}}',
            calls(("echo", {"text": "x"})),
        ),
        (
            '{"name": "echo", "arguments": {"text": "\\u00e9 \\ud800 \\u0000"}}',
            calls(("echo", {"text": "é \ud800 \x00"})),
        ),
        (
            '{"name": "nope", "arguments": {"x": [1, {"y": null}]}}',
            calls(("nope", {"x": [1, {"y": None}]})),
        ),
    ],
)
def test_parse_tool_calls(text: str, expected: ToolCallsAction) -> None:
    assert parse_action(text) == expected


# ------------------------------------------------------------------ parse_action: answers


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("<answer>42</answer>", "42"),
        ("thinking...\n<answer> 42 </answer>\nbye", "42"),
        (f"<tool_call>{ECHO}</tool_call><answer>42</answer>", "42"),  # an answer wins
        (f"<answer>42</answer><tool_call>{ECHO}</tool_call>", "42"),
        (f"<tool_call>{ECHO}<answer>x</answer></tool_call>", "x"),
        ("<tool_call>{broken<answer>x</answer>", "x"),
        ('{"name": "echo", "arguments": {"text": "<answer>1</answer>"}}', "1"),
        ("<answer></answer>", ""),
    ],
)
def test_parse_answer(text: str, answer: str) -> None:
    assert parse_action(text) == AnswerAction(text, answer)


# ------------------------------------------------------------------ parse_action: invalid


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "the output is empty"),
        ("   \n ", "the output is empty"),
        ("I think the answer is 42.", "no <answer> block, no <tool_call> block"),
        ("<answer>42", "opened but never closed"),
        ('{"name": "echo",}', "invalid JSON in the output: Expecting property name"),
        ('{"name": "echo"', "position 15"),
        ('{"name": "echo"} trailing', "Extra data at position 17"),
        ('Calling {"name": "echo"}', "not JSON"),
        ('<tool_call>{"name": "echo",}</tool_call>', "invalid JSON in <tool_call> block 1"),
        (
            f'<tool_call>{ECHO}</tool_call><tool_call>{{"x": 1}}</tool_call>',
            'tool call 2 is an object without a "name"',
        ),
        ('{"arguments": {}}', 'tool call 1 is an object without a "name"'),
        ('{"name": 3}', '"name" must be a non-empty string, got integer'),
        ('{"name": ""}', '"name" must be a non-empty string'),
        (
            '{"name": "echo", "arguments": [1]}',
            '"arguments" must be an object or a JSON-encoded string',
        ),
        ('{"name": "echo", "text": "hi"}', 'unexpected key "text"'),
        ('{"name": "echo", "parameters": {}}', 'unexpected key "parameters"'),
        ('{"name": "a", "name": "b"}', 'duplicate key "name"'),
        ('{"name": "echo", "arguments": {"x": NaN}}', "NaN is not valid JSON"),
        ('{"type": "tool", "function": {"name": "echo"}}', '"type" must be "function"'),
        ('{"function": "echo"}', '"function" must be an object, got string'),
        ('{"function": {"name": "echo"}, "extra": 1}', 'unexpected key "extra"'),
        ("[]", "empty array of tool calls"),
        ("<tool_call>[]</tool_call>", "empty array of tool calls in <tool_call> block 1"),
        ("[1]", "tool call 1 is a JSON integer, not an object"),
        (f"[{ECHO}, null]", "tool call 2 is a JSON null, not an object"),
        ("<tool_call>42</tool_call>", "holds a JSON integer, not an object or an array"),
        ('<tool_call>"echo"</tool_call>', "holds a JSON string"),
        ("<tool_call></tool_call>", "<tool_call> block 1 is empty"),
        ("<tool_call>  </tool_call>", "is empty"),
        (f"<tool_call>{ECHO}", "<tool_call> block 1 is never closed"),
        (f"<tool_call>{ECHO}<tool_call>{ECHO}</tool_call>", "is not closed before the next opens"),
        (f"{ECHO}</tool_call>", "</tool_call> without an opening <tool_call>"),
        (f"<tool_call>{ECHO}</tool_call></tool_call>", "without an opening"),
        ("```python\n{}\n```", "not JSON"),
        ("[" * 100_000, "nested too deeply"),
        ("<tool_call>" + "[" * 100_000 + "</tool_call>", "nested too deeply"),
        ('{"name": "a", "arguments": {"x": ' + "9" * 5000 + "}}", "invalid JSON"),
    ],
)
def test_parse_invalid(text: str, fragment: str) -> None:
    action = parse_action(text)
    assert isinstance(action, InvalidAction)
    assert fragment in action.reason
    assert action.reason.endswith(ACCEPTED_FORMS)


def test_accepted_forms_are_explained() -> None:
    reason = parse_action("hello").reason  # type: ignore[union-attr]
    assert '{"name": ..., "arguments": {...}}' in reason
    assert "<tool_call>...</tool_call>" in reason
    assert "JSON array" in reason
    assert "<answer>...</answer>" in reason


@pytest.mark.parametrize("value", [None, 42, b"<answer>x</answer>", ["<answer>x</answer>"], {}])
def test_non_str_input(value: Any) -> None:
    action = parse_action(value)
    assert isinstance(action, InvalidAction)
    assert "expected the model output as str" in action.reason


@pytest.mark.parametrize(
    ("text", "max_calls", "ok"),
    [
        ("[" + ", ".join([ECHO] * 32) + "]", 32, True),
        ("[" + ", ".join([ECHO] * 33) + "]", 32, False),
        (f"<tool_call>{ECHO}</tool_call>" * 33, 32, False),
        (f"<tool_call>[{ECHO}, {ECHO}]</tool_call><tool_call>{ECHO}</tool_call>", 3, True),
        (f"<tool_call>[{ECHO}, {ECHO}]</tool_call><tool_call>{ECHO}</tool_call>", 2, False),
        (ECHO, 1, True),
    ],
)
def test_max_calls(text: str, max_calls: int, ok: bool) -> None:
    action = parse_action(text, max_calls=max_calls)
    if ok:
        assert isinstance(action, ToolCallsAction)
    else:
        assert isinstance(action, InvalidAction)
        assert f"more than {max_calls} tool calls" in action.reason


def test_max_calls_must_be_positive() -> None:
    with pytest.raises(ValueError):
        parse_action(ECHO, max_calls=0)


# ------------------------------------------------------------------ big and adversarial input

ADVERSARIAL = [
    "<answer>" * 100_000,
    "</answer>" * 100_000,
    "<tool_call>" * 100_000,
    "</tool_call>" * 100_000,
    "<" + " " * MB,
    "< " * (MB // 2),
    "<" + " " * (MB // 2) + "/" + " " * (MB // 2) + "answer",
    "< /" * (MB // 3),
    "x" * MB,
    "[" * MB,
    "{" * MB,
    '{"a":' * 200_000,
    "```" * 300_000,
    "\x00" * MB,
    "\ud800" * MB,
    "<answer" * 150_000,
    "<tool_call>[" * 80_000,
]


@pytest.mark.parametrize("text", ADVERSARIAL, ids=lambda t: repr(t[:12]))
def test_adversarial_input_is_fast(text: str) -> None:
    start = time.perf_counter()
    action = parse_action(text)
    extract_answer(text)
    assert time.perf_counter() - start < 5.0
    assert isinstance(action, InvalidAction)


@pytest.mark.parametrize(
    "text",
    [
        "<answer>" + "x" * MB + "</answer>",
        "<answer>" * 100_000 + "42</answer>",
        "reasoning " * 100_000 + "<answer>42</answer>",
    ],
    ids=["big-answer", "many-openings", "long-prose"],
)
def test_big_answers(text: str) -> None:
    start = time.perf_counter()
    action = parse_action(text)
    assert time.perf_counter() - start < 5.0
    assert isinstance(action, AnswerAction)


def test_big_tool_call() -> None:
    big = "y" * MB
    action = parse_action("thinking " * 10_000 + format_tool_call("echo", {"text": big}))
    assert action == calls(("echo", {"text": big}))


# ------------------------------------------------------------------ formatting


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("echo", {"text": "hi"}),
        ("count", {}),
        ("echo", {"text": "é ü 日本 \x00 \ud800"}),
        ("echo", {"text": "</tool_call> <answer>not an answer</answer>"}),
        ("peek", {"names": ["<b>", "a\nb"], "day": None}),
    ],
)
def test_format_tool_call_round_trip(name: str, arguments: dict[str, Any]) -> None:
    text = format_tool_call(name, arguments)
    assert text.startswith("<tool_call>{") and text.endswith("}</tool_call>")
    assert parse_action(text) == calls((name, arguments))


def test_format_tool_call_is_canonical() -> None:
    assert (
        format_tool_call("echo", {"text": "é"})
        == '<tool_call>{"name": "echo", "arguments": {"text": "é"}}</tool_call>'
    )


@pytest.mark.parametrize("answer", ["42", "", "Tue 09:00-10:00\nroom 3", " padded "])
def test_format_answer_round_trip(answer: str) -> None:
    text = format_answer(answer)
    assert text == f"<answer>{answer}</answer>"
    assert extract_answer(text) == answer.strip()
    assert parse_action(text) == AnswerAction(text, answer.strip())


def test_protocol_instructions() -> None:
    text = protocol_instructions(ToolSet([echo, peek]))
    for fragment in [
        "<tool_call>",
        "<answer>...</answer>",
        "several",
        "- echo(text: string, times: integer = 1): Repeat a text.",
        "text: The text to repeat.",
        "- peek(names: list[string], day: string | null = null): Show the entries",
        "day: Only this day (YYYY-MM-DD).",
    ]:
        assert fragment in text
    example = text.split("for example: ")[1].split("</tool_call>")[0] + "</tool_call>"
    assert isinstance(parse_action(example), ToolCallsAction)
    assert "peek" not in protocol_instructions(ToolSet([echo]))


# ------------------------------------------------------------------ properties

TOKENS = st.sampled_from(
    [
        "<answer>",
        "</answer>",
        "< answer >",
        "<tool_call>",
        "</tool_call>",
        "```json\n",
        "```",
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        '"name"',
        '"arguments"',
        '"echo"',
        '"function"',
        '"type"',
        "null",
        "1",
        " ",
        "\n",
        "x",
    ]
)
model_like = st.lists(TOKENS | st.text(ANY_CHAR, max_size=3), max_size=40).map("".join)


@settings(max_examples=500, deadline=None)
@given(text=st.text(ANY_CHAR) | model_like)
def test_parse_action_never_raises(text: str) -> None:
    action = parse_action(text, max_calls=3)
    assert isinstance(action, (AnswerAction, ToolCallsAction, InvalidAction))
    if isinstance(action, ToolCallsAction):
        assert 1 <= len(action.calls) <= 3
        for call in action.calls:
            assert isinstance(call.name, str) and call.name
            assert isinstance(call.arguments, (dict, str))
    answer = extract_answer(text)
    assert (answer is not None) == isinstance(action, AnswerAction)
    if answer is not None:  # a block never holds an answer tag
        assert ANSWER_TAG.search(answer) is None


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(ANY_CHAR),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.text(ANY_CHAR, max_size=5), children, max_size=3)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(
    name=st.text(ANY_CHAR, min_size=1, max_size=20),
    arguments=st.dictionaries(st.text(ANY_CHAR, max_size=8), json_values, max_size=4),
)
def test_format_tool_call_round_trip_property(name: str, arguments: dict[str, Any]) -> None:
    assert parse_action(format_tool_call(name, arguments)) == calls((name, arguments))


@settings(max_examples=300, deadline=None)
@given(answer=st.text(ANY_CHAR))
def test_format_answer_round_trip_property(answer: str) -> None:
    if "answer" in answer.lower():
        return
    assert extract_answer(format_answer(answer)) == answer.strip()


def test_json_dumps_of_calls_parse() -> None:
    payload = [{"name": "echo", "arguments": {"text": str(i)}} for i in range(5)]
    action = parse_action(json.dumps(payload))
    assert action == calls(*[("echo", {"text": str(i)}) for i in range(5)])
