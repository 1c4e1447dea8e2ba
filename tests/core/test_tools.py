"""Tool schemas from typed functions, and ToolSet.call's never-raising dispatch."""

from __future__ import annotations

import json
from typing import Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meeting_gym.core.tools import ERROR_PREFIX, Tool, ToolSet, is_error

# ------------------------------------------------------------------ a small fake toolset


def echo(world: dict[str, Any], text: str, times: int = 1) -> str:
    """Repeat a text.

    The text is joined with spaces.

    Args:
        text: The text
            to repeat.
        times (int): How many times.

    Returns:
        The repeated text.
    """
    world.setdefault("log", []).append(("echo", text, times))
    return f"{text} x{times}"


def add(world: dict[str, Any], a: int, b: float) -> str:
    """Add an integer and a number.

    Args:
        a: An integer.
        b: A number.
    """
    return repr(a + b)


def tag(
    world: dict[str, Any],
    names: list[str],
    loud: bool = False,
    unit: Literal["min", "h"] = "min",
    note: str | None = None,
) -> str:
    """Tag some names.

    Args:
        names: The names to tag.
        loud: Whether to shout.
        unit: The unit.
        note: An optional note.
    """
    return json.dumps([names, loud, unit, note])


def count(world: dict[str, Any]) -> str:
    """Count the entries of the world."""
    return str(len(world.get("entries", [])))


def lookup(world: dict[str, Any], key: str) -> str:
    """Look a key up.

    Args:
        key: The key.
    """
    entries = world.get("entries", {})
    if key not in entries:
        return f"error: unknown key {key!r}; known keys: {', '.join(sorted(entries))}"
    return str(entries[key])


def crash(world: dict[str, Any]) -> str:
    """A buggy tool."""
    raise RuntimeError("bug in the tool")


def wrong_return(world: dict[str, Any]) -> str:
    """A tool that returns a non-string."""
    return 5  # type: ignore[return-value]


TOOLS = ToolSet([echo, add, tag, count, lookup])


@pytest.fixture
def world() -> dict[str, Any]:
    return {"entries": {"a": 1, "b": 2}}


# ------------------------------------------------------------------ schemas


def test_names_in_order() -> None:
    assert TOOLS.names == ("echo", "add", "tag", "count", "lookup")
    assert [s["function"]["name"] for s in TOOLS.schemas()] == list(TOOLS.names)
    assert len(TOOLS) == 5
    assert "echo" in TOOLS and "nope" not in TOOLS and 3 not in TOOLS
    assert [t.name for t in TOOLS] == list(TOOLS.names)


def test_openai_format() -> None:
    schema = TOOLS.get("echo").schema()
    assert schema == {
        "type": "function",
        "function": {
            "name": "echo",
            "description": "Repeat a text.",
            "parameters": {
                "type": "object",
                "properties": {
                    "text": {"type": "string", "description": "The text to repeat."},
                    "times": {"type": "integer", "description": "How many times.", "default": 1},
                },
                "required": ["text"],
                "additionalProperties": False,
            },
        },
    }
    json.dumps(TOOLS.schemas())  # plain JSON


@pytest.mark.parametrize(
    ("tool", "properties", "required"),
    [
        ("add", {"a": {"type": "integer"}, "b": {"type": "number"}}, ["a", "b"]),
        (
            "tag",
            {
                "names": {"type": "array", "items": {"type": "string"}},
                "loud": {"type": "boolean", "default": False},
                "unit": {"type": "string", "enum": ["min", "h"], "default": "min"},
                "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
            },
            ["names"],
        ),
        ("count", {}, []),
        ("lookup", {"key": {"type": "string"}}, ["key"]),
    ],
)
def test_parameter_schemas(tool: str, properties: dict[str, Any], required: list[str]) -> None:
    parameters = TOOLS.get(tool).parameters
    assert parameters["type"] == "object"
    assert parameters["additionalProperties"] is False
    assert parameters["required"] == required
    assert "world" not in parameters["properties"]
    got = {
        name: {k: v for k, v in prop.items() if k != "description"}
        for name, prop in parameters["properties"].items()
    }
    assert got == properties
    assert all(prop["description"] for prop in parameters["properties"].values())


def test_descriptions_from_docstring() -> None:
    assert TOOLS.get("add").description == "Add an integer and a number."
    assert TOOLS.get("count").description == "Count the entries of the world."
    props = TOOLS.get("tag").parameters["properties"]
    assert props["names"]["description"] == "The names to tag."
    assert props["note"]["description"] == "An optional note."


def test_schemas_are_copies() -> None:
    TOOLS.schemas()[0]["function"]["parameters"]["required"].append("junk")
    assert TOOLS.get("echo").parameters["required"] == ["text"]


