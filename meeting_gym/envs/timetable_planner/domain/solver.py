"""The ceiling: the best timetable a constraint solver finds (OR-Tools CP-SAT).

:func:`solve` writes the score of RULES section 5 as a CP-SAT model and maximises it:
a **faithful linearisation**, not a lexicographic stand-in. Every component is modelled
exactly as the env computes it, D17 quirks included, over one Boolean per (session, day,
start, room) (every room, so a placement that breaks a constraint is allowed when it
pays, as hard_3's oversized session shows):

* counts are linear: placements ``N_s``, occupied cells ``N_c``, covered must sessions,
  capacity / type / availability violations, preferred placements, exact and moved
  baseline placements; an overlap ``max(0, n - 1)`` per (entity, cell) is a variable
  bounded below by ``n - 1`` and 0, which the objective pushes down to its value;
* compactness reads, per (teacher or group, day), which slots are occupied (Booleans
  tied both ways to the cell's count) through a table of all ``2**P`` patterns giving
  whether the pair is scored and its value ``(P - span) / (P - k)``, scaled to integers;
* daily balance: ``|D c_d - N_s|`` per day, pushed down to its value the same way;
* every ratio with a variable denominator (hard constraints over ``N_s`` and ``N_c``;
  preference and daily balance over ``N_s``; compactness over the scored pairs;
  room_fit over the qualifying placements) is linearised exactly: the denominator is
  one-hot encoded, and ``a / b = sum_v y_v / v`` with ``y_v = a`` when ``b = v`` and 0
  otherwise (enforced literals);
* clamps never bind (each component is in [0, 1] and the weights sum to 1), and the
  empty timetable, whose ratios the rules define apart, is compared separately.

The objective has fractional coefficients, which CP-SAT scales to integers to a relative
precision of about 1e-6 (``mip_wanted_precision``), and room_fit values are rounded to
1e-6; "optimal" below means optimal to that precision. The solution found is then scored
by the env's own :class:`~.scoring.Timetable` (and the policy replays it as actions
through the env), so the reported score is always the env's, never the model's.

One worker of CP-SAT stalls on the larger generated scenarios (optional sessions, six
slots a day) long before it proves anything. So the search alternates: CP-SAT from the
greedy timetable (the hint, completed to every variable); then :func:`polish`, a local
search by single moves, assigns, unassigns and swaps scored by the incremental scorer;
and, while the polish improved on CP-SAT's timetable, CP-SAT again from the polished one
(half the time limit each round, :data:`ROUNDS` at most). Unless CP-SAT proved its
timetable optimal, :func:`anneal` (a seeded simulated annealing by the same kinds of
change, :data:`ANNEAL_SEEDS` runs from what the rounds found and as many from the greedy
timetable, another basin) and a polish follow, kept if they improve: last, so they only
ever add to what the rounds found. Optimality is claimed only when CP-SAT proves it (the local
searches cannot prove anything). The result is never worse than the greedy timetable.
(The annealing is there because the audit's perturbation search, annealing from the
documented timetables, beat the solver's gen_expert_4002 by 0.005: CP-SAT had stopped at
its time limit, and a first-improvement polish could not leave that local optimum; and
then, from the greedy timetable, gen_medium_2001's by 8e-5. Run between the rounds
instead, it sent the next CP-SAT round elsewhere and lost on gen_medium_2001.)

The solve is deterministic: one worker, a *deterministic* time limit
(``max_deterministic_time``, CP-SAT's work-based clock), an annealing of a fixed number
of steps from a fixed seed and a polish in a fixed order, so the same scenario gives the
same timetable on any machine with the same OR-Tools.
Also honoured: the step budget (the actions that reach the timetable from the start,
plus a submit, fit in it). OR-Tools is optional (``pip install "meeting-gym[solver]"``)
and imported here only.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from meeting_gym.envs.timetable_planner.domain.greedy import first_fit
from meeting_gym.envs.timetable_planner.domain.problem import Problem, Spot
from meeting_gym.envs.timetable_planner.domain.scoring import WEIGHTS, Timetable

__all__ = ["DEFAULT_TIME_LIMIT", "INSTALL_HINT", "SolverResult", "anneal", "polish", "solve"]

INSTALL_HINT = 'the solver needs OR-Tools: pip install "meeting-gym[solver]"'
DEFAULT_TIME_LIMIT = 2.0
"""CP-SAT deterministic time units per scenario (about a second of one idle core each)
when the solver policy meets a scenario it has no documented result for."""
FIT_SCALE = 1_000_000
ROUNDS = 4
"""CP-SAT solves at most (each after a local search improved on the previous one)."""
ANNEAL_STEPS_PER_UNIT = 2000
"""Annealing steps per unit of ``time_limit`` (a step costs about 20 us)."""
ANNEAL_SEEDS = 2
"""Annealing runs from each of two origins: what the rounds found, and the greedy hint."""
ANNEAL_TEMPERATURE = 0.001
"""Starting temperature (in overall-score units), cooled linearly to zero."""
Q = 1_000_000
"""Scale of the ratio variables: the model is within 1/Q of the score per ratio term."""


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


def _cp_model() -> Any:
    try:
        from ortools.sat.python import cp_model
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ImportError(INSTALL_HINT) from exc
    return cp_model


def exact_score(problem: Problem, timetable: Mapping[int, Spot]) -> float:
    """The env's overall score of a timetable."""
    return Timetable(problem, timetable.items()).scores().overall_score


