"""Discrete actions, revealed-state tracking and observation encoders (numpy, no gymnasium env)."""

from meeting_gym.encoders.actions import Action, ActionTable
from meeting_gym.encoders.observations import ENCODINGS, ZONE_VOCAB
from meeting_gym.encoders.reveal import Revealed

__all__ = ["ENCODINGS", "ZONE_VOCAB", "Action", "ActionTable", "Revealed"]
