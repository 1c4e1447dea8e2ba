"""TimetablePlanner: build a weekly timetable under teacher, group and room constraints.

The layout every multi-mode env of the family shares (MeetingSlot's too):

* ``domain/``: the rules in pure Python, no gymnasium or numpy: ``scenario`` (the validated
  model), ``problem`` (a scenario loaded for play), ``scoring`` (conflicts, the seven
  component scores, kept incrementally), ``actions`` (the five actions, parsed and checked
  with the original's messages), ``episode`` (the step pipeline: reward = score delta +
  penalties + submit bonus), ``catalogue`` (the 15 hand-crafted scenarios and the 8
  generated ids), ``generator``, and the ``solver``, ``greedy`` and ``best`` results;
* ``discrete/``: the masked ``Discrete`` mode (action table, masks, encoders; numpy);
* ``render/``: the ANSI status and the RGB picture;
* ``models/``: the torch networks for SB3;
* ``task``, ``tools``, ``view``, ``observation``, ``env``, ``policies``, ``agents``:
  the family's seam around them (its benchmark rows: :mod:`meeting_gym.bench.timetable_planner`).

The rules are those of the original, ``ajay-sreeram/timetable_planner`` at ``2659ae6``
(the OpenEnv env this one succeeds), as specified in RULES.md, with the defects the issue
lists fixed; each fix is named where it is made (D1, D3, D7, D11, D16, D18). The
modules' 0.2 names (``...timetable_planner.solver`` and so on) still import, with a
DeprecationWarning, until 0.4.0.
"""

from meeting_gym.core.moved import alias_modules

_DOMAIN = (
    "actions", "best", "catalogue", "episode", "generator", "greedy", "problem", "scenario",
    "scoring", "solver",
)  # fmt: skip
alias_modules(
    __name__,
    {name: f"domain.{name}" for name in _DOMAIN}
    | {
        "sizes": "meeting_gym.bench.timetable_sizes",
        "picture": "render.picture",
        "sb3_policy": "models.sb3_policy",
    },
)

# the env's benchmark plan and sizes script left the env in 0.4.0: an env stands on core
alias_modules(
    __name__,
    {
        "bench": "meeting_gym.bench.timetable_planner",
        "discrete.sizes": "meeting_gym.bench.timetable_sizes",
    },
    since="0.4.0",
    until="0.5.0",
)