def test_get_unknown() -> None:
    assert TOOLS.get("nope") is None
    assert TOOLS.get(["unhashable"]) is None  # type: ignore[arg-type]


def test_toolset_accepts_tools() -> None:
    tool = Tool.from_function(echo)
    assert ToolSet([tool, count]).names == ("echo", "count")


# ------------------------------------------------------------------ definition errors


def no_world(text: str) -> str:
    """Doc.

    Args:
        text: Text.
    """
    return text


def no_annotation(world, text) -> str:  # type: ignore[no-untyped-def]
    """Doc.

    Args:
        text: Text.
    """
    return text


def bad_type(world, data: dict) -> str:  # type: ignore[type-arg]
    """Doc.

    Args:
        data: Data.
    """
    return ""


def undocumented(world, text: str, other: int) -> str:
    """Doc.

    Args:
        text: Text.
    """
    return text


def no_doc(world, text: str) -> str:
    return text


def varargs(world, *texts: str) -> str:
    """Doc.

    Args:
        texts: Texts.
    """
    return ""


def documents_ghost(world, text: str) -> str:
    """Doc.

    Args:
        text: Text.
        ghost: Not a parameter.
    """
    return text


def bad_union(world, value: int | str) -> str:
    """Doc.

    Args:
        value: Value.
    """
    return ""


@pytest.mark.parametrize(
    ("fn", "error", "match"),
    [
        (no_world, TypeError, "first parameter must be `world`"),
        (no_annotation, TypeError, "needs a type annotation"),
        (bad_type, TypeError, "unsupported type"),
        (bad_union, TypeError, "unsupported type"),
        (undocumented, ValueError, "argument other: not described"),
        (no_doc, ValueError, "description"),
        (varargs, TypeError, "plain or keyword-only"),
        (documents_ghost, ValueError, "ghost"),
        (lambda world: "", ValueError, "tool name"),
    ],
)
def test_definition_errors(fn: Any, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        Tool.from_function(fn)


def test_duplicate_tool_names() -> None:
    with pytest.raises(ValueError, match="duplicate tool name"):
        ToolSet([echo, echo])


# ------------------------------------------------------------------ calls


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("echo", {"text": "hi"}, "hi x1"),
        ("echo", {"text": "hi", "times": 3}, "hi x3"),
        ("echo", '{"text": "hi", "times": 2}', "hi x2"),
        ("echo", '  {"text": "é"}  ', "é x1"),
        ("echo", {"text": "hi", "times": 2.0}, "hi x2"),  # integral number is an integer
        ("add", {"a": 1, "b": 2}, "3.0"),  # integer is a number
        ("add", {"a": 1, "b": 0.5}, "1.5"),
        ("count", None, "2"),
        ("count", {}, "2"),
        ("count", "", "2"),
        ("count", "{}", "2"),
        ("tag", {"names": ["x", "y"]}, '[["x", "y"], false, "min", null]'),
        (
            "tag",
            {"names": [], "loud": True, "unit": "h", "note": "n"},
            '[[], true, "h", "n"]',
        ),
        ("tag", '{"names": ["x"], "note": null}', '[["x"], false, "min", null]'),
        ("lookup", {"key": "b"}, "2"),
    ],
)
def test_call_ok(world: dict[str, Any], name: str, arguments: Any, expected: str) -> None:
    result = TOOLS.call(world, name, arguments)
    assert result == expected
    assert not is_error(result)


def test_call_passes_world(world: dict[str, Any]) -> None:
    TOOLS.call(world, "echo", {"text": "a"})
    TOOLS.call(world, "echo", '{"text": "b", "times": 2}')
    assert world["log"] == [("echo", "a", 1), ("echo", "b", 2)]


