"""Deprecated aliases for public names that moved in 0.3.0 (they go in 0.4.0)."""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Iterable
from typing import Any


def alias_getattr(
    old: str, new: str, names: Iterable[str] | None = None, *, depth: int = 0
) -> Callable[[str], Any]:
    """A module ``__getattr__`` that hands ``names`` on from module ``new`` with a warning.

    Without ``names``, every public name of ``new`` (the whole module moved). ``depth``
    counts the module ``__getattr__`` calls between the user's line and this one.
    """
    moved = None if names is None else frozenset(names)

    def __getattr__(name: str) -> Any:
        target = importlib.import_module(new)
        known = hasattr(target, name) if moved is None else name in moved
        if name.startswith("_") or not known:
            raise AttributeError(f"module {old!r} has no attribute {name!r}")
        warnings.warn(
            f"{old}.{name} moved to {new}.{name} in meeting_gym 0.3.0; the old name goes in 0.4.0",
            DeprecationWarning,
            stacklevel=2 + depth,
        )
        return getattr(target, name)

    return __getattr__
