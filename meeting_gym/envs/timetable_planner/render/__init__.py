"""TimetablePlanner's pictures: the ANSI status (``status``) and the RGB frame (``picture``)."""

from meeting_gym.envs.timetable_planner.render.status import SHORT_SCORES, Entry, Status

__all__ = ["SHORT_SCORES", "Entry", "Status"]
