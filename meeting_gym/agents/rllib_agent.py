"""RLlib RLModules as agents of the evaluation runner (discrete mode, masks honoured).

Ray and torch are imported only when a module is loaded or run
(``pip install "meeting-gym[rllib]"``). The observation goes through the adapter's own
conversion (:func:`meeting_gym.adapters.rllib.to_rllib`), the one the training envs use.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from meeting_gym.adapters.rllib import MASK, require_rllib, to_rllib


class RLlibAgent:
    """An RLModule acting greedily (the highest masked logit) on the env's observation."""

    def __init__(self, module: Any, name: str = "rllib") -> None:
        self.module = module
        self.name = name
        self.space: Any = None

    def reset(self, observation: Any, info: dict[str, Any], *, env: Any, seed: int | None) -> None:
        self.space = env.observation_space

    def act(self, observation: Any, info: dict[str, Any]) -> int:
        import torch
        from ray.rllib.core.columns import Columns

        converted = to_rllib(self.space, observation, info[MASK])
        batch = {Columns.OBS: {k: torch.from_numpy(v).unsqueeze(0) for k, v in converted.items()}}
        with torch.no_grad():
            logits = self.module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
        return int(torch.argmax(logits[0]))


MODULE_PATH = ("learner_group", "learner", "rl_module", "default_policy")


def load_rllib(path: str | Path) -> RLlibAgent:
    """The module of an RLlib checkpoint (``algo.save_to_path(path)``) as an agent.

    ``path`` may be the checkpoint folder or the module's own folder inside it.
    """
    require_rllib()
    from ray.rllib.core.rl_module.rl_module import RLModule

    folder = Path(path)
    if (folder.joinpath(*MODULE_PATH)).is_dir():
        folder = folder.joinpath(*MODULE_PATH)
    if not folder.is_dir():
        raise ValueError(f"no RLlib checkpoint at {str(path)!r}")
    return RLlibAgent(RLModule.from_checkpoint(folder), name=f"rllib:{path}")