def _pair_table(per_day: int, scale: int) -> list[list[int]]:
    """Every occupancy pattern of a day: bits, scored (k >= 2), value * scale."""
    rows = []
    for pattern in range(1 << per_day):
        bits = [(pattern >> s) & 1 for s in range(per_day)]
        k = sum(bits)
        if k < 2:
            rows.append([*bits, 0, 0])
            continue
        first = bits.index(1)
        last = per_day - 1 - bits[::-1].index(1)
        span = last - first + 1
        value = Fraction(1) if k == per_day else Fraction(per_day - span, per_day - k)
        scaled = value * scale
        assert scaled.denominator == 1
        rows.append([*bits, 1, int(scaled)])
    return rows


def _changes(start: Mapping[int, Spot], timetable: Mapping[int, Spot]) -> int:
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
        if score > best + 1e-12 and _changes(start, dict(table.items())) <= limit:
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
                if _changes(start, current) <= limit:
                    best, found = score, current
        else:
            undo()
    return found


def _complete_hint(cp_model: Any, model: Any, time_limit: float) -> None:
    """Extend the placement hint to every variable (a solve with the hint fixed).

    CP-SAT rarely completes a partial hint through the product constraints in a short
    time; propagating the fixed placements gives the value of every other variable.
    """
    fixed = cp_model.CpSolver()
    fixed.parameters.fix_variables_to_their_hinted_value = True
    fixed.parameters.num_workers = 1
    fixed.parameters.max_deterministic_time = max(0.1, time_limit / 4)
    if fixed.solve(model) not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return
    values = [
        fixed.value(model.get_int_var_from_proto_index(i))
        for i in range(len(model.proto.variables))
    ]
    model.clear_hints()
    for i, value in enumerate(values):
        model.add_hint(model.get_int_var_from_proto_index(i), value)


