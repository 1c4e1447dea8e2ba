"""The overall score of a timetable problem as a CP-SAT model (OR-Tools), and one solve of it.

:class:`ScoreModel` writes every component of the score exactly as the env computes it (the
package docstring says how: counts, overlaps, compactness by a pattern table, ratios with a
variable denominator linearised exactly). Variables are created in a fixed order, so a
solve with one worker and a deterministic time limit gives the same timetable on any
machine with the same OR-Tools. OR-Tools is imported here only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from meeting_gym.envs.timetable_planner.domain.problem import Problem, Spot
from meeting_gym.envs.timetable_planner.domain.scoring import WEIGHTS

INSTALL_HINT = 'the solver needs OR-Tools: pip install "meeting-gym[solver]"'
FIT_SCALE = 1_000_000
Q = 1_000_000
"""Scale of the ratio variables: the model is within 1/Q of the score per ratio term."""


def load_cp_model() -> Any:
    """OR-Tools' ``cp_model`` module; ``ImportError`` naming the extra to install."""
    try:
        from ortools.sat.python import cp_model
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ImportError(INSTALL_HINT) from exc
    return cp_model


def pair_table(per_day: int, scale: int) -> list[list[int]]:
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


class ScoreModel:
    """The CP-SAT model of ``problem``'s overall score, from the timetable ``start`` within
    ``budget`` actions (every changed session one action, the submit one more).

    ``objective`` holds the variable terms and ``constant`` the rest, so the score of a
    solution is the solver's objective value plus ``constant``.
    """

    def __init__(self, problem: Problem, start: Mapping[int, Spot], budget: int) -> None:
        self.cp_model = cp_model = load_cp_model()
        self.problem = p = problem
        self.weights = WEIGHTS[p.task_name]
        self.hard_all = p.task_name != "easy"
        self.sessions = range(len(p.sessions))
        self.m = cp_model.CpModel()
        self.objective: list[Any] = []
        self.constant = 0.0
        self._placements()
        self._budget(start, budget)
        self._cells()
        self._facts()
        self._hard()
        self._coverage()
        self._preference()
        self._balance()
        self._compactness()
        self._room_fit()
        self._stability()
        self.m.maximize(sum(self.objective))

    # ------------------------------------------------------------------ variables

    def _placements(self) -> None:
        """One Boolean per (session, day, start, room); ``placed`` per session."""
        p, m = self.problem, self.m
        self.x: dict[tuple[int, Spot], Any] = {}
        by_session: dict[int, list[tuple[Spot, Any]]] = {s: [] for s in self.sessions}
        for s in self.sessions:
            length = p.session_length[s]
            for d in range(p.n_days):
                for t in range(p.per_day - length + 1):
                    for r in range(len(p.room_ids)):
                        var = m.new_bool_var(f"x{s}_{d}_{t}_{r}")
                        self.x[s, (d, t, r)] = var
                        by_session[s].append(((d, t, r), var))
        self.placed = {}
        for s in self.sessions:
            self.placed[s] = m.new_bool_var(f"placed{s}")
            m.add(sum(v for _, v in by_session[s]) == self.placed[s])
        self.n_s_max = len(p.sessions)
        self.n_s = sum(self.placed.values())
        self.n_c = sum(p.session_length[s] * self.placed[s] for s in self.sessions)
        m.add(self.n_s >= 1)

    def _budget(self, start: Mapping[int, Spot], budget: int) -> None:
        """The step budget: every changed session is one action, the submit one more."""
        changes = []
        for s in self.sessions:
            if s in start and (s, start[s]) in self.x:
                changes.append(1 - self.x[s, start[s]])
            elif s in start:
                changes.append(1)
            else:
                changes.append(self.placed[s])
        self.m.add(sum(changes) <= max(0, budget - 1))

    def _cells(self) -> None:
        """Cell occupancy per teacher, group and room: overlaps and occupied bits."""
        p, m = self.problem, self.m
        cells: dict[tuple[str, int, int, int], list[Any]] = {}
        for (s, (d, t, r)), var in self.x.items():
            for k in range(t, t + p.session_length[s]):
                cells.setdefault(("t", p.session_teacher[s], d, k), []).append(var)
                cells.setdefault(("g", p.session_group[s], d, k), []).append(var)
                cells.setdefault(("r", r, d, k), []).append(var)
        self.overlaps = []
        self.occupied: dict[tuple[str, int, int, int], Any] = {}
        for key, terms in cells.items():
            count = sum(terms)
            if len(terms) > 1:
                over = m.new_int_var(0, len(terms) - 1, f"ov{key}")
                m.add(over >= count - 1)
                self.overlaps.append(over)
            if key[0] != "r":
                bit = m.new_bool_var(f"o{key}")
                m.add(count >= 1).only_enforce_if(bit)
                m.add(count == 0).only_enforce_if(bit.Not())
                self.occupied[key] = bit

    def _facts(self) -> None:
        """What each placement breaks, prefers and fits (no variables of their own)."""
        p = self.problem
        self.count_a, self.count_avail, self.preferred = [], [], []
        self.fit_den, self.fit_num = [], []
        for (s, (d, t, r)), var in self.x.items():
            length = p.session_length[s]
            mask = ((1 << length) - 1) << t
            teacher = p.session_teacher[s]
            type_ok, capacity_ok = p.type_ok[s][r], p.capacity_ok[s][r]
            if self.hard_all:
                bad = (not type_ok) + (not capacity_ok)
                if bad:
                    self.count_a.append(bad * var)
                unavailable = (length - (mask & p.teacher_avail_mask[teacher][d]).bit_count()) + (
                    length - (mask & p.room_avail_mask[r][d]).bit_count()
                )
                if unavailable:
                    self.count_avail.append(unavailable * var)
            if p.teacher_indifferent[teacher] or mask & p.teacher_pref_mask[teacher][d] == mask:
                self.preferred.append(var)
            if type_ok and capacity_ok:
                self.fit_den.append(var)
                fit = Fraction(p.fit_num[s][r], p.fit_den)
                self.fit_num.append(round(fit * FIT_SCALE) * var)

    def ratio(
        self,
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
        m = self.m
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
        self.objective.append((coefficient / Q) * q)

    # ------------------------------------------------------------------ components

    def _hard(self) -> None:
        """hard_constraint_score = 1 - (1/K) (A / N_s + B / N_c)."""
        w = self.weights["hard_constraint_score"]
        if not w:
            return
        k_types = 7 if self.hard_all else 3
        self.constant += w
        if self.count_a:
            self.ratio(sum(self.count_a), 2, self.n_s, self.n_s_max, -w / k_types, "hA")
        count_b = self.overlaps + self.count_avail
        if count_b:
            total = sum(self.problem.session_length)
            self.ratio(sum(count_b), 5, self.n_c, total, -w / k_types, "hB")

    def _coverage(self) -> None:
        w = self.weights["coverage_score"]
        if not w:
            return
        must = [self.placed[s] for s in self.sessions if self.problem.session_must[s]]
        if must:
            self.objective.append((w / len(must)) * sum(must))
        else:
            self.constant += w

    def _preference(self) -> None:
        """preference = 1/2 + PF / (2 N_s)."""
        w = self.weights["preference_score"]
        if w:
            self.constant += w / 2
            self.ratio(sum(self.preferred), 1, self.n_s, self.n_s_max, w / 2, "pf")

    def _balance(self) -> None:
        """daily balance = 1 - dev / (2 N_s (D - 1))."""
        w = self.weights["daily_balance_score"]
        if not w:
            return
        self.constant += w
        n_days, m = self.problem.n_days, self.m
        if n_days <= 1:
            return
        deviations = []
        for d in range(n_days):
            on_day = sum(var for (s, (dd, _, _)), var in self.x.items() if dd == d)
            dev = m.new_int_var(0, n_days * self.n_s_max, f"dev{d}")
            m.add(dev >= n_days * on_day - self.n_s)
            m.add(dev >= self.n_s - n_days * on_day)
            deviations.append(dev)
        coefficient = -w / (2 * (n_days - 1))
        self.ratio(sum(deviations), 2 * (n_days - 1), self.n_s, self.n_s_max, coefficient, "bal")

    def _compactness(self) -> None:
        """compactness = mean over scored (entity, day) pairs, by a table of day patterns."""
        w = self.weights["compactness_score"]
        if not w:
            return
        p, m, sessions = self.problem, self.m, self.sessions
        per_day = p.per_day
        lcm = math.lcm(*range(1, per_day + 1))
        table = pair_table(per_day, lcm)
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
            for d in range(p.n_days):
                bits = [self.occupied.get((kind, index, d, k), zero) for k in range(per_day)]
                is_scored = m.new_bool_var(f"sc{kind}{index}_{d}")
                value = m.new_int_var(0, lcm, f"val{kind}{index}_{d}")
                m.add_allowed_assignments([*bits, is_scored, value], table)
                scored.append(is_scored)
                values.append(value)
        if not scored:
            self.constant += w
            return
        den = m.new_int_var(0, len(scored), "cp_den")
        m.add(den == sum(scored))
        num = m.new_int_var(0, lcm * len(scored), "cp_num")
        m.add(num == sum(values))
        # value / lcm per pair: q * den <= Q * num / lcm, i.e. lcm q den <= Q num
        q = m.new_int_var(0, Q, "cp_q")
        product = m.new_int_var(0, Q * len(scored), "cp_qb")
        m.add_multiplication_equality(product, [q, den])
        m.add(lcm * product <= Q * num)
        self.objective.append((w / Q) * q)

    def _room_fit(self) -> None:
        w = self.weights["room_fit_score"]
        if not (w and self.fit_den):
            return
        m, n_s_max = self.m, self.n_s_max
        den = m.new_int_var(0, n_s_max, "rf_den")
        m.add(den == sum(self.fit_den))
        num = m.new_int_var(0, FIT_SCALE * n_s_max, "rf_num")
        m.add(num == sum(self.fit_num))
        q = m.new_int_var(0, Q, "rf_q")
        product = m.new_int_var(0, Q * n_s_max, "rf_qb")
        m.add_multiplication_equality(product, [q, den])
        # fit values are scaled by FIT_SCALE: q * den * FIT_SCALE <= Q * num
        m.add(FIT_SCALE * product <= Q * num)
        m.add(q <= Q * den)
        self.objective.append((w / Q) * q)

    def _stability(self) -> None:
        w = self.weights["stability_score"]
        if not w:
            return
        baseline = self.problem.baseline
        if not baseline:
            self.constant += w
            return
        terms = []
        for s, spot in baseline.items():
            terms.append(self.placed[s])
            if (s, spot) in self.x:
                terms.append(self.x[s, spot])
        self.objective.append((w / (2 * len(baseline))) * sum(terms))

    # ------------------------------------------------------------------ solving

    def complete_hint(self, time_limit: float) -> None:
        """Extend the placement hint to every variable (a solve with the hint fixed).

        CP-SAT rarely completes a partial hint through the product constraints in a short
        time; propagating the fixed placements gives the value of every other variable.
        """
        cp_model, model = self.cp_model, self.m
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

    def solve_from(
        self, hint: Mapping[int, Spot], limit: float, workers: int = 1
    ) -> tuple[Any, Any, dict[int, Spot]]:
        """(the solver, its status, the timetable found) of one solve from ``hint``.

        One worker runs to ``limit`` deterministic time units (reproducible); more run to
        ``limit`` seconds. Out of time before a first solution, the hint is what is found.
        """
        cp_model, m = self.cp_model, self.m
        m.clear_hints()
        for (s, spot), var in self.x.items():
            m.add_hint(var, hint.get(s) == spot)
        self.complete_hint(limit)
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = max(1, int(workers))
        if workers <= 1:
            solver.parameters.max_deterministic_time = float(limit)
        else:
            solver.parameters.max_time_in_seconds = float(limit)
        solver.parameters.random_seed = 0
        status = solver.solve(m)
        if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            found = {s: spot for (s, spot), var in self.x.items() if solver.boolean_value(var)}
        elif status == cp_model.UNKNOWN:  # out of time before a first solution: keep the hint
            found = dict(hint)
        else:
            name = solver.status_name(status)
            raise RuntimeError(
                f"CP-SAT found no timetable for {self.problem.scenario_id!r} ({name})"
            )
        return solver, status, found
