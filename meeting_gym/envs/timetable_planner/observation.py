"""The original's observation as a JSON-ready dict (RULES section 7).

:func:`observation_dict` is what the ``reset`` and ``step`` of
``ajay-sreeram/timetable_planner`` (the env this one succeeds) returned (the
pydantic model's fields, ``metadata`` left out): the text interface builds its compact
view from the same pieces, and the tests compare it with the recorded reset
observations. Slot maps are keyed by day *label* (``"Mon"``), in day order, showing the
availability after the defaults and the disruption.
"""

from __future__ import annotations

from typing import Any

from meeting_gym.envs.timetable_planner.domain.episode import TimetableEpisode
from meeting_gym.envs.timetable_planner.domain.problem import Problem
from meeting_gym.envs.timetable_planner.domain.scenario import Placement, SlotMap

__all__ = ["labelled_slots", "observation_dict", "sorted_timetable", "unscheduled_sessions"]


def labelled_slots(problem: Problem, slot_map: SlotMap) -> dict[str, list[int]]:
    """A slot map keyed by day label, in the grid's day order."""
    by_day = dict(slot_map)
    return {
        problem.day_labels[day]: list(by_day[day]) for day in range(problem.n_days) if day in by_day
    }


def sorted_timetable(placements: tuple[Placement, ...] | list[Placement]) -> list[dict[str, Any]]:
    """Placements as dicts, sorted by (day, start_slot, room_id) as the original showed them."""
    ordered = sorted(placements, key=lambda a: (a.day, a.start_slot, a.room_id))
    return [a.to_dict() for a in ordered]


def unscheduled_sessions(episode: TimetableEpisode) -> list[str]:
    """Ids of must_schedule sessions not placed, in string order (optional ones never)."""
    p, table = episode.problem, episode.timetable
    return sorted(
        sid for i, sid in enumerate(p.session_ids) if p.session_must[i] and i not in table
    )


def observation_dict(episode: TimetableEpisode) -> dict[str, Any]:
    """The original's observation of the episode's current state (a fresh dict)."""
    p = episode.problem
    last = episode.last
    return {
        "task_name": p.task_name,
        "scenario_id": p.scenario_id,
        "grid": {"days": list(p.day_labels), "slots_per_day": p.per_day},
        "teachers": [
            {
                "teacher_id": tid,
                "available_slots": labelled_slots(p, p.teacher_available[i]),
                "preferred_slots": labelled_slots(p, p.teacher_preferred[i]),
            }
            for i, tid in enumerate(p.teacher_ids)
        ],
        "groups": [{"group_id": g.group_id, "size": g.size} for g in p.scenario.groups],
        "rooms": [
            {
                "room_id": r.room_id,
                "capacity": r.capacity,
                "room_type": r.room_type,
                "available_slots": labelled_slots(p, p.room_available[i]),
            }
            for i, r in enumerate(p.rooms)
        ],
        "sessions": [s.to_dict() for s in p.sessions],
        "current_timetable": sorted_timetable(episode.timetable.placements()),
        "baseline_timetable": sorted_timetable(list(p.baseline_placements)),
        "unscheduled_sessions": unscheduled_sessions(episode),
        "conflict_summary": episode.conflicts.as_dict(),
        "score_breakdown": episode.scores.as_dict(),
        "remaining_step_budget": episode.remaining_budget,
        "done": episode.done,
        "reward": 0.0 if last is None else last.reward,
        "action_error": None if last is None else last.action_error,
        "action_penalty": None if last is None else last.action_penalty,
    }
