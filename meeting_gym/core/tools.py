"""Tools for text agents: plain typed Python functions exposed as JSON-schema tools.

A tool is ONE function. Its first parameter, ``world``, is the hidden state the tool
reads and is not part of the schema; the other parameters are the tool's arguments.
The docstring is Google style: the first paragraph is the tool's description and the
``Args:`` section describes every argument::

    def lookup(world, name: str, limit: int = 5) -> str:
        \"\"\"Find entries whose name contains a text.

        Args:
            name: The text to look for.
            limit: How many entries to return at most.
        \"\"\"

Supported argument types: ``str``, ``int``, ``float``, ``bool``, ``list[T]``,
``Literal[...]`` of strings or of integers, and ``T | None``.

:meth:`ToolSet.call` never raises for bad input from a model: unknown tool, arguments
that are not a JSON object, missing / extra / mistyped arguments all come back as a
string starting with ``error:`` that says what is wrong. A tool may itself return an
``error: ...`` string for domain errors. An exception raised inside a tool function is
a bug in that tool and propagates.
"""

from __future__ import annotations

import copy
import inspect
import json
import math
import re
import types
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, Union, get_args, get_origin

ERROR_PREFIX = "error:"

_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}\Z")
_ARGS_HEADER = re.compile(r"(Args|Arguments|Parameters):\s*\Z")
_SECTION_HEADER = re.compile(r"[A-Z][A-Za-z ]*:\s*\Z")
_ARG_LINE = re.compile(r"(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)\Z", re.DOTALL)


def is_error(result: str) -> bool:
    """True if a tool result is an error message (starts with ``error:``)."""
    return isinstance(result, str) and result.startswith(ERROR_PREFIX)


# ---------------------------------------------------------------------------- JSON


