"""The rgb_array frame and the human window of MeetingSlot (envs/meeting_slot/render/picture.py)."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import time

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import meeting_gym  # noqa: F401  (registers the env ids)
from meeting_gym.envs.meeting_slot.agents import TextPolicyAdapter
from meeting_gym.envs.meeting_slot.discrete.actions import ActionTable
from meeting_gym.envs.meeting_slot.discrete.reveal import Revealed
from meeting_gym.envs.meeting_slot.domain.curated import CURATED_BY_ID
from meeting_gym.envs.meeting_slot.domain.solver import window_bounds
from meeting_gym.envs.meeting_slot.domain.timeutil import format_utc
from meeting_gym.envs.meeting_slot.policies import GoldPolicy
from meeting_gym.envs.meeting_slot.render import picture

pytest.importorskip("PIL")

SCENARIO = CURATED_BY_ID["dst_eu_monday"]  # 2 attendees, 4-day window, gold Mon 08:00Z
GOLD = 1711958400  # 2024-04-01T08:00:00Z


def make(mode="discrete", **kwargs):
    return gym.make("MeetingSlot-v0", mode=mode, render_mode="rgb_array", **kwargs)


def color_at(frame, x, y):
    return tuple(int(v) for v in frame[y, x])


def play_gold(env, scenario=SCENARIO, turns=None):
    """The gold policy on ``scenario`` (to the end, or for ``turns`` turns); returns frames."""
    observation, info = env.reset(options={"scenario": scenario})
    frames = [env.render()]
    mode = env.unwrapped.mode
    if mode == "text":
        policy = GoldPolicy()
        policy.reset(observation, info)
    else:
        adapter = TextPolicyAdapter(GoldPolicy())
        adapter.reset(observation, info, env=env, seed=None)
    done, count = False, 0
    while not done and (turns is None or count < turns):
        action = policy.act(observation) if mode == "text" else adapter.act(observation, info)
        observation, _, terminated, truncated, info = env.step(action)
        frames.append(env.render())
        done, count = terminated or truncated, count + 1
    return frames


def answer_index(env, instant):
    table = env.unwrapped.interface.table
    return table.answer_offset + (instant - window_bounds(SCENARIO)[0]) // table.grid_seconds


# ---------------------------------------------------------------------------- size and buffers


@pytest.mark.parametrize("mode", ["discrete", "text"])
def test_frame_size_is_fixed_by_the_table_bounds(mode):
    env = make(mode)
    expected = (*picture.frame_size(4), 3)
    shapes = set()
    for options in (
        {"scenario_id": "dst_eu_monday"},  # 2 attendees, 4 days
        {"scenario_id": "four_person_summer"},
        {"scenario_id": "same_tz_empty_busy"},  # 1 day
        {"difficulty": "expert"},
        {"difficulty": "easy"},
    ):
        env.reset(seed=3, options=options)
        frame = env.render()
        shapes.add((frame.shape, frame.dtype))
        for _ in range(3):
            action = 0 if mode == "discrete" else '{"name": "list_attendees", "arguments": {}}'
            env.step(action)
            frame = env.render()
            shapes.add((frame.shape, frame.dtype))
    assert shapes == {(expected, np.dtype(np.uint8))}
    assert expected[0] % 16 == 0 and expected[1] % 16 == 0  # video encoders need no resize


def test_long_text_mode_window_keeps_the_frame_size():
    data = CURATED_BY_ID["same_tz_empty_busy"].to_dict()
    data["window_days"] = 30  # text mode takes windows beyond the discrete table's bounds
    env = make("text")
    env.reset(options={"scenario": data})
    env.step('{"name": "list_attendees", "arguments": {}}')
    env.step("<answer>2024-03-20T15:00:00Z</answer>")
    assert env.render().shape == (*picture.frame_size(4), 3)


def test_frame_size_follows_max_attendees():
    env = make(max_attendees=6)
    env.reset(seed=0)
    assert env.render().shape == (*picture.frame_size(6), 3)
    assert picture.frame_size(6)[0] > picture.frame_size(4)[0]


def test_each_render_returns_a_new_array():
    env = make()
    env.reset(seed=1)
    first, second = env.render(), env.render()
    assert first is not second and not np.shares_memory(first, second)
    assert first.flags.writeable
    np.testing.assert_array_equal(first, second)
    first[:] = 0
    np.testing.assert_array_equal(env.render(), second)


def test_pickled_env_draws_the_same_frame():
    env = make().unwrapped
    env.reset(options={"scenario": SCENARIO})
    env.step(0)
    frame = env.render()
    copy = pickle.loads(pickle.dumps(env))  # the painter's caches are rebuilt, not pickled
    np.testing.assert_array_equal(copy.render(), frame)
    copy.step(1)
    assert not np.array_equal(copy.render(), frame)


def test_the_episode_cache_follows_resets():
    env = make()
    env.reset(options={"scenario_id": "dst_eu_monday"})
    dst = env.render()
    env.step(0)
    env.reset(options={"scenario_id": "gap_30min"})
    gap = env.render()
    env.reset(options={"scenario_id": "dst_eu_monday"})
    again = env.render()
    title = slice(0, picture.SUBTITLE_Y + 20)
    assert not np.array_equal(dst[title], gap[title])
    np.testing.assert_array_equal(dst, again)


# ---------------------------------------------------------------------------- content


def test_answer_and_gold_markers_have_their_colours():
    env = make()
    env.reset(options={"scenario": SCENARIO})
    before = env.render()
    layout = env.unwrapped.painter.layout
    plot = before[picture.AXIS_Y : layout.legend_y]
    assert not (plot == picture.GOLD).all(axis=-1).any()  # gold is hidden until the end
    assert not (plot == picture.ANSWER).all(axis=-1).any()
    wrong = GOLD - 3 * 86400 + 4 * 3600  # Fri 12:00Z, a valid grid start but not gold
    env.step(answer_index(env, wrong))
    frame = env.render()
    y = (layout.row_box(0)[1] + layout.row_box(0)[3]) // 2
    for dx in (-1, 0, 1):  # a bold line, not a hairline
        assert color_at(frame, layout.x_at(wrong) + dx, y) == picture.ANSWER
        assert color_at(frame, layout.x_at(GOLD) + dx, y) == picture.GOLD
    for kind, color in (("answer", picture.ANSWER), ("gold", picture.GOLD)):
        box = layout.lane_box(kind)
        lane = frame[(box[1] + box[3]) // 2, box[0] : box[2]]
        assert (lane == color).all(axis=-1).sum() > 100  # a labelled flag


def test_gold_answer_draws_both_colours():
    env = make()
    env.reset(options={"scenario": SCENARIO})
    env.step(answer_index(env, GOLD))
    frame = env.render()
    layout = env.unwrapped.painter.layout
    x, y = layout.x_at(GOLD), layout.row_box(1)[1] + 5
    assert color_at(frame, x, y) == picture.ANSWER  # the answer's line over gold's wider one
    assert color_at(frame, x - picture.MARKER_W + 1, y) == picture.GOLD


@pytest.mark.parametrize("mode", ["discrete", "text"])
def test_none_answer_is_written_in_its_lane(mode):
    env = make(mode)
    env.reset(options={"scenario": SCENARIO})
    if mode == "discrete":
        env.step(env.unwrapped.interface.table.none_index)
    else:
        env.step("<answer>NONE</answer>")
    frame = env.render()
    layout = env.unwrapped.painter.layout
    box = layout.lane_box("answer")
    assert color_at(frame, box[2] - 3, (box[1] + box[3]) // 2) == picture.ANSWER
    assert color_at(frame, layout.x_at(GOLD), layout.row_box(0)[1] + 5) == picture.GOLD


def test_no_rows_for_empty_attendee_slots():
    env = make()  # max_attendees=4, the scenario has 2
    env.reset(options={"scenario": SCENARIO})
    env.step(0)
    frame = env.render()
    layout = env.unwrapped.painter.layout
    assert layout.count == 2
    with pytest.raises(IndexError):
        layout.row_box(2)
    below = frame[layout.fit_box[3] + 1 : layout.legend_y - 1]
    assert (below == picture.WHITE).all()  # nothing where slots 3 and 4 would be
    for i in range(2):
        x0, y0, x1, y1 = layout.row_box(i)
        row = frame[y0:y1, x0:x1]
        assert not (row == picture.WHITE).all(axis=-1).all()


def test_row_labels_show_what_was_revealed():
    rev = Revealed(SCENARIO, ActionTable())
    assert picture.row_labels(rev, 1)[:3] == ("attendee 2", "zone ?", "hours ?")
    rev.reveal_list()
    rev.reveal_zone(1)
    name, zone, hours, busy = picture.row_labels(rev, 1)
    assert (name, zone, hours) == ("Elena", "Europe/Berlin", "hours ?")
    rev.reveal_hours(1)
    rev.reveal_busy(1, 2)
    name, zone, hours, busy = picture.row_labels(rev, 1)
    assert hours == "09:00-17:00 local, Mon-Fri" and busy.endswith("1 of 6 dates seen")


def test_weekday_ranges():
    assert picture._weekdays((0, 1, 2, 3, 4)) == "Mon-Fri"
    assert picture._weekdays((0, 2, 5, 6)) == "Mon,Wed,Sat,Sun"
    assert picture._weekdays(tuple(range(7))) == "every day"


def test_status_says_the_last_call_and_the_grade():
    env = make("text")
    play_gold(env, turns=2)
    base = env.unwrapped
    status = picture.Status.of(base.episode, base.turns, base.max_turns, base.transcript, "text")
    assert status.last_call.startswith("get_timezone(Farid), get_working_hours(Farid) and ")
    assert "Europe/London" in picture._short_result(status.last_result)
    assert not status.over and status.gold is None and status.grade is None
    play_gold(env)
    status = picture.Status.of(base.episode, base.turns, base.max_turns, base.transcript, "text")
    assert status.over and status.gold == GOLD and status.grade["reward"] == pytest.approx(1.2)
    assert status.answer == format_utc(GOLD)


def test_text_mode_draws_the_same_picture_as_discrete_mode():
    text, discrete = play_gold(make("text"))[-1], play_gold(make("discrete"))[-1]
    layout = picture.Layout(4, 2, window_bounds(SCENARIO)[0], SCENARIO.window_days)
    grid = slice(picture.DAY_Y - 4, layout.status_y)  # all but the title and the status
    np.testing.assert_array_equal(text[grid], discrete[grid])
    assert not np.array_equal(text, discrete)  # the subtitle names the mode; turns differ


# ---------------------------------------------------------------------------- gymnasium


@pytest.mark.parametrize("mode", ["discrete", "text"])
def test_check_env_renders(mode, monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")  # check_env also makes a human env
    pytest.importorskip("pygame")
    check_env(make(mode).unwrapped)


def test_record_video(tmp_path):
    pytest.importorskip("moviepy")
    folder = tmp_path / "videos"
    env = gym.wrappers.RecordVideo(
        make(), str(folder), episode_trigger=lambda episode: True, disable_logger=True
    )
    for _ in range(2):
        play_gold(env)
    env.close()
    videos = sorted(folder.glob("*.mp4"))
    assert len(videos) == 2 and all(video.stat().st_size > 1000 for video in videos)


def test_human_mode_shows_each_step_in_a_window(monkeypatch):
    pygame = pytest.importorskip("pygame")
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    env = gym.make("MeetingSlot-v0", render_mode="human")
    twin = make()
    fps = 40
    env.unwrapped.metadata = {**env.unwrapped.metadata, "render_fps": fps}
    start = time.perf_counter()
    env.reset(options={"scenario": SCENARIO})
    twin.reset(options={"scenario": SCENARIO})
    window = env.unwrapped.human_window
    assert window.is_open and env.render() is None

    def shown():
        return pygame.surfarray.array3d(pygame.display.get_surface()).swapaxes(0, 1)

    assert shown().shape == twin.render().shape
    np.testing.assert_array_equal(shown(), twin.render())
    for action in (0, 1, 2, answer_index(env, GOLD)):
        env.step(action)
        twin.step(action)
        np.testing.assert_array_equal(shown(), twin.render())
    frames = 2 + 4  # reset, the render() above, four steps
    assert time.perf_counter() - start >= (frames - 1) / fps * 0.9  # paced at render_fps
    env.close()
    assert not window.is_open and not pygame.display.get_init()
    env.close()  # closing twice is fine


def _run(code):
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )


def test_import_does_not_load_pillow_or_pygame():
    result = _run(
        "import json, sys\n"
        "import gymnasium as gym\n"
        "import meeting_gym\n"
        "env = gym.make('MeetingSlot-v0', render_mode='ansi'); env.reset(seed=0); env.render()\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('PIL', 'pygame'))))"
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []


@pytest.mark.parametrize(
    "missing, failing, working",
    [("PIL", ["rgb_array", "human"], ["ansi", None]), ("pygame", ["human"], ["rgb_array"])],
)
def test_missing_render_dependency(missing, failing, working):
    code = f"""
