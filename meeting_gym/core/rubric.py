"""Rubric machinery shared by every environment: named, weighted terms and the grade they give.

A task declares its terms once::

    RUBRIC = Rubric(Term("exact_match", 1.0, "exact"), Term("format", 0.2),
                    Term("partial_credit", 0.2, "partial"))

and grades with ``RUBRIC.grade(exact_match=1.0, format=1.0, partial_credit=0.0)``: the
reward is the weighted sum. Every term keeps its own name in the grade, in the env's
final ``info``, in ``meeting-gym eval --json`` and in the evaluation table (under its
``label``). A task whose weights depend on the item (on the difficulty, say) builds one
``Rubric`` per case; a task whose reward is not the weighted sum (a score delta per step)
builds its :class:`Grade` with :meth:`Rubric.grade_with_reward`, so the terms are still
reported by name.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Term:
    """One named rubric term: its key, its weight in the reward, and a short table label."""

    name: str
    weight: float
    label: str = ""

    @property
    def column(self) -> str:
        """The name shown in evaluation tables."""
        return self.label or self.name


@dataclass(frozen=True)
class Grade:
    """Every term's value, in the rubric's order, and the reward. Immutable and picklable."""

    items: tuple[tuple[str, float], ...]
    reward: float

    @property
    def terms(self) -> dict[str, float]:
        """The terms by name (a fresh dict)."""
        return dict(self.items)

    def __getitem__(self, name: str) -> float:
        for key, value in self.items:
            if key == name:
                return value
        raise KeyError(name)

    def as_dict(self) -> dict[str, float]:
        """The terms by name, then ``reward`` (a fresh dict)."""
        out = dict(self.items)
        out["reward"] = self.reward
        return out


class Rubric:
    """An ordered set of weighted terms."""

    def __init__(self, *terms: Term) -> None:
        if not terms:
            raise ValueError("a rubric needs at least one term")
        names = [t.name for t in terms]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate rubric term names: {names}")
        if "reward" in names:
            raise ValueError('"reward" is not a term name: it is the weighted sum')
        for term in terms:
            if not math.isfinite(term.weight):
                raise ValueError(f"rubric term {term.name!r} has a non-finite weight")
        self.terms = terms
        self.names = tuple(names)
        self.zero = self.grade_with_reward(0.0)

    def __repr__(self) -> str:
        return f"Rubric({', '.join(f'{t.name}*{t.weight:g}' for t in self.terms)})"

    def _values(self, scores: Mapping[str, Any]) -> dict[str, float]:
        unknown = set(scores) - set(self.names)
        if unknown:
            raise ValueError(f"unknown rubric term(s) {sorted(unknown)}; terms are {self.names}")
        return {name: float(scores.get(name, 0.0)) for name in self.names}

    def grade(self, **scores: float) -> Grade:
        """A grade whose reward is the weighted sum of the terms (missing terms count 0).

        The sum is rounded to 10 places, so 0.2 + 0.2 * 0.5 equals 0.3 and documented
        rewards compare exactly.
        """
        values = self._values(scores)
        reward = round(sum(t.weight * values[t.name] for t in self.terms), 10)
        return Grade(tuple(values.items()), reward)

    def grade_with_reward(self, reward: float, **scores: float) -> Grade:
        """A grade with the terms reported by name and a reward the task computed itself."""
        return Grade(tuple(self._values(scores).items()), float(reward))
