"""TimetablePlanner's pictures: the ansi weekly grid and the rgb_array frame."""

from __future__ import annotations

import json
import subprocess
import sys

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


def test_importing_the_package_or_making_the_env_loads_no_optional_dependency():
    code = (
        "import sys, gymnasium, meeting_gym; "
        "gymnasium.make('TimetablePlanner-v0').reset(seed=0); "
        "gymnasium.make('TimetablePlanner-v0', mode='text', render_mode='ansi').reset(seed=0); "
        "bad = {'torch', 'stable_baselines3', 'sb3_contrib', 'ortools', 'PIL', 'openai'}; "
        "print(sorted(bad & {m.split('.')[0] for m in sys.modules}))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
