"""Local search over timetables, scored by the env's own incremental scorer.

:func:`polish` climbs to a local optimum by first improvements in a fixed order;
:func:`anneal` is a seeded simulated annealing by the same kinds of change. Both keep the
actions from the episode's start within its step budget, and both are deterministic.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping

from meeting_gym.envs.timetable_planner.domain.problem import Problem, Spot
from meeting_gym.envs.timetable_planner.domain.scoring import Timetable

ANNEAL_TEMPERATURE = 0.001
"""Starting temperature (in overall-score units), cooled linearly to zero."""


def exact_score(problem: Problem, timetable: Mapping[int, Spot]) -> float:
    """The env's overall score of a timetable."""
    return Timetable(problem, timetable.items()).scores().overall_score


def changes(start: Mapping[int, Spot], timetable: Mapping[int, Spot]) -> int:
    """Actions that turn ``start`` into ``timetable`` (one per changed session)."""
    return sum(1 for s in set(start) | set(timetable) if start.get(s) != timetable.get(s))


def polish(
    problem: Problem,
    timetable: Mapping[int, Spot],
    start: Mapping[int, Spot] | None = None,
    budget: int | None = None,
) -> dict[int, Spot]:
    """A local optimum near ``timetable``: first improvements, in a fixed order, until none.

    The moves tried, for each session in order: every spot (a move, or an assign if it is
    unplaced), then unassigning it; then every swap of two placed sessions. Each is
    scored by the incremental :class:`~.scoring.Timetable` and kept if the overall score
    rises; the actions from ``start`` to the result stay within ``budget - 1``.
    Deterministic.
    """
    p = problem
    start = dict(start or {})
    limit = (p.step_budget if budget is None else budget) - 1
    table = Timetable(p, timetable.items())
    best = table.scores().overall_score
    spots = {
        length: [
            (d, t, r)
            for d in range(p.n_days)
            for t in range(p.per_day - length + 1)
            for r in range(len(p.room_ids))
        ]
        for length in set(p.session_length)
    }

    def keep() -> bool:
        nonlocal best
        score = table.scores().overall_score
        if score > best + 1e-12 and changes(start, dict(table.items())) <= limit:
            best = score
            return True
        return False

    improved = True
    while improved:
        improved = False
        for s in range(len(p.sessions)):
            for spot in spots[p.session_length[s]]:
                current = table.spot(s)
                if spot == current:
                    continue
                if current is None:
                    table.place(s, spot)
                else:
                    table.move(s, spot)
                if keep():
                    improved = True
                elif current is None:
                    table.remove(s)
                else:
                    table.move(s, current)
            current = table.spot(s)
            if current is not None:
                table.remove(s)
                if keep():
                    improved = True
                else:
                    table.place(s, current)
        placed = sorted(s for s, _ in table.items())
        for i, a in enumerate(placed):
            for b in placed[i + 1 :]:
                sa, sb = table.spot(a), table.spot(b)
                if sa is None or sb is None:
                    continue
                if sa[1] + p.session_length[b] > p.per_day:
                    continue
                if sb[1] + p.session_length[a] > p.per_day:
                    continue
                table.swap(a, b)
                if keep():
                    improved = True
                else:
                    table.swap(a, b)
    return dict(table.items())


def anneal(
    problem: Problem,
    timetable: Mapping[int, Spot],
    start: Mapping[int, Spot] | None = None,
    budget: int | None = None,
    *,
    steps: int = 100_000,
    temperature: float = ANNEAL_TEMPERATURE,
    seed: int = 0,
) -> dict[int, Spot]:
    """The best timetable a simulated annealing from ``timetable`` visits.

    Each step changes one thing at random (from ``random.Random(seed)`` only): moves a
    placed session to a random spot (1/2), swaps two placed sessions whose exchanged
    spots fit their days (1/5), unassigns one (3/20) or assigns an unplaced one (3/20).
    A change that does not lower the overall score is kept; one that lowers it by
    ``delta`` is kept with probability ``exp(-delta / T)``, ``T`` falling linearly from
    ``temperature`` to zero. The best timetable seen whose actions from ``start`` (and a
    submit) fit in ``budget`` is returned; never worse than ``timetable``. Deterministic.
    """
    p = problem
    start = dict(start or {})
    limit = (p.step_budget if budget is None else budget) - 1
    rng = random.Random(seed)
    table = Timetable(p, timetable.items())
    score = best = table.scores().overall_score
    found = dict(timetable)
    placed = [s for s, _ in table.items()]
    unplaced = [s for s in range(len(p.sessions)) if s not in table]
    n_rooms = len(p.room_ids)

    def spot_for(s: int) -> Spot:
        return (
            rng.randrange(p.n_days),
            rng.randrange(p.per_day - p.session_length[s] + 1),
            rng.randrange(n_rooms),
        )

    for step in range(steps):
        heat = temperature * (1 - step / steps)
        roll = rng.random()
        if roll < 0.5 and placed:
            s = placed[rng.randrange(len(placed))]
            old = table.spot(s)
            assert old is not None
            table.move(s, spot_for(s))

            def undo(s: int = s, old: Spot = old) -> None:
                table.move(s, old)
        elif roll < 0.7 and len(placed) > 1:
            a, b = rng.sample(placed, 2)
            sa, sb = table.spot(a), table.spot(b)
            assert sa is not None and sb is not None
            if sa[1] + p.session_length[b] > p.per_day or sb[1] + p.session_length[a] > p.per_day:
                continue
            table.swap(a, b)

            def undo(a: int = a, b: int = b) -> None:
                table.swap(a, b)
        elif roll < 0.85 and placed:
            i = rng.randrange(len(placed))
            s = placed[i]
            old = table.remove(s)
            placed[i] = placed[-1]
            placed.pop()
            unplaced.append(s)

            def undo(s: int = s, old: Spot = old) -> None:
                table.place(s, old)
                unplaced.remove(s)
                placed.append(s)
        elif unplaced:
            i = rng.randrange(len(unplaced))
            s = unplaced[i]
            table.place(s, spot_for(s))
            unplaced[i] = unplaced[-1]
            unplaced.pop()
            placed.append(s)

            def undo(s: int = s) -> None:
                table.remove(s)
                placed.remove(s)
                unplaced.append(s)
        else:
            continue
        new = table.scores().overall_score
        if new >= score or (heat > 0 and rng.random() < math.exp((new - score) / heat)):
            score = new
            if score > best + 1e-12:
                current = dict(table.items())
                if changes(start, current) <= limit:
                    best, found = score, current
        else:
            undo()
    return found
