"""Text policies acting through TimetablePlanner's discrete actions.

:class:`TextPolicyAdapter` runs any text-mode :class:`~meeting_gym.agents.policies.Policy`
(solver, greedy, random, empty) on the discrete interface: the policy gets the text
observations text mode would give (built from the same episode), and each action object
it writes becomes the discrete index of the same action, one per step. An action no
index expresses (an unknown id, a day outside the bounds) is sent as an out-of-range
index, which the env plays as an invalid action.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from meeting_gym.agents.policies import Policy
from meeting_gym.envs.timetable_planner.actions import Action
from meeting_gym.envs.timetable_planner.tools import read_actions
from meeting_gym.envs.timetable_planner.view import reset_text, step_text


class TextPolicyAdapter:
    """Drives a text-mode policy through discrete actions."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.name = policy.name

    def reset(self, observation: Any, info: dict[str, Any], *, env: Any, seed: int | None) -> None:
        base = env.unwrapped
        self.table = base.interface.table
        self.episode = base.episode
        text = reset_text(self.episode.engine)
        self.first = text
        self.policy.reset(text, {"task_name": info.get("task_name")}, seed=seed)
        self.queue: deque[int] = deque()

    def act(self, observation: Any, info: dict[str, Any]) -> int:
        if not self.queue:
            engine = self.episode.engine
            text = self.first if self.first is not None else step_text(engine)
            self.first = None
            for item in read_actions(self.policy.act(text)):
                parsed = item if isinstance(item, Action) else engine.parse(item)
                index = None
                if isinstance(parsed, Action):
                    index = self.table.encode(parsed, engine.problem)
                self.queue.append(self.table.n if index is None else index)
        return self.queue.popleft()
