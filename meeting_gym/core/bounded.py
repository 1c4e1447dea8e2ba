"""Bounded text of untrusted values, for error messages and transcripts.

A model or a client can send anything: ``repr`` of an int over 4,300 digits raises
``ValueError`` (CPython's int/str limit), and ``repr`` of a long list or string is as
long as it is. :func:`show` is ``repr`` cut to a few dozen characters and never raises.
"""

from __future__ import annotations

import reprlib
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
