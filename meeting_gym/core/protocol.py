"""The text protocol: reading tool calls and final answers out of model output.

A model's turn is one of:

* a final answer: ``<answer>...</answer>`` anywhere in the text. An answer wins: if a
  turn holds an answer block, it is an :class:`AnswerAction` even when it also holds
  tool calls, and those calls are not run;
* tool calls: one or more ``<tool_call>...</tool_call>`` blocks (text outside them,
  such as the model's reasoning, is ignored), each holding a JSON object
  ``{"name": ..., "arguments": {...}}`` or a JSON array of such objects; or, when there
  is no such block, the whole text being such a JSON object or array (optionally in
  one markdown code fence). The OpenAI shape
  ``{"type": "function", "function": {"name": ..., "arguments": ...}}`` is accepted
  too. Several calls run in order;
* anything else is an :class:`InvalidAction` whose reason says what was wrong and
  which forms are accepted.

:func:`parse_action` is a pure function that never raises for any input and runs in
time linear in the length of the text. It refuses ambiguity rather than guessing:
unclosed or nested ``<tool_call>`` tags, duplicate JSON keys, unknown keys in a call
object and ``NaN`` are all reported as invalid.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from typing import Any

from meeting_gym.core.tools import ToolSet, json_type_name, loads_json

ACCEPTED_FORMS = (
    'expected a tool call as JSON {"name": ..., "arguments": {...}} '
    "(optionally in <tool_call>...</tool_call>), a JSON array of such calls, "
    "or a final answer in <answer>...</answer>"
)

# `(?:/\s*)?` rather than `/?\s*`: two adjacent optional runs of whitespace would
# backtrack quadratically on "<" followed by many spaces.
_FLAGS = re.IGNORECASE | re.ASCII
_TAG_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*\Z")


@functools.cache
def _answer_tag(name: str) -> re.Pattern[str]:
    """The opening/closing tag pattern of an answer tag such as ``answer`` or ``cron``."""
    if not _TAG_NAME.match(name):
        raise ValueError(f"not a tag name: {name!r}")
    return re.compile(rf"<\s*(/\s*)?{re.escape(name)}\s*>", _FLAGS)


_ANSWER_TAG = _answer_tag("answer")
_TOOL_TAG = re.compile(r"<\s*(/\s*)?tool_call\s*>", _FLAGS)

_CALL_KEYS = frozenset({"name", "arguments"})
_OPENAI_KEYS = frozenset({"type", "function", "id"})


@dataclass(frozen=True)
class ToolCall:
    """One requested call. ``arguments`` is a dict or a JSON-encoded string."""

    name: str
    arguments: Any


@dataclass(frozen=True)
class AnswerAction:
    """A final answer: ``text`` is the whole turn, ``answer`` the block's content."""

    text: str
    answer: str


@dataclass(frozen=True)
class ToolCallsAction:
    """One or more tool calls, to be run in order."""

    calls: tuple[ToolCall, ...]


@dataclass(frozen=True)
class InvalidAction:
    """Output that follows none of the accepted forms; ``reason`` says why."""

    reason: str


Action = AnswerAction | ToolCallsAction | InvalidAction


def _find_answer(text: str, pattern: re.Pattern[str] = _ANSWER_TAG) -> tuple[str | None, bool]:
    """(content of the first answer block or None, whether any opening tag was seen)."""
    opening: re.Match[str] | None = None
    for tag in pattern.finditer(text):
        if tag.group(1) is None:
            opening = tag  # the block is the latest opening tag before a closing one
        elif opening is not None:
            return text[opening.end() : tag.start()].strip(), True
    return None, opening is not None


def extract_answer(text: str, answer_tag: str = "answer") -> str | None:
    """The stripped content of the first ``<answer>...</answer>`` block, else None.

    Tags are case-insensitive and may hold whitespace (``< answer >``, ``< / answer >``).
    The first block ends at the first closing tag that follows an opening tag and
    starts at the last opening tag before it, so ``"<answer>a<answer>b</answer>"``
    gives ``"b"``. Runs in linear time. ``answer_tag`` names another tag (``cron``).
    """
    if not isinstance(text, str):
        raise TypeError(f"expected str, got {type(text).__name__}")
    return _find_answer(text, _answer_tag(answer_tag))[0]


