"""Bounded text of untrusted values, for error messages and transcripts.

A model or a client can send anything: ``repr`` of an int over 4,300 digits raises
``ValueError`` (CPython's int/str limit), and ``repr`` of a long list or string is as
long as it is. :func:`show` is ``repr`` cut to a few dozen characters and never raises;
:func:`field_problem` words the complaint about an untrusted object's keys with it.
"""

from __future__ import annotations

import reprlib
from collections.abc import Mapping, Sequence
from typing import Any


class _Short(reprlib.Repr):
    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 128:
            return f"<int of {x.bit_length()} bits>"
        return super().repr_int(x, level)


def show(value: Any, limit: int = 40) -> str:
    """``repr(value)`` in at most about ``limit`` characters (containers: their first items)."""
    short = _Short()
    short.maxstring = short.maxother = short.maxlong = limit
    try:
        return short.repr(value)
    except Exception:  # a foreign object whose __repr__ fails: say what it is
        return f"<{type(value).__name__}>"


def field_problem(
    data: Mapping[Any, Any], allowed: Sequence[str], required: Sequence[str], where: str = "item"
) -> str | None:
    """The error message for the keys of untrusted ``data``, or None if they are fine.

    It names the first key not in ``allowed`` (and lists those), or else the first of
    ``required`` that is missing; ``where`` starts the message (``"item"``).
    """
    for key in data:
        if key not in allowed:
            return f"{where}: unknown field {show(key)} (allowed: {', '.join(allowed)})"
    for key in required:
        if key not in data:
            return f"{where}.{key}: missing"
    return None
