"""meeting_gym: Gymnasium environments for calendar and scheduling reasoning.

``import meeting_gym`` registers ``MeetingSlot-v0``::

    import gymnasium, meeting_gym
    env = gymnasium.make("MeetingSlot-v0", mode="text")
"""

from __future__ import annotations

from gymnasium.envs.registration import register, registry

from meeting_gym.calendar.scenario import Scenario, ScenarioError
from meeting_gym.calendar.solver import Solution, solve
from meeting_gym.rubric import Grade, grade
from meeting_gym.splits import export_jsonl, load_split

__version__ = "0.1.0"

ENV_IDS = ("MeetingSlot-v0",)

if "MeetingSlot-v0" not in registry:
    register(id="MeetingSlot-v0", entry_point="meeting_gym.envs.meeting_slot:MeetingSlotEnv")

__all__ = [
    "ENV_IDS",
    "Grade",
    "Scenario",
    "ScenarioError",
    "Solution",
    "export_jsonl",
    "grade",
    "load_split",
    "solve",
]
