"""TimetablePlanner's reference policies, acting through the text interface.

Each sees only what an agent sees: the first observation (the problem, as JSON) and the
state after each step. :func:`~.view.scenario_from_view` rebuilds the problem from the
first observation; the planners then play a fixed list of actions and submit.

* ``solver``: the CP-SAT ceiling (:mod:`.solver`). On the 23 catalogue scenarios it
  replays the timetable the solver found and documented (``data/solver_best.json``),
  so it needs no OR-Tools there; on any other scenario it solves (OR-Tools needed,
  :data:`~.solver.DEFAULT_TIME_LIMIT` deterministic time units).
* ``greedy``: the constructive first fit (:mod:`.greedy`).
* ``random``: uniform over the actions the discrete interface's mask allows (so in
  discrete mode it is the masked random policy), seeded; it submits only when it draws
  the submit action, so it mostly runs out of budget.
* ``empty``: submits at once (the starting timetable's score).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

from meeting_gym.core.policy import Policy
from meeting_gym.core.policy import RandomPolicy as BaseRandomPolicy
from meeting_gym.envs.timetable_planner.domain.greedy import first_fit, plan_actions
from meeting_gym.envs.timetable_planner.domain.problem import Problem, Spot
from meeting_gym.envs.timetable_planner.task import content_key
from meeting_gym.envs.timetable_planner.view import scenario_from_view, timetable_from_view

SUBMIT = json.dumps({"action_type": "submit_timetable"})


def _read(observation: str) -> tuple[Problem, dict[str, Any]]:
    view = json.loads(observation)
    return Problem(scenario_from_view(view)), view


def current_timetable(problem: Problem, view: dict[str, Any]) -> dict[int, Spot]:
    """The observation's timetable by session index."""
    days = list(problem.day_labels)
    return {
        problem.session_index[sid]: (day, start, problem.room_index[room])
        for sid, day, start, room in timetable_from_view(view, days)
    }


class _Planner(Policy):
    """Plans a target timetable from the first observation, then plays the actions."""

    def reset(
        self, observation: str, info: dict[str, Any], seed: int | None = None, *, env: Any = None
    ) -> None:
        self.actions: list[str] | None = None
        if isinstance(observation, str):  # else: planned at the first text observation
            self._plan(observation)

    def _plan(self, observation: str) -> None:
        problem, view = _read(observation)
        current = current_timetable(problem, view)
        target = self.target(problem, current)
        self.actions = [json.dumps(a) for a in plan_actions(problem, current, target)]
        self.actions.append(SUBMIT)

    def target(self, problem: Problem, current: dict[int, Spot]) -> dict[int, Spot]:
        raise NotImplementedError

    def act(self, observation: str, info: dict[str, Any] | None = None) -> str:
        if self.actions is None:
            self._plan(observation)
        assert self.actions is not None
        return self.actions.pop(0) if self.actions else SUBMIT


class GreedyPolicy(_Planner):
    name = "greedy"

    def target(self, problem: Problem, current: dict[int, Spot]) -> dict[int, Spot]:
        return first_fit(problem, current.items())


class SolverPolicy(_Planner):
    """The solver's timetable (documented for the 23 catalogue scenarios, else solved)."""

    name = "solver"

    def __init__(self, time_limit: float | None = None) -> None:
        self.time_limit = time_limit

    def target(self, problem: Problem, current: dict[int, Spot]) -> dict[int, Spot]:
        from meeting_gym.envs.timetable_planner.domain.best import documented_timetable
        from meeting_gym.envs.timetable_planner.domain.solver import DEFAULT_TIME_LIMIT, solve

        known = documented_timetable(problem)
        if known is not None:
            return known
        limit = DEFAULT_TIME_LIMIT if self.time_limit is None else self.time_limit
        key = (content_key(problem.scenario), limit, tuple(sorted(current.items())))
        found = _SOLVED.get(key)
        if found is None:
            found = solve(problem, time_limit=limit, current=current.items()).timetable
            _SOLVED[key] = found
            while len(_SOLVED) > 64:
                _SOLVED.popitem(last=False)
        return dict(found)


_SOLVED: OrderedDict[tuple[Any, ...], dict[int, Spot]] = OrderedDict()
"""Recent solves (the solve is deterministic: the same scenario and start give the same)."""


class EmptyPolicy(Policy):
    """Submits the starting timetable at once."""

    name = "empty"

    def act(self, observation: str, info: dict[str, Any] | None = None) -> str:
        return SUBMIT


class RandomPolicy(BaseRandomPolicy):
    """Uniform over the discrete interface's allowed actions (see the module docstring)."""

    def reset(
        self, observation: str, info: dict[str, Any], seed: int | None = None, *, env: Any = None
    ) -> None:
        self.reseed(seed)
        self.problem: Problem | None = None
        if isinstance(observation, str):
            self._start(observation)

    def _start(self, observation: str) -> None:
        from meeting_gym.envs.timetable_planner.discrete.interface import (
            ActionTable,
            Bounds,
            Masker,
        )

        self.problem, _ = _read(observation)
        p = self.problem
        bounds = Bounds(
            max(1, len(p.sessions)),
            max(1, len(p.teacher_ids)),
            max(1, len(p.group_ids)),
            max(1, len(p.room_ids)),
            p.n_days,
            p.per_day,
        )
        self.table = ActionTable(bounds)
        self.masker = Masker(self.table, p)
        self.known: dict[int, Spot] = {}

    def act(self, observation: str, info: dict[str, Any] | None = None) -> str:
        import numpy as np

        if self.problem is None:
            self._start(observation)
        assert self.problem is not None
        view = json.loads(observation)
        if "timetable" in view:  # a multi-action step's array ends with the state
            now = current_timetable(self.problem, view)
            changed = [s for s in set(now) | set(self.known) if now.get(s) != self.known.get(s)]
            for s in changed:
                self.masker.set_spot(s, now.get(s))
            if changed:
                self.masker.refresh(changed)
            self.known = now
        legal = np.flatnonzero(self.masker.mask)
        index = int(legal[int(self.rng.random() * len(legal))])
        return json.dumps(self.table.decode(index, self.problem).to_dict())
