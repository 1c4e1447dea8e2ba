"""A discrete-mode env's observation and action mask as one ``Dict``.

RLlib's action-masking modules (and any network that masks its logits) take observations
``{"action_mask": Box(0, 1, (n,)), "observations": Box}``. :class:`MaskedObservation`
gives exactly that: the env's own ``info["action_mask"]`` as floats, and the env's ``Dict``
observation flattened by Gymnasium (``gymnasium.spaces.flatten``: keys in the space's
sorted order, ``Discrete`` one-hot). Nothing else changes: actions, rewards, episode ends
and infos are the env's. It needs gymnasium and numpy only, so the envs' own network
modules and the RLlib adapter (:mod:`meeting_gym.adapters.rllib`) share it.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

MASK = "action_mask"
OBSERVATIONS = "observations"


def observation_layout(space: spaces.Dict) -> dict[str, tuple[int, int]]:
    """Where each key of a ``Dict`` observation lies in its Gymnasium flattening.

    ``{key: (start, stop)}`` in the flat vector, in the space's key order.
    """
    layout, start = {}, 0
    for key, sub in space.spaces.items():
        size = spaces.flatdim(sub)
        layout[key] = (start, start + size)
        start += size
    return layout


def masked_space(env: gym.Env) -> spaces.Dict:
    """The ``{"action_mask", "observations"}`` space RLlib's masking modules expect."""
    inner = env.observation_space
    if not isinstance(env.action_space, spaces.Discrete) or not isinstance(inner, spaces.Dict):
        raise ValueError(
            "RLlib's masking needs a Discrete action space and a Dict observation "
            f"(the discrete mode); got {env.action_space} and {type(inner).__name__}"
        )
    flat = spaces.flatten_space(inner)
    return spaces.Dict(
        {
            MASK: spaces.Box(0.0, 1.0, shape=(int(env.action_space.n),), dtype=np.float32),
            OBSERVATIONS: spaces.Box(
                flat.low.astype(np.float32), flat.high.astype(np.float32), dtype=np.float32
            ),
        }
    )


def to_rllib(space: spaces.Dict, observation: Any, mask: Any) -> dict[str, np.ndarray]:
    """One env observation and its ``info["action_mask"]`` in the masking modules' form."""
    return {
        MASK: np.asarray(mask, dtype=np.float32),
        OBSERVATIONS: spaces.flatten(space, observation).astype(np.float32, copy=False),
    }


class MaskedObservation(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Observations ``{"action_mask": the env's mask, "observations": the flat observation}``.

    Wraps an env of the family in its discrete mode; everything but the
    observation (actions, rewards, ends, infos) passes through unchanged.
    """

    def __init__(self, env: gym.Env) -> None:
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)
        self.inner_space = env.observation_space
        self.observation_space = masked_space(env)
        self.layout = observation_layout(self.inner_space)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        observation, info = self.env.reset(seed=seed, options=options)
        return self._convert(observation, info), info

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], Any, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        return self._convert(observation, info), reward, terminated, truncated, info

    def _convert(self, observation: Any, info: dict[str, Any]) -> dict[str, np.ndarray]:
        if MASK not in info:
            raise ValueError("the env gives no info['action_mask']: use its discrete mode")
        return to_rllib(self.inner_space, observation, info[MASK])
