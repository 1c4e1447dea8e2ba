"""Deprecated: moved to :mod:`meeting_gym.core.tools` in 0.3.0 (this alias goes in 0.4.0)."""

from meeting_gym.core.moved import alias_getattr

__getattr__ = alias_getattr(__name__, "meeting_gym.core.tools")
