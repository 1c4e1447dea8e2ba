"""meeting_gym: Gymnasium environments for calendar and scheduling reasoning.

``import meeting_gym`` registers every environment of the family (the list below is
the one place they are named)::

    import gymnasium, meeting_gym
    env = gymnasium.make("MeetingSlot-v0")              # classic RL, SB3-ready
    env = gymnasium.make("MeetingSlot-v0", mode="text")  # LLM agents
    env = gymnasium.make("CalendarMath-v0")              # single-turn date arithmetic
    env = gymnasium.make("TimetablePlanner-v0")          # build a weekly timetable

Importing registers names only: an environment's modules load when it is made.
"""

from __future__ import annotations

from typing import Any

from meeting_gym.core.moved import alias_getattr, lazy_getattr
from meeting_gym.core.registry import ENVS, register_versions

__version__ = "0.3.0"

_MEETING_SLOT = "meeting_gym.envs.meeting_slot.task:MeetingSlotTask"
_MEETING_SLOT_ENV = "meeting_gym.envs.meeting_slot.env:MeetingSlotEnv"

# Each env in every version (core.registry.VERSIONS): -v1 addresses any eval item in
# constant time (an item of its own per index); -v0 keeps the items it always gave
register_versions("MeetingSlot", _MEETING_SLOT, entry_point=_MEETING_SLOT_ENV)
register_versions("MeetingSlot-Raw", _MEETING_SLOT, entry_point=_MEETING_SLOT_ENV, obs="raw")
register_versions("CalendarMath", "meeting_gym.envs.calendar_math.task:CalendarMathTask")
register_versions("CronSchedule", "meeting_gym.envs.cron_schedule.task:CronScheduleTask")
register_versions("CronSchedule-Tools", "meeting_gym.envs.cron_schedule.task:CronScheduleToolsTask")
register_versions(
    "TimetablePlanner",
    "meeting_gym.envs.timetable_planner.task:TimetablePlannerTask",
    entry_point="meeting_gym.envs.timetable_planner.env:TimetablePlannerEnv",
)

ENV_IDS = tuple(ENVS)

# Public names, imported on first use (PEP 562) so that `import meeting_gym` loads no
# environment's modules.
_LAZY = {
    "Grade": "meeting_gym.core.rubric",
    "Rubric": "meeting_gym.core.rubric",
    "Term": "meeting_gym.core.rubric",
    "Task": "meeting_gym.core.task",
    "export_jsonl": "meeting_gym.core.splits",
    "export_split": "meeting_gym.core.splits",
    "load_split": "meeting_gym.core.splits",
    "make_task": "meeting_gym.core.registry",
}
# MeetingSlot's own names, once at the top of a one-env package: they warn, and go in 0.4.0
_MEETING_SLOT_NAMES = {
    "Scenario": "meeting_gym.envs.meeting_slot.domain.scenario",
    "ScenarioError": "meeting_gym.envs.meeting_slot.domain.scenario",
    "Solution": "meeting_gym.envs.meeting_slot.domain.solver",
    "solve": "meeting_gym.envs.meeting_slot.domain.solver",
    "grade": "meeting_gym.envs.meeting_slot.rubric",
}


def _moved(name: str) -> Any:
    module = _MEETING_SLOT_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'meeting_gym' has no attribute {name!r}")
    return alias_getattr(__name__, module, (name,), depth=2)(name)


__getattr__ = lazy_getattr(globals(), _LAZY, _moved)


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


__all__ = ["ENVS", "ENV_IDS", "__version__", *sorted(_LAZY)]
