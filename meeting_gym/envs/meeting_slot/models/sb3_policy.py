"""A MaskablePPO policy for the ``grid`` observations with a pointer head over answer starts.

Imports torch and sb3-contrib: import this module only where training or
loading a model (``import meeting_gym`` never does).

A plain MLP must squeeze the 480 answer starts through a 64-unit layer and back,
which it cannot do, so it cannot learn "answer the earliest start that fits".
:class:`PointerPolicy` keeps stable-baselines3's MLP trunk (flattened observation
-> 64 -> 64, separate actor and critic) for the tool and NONE logits, and scores
every answer start ``k`` with one linear layer shared by all starts, over
per-start features read from the observation (:mod:`.pointer` has both pieces,
shared with the RLlib module :mod:`.rllib_module`):

    fit[k], fit[k-1], any fit before k (a causal running max), in_window[k],
    the share of attendees available / unavailable at k, k / S

plus an answer bias from the trunk; the NONE logit also sees ``max(fit)``. The
scorer's weights start at zero (which features matter, and that earlier is
better, is learnt from the rubric's reward). Exploration prior: the answer and
NONE logits start ``answer_bias`` (default -6) below a tool call's, each start
counted as ``1/S`` of an answer, so a fresh policy mostly gathers information
before it answers. That prior only speeds things up a little (with
``answer_bias=0`` a 150k-step run reaches 1.2 as well); the shared scorer is what
a plain MLP lacks (it stays at 0.27, answering NONE at once).
"""

from __future__ import annotations

from typing import Any

import torch as th
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableMultiInputActorCriticPolicy
from stable_baselines3.common.preprocessing import get_flattened_obs_dim
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

from meeting_gym.envs.meeting_slot.models.pointer import SLOT_CHANNELS, PointerHead, slot_channels

__all__ = ["SLOT_CHANNELS", "PointerExtractor", "PointerHead", "PointerPolicy", "PointerTrunk"]


class PointerExtractor(BaseFeaturesExtractor):
    """Features = [all keys flattened (sorted key order)] + [per-start channels, S x C]."""

    def __init__(self, observation_space: spaces.Dict) -> None:
        flat = sum(get_flattened_obs_dim(space) for space in observation_space.spaces.values())
        self.n_slots = observation_space["fit"].shape[0]
        self.n_attendees = observation_space["available"].shape[0] // self.n_slots
        super().__init__(observation_space, features_dim=flat + self.n_slots * SLOT_CHANNELS)
        self.flat_dim = flat
        self.register_buffer("position", th.linspace(0.0, 1.0, self.n_slots), persistent=False)

    def forward(self, observations: dict[str, th.Tensor]) -> th.Tensor:
        flat = th.cat([observations[k].flatten(1) for k in sorted(observations)], dim=1)
        slots = slot_channels(
            observations["fit"],
            observations["in_window"],
            observations["available"],
            observations["unavailable"],
            self.n_attendees,
            self.position,
        )
        return th.cat([flat, slots.flatten(1)], dim=1)


class PointerTrunk(nn.Module):
    """Actor and critic MLPs over the flat part; the actor latent carries the slot channels."""

    def __init__(self, flat_dim: int, slot_dim: int, hidden: int, activation: type[nn.Module]):
        super().__init__()
        self.flat_dim = flat_dim
        self.latent_dim_pi = hidden + slot_dim
        self.latent_dim_vf = hidden

        def mlp() -> nn.Sequential:
            return nn.Sequential(
                nn.Linear(flat_dim, hidden), activation(), nn.Linear(hidden, hidden), activation()
            )

        self.policy_net = mlp()
        self.value_net = mlp()

    def forward(self, features: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: th.Tensor) -> th.Tensor:
        flat, slots = features[:, : self.flat_dim], features[:, self.flat_dim :]
        return th.cat([self.policy_net(flat), slots], dim=1)

    def forward_critic(self, features: th.Tensor) -> th.Tensor:
        return self.value_net(features[:, : self.flat_dim])


class PointerPolicy(MaskableMultiInputActorCriticPolicy):
    """``MaskablePPO(PointerPolicy, env)`` for ``MeetingSlot-v0`` (``obs="grid"``)."""

    def __init__(
        self, *args: Any, hidden: int = 64, answer_bias: float = -6.0, **kwargs: Any
    ) -> None:
        self.hidden = hidden
        self.answer_bias = answer_bias
        kwargs.setdefault("features_extractor_class", PointerExtractor)
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        extractor = self.features_extractor
        assert isinstance(extractor, PointerExtractor)
        slot_dim = extractor.features_dim - extractor.flat_dim
        self.mlp_extractor = PointerTrunk(
            extractor.flat_dim, slot_dim, self.hidden, self.activation_fn
        )

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        extractor = self.features_extractor
        assert isinstance(extractor, PointerExtractor)
        n_slots = extractor.n_slots
        n_tools = int(self.action_space.n) - n_slots - 1
        self.action_net = PointerHead(self.hidden, n_slots, n_tools, self.answer_bias)
        self.optimizer = self.optimizer_class(
            self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs
        )

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data["hidden"] = self.hidden
        data["answer_bias"] = self.answer_bias
        return data
