"""Reference policies: the text-mode policy interface and lookup by env and name.

Each task names its own policies (``Task.policies``: ``gold``, ``naive``, ``random``
...) as ``"module:Class"`` strings, imported only when asked for. A policy acts
through the text interface and sees only what an agent sees: the first observation
and reset ``info``, then each observation.
"""

from __future__ import annotations

import inspect
import warnings
from typing import Any

from meeting_gym.core.policy import DiscreteAdapter, Policy, RandomPolicy
from meeting_gym.core.registry import load_object, task_class

__all__ = [
    "DiscreteAdapter",
    "Policy",
    "RandomPolicy",
    "TextPolicyAgent",
    "make_policy",
    "policy_names",
]


class TextPolicyAgent:
    """Deprecated (0.3.0): a :class:`Policy` is an :class:`~meeting_gym.core.loop.Agent`
    itself; this wrapper goes in 0.4.0."""

    def __init__(self, policy: Any) -> None:
        warnings.warn(
            "TextPolicyAgent is no longer needed: a Policy is an Agent (meeting_gym 0.3.0); "
            "it goes in 0.4.0",
            DeprecationWarning,
            stacklevel=2,
        )
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
