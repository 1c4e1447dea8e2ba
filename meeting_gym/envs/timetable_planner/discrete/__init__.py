"""TimetablePlanner's masked ``Discrete`` mode: bounds, action table, masks and encoders."""

from meeting_gym.envs.timetable_planner.discrete.interface import (
    DEFAULT_BOUNDS,
    ActionTable,
    Bounds,
    DiscreteInterface,
    Encoder,
)

__all__ = ["DEFAULT_BOUNDS", "ActionTable", "Bounds", "DiscreteInterface", "Encoder"]
