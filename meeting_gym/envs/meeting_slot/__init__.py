"""MeetingSlot: find the earliest common meeting start, in UTC, through four calendar tools.

The layout every multi-mode env of the family shares (TimetablePlanner's too):

* ``domain/``: the rules in pure Python (scenarios, time zones, the solver, the generator,
  curated cases, worked solutions);
* ``discrete/``: the masked ``Discrete`` mode (action table, revealed state, observation
  encoders; numpy);
* ``render/``: the ANSI grid and the RGB picture;
* ``models/``: the torch networks for SB3 and RLlib (the pointer head);
* ``task``, ``tools``, ``prompts``, ``rubric``, ``env``, ``policies``, ``agents``: the
  family's seam around them (its benchmark rows: :mod:`meeting_gym.bench.meeting_slot`).

The modules' 0.2 names (``...meeting_slot.sb3_policy``, ``...meeting_slot.encoders`` and
so on) still import, with a DeprecationWarning, until 0.4.0: saved SB3 models and RLlib
checkpoints that name them still load.
"""

from meeting_gym.core.moved import alias_modules

alias_modules(
    __name__,
    {
        "encoders": "discrete",
        "encoders.actions": "discrete.actions",
        "encoders.observations": "discrete.observations",
        "encoders.reveal": "discrete.reveal",
        "encoders.render": "render.ansi",
        "picture": "render.picture",
        "pointer": "models.pointer",
        "rllib_module": "models.rllib_module",
        "sb3_policy": "models.sb3_policy",
    },
)

# the env's benchmark plan left the env in 0.4.0: an env stands on core alone
alias_modules(__name__, {"bench": "meeting_gym.bench.meeting_slot"}, since="0.4.0", until="0.5.0")
