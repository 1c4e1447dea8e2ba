"""Seeded, deterministic scenario generation: the public API.

``generate(rng, difficulty)`` draws one :class:`Scenario` from a ``random.Random``
and nothing else (never the global ``random`` module, never the machine's time
zone), so the same seed gives the same scenario in any process on any machine.

The tiers live in their own modules: ``easy`` / ``medium`` / ``hard`` in
``standard.py``, ``expert`` in ``expert.py``, both built from the
blocks in ``planting.py`` (imports run
one way: this module -> tiers -> planting).

Everything is on a 15-minute grid; a window spans at most ``MAX_WINDOW_DAYS``
days and a scenario has at most ``MAX_ATTENDEES`` attendees.
"""

from __future__ import annotations

import hashlib
import random

from meeting_gym.envs.meeting_slot.domain import expert, standard
from meeting_gym.envs.meeting_slot.domain.expert import EXPERT_ODD
from meeting_gym.envs.meeting_slot.domain.planting import (
    DURATIONS,
    GRID,
    HOURS,
    MAX_ATTENDEES,
    MAX_WINDOW_DAYS,
    Spec,
    build,
)
from meeting_gym.envs.meeting_slot.domain.scenario import Scenario
from meeting_gym.envs.meeting_slot.domain.solver import Solution, solve
from meeting_gym.envs.meeting_slot.domain.standard import (
    DST_FRIDAYS,
    FIRST_MONDAY,
    MONDAY_WEEKS,
    PEOPLE,
)

__all__ = [
    "DIFFICULTIES",
    "DST_FRIDAYS",
    "DURATIONS",
    "EXPERT_ODD",
    "FIRST_MONDAY",
    "GRID",
    "HOURS",
    "MAX_ATTENDEES",
    "MAX_WINDOW_DAYS",
    "MIX",
    "MONDAY_WEEKS",
    "PEOPLE",
    "generate",
    "generate_seeded",
    "generate_solved",
    "scenario_id",
]

DIFFICULTIES = ("easy", "medium", "hard", "expert")

MIX = (("easy", 0.40), ("medium", 0.35), ("hard", 0.25))
"""The default mix drawn when ``difficulty`` is None (expert is never drawn)."""


def generate(rng: random.Random, difficulty: str | None = None) -> Scenario:
    """One scenario drawn from ``rng``; ``None`` draws the default easy/medium/hard mix."""
    return _generate(rng, difficulty)[0]


def generate_solved(rng: random.Random, difficulty: str | None = None) -> tuple[Scenario, Solution]:
    """:func:`generate` and the scenario's :func:`~.solver.solve`.

    Draws exactly the scenario :func:`generate` would. Generation already solves its
    final draft in most cases (to check a planted slot, for instance); that Solution is
    handed back instead of solving the scenario again.
    """
    scenario, solution = _generate(rng, difficulty)
    return scenario, solve(scenario) if solution is None else solution


def _generate(rng: random.Random, difficulty: str | None) -> tuple[Scenario, Solution | None]:
    if difficulty is None:
        difficulty = _draw_mix(rng)
    elif difficulty not in DIFFICULTIES:
        raise ValueError(
            f"unknown difficulty {difficulty!r}; choose None (the default mix) "
            f"or one of {', '.join(DIFFICULTIES)}"
        )
    if difficulty == "expert":
        duration, first, days, specs, solution = expert.draft(rng)
    else:
        duration, first, days, specs, solution = standard.draft(rng, difficulty)
    return _finish(duration, first, days, specs, difficulty), solution


def generate_seeded(seed: int, difficulty: str | None = None) -> Scenario:
    """``generate(random.Random(seed), difficulty)``."""
    return generate(random.Random(seed), difficulty)


def scenario_id(scenario: Scenario) -> str:
    """``gen-`` + 8 uppercase hex digits of the SHA-256 of the scenario's content.

    The content is everything but the id, written as the ``ascii()`` of nested tuples
    of strings and integers (dates as ordinals, busy dates in order): the same text in
    every process and on every machine, whatever ``PYTHONHASHSEED``, and a few times
    cheaper than a sorted JSON dump (every reset computes it).
    """
    content = (
        scenario.difficulty,
        scenario.duration_minutes,
        scenario.window_start.toordinal(),
        scenario.window_days,
        tuple(
            (
                person.name,
                person.timezone,
                person.work_start,
                person.work_end,
                tuple(person.weekdays),
                tuple((day.toordinal(), blocks) for day, blocks in sorted(person.busy.items())),
            )
            for person in scenario.attendees
        ),
    )
    digest = hashlib.sha256(ascii(content).encode("ascii")).hexdigest()
    return f"gen-{digest[:8].upper()}"


# ----------------------------------------------------------------------------- helpers


def _draw_mix(rng: random.Random) -> str:
    u = rng.random()
    for name, share in MIX:
        if u < share:
            return name
        u -= share
    return MIX[-1][0]


def _finish(duration: int, first: int, days: int, specs: list[Spec], difficulty: str) -> Scenario:
    scenario = build(duration, first, days, specs, difficulty=difficulty)
    return Scenario(
        duration_minutes=scenario.duration_minutes,
        window_start=scenario.window_start,
        window_days=scenario.window_days,
        attendees=scenario.attendees,
        id=scenario_id(scenario),
        difficulty=difficulty,
    )