def _quote(text: str) -> str:
    return json.dumps(text if len(text) <= 40 else text[:40] + "...", ensure_ascii=False)


def _invalid(problem: str, answer_tag: str = "answer") -> InvalidAction:
    forms = ACCEPTED_FORMS
    if answer_tag != "answer":
        forms = forms.replace("<answer>...</answer>", f"<{answer_tag}>...</{answer_tag}>")
    return InvalidAction(f"{problem}; {forms}")


def _unfence(text: str) -> str:
    """The body of a text that is exactly one ```json (or bare ```) code fence."""
    if len(text) >= 6 and text.startswith("```") and text.endswith("```"):
        inner = text[3:-3]
        language, newline, body = inner.partition("\n")
        if not newline:
            language, body = "", inner
        if language.strip().lower() in ("", "json"):
            return body.strip()
    return text


def _tool_blocks(text: str) -> list[str] | str | None:
    """Contents of the ``<tool_call>`` blocks; None if there is no tag; str = problem."""
    blocks: list[str] = []
    start: int | None = None
    for tag in _TOOL_TAG.finditer(text):
        if tag.group(1) is None:
            if start is not None:
                return f"<tool_call> block {len(blocks) + 1} is not closed before the next opens"
            start = tag.end()
        else:
            if start is None:
                return "found </tool_call> without an opening <tool_call>"
            blocks.append(text[start : tag.start()])
            start = None
    if start is not None:
        return f"<tool_call> block {len(blocks) + 1} is never closed"
    return blocks if blocks else None


def _call_from_object(obj: dict[str, Any], label: str) -> ToolCall | str:
    call = obj
    if "function" in obj:  # {"type": "function", "function": {"name", "arguments"}}
        extra = sorted(set(obj) - _OPENAI_KEYS)
        if extra:
            return f"{label} has unexpected key {_quote(extra[0])}"
        if obj.get("type", "function") != "function":
            return f'{label}: "type" must be "function"'
        call = obj["function"]
        if not isinstance(call, dict):
            return f'{label}: "function" must be an object, got {json_type_name(call)}'
    if "name" not in call:
        return f'{label} is an object without a "name"'
    name = call["name"]
    if not isinstance(name, str) or not name:
        return f'{label}: "name" must be a non-empty string, got {json_type_name(name)}'
    extra = sorted(set(call) - _CALL_KEYS)
    if extra:
        return f'{label} has unexpected key {_quote(extra[0])} (allowed: "name", "arguments")'
    arguments = call.get("arguments")
    if arguments is None:
        arguments = {}
    elif not isinstance(arguments, (dict, str)):
        kind = json_type_name(arguments)
        return f'{label}: "arguments" must be an object or a JSON-encoded string, got {kind}'
    return ToolCall(name, arguments)


def _calls_from_json(body: str, where: str, first: int, max_calls: int) -> list[ToolCall] | str:
    """Tool calls in one JSON text; ``first`` is the number of calls found before."""
    if not body:
        return f"{where} is empty"
    value, problem = loads_json(body)
    if problem is not None:
        return f"invalid JSON {where}: {problem}"
    if isinstance(value, dict):
        items: list[Any] = [value]
    elif isinstance(value, list):
        if not value:
            return f"empty array of tool calls {where}"
        items = value
    else:
        return f"{where} holds a JSON {json_type_name(value)}, not an object or an array"
    if first + len(items) > max_calls:
        return f"more than {max_calls} tool calls in one turn"
    calls: list[ToolCall] = []
    for offset, item in enumerate(items):
        label = f"tool call {first + offset + 1}"
        if not isinstance(item, dict):
            return f"{label} is a JSON {json_type_name(item)}, not an object"
        call = _call_from_object(item, label)
        if isinstance(call, str):
            return call
        calls.append(call)
    return calls


