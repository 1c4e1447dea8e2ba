"""Module ``__getattr__`` helpers (PEP 562): names loaded on first use, and moved names.

:func:`lazy_getattr` lets a package hand on names from its modules without importing them
at import time; :func:`alias_getattr` keeps a public name that moved in 0.3.0 working, with
a ``DeprecationWarning``, until 0.4.0; :func:`alias_modules` does the same for whole
modules that moved inside a package (old imports, and pickles that name the old module,
such as saved SB3 policies, still load).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping
from types import ModuleType
from typing import Any


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports an old module name as the module it moved to (the same object), warning."""

    def __init__(self, moves: Mapping[str, str], since: str, until: str) -> None:
        self.moves, self.since, self.until = dict(moves), since, until

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname not in self.moves:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: Any) -> ModuleType:
        new = self.moves[spec.name]
        warnings.warn(
            f"{spec.name} moved to {new} in meeting_gym {self.since}; "
            f"the old name goes in {self.until}",
            DeprecationWarning,
            stacklevel=2,
        )
        # the module itself, so its classes are the same classes under either name
        return importlib.import_module(new)

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module was imported under its new name."""


def alias_modules(
    package: str, moves: Mapping[str, str], *, since: str = "0.3.0", until: str = "0.4.0"
) -> None:
    """Keep ``package``'s submodules that moved importable by their old names until ``until``.

    ``moves`` maps an old name relative to ``package`` to its new one, relative to
    ``package`` too (``{"solver": "domain.solver"}``) or, when it left the package, whole
    (``{"bench": "meeting_gym.bench.meeting_slot"}``). Call it from the package's ``__init__``.
    """

    def whole(new: str) -> str:
        return new if new.startswith("meeting_gym.") else f"{package}.{new}"

    finder = _MovedModules(
        {f"{package}.{old}": whole(new) for old, new in moves.items()}, since, until
    )
    # first, so an old name under a moved package is never found as a second copy
    sys.meta_path.insert(0, finder)


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
