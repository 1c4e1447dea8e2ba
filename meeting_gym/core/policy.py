"""The reference policies' interface: a text-mode :class:`Policy`, and the
:class:`DiscreteAdapter` that plays one through an env's discrete actions.

Here in core, beside the episode loop, so that an env's own policies and adapters stand on
core alone; :mod:`meeting_gym.agents.policies` finds them by name (``Task.policies``).
"""

from __future__ import annotations

import random
from collections import deque
from typing import Any


class Policy:
    """Base class of the reference policies: an :class:`~meeting_gym.core.loop.Agent` that
    plays the text mode (the one agent interface; :func:`~meeting_gym.core.loop.play`
    drives it as it drives a model or a trained network).

    ``reset`` takes the first observation and info (``env`` is accepted and unused: a
    policy sees only what an agent sees), then ``act`` gives one text action per turn.
    Called as in 0.2, ``reset(observation, info, seed)`` and ``act(observation)``, a policy
    works the same. A policy that keeps nothing between turns need not write ``reset``.
    """

    name = "policy"

    def reset(
        self, observation: str, info: dict[str, Any], seed: int | None = None, *, env: Any = None
    ) -> None:
        """Start an episode; the base keeps nothing (a stateless policy)."""

    def act(self, observation: str, info: dict[str, Any] | None = None) -> str:
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


class DiscreteAdapter:
    """Drives a text-mode :class:`Policy` through an env's discrete actions.

    An env's subclass (``policy_adapters["discrete"]``) says what text the policy sees
    (:meth:`text`) and which discrete indices a text action becomes (:meth:`translate`);
    one text action may take several steps, played from a queue.
    """

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.name = policy.name

    def reset(self, observation: Any, info: dict[str, Any], *, env: Any, seed: int | None) -> None:
        base = env.unwrapped
        self.table = base.interface.table
        self.episode = base.episode
        self.queue: deque[int] = deque()
        self.policy.reset(self.begin(info), self.policy_info(info), seed=seed)

    def act(self, observation: Any, info: dict[str, Any]) -> int:
        self.observe(info)
        if not self.queue:
            self.queue.extend(self.translate(self.policy.act(self.text())))
        return self.queue.popleft()

    def begin(self, info: dict[str, Any]) -> str:
        """Start an episode; returns the first text observation."""
        raise NotImplementedError

    def policy_info(self, info: dict[str, Any]) -> dict[str, Any]:
        """The reset info a text policy gets, from the discrete reset info."""
        raise NotImplementedError

    def observe(self, info: dict[str, Any]) -> None:
        """Read a step's info (before the queue is looked at)."""

    def text(self) -> str:
        """The text observation the policy acts on next."""
        raise NotImplementedError

    def translate(self, action: str) -> list[int]:
        """The discrete indices of a text action (out of range where none expresses it)."""
        raise NotImplementedError
