"""Agents acting through discrete actions: text policies translated, and saved MaskablePPO models.

:class:`TextPolicyAdapter` runs any text-mode :class:`~meeting_gym.agents.policies.Policy`
(gold, naive, random) on the discrete interface: each tool call of a text action
becomes one discrete action (one turn each), and the results are handed back to
the policy as the text interface would (a JSON array for several calls). The
adapter reads the attendee order and window from the episode's scenario only to
translate names and dates into slots, exactly what ``list_attendees`` and the
question tell any agent. A call or answer no discrete action expresses (an
unknown name, a date outside the table) is sent as an out-of-range index, which
gets an ``error:`` result and uses the turn. An answer between grid starts (the
naive policy's, which counts a busy block's end minute as busy) is moved to the
next grid start, the nearest later answer a discrete agent can give.

:class:`MaskablePPOAgent` loads a model saved by sb3-contrib; torch and
sb3-contrib are imported only when it is built.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import gymnasium as gym

from meeting_gym.agentkit import AnswerAction, InvalidAction, extract_answer, parse_action
from meeting_gym.agents.evaluate import EpisodeResult, progress
from meeting_gym.agents.policies import Policy
from meeting_gym.envs.meeting_slot.domain.scenario import Scenario
from meeting_gym.envs.meeting_slot.domain.timeutil import format_utc
from meeting_gym.envs.meeting_slot.prompts import question
from meeting_gym.envs.meeting_slot.rubric import parse_answer


class DiscreteAgent(Protocol):
    def reset(self, observation: Any, info: dict[str, Any], env: gym.Env) -> None: ...
    def act(self, observation: Any, info: dict[str, Any]) -> int: ...


class TextPolicyAdapter:
    """Drives a text-mode policy through discrete actions."""

    def __init__(self, policy: Policy, seed: int | None = None) -> None:
        self.policy = policy
        self.seed = seed
        self.name = policy.name

    def reset(self, observation: Any, info: dict[str, Any], env: gym.Env) -> None:
        base = env.unwrapped
        self.table = base.interface.table
        self.scenario: Scenario = base.episode.scenario
        text_info = {"request": dict(info["request"])}
        self.policy.reset(question(self.scenario), text_info, seed=self.seed)
        self.queue: deque[int] = deque()
        self.results: list[str] = []
        self.waiting = 0
        self.first = True

    def act(self, observation: Any, info: dict[str, Any]) -> int:
        if self.waiting:
            self.results.append(str(info.get("result")))
            self.waiting -= 1
        if not self.queue:
            if self.first:
                text_observation = question(self.scenario)
                self.first = False
            elif len(self.results) == 1:
                text_observation = self.results[0]
            else:
                text_observation = json.dumps(self.results, ensure_ascii=False)
            self.results = []
            self.queue.extend(self._translate(self.policy.act(text_observation)))
            self.waiting = len(self.queue)
        return self.queue.popleft()

    def _translate(self, text: str) -> list[int]:
        invalid = self.table.n  # out of range: an error result, one turn
        parsed = parse_action(text)
        if isinstance(parsed, AnswerAction):
            content = extract_answer(parsed.text) or ""
            index = self.table.encode_answer(content, self.scenario)
            instant = parse_answer(content)
            if index is None and isinstance(instant, int):
                step = self.table.grid_seconds
                index = self.table.encode_answer(
                    format_utc(instant + -instant % step), self.scenario
                )
            return [invalid if index is None else index]
        if isinstance(parsed, InvalidAction):
            return [invalid]
        out = []
        for call in parsed.calls:
            index = self.table.encode_call(call.name, call.arguments, self.scenario)
            out.append(invalid if index is None else index)
        return out or [invalid]


class MaskablePPOAgent:
    """A MaskablePPO model acting greedily under the action mask (see :func:`load_ppo`)."""

    def __init__(self, model: Any, name: str = "ppo", deterministic: bool = True) -> None:
        self.model = model
        self.deterministic = deterministic
        self.name = name
        self.obs = "raw" if "zone" in set(model.observation_space.spaces) else "grid"

    def reset(self, observation: Any, info: dict[str, Any], env: gym.Env) -> None:
        return None

    def act(self, observation: Any, info: dict[str, Any]) -> int:
        action, _ = self.model.predict(
            observation,
            action_masks=info["action_mask"].astype(bool),
            deterministic=self.deterministic,
        )
        return int(action)


def load_ppo(path: str) -> MaskablePPOAgent:
    """Load a model saved by ``MaskablePPO.save`` (imports sb3-contrib and torch here)."""
    try:
        from sb3_contrib import MaskablePPO
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ImportError(
            "evaluating a PPO model needs sb3-contrib: pip install 'meeting-gym[rl]'"
        ) from exc
    if not Path(path).is_file() and not Path(f"{path}.zip").is_file():
        raise ValueError(f"no saved model at {path!r}")
    return MaskablePPOAgent(MaskablePPO.load(path, device="cpu"), name=f"ppo:{path}")


def run_discrete_episode(
    env: gym.Env, agent: DiscreteAgent, scenario: Scenario, seed: int | None = None
) -> EpisodeResult:
    """One discrete-mode episode of ``agent`` on ``scenario``."""
    observation, info = env.reset(seed=seed, options={"scenario": scenario})
    agent.reset(observation, info, env)
    while True:
        action = agent.act(observation, info)
        observation, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    return EpisodeResult.from_end(env, scenario, info, truncated)


def evaluate_discrete(
    make_agent: Callable[[], DiscreteAgent],
    scenarios: Sequence[Scenario],
    *,
    seed: int = 0,
    show_progress: bool | None = None,
    max_turns: int = 40,
    obs: str = "grid",
) -> list[EpisodeResult]:
    """Run ``make_agent()`` over ``scenarios`` in discrete mode (one env, seeds ``seed + i``)."""
    env = gym.make("MeetingSlot-v0", mode="discrete", obs=obs, max_turns=max_turns)
    agent = make_agent()
    try:
        return [
            run_discrete_episode(env, agent, scenario, seed=seed + i)
            for i, scenario in enumerate(progress(scenarios, "eval", show_progress))
        ]
    finally:
        env.close()


def make_discrete_agent(name: str, seed: int | None = None) -> DiscreteAgent:
    """``gold`` / ``naive`` / ``random`` (translated text policies) or ``ppo:PATH``."""
    if name.startswith("ppo:"):
        return load_ppo(name[len("ppo:") :])
    from meeting_gym.agents.policies import make_policy

    return TextPolicyAdapter(make_policy(name, seed=seed), seed=seed)
