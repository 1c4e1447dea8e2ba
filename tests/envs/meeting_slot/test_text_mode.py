"""MeetingSlot-v0 in text mode: API, malformed actions, truncation, info, rendering."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import meeting_gym  # noqa: F401
from meeting_gym.envs.meeting_slot.domain.curated import curated_dicts
from meeting_gym.envs.meeting_slot.domain.scenario import ScenarioError
from meeting_gym.envs.meeting_slot.env import MeetingSlotEnv


@pytest.fixture
def env():
    environment = gym.make("MeetingSlot-v0", mode="text", render_mode="ansi")
    yield environment
    environment.close()


def call(tool: str, **arguments) -> str:
    return json.dumps({"name": tool, "arguments": arguments})


def test_check_env_text_mode():
    check_env(gym.make("MeetingSlot-v0", mode="text").unwrapped, skip_render_check=True)


def test_make_by_module_path():
    env = gym.make("meeting_gym:MeetingSlot-v0", mode="text")
    observation, _ = env.reset(seed=1)
    assert "minute meeting" in observation


def test_reset_info(env):
    observation, info = env.reset(seed=0, options={"scenario_id": "dst_eu_monday"})
    assert "30-minute meeting" in observation and "2024-03-29" in observation
    assert info["scenario_id"] == "dst_eu_monday"
    assert {t["function"]["name"] for t in info["tools"]} == {
        "list_attendees",
        "get_timezone",
        "get_working_hours",
        "get_busy",
    }
    assert "<answer>" in info["system_prompt"] and "get_busy" in info["system_prompt"]
    assert info["request"] == {
        "duration_minutes": 30,
        "window_start": "2024-03-29",
        "window_days": 4,
    }


def test_tools_through_text(env):
    env.reset(options={"scenario_id": "overlapping_busy"})
    observation, reward, terminated, _truncated, _ = env.step(call("list_attendees"))
    assert json.loads(observation) == ["Ava", "Ben"] and reward == 0 and not terminated
    assert env.step(call("get_timezone", name="ava"))[0] == "America/New_York"
    hours = json.loads(env.step(call("get_working_hours", name="Ben"))[0])
    assert hours == {
        "start": "09:00",
        "end": "17:00",
        "weekdays": [0, 1, 2, 3, 4],
        "weekday_names": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"],
    }
    busy = env.step(f"<tool_call>{call('get_busy', name='Ava', date='2024-03-11')}</tool_call>")
    assert json.loads(busy[0]) == [{"start": "09:00", "end": "12:00"}]
    assert json.loads(env.step(call("get_busy", name="Ava", date="2024-03-12"))[0]) == []
    both = json.dumps(
        [
            {"name": "get_timezone", "arguments": json.dumps({"name": "Ben"})},
            {"name": "get_timezone", "arguments": {"name": "Zed"}},
        ]
    )
    results = json.loads(env.step(both)[0])
    assert results[0] == "America/New_York" and results[1].startswith("error:")


@pytest.mark.parametrize(
    "action, fragment",
    [
        (call("get_timezone", name="Nobody"), "unknown attendee"),
        (call("get_timezone"), "missing"),
        (call("get_busy", name="Ava", date="11/03/2024"), "YYYY-MM-DD"),
        (call("get_busy", name="Ava", date="2024-02-30"), "date"),
        (call("get_timezone", name="Ava", extra=1), "extra"),
        (call("teleport"), "unknown tool"),
        ("hello", "expected"),
        ("{not json", "expected"),
        ("", "expected"),
        ("[]", "expected"),
    ],
)
def test_malformed_actions_cost_a_turn_and_say_why(env, action, fragment):
    env.reset(options={"scenario_id": "overlapping_busy"})
    observation, reward, terminated, truncated, info = env.step(action)
    assert observation.startswith("error:") or fragment in observation
    assert fragment.lower() in observation.lower()
    assert (reward, terminated, truncated, info["turn"]) == (0.0, False, False, 1)


@pytest.mark.parametrize("action", [None, 42, b"bytes", ["list"], {"name": "list_attendees"}])
def test_non_string_actions_never_crash(env, action):
    env.reset(seed=3)
    observation, _reward, terminated, _truncated, info = env.unwrapped.step(action)
    assert observation.startswith("error:") and info["turn"] == 1 and not terminated


def test_answer_grades_and_ends(env):
    env.reset(options={"scenario_id": "overlapping_busy"})
    _, reward, terminated, truncated, info = env.step("<answer>2024-03-11T18:00:00Z</answer>")
    assert terminated and not truncated and reward == pytest.approx(1.2)
    assert info["gold"] == "2024-03-11T18:00:00Z"
    assert {k: info[k] for k in ("exact_match", "format", "partial_credit")} == {
        "exact_match": 1.0,
        "format": 1.0,
        "partial_credit": 0.0,
    }
    with pytest.raises(RuntimeError, match="reset"):
        env.unwrapped.step(call("list_attendees"))


def test_truncation_after_max_turns():
    env = gym.make("MeetingSlot-v0", mode="text", max_turns=3)
    env.reset(seed=0)
    results = [env.step(call("list_attendees")) for _ in range(3)]
    assert [r[3] for r in results] == [False, False, True]
    assert results[-1][1] == 0.0
    info = results[-1][4]
    assert (info["exact_match"], info["format"], info["partial_credit"], info["reward"]) == (
        0.0,
        0.0,
        0.0,
        0.0,
    )
    assert info["answered"] is False and "gold" in info


def test_reset_options(env):
    data = curated_dicts()[4]
    _, info = env.reset(options={"scenario": data})
    assert info["scenario_id"] == data["id"]
    _, info = env.reset(seed=5, options={"difficulty": "expert"})
    assert info["difficulty"] == "expert"
    with pytest.raises(ValueError, match="scenario_id"):
        env.reset(options={"scenario_id": "nope"})
    with pytest.raises(ValueError, match="difficulty"):
        env.reset(options={"difficulty": "impossible"})
    with pytest.raises(ValueError, match="unknown reset option"):
        env.reset(options={"scenrio": data})
    with pytest.raises(ScenarioError, match="duration_minutes"):
        env.reset(options={"scenario": {**data, "duration_minutes": -5}})


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"mode": "pictures"}, "mode"),
        ({"difficulty": "extreme"}, "difficulty"),
        ({"max_turns": 0}, "max_turns"),
        ({"render_mode": "video"}, "render_mode"),  # "human" is now wrapped by gymnasium
    ],
)
def test_bad_constructor_arguments(kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        MeetingSlotEnv(**{"mode": "text", **kwargs})  # direct: gym.make would warn first


def test_same_seed_same_episode():
    def rollout(seed):
        env = gym.make("MeetingSlot-v0", mode="text")
        observation, info = env.reset(seed=seed)
        out = [observation, info["scenario_id"]]
        out.append(env.step(call("list_attendees"))[0])
        return out

    assert rollout(11) == rollout(11)
    assert rollout(11) != rollout(12)


def test_render_ansi_is_the_transcript(env):
    env.reset(options={"scenario_id": "gap_30min"})
    env.step(call("list_attendees"))
    text = env.render()
    assert "[question]" in text and "list_attendees" in text and '["Jules", "Kit"]' in text


def test_info_not_shared_between_resets(env):
    _, first = env.reset(seed=1)
    first["tools"][0]["function"]["name"] = "mutated"
    _, second = env.reset(seed=1)
    assert second["tools"][0]["function"]["name"] != "mutated"
