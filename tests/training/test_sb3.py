"""Stable-Baselines3 on every env with a masked discrete mode, as it comes (MultiInputPolicy)."""

from __future__ import annotations

import gymnasium as gym
import pytest

import meeting_gym
from meeting_gym.core.registry import load_object

sb3_contrib = pytest.importorskip("sb3_contrib")
torch = pytest.importorskip("torch")

DISCRETE_IDS = [
    env_id
    for env_id in meeting_gym.ENV_IDS
    if "discrete" in load_object(gym.spec(env_id).entry_point).modes
]


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_every_env_with_masks_is_here():
    assert {"MeetingSlot-v0", "MeetingSlot-Raw-v0", "TimetablePlanner-v0"} <= set(DISCRETE_IDS)


@pytest.mark.parametrize("env_id", DISCRETE_IDS)
def test_multi_input_policy_runs_as_is(env_id):
    model = sb3_contrib.MaskablePPO(
        "MultiInputPolicy",
        gym.make(env_id),
        n_steps=128,
        batch_size=64,
        n_epochs=1,
        seed=0,
        device="cpu",
    )
    model.learn(256)
    assert model.num_timesteps >= 256
