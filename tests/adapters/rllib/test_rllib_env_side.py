"""The RLlib adapter's env side: gymnasium and numpy only, so it runs with or without Ray.

What RLlib itself does with it (registration, masked sampling, PPO) is in
``tests/adapters/rllib/test_rllib_training.py``, which needs the rllib extra.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.error import DependencyNotInstalled
from gymnasium.utils.env_checker import check_env

import meeting_gym
from meeting_gym.adapters import rllib as adapter

DISCRETE_IDS = [i for i in meeting_gym.ENV_IDS if i.startswith(("MeetingSlot", "TimetablePlanner"))]


def test_importing_the_adapter_imports_neither_ray_nor_torch():
    code = (
        "import sys, meeting_gym.adapters.rllib; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'ray', 'torch'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    "call",
    [
        adapter.require_rllib,
        adapter.register,
        adapter.masked_mlp_spec,
        lambda: adapter.ppo_config("MeetingSlot-v0", None),
    ],
    ids=["require_rllib", "register", "masked_mlp_spec", "ppo_config"],
)
def test_without_ray_the_error_says_how_to_install_it(call, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(DependencyNotInstalled, match=r'pip install "meeting-gym\[rllib\]"'):
        call()


def test_the_ids_with_a_discrete_mode_are_the_ones_rllib_gets():
    assert adapter.discrete_env_ids() == DISCRETE_IDS
    assert "CalendarMath-v0" not in adapter.discrete_env_ids()


@pytest.mark.parametrize("env_id", DISCRETE_IDS)
def test_the_observation_is_the_mask_and_the_flattened_dict(env_id):
    env = adapter.make_env(env_id)
    base = gym.make(env_id, disable_env_checker=True)
    inner = base.observation_space
    n = base.action_space.n
    space = env.observation_space
    assert set(space.spaces) == {"action_mask", "observations"}
    assert space["action_mask"] == spaces.Box(0.0, 1.0, (n,), np.float32)
    assert space["observations"].shape == (spaces.flatdim(inner),)
    assert space["observations"].dtype == np.float32
    observation, info = env.reset(seed=3)
    raw, raw_info = base.reset(seed=3)
    assert space.contains(observation)
    np.testing.assert_array_equal(observation["action_mask"], info["action_mask"])
    np.testing.assert_array_equal(info["action_mask"], raw_info["action_mask"])
    flat = observation["observations"]
    assert list(env.layout) == list(inner.spaces)
    assert max(stop for _, stop in env.layout.values()) == flat.size
    for key, (start, stop) in env.layout.items():
        np.testing.assert_array_equal(flat[start:stop], spaces.flatten(inner[key], raw[key]))
    env.close()
    base.close()


@pytest.mark.parametrize("env_id", DISCRETE_IDS)
def test_gymnasiums_checker_passes_on_the_wrapped_env(env_id):
    env = adapter.make_env(env_id)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "the env is wrapped": the wrapper is the point here
        check_env(env, skip_render_check=True)
    env.close()


def _plain(value):
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value


@pytest.mark.parametrize("env_id", DISCRETE_IDS)
def test_only_the_observation_changes(env_id):
    """Same seed, same actions: rewards, ends and infos are the env's own, step for step."""
    wrapped = adapter.make_env(env_id)
    base = gym.make(env_id, disable_env_checker=True)
    episodes = 0
    observation, info = wrapped.reset(seed=7)
    raw, raw_info = base.reset(seed=7)
    steps = 0
    while episodes < 4:
        assert _plain(info) == _plain(raw_info)
        converted = adapter.to_rllib(base.observation_space, raw, raw_info["action_mask"])
        assert _plain(observation) == _plain(converted)
        legal = np.flatnonzero(info["action_mask"])
        action = int(legal[(steps * 7) % len(legal)]) if steps % 5 else int(legal[0])
        observation, reward, terminated, truncated, info = wrapped.step(action)
        raw, raw_reward, raw_terminated, raw_truncated, raw_info = base.step(action)
        assert (reward, terminated, truncated) == (raw_reward, raw_terminated, raw_truncated)
        steps += 1
        if terminated or truncated:
            assert _plain(info) == _plain(raw_info)
            episodes += 1
            observation, info = wrapped.reset()
            raw, raw_info = base.reset()
    wrapped.close()
    base.close()


@pytest.mark.parametrize("env_id", DISCRETE_IDS)
def test_env_config_reaches_the_env(env_id):
    env = adapter.make_env(env_id, {"difficulty": "easy", "max_turns": 7})
    assert env.unwrapped.max_turns == 7
    _, info = env.reset(seed=0)
    assert info["difficulty"] == "easy"


def test_text_mode_is_refused_with_the_reason():
    with pytest.raises(ValueError, match="discrete mode"):
        adapter.make_env("MeetingSlot-v0", {"mode": "text"})
    with pytest.raises(ValueError, match="unknown mode 'discrete'"):  # the env's own refusal
        adapter.make_env("CalendarMath-v0")


class _EnvContext(dict):
    """What RLlib passes an env creator: the env config plus the runner's index."""

    def __init__(self, config: dict, worker_index: int) -> None:
        super().__init__(config)
        self.worker_index = worker_index


def test_a_curriculum_in_the_env_config_is_shared_by_a_runners_sub_envs():
    option = {"up_to": "hard", "seed": 5, "window": 4, "min_outcomes": 4}
    first = adapter.make_env("MeetingSlot-v0", _EnvContext({"curriculum": option}, 1))
    second = adapter.make_env("MeetingSlot-v0", _EnvContext({"curriculum": option}, 1))
    other = adapter.make_env("MeetingSlot-v0", _EnvContext({"curriculum": option}, 2))
    cur = first.env.curriculum
    assert second.env.curriculum is cur and other.env.curriculum is not cur
    assert (cur.seed, other.env.curriculum.seed, cur.levels) == (6, 7, ("easy", "medium", "hard"))
    _, info = first.reset(seed=0)
    assert info["curriculum_level"] == "easy" and cur.drawn["easy"] == 1
    done = False
    while not done:  # the last legal action ends the episode (an answer)
        action = int(np.flatnonzero(info["action_mask"])[-1])
        _, _, terminated, truncated, info = first.step(action)
        done = terminated or truncated
    assert cur.outcomes == 1
    plain = adapter.make_env("MeetingSlot-v0", _EnvContext({}, 1))
    assert not isinstance(plain.env, type(first.env))
