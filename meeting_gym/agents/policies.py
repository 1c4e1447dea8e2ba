"""Reference policies: the text-mode policy interface and lookup by env and name.

Each task names its own policies (``Task.policies``: ``gold``, ``naive``, ``random``
...) as ``"module:Class"`` strings, imported only when asked for. A policy acts
through the text interface and sees only what an agent sees: the first observation
and reset ``info``, then each observation.
"""

from __future__ import annotations

import inspect
import random
from typing import Any

from meeting_gym.core.registry import load_object, task_class


class Policy:
    """Base class: ``reset`` with the first observation and info, then ``act`` per turn."""

    name = "policy"

    def reset(self, observation: str, info: dict[str, Any], seed: int | None = None) -> None:
        raise NotImplementedError

    def act(self, observation: str) -> str:
        raise NotImplementedError


class RandomPolicy(Policy):
    """Base of the random policies: their own generator, seeded at construction and
    restarted by ``reset(seed=...)`` (:meth:`reseed`); never the global ``random``."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def reseed(self, seed: int | None) -> None:
        """Restart the generator from ``seed`` (``None`` keeps it going)."""
        if seed is not None:
            self.rng = random.Random(seed)


class TextPolicyAgent:
    """A text-mode :class:`Policy` as an :class:`~meeting_gym.core.loop.Agent`."""

    def __init__(self, policy: Any) -> None:
        self.policy = policy
        self.name = getattr(policy, "name", type(policy).__name__)

    def reset(self, observation: Any, info: dict[str, Any], *, env: Any, seed: int | None) -> None:
        self.policy.reset(observation, info, seed=seed)

    def act(self, observation: Any, info: dict[str, Any]) -> Any:
        return self.policy.act(observation)


def policy_names(env_id: str) -> tuple[str, ...]:
    """The reference policies of ``env_id``'s task, best first as the task lists them."""
    return tuple(task_class(env_id).policies)


def make_policy(name: str, seed: int | None = None, *, env: str = "MeetingSlot-v0") -> Policy:
    """A fresh reference policy ``name`` of ``env``'s task; ``seed`` seeds random ones."""
    policies = task_class(env).policies
    if name not in policies:
        raise ValueError(f"unknown policy {name!r} for {env}; choose one of {', '.join(policies)}")
    cls = load_object(policies[name])
    takes_seed = "seed" in inspect.signature(cls).parameters
    return cls(seed=seed) if takes_seed else cls()
