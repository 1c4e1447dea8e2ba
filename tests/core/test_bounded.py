"""Untrusted values in messages: bounded, and never an exception (core/bounded.py).

repr() of an int over 4,300 digits raises ValueError: sent as an action it crashed both
discrete envs and the text envs' transcript before this module.
"""

from __future__ import annotations

import gymnasium as gym
import pytest

import meeting_gym
from meeting_gym.core.bounded import show
from meeting_gym.core.registry import load_object

HUGE = 10**5000


def test_show_is_short_for_anything():
    assert show(HUGE) == "<int of 16610 bits>"
    assert show(12) == "12" and show("abc") == "'abc'"
    assert len(show("x" * 10**6)) <= 45 and len(show(list(range(10**6)))) <= 60
    assert len(show({"k" * 1000: [HUGE] * 1000})) <= 200  # six items of a list at most
    assert len(show("x" * 1000, limit=200)) <= 205

    class Broken:
        def __repr__(self) -> str:
            raise RuntimeError("no")

    assert show(Broken()).startswith("<Broken")  # never the exception


MODES = [
    (env_id, mode)
    for env_id in meeting_gym.ENV_IDS
    for mode in load_object(gym.spec(env_id).entry_point).modes
]


@pytest.mark.parametrize(("env_id", "mode"), MODES)
@pytest.mark.parametrize("action", [HUGE, -HUGE, [HUGE] * 10_000], ids=["huge", "-huge", "list"])
def test_a_huge_action_is_refused_in_every_env_and_mode(env_id, mode, action):
    env = gym.make(env_id, mode=mode, disable_env_checker=True)
    env.reset(seed=0)
    observation, reward, terminated, _, info = env.step(action)
    assert env.observation_space.contains(observation)
    # refused with a reason, at no gain, and the episode goes on (the refusal costs a turn)
    said = str(observation) + str(info)
    assert any(word in said for word in ("not an integer", "expected", "invalid")), said[:300]
    assert reward <= 0.0 and not terminated
    env.close()
