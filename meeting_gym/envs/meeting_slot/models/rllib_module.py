"""An RLlib RLModule for MeetingSlot's ``grid`` observations: the pointer head, masks applied.

Imports Ray RLlib and torch (``pip install "meeting-gym[rllib]"``): import this module
only where training or loading a model.

:class:`PointerRLModule` is the RLlib counterpart of the SB3
:class:`~meeting_gym.envs.meeting_slot.models.sb3_policy.PointerPolicy`, built from the same
pieces (:mod:`.pointer`): separate actor and critic MLPs over the flat observation
(-> 64 -> 64, tanh, orthogonal initialisation as in SB3), and the
:class:`~.pointer.PointerHead` that scores every answer start with one linear layer
shared by all starts over :func:`~.pointer.slot_channels`. Its observation is the
``{"action_mask", "observations"}`` of :mod:`meeting_gym.core.masked`;
the per-key slices of the flat vector come in ``model_config["layout"]``
(:func:`pointer_spec` fills it in). Masked actions get the logit ``FLOAT_MIN``
added, as in RLlib's own ``ActionMaskingTorchRLModule``, so they are never sampled.
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import torch as th
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.utils.torch_utils import FLOAT_MIN
from torch import nn

from meeting_gym.core.masked import MASK, OBSERVATIONS, MaskedObservation
from meeting_gym.envs.meeting_slot.models.pointer import PointerHead, slot_channels


def mask_logits(logits: th.Tensor, mask: th.Tensor) -> th.Tensor:
    """``logits`` with ``FLOAT_MIN`` added where ``mask`` is 0 (RLlib's masking rule)."""
    return logits + th.clamp(th.log(mask), min=FLOAT_MIN)


def _mlp(inputs: int, hidden: int) -> nn.Sequential:
    net = nn.Sequential(nn.Linear(inputs, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
    for layer in net:
        if isinstance(layer, nn.Linear):  # SB3's ortho_init for the MLP trunk
            nn.init.orthogonal_(layer.weight, gain=math.sqrt(2))
            nn.init.zeros_(layer.bias)
    return net


class PointerRLModule(TorchRLModule, ValueFunctionAPI):
    """PPO-ready module: masked pointer logits for the actor, an MLP value for the critic.

    ``model_config``: ``layout`` (required: ``{key: (start, stop)}`` of the flat
    observation), ``hidden`` (64), ``answer_bias`` (-6.0).
    """

    def setup(self) -> None:
        config = self.model_config
        layout = {key: tuple(span) for key, span in config["layout"].items()}
        hidden = int(config.get("hidden", 64))
        flat = int(self.observation_space[OBSERVATIONS].shape[0])
        n_actions = int(self.action_space.n)
        self.slices = {key: slice(*layout[key]) for key in layout}
        n_slots = layout["fit"][1] - layout["fit"][0]
        self.n_attendees = (layout["available"][1] - layout["available"][0]) // n_slots
        self.hidden = hidden
        self.policy_net = _mlp(flat, hidden)
        self.value_net = _mlp(flat, hidden)
        self.value_head = nn.Linear(hidden, 1)
        nn.init.orthogonal_(self.value_head.weight, gain=1.0)
        nn.init.zeros_(self.value_head.bias)
        n_tools = n_actions - n_slots - 1
        self.head = PointerHead(hidden, n_slots, n_tools, float(config.get("answer_bias", -6.0)))
        self.register_buffer("position", th.linspace(0.0, 1.0, n_slots), persistent=False)

    def _logits(self, obs: dict[str, th.Tensor]) -> th.Tensor:
        flat, s = obs[OBSERVATIONS], self.slices
        slots = slot_channels(
            flat[:, s["fit"]],
            flat[:, s["in_window"]],
            flat[:, s["available"]],
            flat[:, s["unavailable"]],
            self.n_attendees,
            self.position,
        )
        latent = th.cat([self.policy_net(flat), slots.flatten(1)], dim=1)
        return mask_logits(self.head(latent), obs[MASK])

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return {Columns.ACTION_DIST_INPUTS: self._logits(batch[Columns.OBS])}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> th.Tensor:
        flat = batch[Columns.OBS][OBSERVATIONS]
        return self.value_head(self.value_net(flat)).squeeze(-1)


def pointer_spec(
    env_id: str = "MeetingSlot-v0",
    *,
    hidden: int = 64,
    answer_bias: float = -6.0,
    **env_kwargs: Any,
) -> RLModuleSpec:
    """The spec of a :class:`PointerRLModule` for ``env_id``: spaces and layout read from the env.

    ``spec.build()`` gives a module on its own (for tests, or to load weights into).
    """
    env_kwargs.pop("curriculum", None)  # what items are drawn, not the spaces
    env = MaskedObservation(gym.make(env_id, mode="discrete", **env_kwargs))
    try:
        layout = env.layout
        observation_space, action_space = env.observation_space, env.action_space
        if "fit" not in layout:
            raise ValueError(f"the pointer module needs grid observations; {env_id} has none")
    finally:
        env.close()
    return RLModuleSpec(
        module_class=PointerRLModule,
        observation_space=observation_space,
        action_space=action_space,
        model_config={
            "layout": {key: list(span) for key, span in layout.items()},
            "hidden": hidden,
            "answer_bias": answer_bias,
        },
    )
