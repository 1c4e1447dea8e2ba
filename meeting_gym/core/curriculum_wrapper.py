"""A Gymnasium wrapper that takes each episode's item from a :class:`Curriculum`.

``CurriculumWrapper(env, curriculum)``: every ``reset()`` without options of its own plays
the curriculum's next draw (its reset options), and the episode's return is reported to
the curriculum when the episode ends, so the next resets follow the learner. It works in
any mode of any env of the family, under SB3's vector envs and RLlib:

* in one process (``DummyVecEnv``, an RLlib env runner's sub-envs), give every copy the
  same :class:`Curriculum`: they share its outcomes and its level;
* across processes (``SubprocVecEnv``, several RLlib env runners), each process keeps its
  own copy, moved by its own episodes (seed each copy differently so they draw different
  items).

``reset(options=...)`` with options of its own (an evaluation item) passes through and
its episode is not reported: only curriculum draws teach the curriculum.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from meeting_gym.core.curriculum import Curriculum, Draw


class CurriculumWrapper(gym.Wrapper):
    """Resets from ``curriculum``'s draws; reports each episode's return to it."""

    def __init__(self, env: gym.Env, curriculum: Curriculum) -> None:
        super().__init__(env)
        known = getattr(env.unwrapped, "task", None)
        difficulties = getattr(known, "difficulties", None)
        if difficulties is not None:
            missing = [level for level in curriculum.levels if level not in difficulties]
            if missing:
                raise ValueError(
                    f"the curriculum's level {missing[0]!r} is not a difficulty of this env "
                    f"({', '.join(difficulties)})"
                )
        self.curriculum = curriculum
        self.draw: Draw | None = None
        self.episode_return = 0.0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """The curriculum's next item (or, with ``options``, the item they name, unreported)."""
        self.episode_return = 0.0
        if options:
            self.draw = None
            return self.env.reset(seed=seed, options=options)
        self.draw = self.curriculum.next()
        observation, info = self.env.reset(seed=seed, options=self.draw.options)
        return observation, {**info, "curriculum_level": self.draw.level}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """One step; at the episode's end its return goes to the curriculum."""
        observation, reward, terminated, truncated, info = self.env.step(action)
        self.episode_return += float(reward)
        if (terminated or truncated) and self.draw is not None:
            self.curriculum.report(self.draw, self.episode_return)
            info = {**info, "curriculum_level": self.draw.level}
            self.draw = None
        return observation, reward, terminated, truncated, info


__all__ = ["CurriculumWrapper"]
