"""meeting_gym's environments for verifiers: ``vf-eval meeting-gym-verifiers``.

verifiers finds an environment as an installed package named like the id given to
``vf-eval`` (``meeting-gym-verifiers`` -> ``meeting_gym_verifiers``):

* verifiers 0.4+ (the ``verifiers.v1`` API) takes the one ``Taskset`` subclass this
  package's ``__all__`` exports, :class:`~meeting_gym.adapters.verifiers.taskset.MeetingGymTaskset`
  (choose the env with ``--env.taskset.env CalendarMath-v0``; MeetingSlot-v0 by default);
* verifiers 0.3.x calls :func:`load_environment` (``vf-eval meeting-gym-verifiers -a
  '{"env": "CalendarMath-v0"}'``).

Both are thin: the code lives in :mod:`meeting_gym.adapters.verifiers`.
"""

from __future__ import annotations

from meeting_gym.adapters.verifiers import verifiers_version
from meeting_gym.adapters.verifiers.legacy import load_environment  # imports verifiers lazily

if (verifiers_version() or (0,)) >= (0, 4):
    from meeting_gym.adapters.verifiers.taskset import MeetingGymTaskset

    __all__ = ["MeetingGymTaskset", "load_environment"]
else:
    __all__ = ["load_environment"]
