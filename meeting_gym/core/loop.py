"""The agent interface and the one episode loop: any agent, any env of the family, any mode.

An agent has ``reset(observation, info, *, env, seed)`` and ``act(observation, info)``;
:func:`play` resets the env, asks the agent for actions until the episode ends, and
returns what happened. A logged episode is replayed through the same loop, by a
:class:`ScriptedAgent` that plays its actions back. An agent that cannot go on for
reasons outside the episode (an LLM provider that keeps failing) raises
:class:`AgentError`: the rollout records the error and must not be scored. Agents that
batch across episodes (the local model) do it behind ``act``, so many threads can run
this same loop. Nothing here imports gymnasium.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol


class AgentError(Exception):
    """The agent could not produce an action; the episode is an error, not a score."""


class Agent(Protocol):
    """What :func:`play` drives: every policy, model and trained network of the package."""

    name: str

    def reset(self, observation: Any, info: dict[str, Any], *, env: Any, seed: int | None) -> None:
        """Start an episode with its first observation and reset info."""

    def act(self, observation: Any, info: dict[str, Any]) -> Any:
        """The next action, given the latest observation and info."""


@dataclass
class Rollout:
    """One played episode: how it ended, its last observation and info, and (if any) the
    agent's error."""

    reset_info: dict[str, Any]
    info: dict[str, Any]
    reward: float = 0.0
    terminated: bool = False
    truncated: bool = False
    turns: int = 0
    error: str | None = None
    rewards: list[float] = field(default_factory=list)
    observation: Any = None

    @property
    def done(self) -> bool:
        return self.terminated or self.truncated

    @property
    def total_reward(self) -> float:
        """The return: the sum of every step's reward."""
        return sum(self.rewards)


def play(
    env: Any, agent: Agent, *, seed: int | None = None, options: dict[str, Any] | None = None
) -> Rollout:
    """Play one episode of ``agent`` on ``env`` (reset with ``seed`` and ``options``)."""
    observation, info = env.reset(seed=seed, options=options)
    rollout = Rollout(reset_info=info, info=info, observation=observation)
    agent.reset(observation, info, env=env, seed=seed)
    while not rollout.done:
        try:
            action = agent.act(observation, info)
        except AgentError as exc:
            rollout.error = str(exc) or type(exc).__name__
            break
        observation, reward, terminated, truncated, info = env.step(action)
        rollout.turns += 1
        rollout.rewards.append(float(reward))
        rollout.reward = float(reward)
        rollout.terminated, rollout.truncated = bool(terminated), bool(truncated)
        rollout.info, rollout.observation = info, observation
    return rollout


class ScriptedAgent:
    """Actions given in advance, played in order: a logged episode replayed by :func:`play`.

    ``observed(k, observation)``, if given, is called with each observation the env
    returns after action ``k`` while the episode goes on, so the caller can hold it
    against its log (the one the episode ends on is the rollout's ``observation``).
    Running out of actions while the episode goes on raises :class:`AgentError`, which
    :func:`play` records as the rollout's error. After the episode, ``first`` is the
    reset observation and ``left`` the actions not played (the episode ended first).
    """

    name = "scripted"

    def __init__(
        self, actions: Sequence[Any], observed: Callable[[int, Any], None] | None = None
    ) -> None:
        self.actions = list(actions)
        self.observed = observed
        self.played = 0
        self.first: Any = None

    def reset(
        self, observation: Any, info: dict[str, Any], *, env: Any = None, seed: int | None = None
    ) -> None:
        self.played, self.first = 0, observation

    def act(self, observation: Any, info: dict[str, Any] | None = None) -> Any:
        if self.played and self.observed is not None:
            self.observed(self.played - 1, observation)
        if self.played >= len(self.actions):
            raise AgentError(f"the log ends after {self.played} actions; the episode goes on")
        self.played += 1
        return self.actions[self.played - 1]

    @property
    def left(self) -> int:
        """Actions not played: the episode ended before them."""
        return len(self.actions) - self.played
