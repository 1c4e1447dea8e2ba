"""The text observation: a compact JSON view of the state an LLM can act on.

The observation of ``ajay-sreeram/timetable_planner``, the env this one succeeds
(:func:`~.observation.observation_dict`), repeats every
teacher's, room's and session's data on every step. Here the first observation (reset)
carries the problem once, and each step's observation only what changes:

* :func:`problem_view`: ``scenario_id``, ``difficulty``, the grid, the ``step_budget``,
  the component ``weights``, ``teachers`` (available and preferred slots after the
  defaults and the disruption; ``"all"`` for every slot, ``"same"`` for preferred equal
  to available), ``groups``, ``rooms`` (type, capacity, available slots), ``sessions``
  (teacher, group, allowed room types, required capacity, duration, must_schedule; a
  disruption-added session last) and, for hard and expert, the ``baseline`` timetable;
* :func:`state_view`: the ``timetable`` (``[session_id, day name, start_slot, room_id]``
  rows sorted by day, start and room), ``unscheduled`` must_schedule sessions, the
  non-zero ``conflicts``, the eight ``scores`` (4 decimals; ``info`` has them exactly),
  ``remaining_step_budget``, ``done`` and, after a step, ``last_action`` (its outcome,
  ``action_error``, penalty and reward).

Slot maps are ``{"Mon": [0, 1], ...}``, day names as keys. Everything the rules read is
in the first observation, so :func:`scenario_from_view` rebuilds an equivalent scenario
from it (the disruption already applied): the reference policies plan from what any
agent sees, nothing else.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from meeting_gym.envs.timetable_planner.domain.episode import StepResult, TimetableEpisode
from meeting_gym.envs.timetable_planner.domain.problem import Problem
from meeting_gym.envs.timetable_planner.domain.scenario import Scenario, SlotMap, cells_of
from meeting_gym.envs.timetable_planner.domain.scoring import WEIGHTS
from meeting_gym.envs.timetable_planner.observation import unscheduled_sessions

__all__ = [
    "problem_view",
    "reset_text",
    "result_text",
    "scenario_from_view",
    "state_view",
    "step_text",
    "timetable_from_view",
]

ALL = "all"
SAME = "same"


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _slots(problem: Problem, slot_map: SlotMap) -> Any:
    cells = cells_of(slot_map)
    if len(cells) == problem.n_days * problem.per_day:
        return ALL
    by_day = dict(slot_map)
    return {
        problem.day_labels[day]: list(by_day[day]) for day in range(problem.n_days) if day in by_day
    }


def problem_view(problem: Problem) -> dict[str, Any]:
    """The static part of the first observation (see the module docstring)."""
    p = problem
    teachers = []
    for i, tid in enumerate(p.teacher_ids):
        available = p.teacher_available[i]
        preferred = p.teacher_preferred[i]
        same = preferred and cells_of(preferred) == cells_of(available)
        teachers.append(
            {
                "id": tid,
                "available": _slots(p, available),
                "preferred": SAME if same else _slots(p, preferred),
            }
        )
    view: dict[str, Any] = {
        "scenario_id": p.scenario_id,
        "difficulty": p.task_name,
        "days": list(p.day_labels),
        "slots_per_day": p.per_day,
        "step_budget": p.step_budget,
        "weights": {k: v for k, v in WEIGHTS[p.task_name].items() if v},
        "teachers": teachers,
        "groups": [{"id": g.group_id, "size": g.size} for g in p.scenario.groups],
        "rooms": [
            {
                "id": r.room_id,
                "type": r.room_type,
                "capacity": r.capacity,
                "available": _slots(p, p.room_available[i]),
            }
            for i, r in enumerate(p.rooms)
        ],
        "sessions": [
            {
                "id": s.session_id,
                "teacher": s.teacher_id,
                "group": s.group_id,
                "room_types": list(s.valid_room_types),
                "capacity": s.required_capacity,
                "duration": s.duration_in_slots,
                "must": s.must_schedule,
            }
            for s in p.sessions
        ],
    }
    if p.baseline:
        view["baseline"] = _rows(p, p.baseline_placements)
    return view


def _rows(problem: Problem, placements: Any) -> list[list[Any]]:
    ordered = sorted(placements, key=lambda a: (a.day, a.start_slot, a.room_id))
    return [[a.session_id, problem.day_labels[a.day], a.start_slot, a.room_id] for a in ordered]


def last_action_view(result: StepResult) -> dict[str, Any]:
    """What one step did: outcome, error, penalty, bonus and reward."""
    out: dict[str, Any] = {
        "action": result.action.to_dict() if result.action is not None else None,
        "outcome": result.outcome,
        "action_error": result.action_error,
        "action_penalty": result.action_penalty,
        "reward": round(result.reward, 6),
    }
    if result.submit_bonus:
        out["submit_bonus"] = result.submit_bonus
    return out


def state_view(episode: TimetableEpisode) -> dict[str, Any]:
    """The dynamic part of every observation (see the module docstring)."""
    view: dict[str, Any] = {
        "timetable": _rows(episode.problem, episode.timetable.placements()),
        "unscheduled": unscheduled_sessions(episode),
        "conflicts": {k: v for k, v in episode.conflicts.as_dict().items() if v},
        "scores": {k: round(v, 4) for k, v in episode.scores.as_dict().items()},
        "remaining_step_budget": episode.remaining_budget,
        "done": episode.done,
    }
    if episode.last is not None:
        view["last_action"] = last_action_view(episode.last)
    return view


def reset_text(episode: TimetableEpisode) -> str:
    """The first observation: the problem and the starting state, as compact JSON."""
    return _dumps({**problem_view(episode.problem), **state_view(episode)})


def step_text(episode: TimetableEpisode) -> str:
    """A step's observation: the state after it, as compact JSON."""
    return _dumps(state_view(episode))


