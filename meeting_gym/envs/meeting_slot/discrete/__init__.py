"""MeetingSlot's masked ``Discrete`` mode: the action table, the revealed state, the
observation encoders (numpy) and the interface the env plays through."""

from meeting_gym.envs.meeting_slot.discrete.actions import Action, ActionTable
from meeting_gym.envs.meeting_slot.discrete.observations import ENCODINGS, ZONE_VOCAB
from meeting_gym.envs.meeting_slot.discrete.reveal import Revealed

__all__ = ["ENCODINGS", "ZONE_VOCAB", "Action", "ActionTable", "Revealed"]
