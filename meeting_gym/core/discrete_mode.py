"""What an env with a masked ``Discrete`` mode adds to :class:`~meeting_gym.core.text_env.TextEnv`.

sb3-contrib's MaskablePPO calls ``env.action_masks()``; people read an action index with
``env.describe(index)``. An env lists this class before ``TextEnv`` and names its discrete
interface class in ``DISCRETE``; that interface has ``action_mask()`` and
``describe_action(index, episode)``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np


class MaskedDiscreteMode:
    """``action_masks`` and ``describe`` for an env whose ``interface`` may be discrete."""

    DISCRETE: ClassVar[type]
    interface: Any
    episode: Any

    @classmethod
    def make_kwargs_for(cls, observation_space: Any) -> dict[str, Any]:
        """The ``gym.make`` keywords whose observations a model trained on
        ``observation_space`` reads (an env with several encodings says which; default none)."""
        return {}

    def _discrete(self, what: str) -> Any:
        if not isinstance(self.interface, self.DISCRETE):
            raise RuntimeError(f"{what} in discrete mode only")
        return self.interface

    def action_masks(self) -> np.ndarray:
        """The current action mask as booleans (sb3-contrib's MaskablePPO calls this)."""
        return self._discrete("action masks exist").action_mask().astype(bool)

    def describe(self, action: int) -> str:
        """Readable text for a discrete action index, e.g. ``get_busy(Ava, 2024-03-11)``."""
        return self._discrete("describe() exists").describe_action(int(action), self.episode)
