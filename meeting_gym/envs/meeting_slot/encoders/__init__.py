"""Discrete actions, revealed-state tracking and observation encoders (numpy, no gymnasium env)."""

from meeting_gym.envs.meeting_slot.encoders.actions import Action, ActionTable
from meeting_gym.envs.meeting_slot.encoders.observations import ENCODINGS, ZONE_VOCAB
from meeting_gym.envs.meeting_slot.encoders.reveal import Revealed

__all__ = ["ENCODINGS", "ZONE_VOCAB", "Action", "ActionTable", "Revealed"]
