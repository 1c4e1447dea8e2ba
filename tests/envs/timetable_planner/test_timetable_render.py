"""TimetablePlanner's pictures: the ansi weekly grid and the rgb_array frame."""

from __future__ import annotations

import importlib.util
import json

import gymnasium as gym
import numpy as np
import pytest

import meeting_gym  # noqa: F401  (registers the env ids)

ENV = "TimetablePlanner-v0"
CLASH = [
    {
        "action_type": "assign_session",
        "session_id": "E1_S1",
        "day": 0,
        "start_slot": 0,
        "room_id": "R2",
    },
    {
        "action_type": "assign_session",
        "session_id": "E1_S2",
        "day": 0,
        "start_slot": 0,
        "room_id": "R2",
    },  # the same room at the same time
]


def test_ansi_prints_the_week_with_conflicts_marked():
    env = gym.make(ENV, mode="text", render_mode="ansi")
    env.reset(options={"scenario_id": "easy_1"})
    for action in CLASH:
        env.step(json.dumps(action))
    text = env.render()
    lines = text.splitlines()
    assert lines[0].startswith("easy_1 (easy)  budget 18/20")
    assert lines[1].split("|")[1].strip() == "Mon" and "Fri" in lines[1]
    assert "!E1_S1 R2" in text and "!E1_S2 R2" in text  # both clash: marked
    assert "room_overlap 1" in text and "overall" in text
    assert "step 2: " in text and "reward" in text
    env.step('{"action_type": "submit_timetable"}')
    assert "episode over (submitted)" in env.render()


def test_ansi_in_discrete_mode_names_the_action():
    env = gym.make(ENV, render_mode="ansi")
    _, info = env.reset(options={"scenario_id": "hard_1"})
    env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert "step 1: assign_session(H1_S1, " in env.render()


def test_rgb_array_frames_have_a_constant_size_and_show_clashes():
    pytest.importorskip("PIL")
    env = gym.make(ENV, mode="text", render_mode="rgb_array")
    env.reset(options={"scenario_id": "easy_1"})
    first = env.render()
    assert first.dtype == np.uint8 and first.ndim == 3 and first.shape[2] == 3
    for action in CLASH:
        env.step(json.dumps(action))
    frame = env.render()
    assert frame.shape == first.shape and frame is not first
    red = (frame[:, :, 0] > 200) & (frame[:, :, 1] < 80) & (frame[:, :, 2] < 80)
    assert red.sum() > 50  # the clashing cell's border
    env.reset(options={"scenario_id": "expert_2"})  # another grid (6 slots): same size
    assert env.render().shape == first.shape


def test_record_video_takes_the_frames(tmp_path):
    pytest.importorskip("moviepy")
    env = gym.wrappers.RecordVideo(
        gym.make(ENV, render_mode="rgb_array"), str(tmp_path), episode_trigger=lambda e: True
    )
    _, info = env.reset(seed=0)
    for _ in range(3):
        _, _, _, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    env.close()
    assert list(tmp_path.glob("*.mp4"))


def _lone_placement(scenario_id: str, broken: str) -> dict:
    """An assign whose only fault is ``broken`` (or none): type, capacity or availability."""
    from meeting_gym.envs.timetable_planner.domain.catalogue import get_scenario
    from meeting_gym.envs.timetable_planner.domain.problem import problem_of

    p = problem_of(get_scenario(scenario_id))
    for s in range(len(p.sessions)):
        teacher = p.session_teacher[s]
        for r in range(len(p.room_ids)):
            for d in range(p.n_days):
                for t in range(p.per_day - p.session_length[s] + 1):
                    cells = ((1 << p.session_length[s]) - 1) << t
                    faults = {
                        "type": not p.type_ok[s][r],
                        "capacity": not p.capacity_ok[s][r],
                        "availability": p.teacher_avail_mask[teacher][d] & cells != cells
                        or p.room_avail_mask[r][d] & cells != cells,
                    }
                    if [k for k, v in faults.items() if v] == ([broken] if broken else []):
                        return {
                            "action_type": "assign_session",
                            "session_id": p.session_ids[s],
                            "day": d,
                            "start_slot": t,
                            "room_id": p.room_ids[r],
                        }
    raise AssertionError(f"{scenario_id} has no placement broken by {broken!r} alone")


@pytest.mark.parametrize(
    "scenario_id, broken, marked",
    [
        ("medium_2", "", False),
        ("medium_2", "type", True),
        ("medium_2", "capacity", True),
        ("hard_1", "availability", True),
        ("easy_1", "type", False),  # easy's hard score counts overlaps only
        ("easy_1", "capacity", False),
    ],
)
def test_ansi_marks_every_conflict_the_difficulty_counts_and_only_those(
    scenario_id, broken, marked
):
    """One session alone (no overlap possible): the cell shows session, room and teacher,
    marked ``!`` exactly when its one fault lowers the hard-constraint score."""
    env = gym.make(ENV, mode="text", render_mode="ansi", disable_env_checker=True)
    env.reset(options={"scenario_id": scenario_id})
    action = _lone_placement(scenario_id, broken)
    _, _, _, _, info = env.step(json.dumps(action))
    assert info["outcome"] == "apply"
    hard = info["score_breakdown"]["hard_constraint_score"]
    assert (hard < 1.0) == marked
    engine = env.unwrapped.episode.engine
    teacher = engine.problem.teacher_ids[
        engine.problem.session_teacher[engine.problem.session_index[action["session_id"]]]
    ]
    cell = f"{action['session_id']} {action['room_id']} {teacher}"
    text = env.render()
    assert cell in text
    assert (f"!{cell}" in text) == marked
    if importlib.util.find_spec("PIL") is None:
        return
    # the picture marks the same cells: a red border where the text has a "!"
    pictured = gym.make(ENV, mode="text", render_mode="rgb_array", disable_env_checker=True)
    pictured.reset(options={"scenario_id": scenario_id})
    pictured.step(json.dumps(action))
    frame = pictured.render()
    red = (frame[:, :, 0] > 200) & (frame[:, :, 1] < 80) & (frame[:, :, 2] < 80)
    assert (red.sum() > 50) == marked, red.sum()
