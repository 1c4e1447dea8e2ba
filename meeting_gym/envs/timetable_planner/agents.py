"""Text policies acting through TimetablePlanner's discrete actions.

:class:`TextPolicyAdapter` runs any text-mode :class:`~meeting_gym.agents.policies.Policy`
(solver, greedy, random, empty) on the discrete interface: the policy gets the text
observations text mode would give (built from the same episode), and each action object
it writes becomes the discrete index of the same action, one per step. An action no
index expresses (an unknown id, a day outside the bounds) is sent as an out-of-range
index, which the env plays as an invalid action.
"""

from __future__ import annotations

from typing import Any

from meeting_gym.core.policy import DiscreteAdapter
from meeting_gym.envs.timetable_planner.domain.actions import Action
from meeting_gym.envs.timetable_planner.tools import read_actions
from meeting_gym.envs.timetable_planner.view import reset_text, step_text


class TextPolicyAdapter(DiscreteAdapter):
    """Drives a text-mode policy through discrete actions."""

    def begin(self, info: dict[str, Any]) -> str:
        self.first: str | None = reset_text(self.episode.engine)
        return self.first

    def policy_info(self, info: dict[str, Any]) -> dict[str, Any]:
        return {"task_name": info.get("task_name")}

    def text(self) -> str:
        text = self.first if self.first is not None else step_text(self.episode.engine)
        self.first = None
        return text

    def translate(self, action: str) -> list[int]:
        engine = self.episode.engine
        out = []
        for item in read_actions(action):
            parsed = item if isinstance(item, Action) else engine.parse(item)
            index = None
            if isinstance(parsed, Action):
                index = self.table.encode(parsed, engine.problem)
            out.append(self.table.n if index is None else index)
        return out
