"""Gymnasium spaces shared by the package's environments, and reading a discrete action."""

from __future__ import annotations

import string
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.error import CustomSpaceError
from gymnasium.vector.utils import create_shared_memory

PRINTABLE = "".join(sorted(set(string.printable)))


class AnyText(spaces.Text):
    """A ``Text`` space that admits any string up to ``max_length`` characters.

    Gymnasium's default ``Text`` charset is alphanumeric only, which rejects JSON,
    punctuation and non-ASCII names. Membership here is: a ``str`` no longer than
    ``max_length``. Samples are drawn from printable ASCII.
    """

    def __init__(self, max_length: int, *, seed: Any = None) -> None:
        super().__init__(max_length=max_length, min_length=0, charset=PRINTABLE, seed=seed)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"AnyText({self.max_length})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, AnyText) and other.max_length == self.max_length


@create_shared_memory.register(AnyText)
def _no_shared_memory(space: AnyText, n: int = 1, ctx: Any = None) -> Any:
    """Refuse shared memory, so ``AsyncVectorEnv`` says to pass ``shared_memory=False``.

    Gymnasium reads a ``Text`` space's shared buffer once, into a tuple of strings,
    when the vector env is built; later observations are never read back, so every
    string comes out as the initial (empty) buffer. Its flattening also fails on
    characters outside the charset, such as non-ASCII names.
    """
    raise CustomSpaceError(
        f"{space!r} observations cannot go through shared memory; "
        'use gymnasium.make_vec(..., vector_kwargs={"shared_memory": False})'
    )


def coerce_action(action: Any, n: int) -> int | None:
    """An integer action index in ``0..n-1``, or None for anything else."""
    if isinstance(action, bool | np.bool_):
        return None
    if isinstance(action, np.ndarray):
        if action.size != 1 or action.dtype.kind not in "iu":
            return None
        action = action.reshape(()).item()
    if isinstance(action, int | np.integer):
        value = int(action)
        return value if 0 <= value < n else None
    return None