class _DuplicateKeyError(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKeyError(key)
        result[key] = value
    return result


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


_STRICT: dict[str, Any] = {"object_pairs_hook": _no_duplicates, "parse_constant": _reject_constant}
_STRICT_DECODER = json.JSONDecoder(**_STRICT)


def loads_json(text: str) -> tuple[Any, str | None]:
    """Decode JSON without ever raising: ``(value, None)`` or ``(None, problem)``.

    Stricter than :func:`json.loads`: ``NaN``/``Infinity`` and duplicate object keys
    are refused (both are ambiguous); too deep nesting is reported, not raised.
    """
    try:
        if isinstance(text, str) and not text.startswith("\ufeff"):
            value = _STRICT_DECODER.decode(text)  # json.loads would build a decoder per call
        else:
            value = json.loads(text, **_STRICT)  # bytes, or the BOM error message
    except json.JSONDecodeError as exc:
        return None, f"{exc.msg} at position {exc.pos}"
    except _DuplicateKeyError as exc:
        return None, f"duplicate key {json.dumps(exc.args[0], ensure_ascii=False)} in an object"
    except RecursionError:
        return None, "nested too deeply"
    except ValueError as exc:  # NaN/Infinity, integers with too many digits
        return None, str(exc)
    return value, None


def json_type_name(value: Any) -> str:
    """The JSON name of a value's type (``string``, ``integer``, ``object``, ...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _quote(text: str, limit: int = 40) -> str:
    shown = text if len(text) <= limit else text[:limit] + "..."
    return json.dumps(shown, ensure_ascii=False)


def _describe(value: Any) -> str:
    kind = json_type_name(value)
    if isinstance(value, str):
        return f"{kind} {_quote(value)}"
    if isinstance(value, bool):
        return f"{kind} {'true' if value else 'false'}"
    if isinstance(value, (int, float)):
        text = repr(value) if isinstance(value, float) or abs(value) < 10**40 else "(huge)"
        return f"{kind} {text}"
    return kind


# ---------------------------------------------------------------------------- types


@dataclass(frozen=True)
class _Type:
    """An argument type: ``string``, ``integer``, ``number``, ``boolean``, ``array``,
    ``enum`` (with ``choices``) or ``nullable`` (with ``item``)."""

    kind: str
    item: _Type | None = None
    choices: tuple[Any, ...] = ()

    def schema(self) -> dict[str, Any]:
        if self.kind == "array":
            assert self.item is not None
            return {"type": "array", "items": self.item.schema()}
        if self.kind == "enum":
            base = "string" if isinstance(self.choices[0], str) else "integer"
            return {"type": base, "enum": list(self.choices)}
        if self.kind == "nullable":
            assert self.item is not None
            return {"anyOf": [self.item.schema(), {"type": "null"}]}
        return {"type": self.kind}

    def phrase(self) -> str:
        if self.kind == "enum":
            return "one of " + ", ".join(json.dumps(c, ensure_ascii=False) for c in self.choices)
        if self.kind == "nullable":
            assert self.item is not None
            return f"{self.item.phrase()} or null"
        if self.kind == "array":
            assert self.item is not None
            scalar = self.item.kind in _SCALARS.values()
            return f"an array of {self.item.kind}s" if scalar else "an array"
        article = "an" if self.kind[0] in "aeiou" else "a"
        return f"{article} {self.kind}"

    def check(self, value: Any, label: str, phrase: str = "") -> tuple[Any, str | None]:
        """``(converted value, None)`` if ``value`` fits, else ``(None, problem)``.

        ``phrase`` overrides what a value of the wrong type is told it must be.
        """
        kind = self.kind
        if kind == "nullable":
            assert self.item is not None
            return (None, None) if value is None else self.item.check(value, label, self.phrase())
        if kind == "string":
            if isinstance(value, str):
                return value, None
        elif kind == "boolean":
            if isinstance(value, bool):
                return value, None
        elif isinstance(value, bool):  # bool is an int subclass, but never a number here
            pass
        elif kind == "integer":
            if isinstance(value, int):
                return value, None
            if isinstance(value, float) and math.isfinite(value) and value.is_integer():
                return int(value), None  # JSON Schema: 3.0 is an integer
        elif kind == "number":
            if isinstance(value, int):
                try:
                    return float(value), None
                except OverflowError:
                    return None, f"{label} is out of range for a number"
            if isinstance(value, float) and math.isfinite(value):
                return value, None
        elif kind == "enum":
            if type(value) is type(self.choices[0]) and value in self.choices:
                return value, None
        elif kind == "array":
            assert self.item is not None
            if isinstance(value, list):
                items = []
                for index, item in enumerate(value):
                    converted, problem = self.item.check(item, f"{label} item {index}")
                    if problem is not None:
                        return None, problem
                    items.append(converted)
                return items, None
        else:
            raise AssertionError(kind)  # pragma: no cover
        # Only a misfit pays for the message (checking runs on every tool call).
        return None, f"{label} must be {phrase or self.phrase()}, got {_describe(value)}"


_SCALARS: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


def _type_of(annotation: Any, where: str) -> _Type:
    if isinstance(annotation, type) and annotation in _SCALARS:
        return _Type(_SCALARS[annotation])
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is list and len(args) == 1:
        return _Type("array", item=_type_of(args[0], where))
    if origin is Literal and args:
        if all(isinstance(a, str) for a in args) or all(type(a) is int for a in args):
            return _Type("enum", choices=tuple(args))
        raise TypeError(f"{where}: Literal values must be all str or all int")
    if origin in (Union, types.UnionType):
        members = [a for a in args if a is not type(None)]
        if len(members) == 1 and len(args) == 2:
            return _Type("nullable", item=_type_of(members[0], where))
    raise TypeError(
        f"{where}: unsupported type {annotation!r} "
        "(use str, int, float, bool, list[T], Literal[...] or T | None)"
    )


# ---------------------------------------------------------------------------- docstrings


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Google-style docstring -> (first paragraph, {argument: description})."""
    lines = inspect.cleandoc(doc).splitlines()
    summary: list[str] = []
    for line in lines:
        if not line.strip() or _SECTION_HEADER.match(line):
            break
        summary.append(line.strip())

    args: dict[str, list[str]] = {}
    start = next((i for i, line in enumerate(lines) if _ARGS_HEADER.match(line)), None)
    if start is not None:
        entry_indent: int | None = None
        current: list[str] | None = None
        for line in lines[start + 1 :]:
            if not line.strip():
                continue
            indent = len(line) - len(line.lstrip())
            if indent == 0:
                break  # the next section
            if entry_indent is None:
                entry_indent = indent
            match = _ARG_LINE.match(line.strip())
            if indent <= entry_indent and match:
                current = args.setdefault(match.group(1), [])
                current.append(match.group(2).strip())
            elif current is not None:
                current.append(line.strip())
    return " ".join(summary), {k: " ".join(p for p in v if p) for k, v in args.items()}


# ---------------------------------------------------------------------------- tools


@dataclass(frozen=True)
class _Param:
    name: str
    type: _Type
    required: bool
    label: str  # how error messages name it: 'argument "name"'


@dataclass(frozen=True)
class Tool:
    """One tool: a function plus its name, description and JSON-schema parameters."""

    name: str
    description: str
    parameters: dict[str, Any]
    function: Callable[..., str] = field(repr=False)
    params: tuple[_Param, ...] = field(repr=False, compare=False)

    @classmethod
    def from_function(cls, fn: Callable[..., str]) -> Tool:
        """Build a tool from a typed function ``fn(world, ...)`` with a docstring.

        Raises ``TypeError``/``ValueError`` (a programming error) if the signature or
        docstring does not follow the conventions in this module's docstring.
        """
        name = getattr(fn, "__name__", "")
        if not _TOOL_NAME.match(name):
            raise ValueError(f"tool name {name!r} must match [A-Za-z0-9_-]{{1,64}}")
        description, arg_docs = _parse_docstring(inspect.getdoc(fn) or "")
        if not description:
            raise ValueError(f"tool {name}: the docstring needs a description paragraph")

        parameters = list(inspect.signature(fn).parameters.values())
        positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        if not parameters or parameters[0].name != "world" or parameters[0].kind not in positional:
            raise TypeError(f"tool {name}: the first parameter must be `world`")

        params: list[_Param] = []
        properties: dict[str, Any] = {}
        required: list[str] = []
        for p in parameters[1:]:
            where = f"tool {name}, argument {p.name}"
            if p.kind not in (
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
                inspect.Parameter.KEYWORD_ONLY,
            ):
                raise TypeError(f"{where}: must be a plain or keyword-only parameter")
            if p.annotation is inspect.Parameter.empty:
                raise TypeError(f"{where}: needs a type annotation")
            annotation = p.annotation
            if isinstance(annotation, str):  # `from __future__ import annotations`
                try:
                    annotation = eval(annotation, getattr(fn, "__globals__", {}))
                except Exception as exc:
                    raise TypeError(f"{where}: cannot resolve annotation {p.annotation!r}") from exc
            arg_type = _type_of(annotation, where)
            if not arg_docs.get(p.name):
                raise ValueError(f"{where}: not described in the docstring's Args section")
            prop = {**arg_type.schema(), "description": arg_docs[p.name]}
            is_required = p.default is inspect.Parameter.empty
            if is_required:
                required.append(p.name)
            else:
                try:
                    json.dumps(p.default, allow_nan=False)
                    prop["default"] = p.default
                except (TypeError, ValueError):
                    pass
            properties[p.name] = prop
            params.append(_Param(p.name, arg_type, is_required, f"argument {_quote(p.name)}"))

        unknown = sorted(set(arg_docs) - {p.name for p in params} - {"world"})
        if unknown:
            raise ValueError(f"tool {name}: Args documents unknown argument(s) {unknown}")
        schema = {
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": False,
        }
        return cls(name, description, schema, fn, tuple(params))

    def schema(self) -> dict[str, Any]:
        """The OpenAI function-calling format of this tool."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": copy.deepcopy(self.parameters),
            },
        }

    def validate(self, arguments: Any) -> tuple[dict[str, Any], list[str]]:
        """Check raw arguments: ``(keyword arguments, [])`` or ``({}, [problems])``.

        ``arguments`` may be a dict, None (no arguments) or a JSON-encoded object.
        """
        if arguments is None:
            arguments = {}
        elif isinstance(arguments, str):
            if not arguments.strip():
                arguments = {}
            else:
                decoded, problem = loads_json(arguments)
                if problem is not None:
                    return {}, [f"arguments are not valid JSON: {problem}"]
                arguments = decoded
        if not isinstance(arguments, dict):
            return {}, [f"arguments must be a JSON object, got {json_type_name(arguments)}"]

        problems: list[str] = []
        known = {p.name: p for p in self.params}
        for key in arguments:
            if not isinstance(key, str):
                problems.append(f"argument names must be strings, got {_describe(key)}")
            elif key not in known:
                accepted = ", ".join(known) or "none"
                problems.append(f"unexpected argument {_quote(key)} (accepted: {accepted})")
        kwargs: dict[str, Any] = {}
        for param in self.params:
            if param.name not in arguments:
                if param.required:
                    problems.append(f"missing required argument {_quote(param.name)}")
                continue
            value, problem = param.type.check(arguments[param.name], param.label)
            if problem is not None:
                problems.append(problem)
            else:
                kwargs[param.name] = value
        return (kwargs, []) if not problems else ({}, problems)

    def call(self, world: Any, arguments: Any = None) -> str:
        """Validate ``arguments`` and run the tool; bad arguments give an ``error:`` string."""
        kwargs, problems = self.validate(arguments)
        if problems:
            return f"{ERROR_PREFIX} tool {_quote(self.name)}: " + "; ".join(problems)
        result = self.function(world, **kwargs)
        if not isinstance(result, str):
            raise TypeError(f"tool {self.name} returned {type(result).__name__}, not str")
        return result


class ToolSet:
    """An ordered collection of tools with a never-raising dispatcher."""

    def __init__(self, functions: Iterable[Callable[..., str] | Tool]) -> None:
        self._tools: dict[str, Tool] = {}
        self._schemas_json: str | None = None
        for fn in functions:
            tool = fn if isinstance(fn, Tool) else Tool.from_function(fn)
            if tool.name in self._tools:
                raise ValueError(f"duplicate tool name {tool.name!r}")
            self._tools[tool.name] = tool

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._tools)

    @property
    def tools(self) -> tuple[Tool, ...]:
        return tuple(self._tools.values())

    def schemas(self) -> list[dict[str, Any]]:
        """The tools in OpenAI function-calling format, in order (a fresh copy each call)."""
        if self._schemas_json is None:
            self._schemas_json = json.dumps([tool.schema() for tool in self._tools.values()])
        # Decoding a cached JSON text is several times cheaper than deep-copying the
        # nested dicts, and environments hand these out on every reset.
        return json.loads(self._schemas_json)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name) if isinstance(name, str) else None

    def __len__(self) -> int:
        return len(self._tools)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._tools

    def call(self, world: Any, name: str, arguments: Any = None) -> str:
        """Run tool ``name`` on ``world``; always returns a string.

        Bad input (unknown tool, malformed or mistyped arguments) gives a string that
        starts with ``error:``; exceptions raised by the tool function propagate.
        """
        tool = self.get(name)
        if tool is None:
            shown = _quote(name, 80) if isinstance(name, str) else _describe(name)
            available = ", ".join(self._tools) or "none"
            return f"{ERROR_PREFIX} unknown tool {shown}; available tools: {available}"
        return tool.call(world, arguments)