import sys
sys.modules[{missing!r}] = None  # as if it were not installed
import gymnasium as gym
from gymnasium.error import DependencyNotInstalled
import meeting_gym
for mode in {failing!r}:
    try:
        gym.make("MeetingSlot-v0", render_mode=mode)
    except DependencyNotInstalled as error:
        assert 'pip install "meeting-gym[render]"' in str(error), error
    else:
        raise SystemExit(f"{{mode}}: no DependencyNotInstalled")
for mode in {working!r}:
    env = gym.make("MeetingSlot-v0", render_mode=mode)
    env.reset(seed=0)
    env.render()
print("ok")
"""
    result = _run(code)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


def test_human_mode_on_a_headless_machine_says_so_once_without_sdls_line():
    """With no display, gymnasium's check_env (which makes a human env) printed SDL's
    "XDG_RUNTIME_DIR is invalid or not set"; now the window is drawn off screen and a
    RuntimeWarning says so."""
    pytest.importorskip("pygame")
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in HEADLESS_UNSET}
    code = (
        "import numpy as np\n"
        "from meeting_gym.envs.meeting_slot.render.picture import Window\n"
        "w = Window()\n"
        "w.show(np.zeros((20, 30, 3), np.uint8), 1000)\n"
        "w.show(np.zeros((20, 30, 3), np.uint8), 1000)\n"
        "print(w.is_open)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0 and done.stdout.strip() == "True", done.stderr
    assert "XDG_RUNTIME_DIR" not in done.stderr
    assert done.stderr.count("drawn off screen") == 1, done.stderr


HEADLESS_UNSET = ("SDL_VIDEODRIVER", "DISPLAY", "WAYLAND_DISPLAY", "XDG_RUNTIME_DIR")
