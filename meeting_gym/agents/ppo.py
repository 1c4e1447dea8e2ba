"""Saved MaskablePPO models as agents of any env with discrete actions and masks.

torch and sb3-contrib are imported only when a model is loaded
(``pip install "meeting-gym[rl]"``).
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any


class MaskablePPOAgent:
    """A MaskablePPO model acting greedily under ``info["action_mask"]`` (see :func:`load_ppo`)."""

    def __init__(self, model: Any, name: str = "ppo", deterministic: bool = True) -> None:
        self.model = model
        self.deterministic = deterministic
        self.name = name

    def reset(self, observation: Any, info: dict[str, Any], *, env: Any, seed: int | None) -> None:
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
    if not Path(path).is_file() and not Path(f"{path}.zip").is_file():
        raise ValueError(f"no saved model at {path!r}")
    try:
        from sb3_contrib import MaskablePPO
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ImportError(
            "evaluating a PPO model needs sb3-contrib: pip install 'meeting-gym[rl]'"
        ) from exc
    try:
        model = MaskablePPO.load(path, device="cpu")
    except (AssertionError, ValueError, KeyError, OSError, zipfile.BadZipFile) as exc:
        # SB3 reports a bad file with asserts and "Error: ..." messages: one plain reason
        reason = str(exc).removeprefix("Error: ") or type(exc).__name__
        raise ValueError(f"could not load a MaskablePPO model from {path!r}: {reason}") from exc
    return MaskablePPOAgent(model, name=f"ppo:{path}")
