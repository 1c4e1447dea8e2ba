"""The ceiling: the best timetable a constraint solver finds (OR-Tools CP-SAT).

The solve (:func:`solve`, in :mod:`.rounds`) writes the score of RULES section 5 as a CP-SAT
model and maximises it: a **faithful linearisation**, not a lexicographic stand-in. Every
component is modelled exactly as the env computes it, D17 quirks included, over one Boolean
per (session, day, start, room) (every room, so a placement that breaks a constraint is
allowed when it pays, as hard_3's oversized session shows):

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

The package is split by job: :mod:`.model` (the CP-SAT model of the score and one solve
of it), :mod:`.local` (:func:`polish` and :func:`anneal`) and :mod:`.rounds` (the rounds
and the result).

The solve is deterministic: one worker, a *deterministic* time limit
(``max_deterministic_time``, CP-SAT's work-based clock), an annealing of a fixed number
of steps from a fixed seed and a polish in a fixed order, so the same scenario gives the
same timetable on any machine with the same OR-Tools.
Also honoured: the step budget (the actions that reach the timetable from the start,
plus a submit, fit in it). OR-Tools is optional (``pip install "meeting-gym[solver]"``)
and imported by :mod:`.model` only.
"""

from meeting_gym.envs.timetable_planner.domain.solver.local import anneal, exact_score, polish
from meeting_gym.envs.timetable_planner.domain.solver.model import INSTALL_HINT
from meeting_gym.envs.timetable_planner.domain.solver.rounds import (
    DEFAULT_TIME_LIMIT,
    SolverResult,
    solve,
)

__all__ = [
    "DEFAULT_TIME_LIMIT",
    "INSTALL_HINT",
    "SolverResult",
    "anneal",
    "exact_score",
    "polish",
    "solve",
]
