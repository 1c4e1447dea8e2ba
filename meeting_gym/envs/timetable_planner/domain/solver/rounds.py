"""The solve: CP-SAT and local search in rounds, the annealing last (the package docstring
says why in this order), and what the solver knows about the timetable it returns."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

from meeting_gym.envs.timetable_planner.domain.greedy import first_fit
from meeting_gym.envs.timetable_planner.domain.problem import Problem, Spot
from meeting_gym.envs.timetable_planner.domain.solver.local import (
    anneal,
    changes,
    exact_score,
    polish,
)
from meeting_gym.envs.timetable_planner.domain.solver.model import ScoreModel

DEFAULT_TIME_LIMIT = 2.0
"""CP-SAT deterministic time units per scenario (about a second of one idle core each)
when the solver policy meets a scenario it has no documented result for."""
ROUNDS = 4
"""CP-SAT solves at most (each after a local search improved on the previous one)."""
ANNEAL_STEPS_PER_UNIT = 2000
"""Annealing steps per unit of ``time_limit`` (a step costs about 20 us)."""
ANNEAL_SEEDS = 2
"""Annealing runs from each of two origins: what the rounds found, and the greedy hint."""


@dataclass(frozen=True)
class SolverResult:
    """The best timetable found and what the solver knows about it."""

    timetable: dict[int, Spot]
    score: float
    """Its ``overall_score`` as the env computes it."""
    objective: float
    """The model's value of it (equal to ``score`` up to the model's precision)."""
    bound: float
    """CP-SAT's upper bound on the model's optimum."""
    optimal: bool
    """True when CP-SAT proved the model optimal."""
    status: str
    wall_seconds: float
    deterministic_time: float


def greedy_hint(problem: Problem, start: dict[int, Spot], budget: int) -> dict[int, Spot]:
    """The greedy timetable from ``start``, cut to the changes the budget holds (in its
    order): it is what an out-of-time CP-SAT leaves, so it must be reachable too."""
    hint = first_fit(problem, start.items())
    if changes(start, hint) < budget:
        return hint
    trimmed = dict(start)
    for s, spot in hint.items():
        if changes(start, trimmed) >= budget - 1:
            break
        trimmed[s] = spot
    return trimmed


def solve(
    problem: Problem,
    *,
    time_limit: float = DEFAULT_TIME_LIMIT,
    workers: int = 1,
    current: Iterable[tuple[int, Spot]] = (),
    budget: int | None = None,
) -> SolverResult:
    """Maximise the overall score of ``problem`` (see the package docstring).

    ``current`` is the timetable the episode starts from and ``budget`` its step budget
    (default: the scenario's): the actions from ``current`` to the result, and a submit,
    fit in it. ``time_limit`` is in CP-SAT deterministic time; ``workers`` > 1 is faster
    but no longer deterministic.
    """
    started = time.perf_counter()
    p = problem
    start = dict(current)
    budget = p.step_budget if budget is None else budget
    model = ScoreModel(p, start, budget)
    optimal_status = model.cp_model.OPTIMAL

    # CP-SAT from the greedy timetable; then, while a local search improves on what it
    # found, CP-SAT again from the improved timetable (half the time each round)
    hint = greedy_hint(p, start, budget)
    found, score = hint, exact_score(p, hint)
    limit, det_time = float(time_limit), 0.0
    for _ in range(ROUNDS):
        solver, status, candidate = model.solve_from(found, limit, workers)
        det_time += solver.deterministic_time
        candidate_score = exact_score(p, candidate)
        if candidate_score > score:
            found, score = candidate, candidate_score
        if status == optimal_status:
            break
        polished = polish(p, found, start, budget)
        polished_score = exact_score(p, polished)
        if polished_score <= score:
            break
        found, score = polished, polished_score
        limit /= 2
    if status != optimal_status:  # last, so it only ever adds to what the rounds found
        steps = int(ANNEAL_STEPS_PER_UNIT * time_limit)
        for origin in (dict(found), hint):
            for seed in range(ANNEAL_SEEDS):
                annealed = anneal(p, origin, start, budget, steps=steps, seed=seed)
                annealed = polish(p, annealed, start, budget)
                annealed_score = exact_score(p, annealed)
                # the greedy origin itself may be out of reach from a non-empty start
                if annealed_score > score and changes(start, annealed) < budget:
                    found, score = annealed, annealed_score
    if status in (optimal_status, model.cp_model.FEASIBLE):
        objective_value = solver.objective_value + model.constant
        bound = solver.best_objective_bound + model.constant
    else:
        objective_value, bound = float("nan"), 1.0
    empty = exact_score(p, {})
    if empty > score and not start:  # the rules define the empty timetable apart
        found, score = {}, empty
    return SolverResult(
        timetable=found,
        score=score,
        objective=objective_value,
        bound=max(bound, empty),
        optimal=status == optimal_status,
        status=solver.status_name(status),
        wall_seconds=time.perf_counter() - started,
        deterministic_time=det_time,
    )
