"""meeting_gym: Gymnasium environments for calendar and scheduling reasoning.

``import meeting_gym`` registers ``MeetingSlot-v0`` (discrete actions, grid
observations by default) and ``MeetingSlot-Raw-v0`` (discrete, raw observations)::

    import gymnasium, meeting_gym
    env = gymnasium.make("MeetingSlot-v0")              # classic RL, SB3-ready
    env = gymnasium.make("MeetingSlot-v0", mode="text")  # LLM agents
"""

from __future__ import annotations

from gymnasium.envs.registration import register, registry

from meeting_gym.core.splits import export_jsonl, load_split
from meeting_gym.envs.meeting_slot.domain.scenario import Scenario, ScenarioError
from meeting_gym.envs.meeting_slot.domain.solver import Solution, solve
from meeting_gym.envs.meeting_slot.rubric import Grade, grade

__version__ = "0.1.0"

ENV_IDS = ("MeetingSlot-v0", "MeetingSlot-Raw-v0")
_CONFIGS = {"MeetingSlot-v0": {}, "MeetingSlot-Raw-v0": {"obs": "raw"}}

for _env_id, _kwargs in _CONFIGS.items():
    if _env_id not in registry:
        # no max_episode_steps: the env truncates after its own max_turns
        register(
            id=_env_id,
            entry_point="meeting_gym.envs.meeting_slot.env:MeetingSlotEnv",
            kwargs=_kwargs,
        )

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