def solve(
    problem: Problem,
    *,
    time_limit: float = DEFAULT_TIME_LIMIT,
    workers: int = 1,
    current: Iterable[tuple[int, Spot]] = (),
    budget: int | None = None,
) -> SolverResult:
    """Maximise the overall score of ``problem`` (see the module docstring).

    ``current`` is the timetable the episode starts from and ``budget`` its step budget
    (default: the scenario's): the actions from ``current`` to the result, and a submit,
    fit in it. ``time_limit`` is in CP-SAT deterministic time; ``workers`` > 1 is faster
    but no longer deterministic.
    """
    cp_model = _cp_model()
    started = time.perf_counter()
    p = problem
    start = dict(current)
    budget = p.step_budget if budget is None else budget
    level = p.task_name
    weights = WEIGHTS[level]
    hard_all = level != "easy"
    n_days, per_day, n_rooms = p.n_days, p.per_day, len(p.room_ids)
    sessions = range(len(p.sessions))

    m = cp_model.CpModel()
    x: dict[tuple[int, Spot], Any] = {}
    by_session: dict[int, list[tuple[Spot, Any]]] = {s: [] for s in sessions}
    for s in sessions:
        length = p.session_length[s]
        for d in range(n_days):
            for t in range(per_day - length + 1):
                for r in range(n_rooms):
                    var = m.new_bool_var(f"x{s}_{d}_{t}_{r}")
                    x[s, (d, t, r)] = var
                    by_session[s].append(((d, t, r), var))
    placed = {}
    for s in sessions:
        placed[s] = m.new_bool_var(f"placed{s}")
        m.add(sum(v for _, v in by_session[s]) == placed[s])
    n_s_max = len(p.sessions)
    n_s = sum(placed.values())
    n_c = sum(p.session_length[s] * placed[s] for s in sessions)
    m.add(n_s >= 1)

    # the step budget: every changed session is one action, the submit one more
    changes = []
    for s in sessions:
        if s in start and (s, start[s]) in x:
            changes.append(1 - x[s, start[s]])
        elif s in start:
            changes.append(1)
        else:
            changes.append(placed[s])
    m.add(sum(changes) <= max(0, budget - 1))

    # cell occupancy per teacher, group and room
    cells: dict[tuple[str, int, int, int], list[Any]] = {}
    for (s, (d, t, r)), var in x.items():
        for k in range(t, t + p.session_length[s]):
            cells.setdefault(("t", p.session_teacher[s], d, k), []).append(var)
            cells.setdefault(("g", p.session_group[s], d, k), []).append(var)
            cells.setdefault(("r", r, d, k), []).append(var)
    overlaps = []
    occupied: dict[tuple[str, int, int, int], Any] = {}
    for key, terms in cells.items():
        count = sum(terms)
        if len(terms) > 1:
            over = m.new_int_var(0, len(terms) - 1, f"ov{key}")
            m.add(over >= count - 1)
            overlaps.append(over)
        if key[0] != "r":
            bit = m.new_bool_var(f"o{key}")
            m.add(count >= 1).only_enforce_if(bit)
            m.add(count == 0).only_enforce_if(bit.Not())
            occupied[key] = bit

    # per-placement facts
    count_a, count_avail, preferred, fit_den, fit_num = [], [], [], [], []
    for (s, (d, t, r)), var in x.items():
        length = p.session_length[s]
        mask = ((1 << length) - 1) << t
        teacher = p.session_teacher[s]
        type_ok, capacity_ok = p.type_ok[s][r], p.capacity_ok[s][r]
        if hard_all:
            bad = (not type_ok) + (not capacity_ok)
            if bad:
                count_a.append(bad * var)
            unavailable = (length - (mask & p.teacher_avail_mask[teacher][d]).bit_count()) + (
                length - (mask & p.room_avail_mask[r][d]).bit_count()
            )
            if unavailable:
                count_avail.append(unavailable * var)
        if p.teacher_indifferent[teacher] or mask & p.teacher_pref_mask[teacher][d] == mask:
            preferred.append(var)
        if type_ok and capacity_ok:
            fit_den.append(var)
            fit = Fraction(p.fit_num[s][r], p.fit_den)
            fit_num.append(round(fit * FIT_SCALE) * var)

    objective: list[Any] = []
    constant = 0.0

    def ratio(
        numerator: Any,
        high: int,
        denominator: Any,
        max_den: int,
        coefficient: float,
        name: str,
        *,
        zero_is_one: bool = False,
    ) -> None:
        """Add ``coefficient * numerator / denominator`` to the objective.

        ``q`` stands for the ratio scaled by ``Q``: ``q * den <= Q * num`` when the
        term is rewarded (``q`` is then the floor), ``>=`` when it costs (the ceiling),
        so the model never overstates the score, and by less than ``1 / Q`` per term.
        A zero denominator means 1 when ``zero_is_one``, else 0.
        """
        top = Q * max(1, high)
        q = m.new_int_var(0, top, f"{name}_q")
        product = m.new_int_var(0, top * max_den, f"{name}_qb")
        m.add_multiplication_equality(product, [q, denominator])
        if coefficient >= 0:
            m.add(product <= Q * numerator)
            if not zero_is_one:
                m.add(q <= top * denominator)
        else:
            m.add(product >= Q * numerator)
        objective.append((coefficient / Q) * q)

    # hard_constraint_score = 1 - (1/K) (A / N_s + B / N_c)
    w = weights["hard_constraint_score"]
    if w:
        k_types = 7 if hard_all else 3
        constant += w
        if count_a:
            ratio(sum(count_a), 2, n_s, n_s_max, -w / k_types, "hA")
        count_b = overlaps + count_avail
        if count_b:
            ratio(sum(count_b), 5, n_c, sum(p.session_length), -w / k_types, "hB")

    w = weights["coverage_score"]
    if w:
        must = [placed[s] for s in sessions if p.session_must[s]]
        if must:
            objective.append((w / len(must)) * sum(must))
        else:
            constant += w

    # preference = 1/2 + PF / (2 N_s)
    w = weights["preference_score"]
    if w:
        constant += w / 2
        ratio(sum(preferred), 1, n_s, n_s_max, w / 2, "pf")

    # daily balance = 1 - dev / (2 N_s (D - 1))
    w = weights["daily_balance_score"]
    if w:
        constant += w
        if n_days > 1:
            deviations = []
            for d in range(n_days):
                on_day = sum(var for (s, (dd, _, _)), var in x.items() if dd == d)
                dev = m.new_int_var(0, n_days * n_s_max, f"dev{d}")
                m.add(dev >= n_days * on_day - n_s)
                m.add(dev >= n_s - n_days * on_day)
                deviations.append(dev)
            ratio(sum(deviations), 2 * (n_days - 1), n_s, n_s_max, -w / (2 * (n_days - 1)), "bal")

    # compactness = mean over scored (entity, day) pairs
    w = weights["compactness_score"]
    if w:
        lcm = math.lcm(*range(1, per_day + 1))
        table = _pair_table(per_day, lcm)
        scored, values = [], []
        entities = [
            ("t", i, [s for s in sessions if p.session_teacher[s] == i])
            for i in range(len(p.teacher_ids))
        ]
        entities += [
            ("g", i, [s for s in sessions if p.session_group[s] == i])
            for i in range(len(p.group_ids))
        ]
        zero = m.new_constant(0)
        for kind, index, own in entities:
            if sum(p.session_length[s] for s in own) < 2:
                continue
            for d in range(n_days):
                bits = [occupied.get((kind, index, d, k), zero) for k in range(per_day)]
                is_scored = m.new_bool_var(f"sc{kind}{index}_{d}")
                value = m.new_int_var(0, lcm, f"val{kind}{index}_{d}")
                m.add_allowed_assignments([*bits, is_scored, value], table)
                scored.append(is_scored)
                values.append(value)
        if scored:
            den = m.new_int_var(0, len(scored), "cp_den")
            m.add(den == sum(scored))
            num = m.new_int_var(0, lcm * len(scored), "cp_num")
            m.add(num == sum(values))
            # value / lcm per pair: q * den <= Q * num / lcm, i.e. lcm q den <= Q num
            ratio_num = num
            top = Q
            q = m.new_int_var(0, top, "cp_q")
            product = m.new_int_var(0, top * len(scored), "cp_qb")
            m.add_multiplication_equality(product, [q, den])
            m.add(lcm * product <= Q * ratio_num)
            objective.append((w / Q) * q)
        else:
            constant += w

    w = weights["room_fit_score"]
    if w and fit_den:
        den = m.new_int_var(0, n_s_max, "rf_den")
        m.add(den == sum(fit_den))
        num = m.new_int_var(0, FIT_SCALE * n_s_max, "rf_num")
        m.add(num == sum(fit_num))
        q = m.new_int_var(0, Q, "rf_q")
        product = m.new_int_var(0, Q * n_s_max, "rf_qb")
        m.add_multiplication_equality(product, [q, den])
        # fit values are scaled by FIT_SCALE: q * den * FIT_SCALE <= Q * num
        m.add(FIT_SCALE * product <= Q * num)
        m.add(q <= Q * den)
        objective.append((w / Q) * q)

    w = weights["stability_score"]
    if w:
        if p.baseline:
            terms = []
            for s, spot in p.baseline.items():
                terms.append(placed[s])
                if (s, spot) in x:
                    terms.append(x[s, spot])
            objective.append((w / (2 * len(p.baseline))) * sum(terms))
        else:
            constant += w

    m.maximize(sum(objective))

    def solve_from(hint: dict[int, Spot], limit: float) -> tuple[Any, Any, dict[int, Spot]]:
        m.clear_hints()
        for (s, spot), var in x.items():
            m.add_hint(var, hint.get(s) == spot)
        _complete_hint(cp_model, m, limit)
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = max(1, int(workers))
        if workers <= 1:
            solver.parameters.max_deterministic_time = float(limit)
        else:
            solver.parameters.max_time_in_seconds = float(limit)
        solver.parameters.random_seed = 0
        status = solver.solve(m)
        if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            found = {s: spot for (s, spot), var in x.items() if solver.boolean_value(var)}
        elif status == cp_model.UNKNOWN:  # out of time before a first solution: keep the hint
            found = dict(hint)
        else:
            name = solver.status_name(status)
            raise RuntimeError(f"CP-SAT found no timetable for {p.scenario_id!r} ({name})")
        return solver, status, found

    # CP-SAT from the greedy timetable; then, while a local search improves on what it
    # found, CP-SAT again from the improved timetable (half the time each round)
    hint = first_fit(p, start.items())
    if _changes(start, hint) >= budget:
        # more actions than the budget holds: the greedy changes that fit, in its order
        # (the hint is what an out-of-time CP-SAT leaves, so it must be reachable too)
        trimmed = dict(start)
        for s, spot in hint.items():
            if _changes(start, trimmed) >= budget - 1:
                break
            trimmed[s] = spot
        hint = trimmed
    found, score = hint, exact_score(p, hint)
    limit, det_time = float(time_limit), 0.0
    for _ in range(ROUNDS):
        solver, status, candidate = solve_from(found, limit)
        det_time += solver.deterministic_time
        candidate_score = exact_score(p, candidate)
        if candidate_score > score:
            found, score = candidate, candidate_score
        if status == cp_model.OPTIMAL:
            break
        polished = polish(p, found, start, budget)
        polished_score = exact_score(p, polished)
        if polished_score <= score:
            break
        found, score = polished, polished_score
        limit /= 2
    if status != cp_model.OPTIMAL:  # last, so it only ever adds to what the rounds found
        steps = int(ANNEAL_STEPS_PER_UNIT * time_limit)
        for origin in (dict(found), hint):
            for seed in range(ANNEAL_SEEDS):
                annealed = anneal(p, origin, start, budget, steps=steps, seed=seed)
                annealed = polish(p, annealed, start, budget)
                annealed_score = exact_score(p, annealed)
                # the greedy origin itself may be out of reach from a non-empty start
                if annealed_score > score and _changes(start, annealed) < budget:
                    found, score = annealed, annealed_score
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        objective_value = solver.objective_value + constant
        bound = solver.best_objective_bound + constant
    else:
        objective_value, bound = float("nan"), 1.0
    name = solver.status_name(status)
    empty = exact_score(p, {})
    if empty > score and not start:  # the rules define the empty timetable apart
        found, score = {}, empty
    return SolverResult(
        timetable=found,
        score=score,
        objective=objective_value,
        bound=max(bound, empty),
        optimal=status == cp_model.OPTIMAL,
        status=name,
        wall_seconds=time.perf_counter() - started,
        deterministic_time=det_time,
    )