@pytest.mark.parametrize(
    ("name", "arguments", "fragments"),
    [
        ("nope", {}, ['unknown tool "nope"', "available tools: echo, add, tag, count, lookup"]),
        ("", {}, ['unknown tool ""']),
        (None, {}, ["unknown tool null"]),
        (["echo"], {}, ["unknown tool array"]),
        ("echo", '{"text": ', ["not valid JSON", "position 9"]),
        ("echo", "[1, 2]", ["must be a JSON object, got array"]),
        ("echo", '"text"', ["must be a JSON object, got string"]),
        ("echo", '{"text": "a", "text": "b"}', ["duplicate key"]),
        ("echo", '{"text": NaN}', ["NaN"]),
        ("echo", "[" * 100_000, ["nested too deeply"]),
        ("echo", '{"times": ' + "9" * 5000 + "}", ["not valid JSON"]),
        ("echo", [1], ["must be a JSON object, got array"]),
        ("echo", 7, ["must be a JSON object, got integer"]),
        ("echo", {}, ['missing required argument "text"']),
        ("echo", {"times": 2}, ['missing required argument "text"']),
        ("echo", {"text": "a", "loud": True}, ['unexpected argument "loud"', "accepted: text"]),
        ("count", {"x": 1}, ['unexpected argument "x" (accepted: none)']),
        ("echo", {"text": "a", "world": 1}, ['unexpected argument "world"']),
        ("echo", {"text": "a", 1: 2}, ["argument names must be strings"]),
        ("echo", {"text": 5}, ['argument "text" must be a string, got integer 5']),
        ("echo", {"text": None}, ['argument "text" must be a string, got null']),
        ("echo", {"text": "a", "times": "3"}, ['"times" must be an integer, got string "3"']),
        ("echo", {"text": "a", "times": True}, ['"times" must be an integer, got boolean true']),
        ("echo", {"text": "a", "times": 1.5}, ['"times" must be an integer, got number 1.5']),
        ("add", {"a": 1, "b": True}, ['"b" must be a number, got boolean']),
        ("add", {"a": 1, "b": float("inf")}, ['"b" must be a number']),
        ("add", {"a": 1, "b": 10**400}, ['"b" is out of range']),
        ("tag", {"names": "x"}, ['"names" must be an array of strings, got string']),
        ("tag", {"names": ["x", 2]}, ['"names" item 1 must be a string, got integer 2']),
        ("tag", {"names": [], "loud": 1}, ['"loud" must be a boolean, got integer 1']),
        ("tag", {"names": [], "unit": "sec"}, ['"unit" must be one of "min", "h"']),
        ("tag", {"names": [], "note": 3}, ['"note" must be a string or null']),
        ("lookup", {"key": "zzz"}, ["unknown key 'zzz'", "known keys: a, b"]),  # domain error
    ],
)
def test_call_errors(
    world: dict[str, Any], name: Any, arguments: Any, fragments: list[str]
) -> None:
    result = TOOLS.call(world, name, arguments)
    assert result.startswith(ERROR_PREFIX)
    assert is_error(result)
    for fragment in fragments:
        assert fragment in result


def test_all_problems_reported_at_once(world: dict[str, Any]) -> None:
    result = TOOLS.call(world, "echo", {"times": "x", "extra": 1})
    assert result.startswith('error: tool "echo": ')
    for fragment in ['unexpected argument "extra"', 'missing required argument "text"', '"times"']:
        assert fragment in result


def test_no_call_on_bad_arguments(world: dict[str, Any]) -> None:
    TOOLS.call(world, "echo", {"text": "a", "times": "2"})
    assert "log" not in world


def test_long_values_are_shortened_in_errors(world: dict[str, Any]) -> None:
    result = TOOLS.call(world, "x" * 10_000, {})
    assert len(result) < 300
    result = TOOLS.call(world, "echo", {"text": "a", "times": "9" * 10_000, "y" * 10_000: 1})
    assert len(result) < 400


def test_tool_exceptions_propagate(world: dict[str, Any]) -> None:
    tools = ToolSet([crash, wrong_return])
    with pytest.raises(RuntimeError, match="bug in the tool"):
        tools.call(world, "crash", {})
    with pytest.raises(TypeError, match="not str"):
        tools.call(world, "wrong_return", {})


# ------------------------------------------------------------------ properties

json_like = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(st.characters(exclude_categories=())),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
argument_dicts = st.dictionaries(
    st.sampled_from(["text", "times", "a", "b", "names", "loud", "unit", "note", "key", "x"]),
    json_like,
    max_size=6,
)
arguments = (
    json_like
    | argument_dicts
    | argument_dicts.map(lambda d: json.dumps(d))
    | st.text(st.characters(exclude_categories=()))
)
names = st.sampled_from([*TOOLS.names, "nope", ""]) | st.text(max_size=10) | json_like


@settings(max_examples=300, deadline=None)
@given(name=names, arguments=arguments)
def test_call_never_raises(name: Any, arguments: Any) -> None:
    result = TOOLS.call({"entries": {"a": 1}}, name, arguments)
    assert isinstance(result, str)


@settings(max_examples=200, deadline=None)
@given(text=st.text(st.characters(exclude_categories=())), times=st.integers())
def test_valid_calls_succeed(text: str, times: int) -> None:
    world: dict[str, Any] = {}
    assert TOOLS.call(world, "echo", {"text": text, "times": times}) == f"{text} x{times}"
    encoded = json.dumps({"text": text, "times": times})
    assert TOOLS.call(world, "echo", encoded) == f"{text} x{times}"