def parse_action(text: str, *, max_calls: int = 32, answer_tag: str = "answer") -> Action:
    """Classify one model turn as an answer, tool calls, or invalid (see module doc).

    ``answer_tag`` names the tag of a final answer (``answer`` by default; a task may
    use its own, such as ``cron``). Never raises for any input; a non-str input is an
    :class:`InvalidAction`.
    """
    if max_calls < 1:
        raise ValueError("max_calls must be at least 1")

    def invalid(problem: str) -> InvalidAction:
        return _invalid(problem, answer_tag)

    if not isinstance(text, str):
        return invalid(f"expected the model output as str, got {type(text).__name__}")
    answer, answer_opened = _find_answer(text, _answer_tag(answer_tag))
    if answer is not None:
        return AnswerAction(text, answer)

    blocks = _tool_blocks(text)
    if isinstance(blocks, str):
        return invalid(blocks)
    calls: list[ToolCall] = []
    if blocks is not None:
        for number, block in enumerate(blocks, 1):
            found = _calls_from_json(
                _unfence(block.strip()), f"in <tool_call> block {number}", len(calls), max_calls
            )
            if isinstance(found, str):
                return invalid(found)
            calls.extend(found)
        return ToolCallsAction(tuple(calls))

    body = _unfence(text.strip())
    if not body.startswith(("{", "[")):
        if answer_opened:
            problem = f"an <{answer_tag}> block is opened but never closed"
        elif not body:
            problem = "the output is empty"
        else:
            problem = (
                f"found no <{answer_tag}> block, no <tool_call> block, and the text is not JSON"
            )
        return invalid(problem)
    found = _calls_from_json(body, "in the output", 0, max_calls)
    return invalid(found) if isinstance(found, str) else ToolCallsAction(tuple(found))


def _escape_tags(json_text: str) -> str:
    # "<" can only occur inside JSON strings; escaping it keeps argument values such as
    # "</tool_call>" or "<answer>" from being read as protocol tags.
    return json_text.replace("<", "\\u003c")


def format_tool_call(name: str, arguments: dict[str, Any]) -> str:
    """The canonical text rendering of a call, which :func:`parse_action` reads back."""
    payload = json.dumps(
        {"name": name, "arguments": arguments}, ensure_ascii=False, allow_nan=False
    )
    return f"<tool_call>{_escape_tags(payload)}</tool_call>"


def format_answer(answer: str) -> str:
    """``<answer>answer</answer>``."""
    return f"<answer>{answer}</answer>"


def _render_type(schema: dict[str, Any]) -> str:
    if "anyOf" in schema:
        return " | ".join(_render_type(s) for s in schema["anyOf"])
    if "enum" in schema:
        return " | ".join(json.dumps(v, ensure_ascii=False) for v in schema["enum"])
    if schema.get("type") == "array":
        return f"list[{_render_type(schema.get('items', {}))}]"
    kind = schema.get("type", "any")
    return " | ".join(kind) if isinstance(kind, list) else str(kind)


def _render_signature(function: dict[str, Any]) -> str:
    parameters = function.get("parameters", {})
    required = set(parameters.get("required", []))
    parts = []
    for name, prop in parameters.get("properties", {}).items():
        if name in required:
            parts.append(f"{name}: {_render_type(prop)}")
        elif "default" in prop:
            default = json.dumps(prop["default"], ensure_ascii=False)
            parts.append(f"{name}: {_render_type(prop)} = {default}")
        else:
            parts.append(f"{name}?: {_render_type(prop)}")
    return f"{function['name']}({', '.join(parts)})"


def protocol_instructions(toolset: ToolSet, answer_tag: str = "answer") -> str:
    """A system-prompt paragraph explaining the text protocol and listing the tools.

    ``answer_tag`` is the tag of the final answer (a task's ``answer_tag``).
    """
    example = format_tool_call("tool_name", {"argument": "value"})
    article = "an" if answer_tag[:1] in "aeiou" else "a"
    lines = [
        "You can call tools to look at information you cannot see directly. To call a "
        'tool, write a JSON object {"name": ..., "arguments": {...}} inside '
        f"<tool_call>...</tool_call>, for example: {example}. You may call several tools "
        "in one turn (one <tool_call> block each, or one JSON array of calls); they run "
        "in order and each result is sent back to you. A result starting with "
        '"error:" says what was wrong with the call. When you are done, give your final '
        f"answer inside <{answer_tag}>...</{answer_tag}>. A turn that contains "
        f"{article} <{answer_tag}> block is final: tool calls in the same turn are not run.",
        "",
        "Tools:",
    ]
    for schema in toolset.schemas():
        function = schema["function"]
        lines.append(f"- {_render_signature(function)}: {function['description']}")
        for name, prop in function["parameters"].get("properties", {}).items():
            if prop.get("description"):
                lines.append(f"    {name}: {prop['description']}")
    return "\n".join(lines)
