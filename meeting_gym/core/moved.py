"""Module ``__getattr__`` helpers (PEP 562): names loaded on first use, and moved names.

:func:`lazy_getattr` lets a package hand on names from its modules without importing them
at import time; :func:`alias_getattr` keeps a public name that moved in 0.3.0 working, with
a ``DeprecationWarning``, until 0.4.0.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Iterable
from typing import Any


def lazy_getattr(
    namespace: dict[str, Any], names: dict[str, str], fallback: Callable[[str], Any] | None = None
) -> Callable[[str], Any]:
    """A module ``__getattr__`` that imports ``names[name]`` on first use and keeps the value
    in the module's ``namespace`` (its ``globals()``); other names go to ``fallback``."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            if fallback is not None:
                return fallback(name)
            raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return __getattr__


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