def result_text(result: StepResult) -> str:
    """One action's result alone (for all but the last action of a multi-action step)."""
    return _dumps(
        {
            **last_action_view(result),
            "overall_score": round(result.scores.overall_score, 4),
            "remaining_step_budget": result.remaining_budget,
        }
    )


# ----------------------------------------------------------------------------- reading


def _slot_map(view: Any, days: list[str]) -> dict[str, list[int]] | None:
    if view == ALL:
        return None
    return {str(days.index(label)): list(slots) for label, slots in view.items()}


def scenario_from_view(view: Mapping[str, Any] | str) -> Scenario:
    """An equivalent scenario rebuilt from the first observation (the disruption applied).

    Its problem scores every timetable exactly as the env does. Raises
    :class:`~.scenario.ScenarioError` (a ``ValueError``) if ``view`` is not one.
    """
    data = json.loads(view) if isinstance(view, str) else view
    days = list(data["days"])
    teachers = []
    for t in data["teachers"]:
        teacher: dict[str, Any] = {"teacher_id": t["id"]}
        available = _slot_map(t["available"], days)
        if available is not None:
            teacher["available_slots"] = available
        if t["preferred"] != SAME:
            preferred = _slot_map(t["preferred"], days)
            teacher["preferred_slots"] = (
                preferred if preferred is not None else _slot_map_full(days, data)
            )
        teachers.append(teacher)
    rooms = []
    for r in data["rooms"]:
        room: dict[str, Any] = {
            "room_id": r["id"],
            "capacity": r["capacity"],
            "room_type": r["type"],
        }
        available = _slot_map(r["available"], days)
        if available is not None:
            room["available_slots"] = available
        rooms.append(room)
    scenario: dict[str, Any] = {
        "scenario_id": data["scenario_id"],
        "task_name": data["difficulty"],
        "grid": {"days": days, "slots_per_day": data["slots_per_day"]},
        "step_budget": data["step_budget"],
        "teachers": teachers,
        "groups": [{"group_id": g["id"], "size": g["size"]} for g in data["groups"]],
        "rooms": rooms,
        "sessions": [
            {
                "session_id": s["id"],
                "teacher_id": s["teacher"],
                "group_id": s["group"],
                "valid_room_types": list(s["room_types"]),
                "required_capacity": s["capacity"],
                "duration_in_slots": s["duration"],
                "must_schedule": s["must"],
            }
            for s in data["sessions"]
        ],
        "initial_assignments": [],
    }
    if data.get("baseline"):
        scenario["baseline_assignments"] = [
            {"session_id": sid, "day": days.index(day), "start_slot": start, "room_id": room}
            for sid, day, start, room in data["baseline"]
        ]
    return Scenario.from_dict(scenario)


def _slot_map_full(days: list[str], data: Mapping[str, Any]) -> dict[str, list[int]]:
    return {str(d): list(range(data["slots_per_day"])) for d in range(len(days))}


def timetable_from_view(
    view: Mapping[str, Any] | str, days: list[str]
) -> list[tuple[str, int, int, str]]:
    """The ``timetable`` rows of an observation as (session_id, day index, start, room_id)."""
    data = json.loads(view) if isinstance(view, str) else view
    return [(sid, days.index(day), start, room) for sid, day, start, room in data["timetable"]]
