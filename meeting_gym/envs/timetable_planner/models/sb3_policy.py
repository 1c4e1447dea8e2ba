"""A MaskablePPO policy for TimetablePlanner's discrete mode: a shared scorer over spots.

Imports torch and sb3-contrib: import this module only where training or loading a model
(``import meeting_gym`` never does).

Twelve thousand actions are too many for a plain MLP head: it would have to pass, for
every (session, day, slot, room), whether that spot clashes through a 64-unit layer.
:class:`SpotPolicy` keeps stable-baselines3's trunk (all observation keys flattened ->
64 -> 64, separate actor and critic) for what depends on the whole state (a bias per
action type, a bias per session to place, the submit logit) and scores every assign and
move ``(s, d, t, r)`` with one set of weights shared by all spots (one set for assigns,
one for moves) over features computed from the observation:

* the load of the session's teacher, group and room on the cells it would occupy,
  counting other sessions only (its own place is taken out), and whether that is zero
  (a clean spot);
* whether every cell is in the teacher's preferred slots; whether it is the session's
  baseline spot; the room's ``room_fit`` value for the session;
* how crowded the day is compared with the others (daily balance), and whether the
  teacher or the group has a session right before or after (compactness) or any
  session that day;
* for moves, how much the session clashes where it is now.

Swaps score the two sessions' current clashes, unassigns the session's clash and its
must_schedule flag. Every weight starts at zero, so a fresh policy is the masked random
policy; what matters is learnt from the env's reward alone.
"""

from __future__ import annotations

from typing import Any

import torch as th
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableMultiInputActorCriticPolicy
from stable_baselines3.common.preprocessing import get_flattened_obs_dim
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

SPOT_FEATURES = 12


class FlatExtractor(BaseFeaturesExtractor):
    """Every observation key flattened, in sorted key order (SB3's own layout)."""

    def __init__(self, observation_space: spaces.Dict) -> None:
        self.keys = sorted(observation_space.spaces)
        self.sizes = [get_flattened_obs_dim(observation_space[k]) for k in self.keys]
        super().__init__(observation_space, features_dim=sum(self.sizes))

    def forward(self, observations: dict[str, th.Tensor]) -> th.Tensor:
        return th.cat([observations[k].float().flatten(1) for k in self.keys], dim=1)


class Trunk(nn.Module):
    """Actor and critic MLPs; the actor latent also carries the raw observation."""

    def __init__(self, flat_dim: int, hidden: int, activation: type[nn.Module]) -> None:
        super().__init__()
        self.latent_dim_pi = hidden + flat_dim
        self.latent_dim_vf = hidden

        def mlp() -> nn.Sequential:
            return nn.Sequential(
                nn.Linear(flat_dim, hidden), activation(), nn.Linear(hidden, hidden), activation()
            )

        self.policy_net, self.value_net = mlp(), mlp()

    def forward(self, features: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: th.Tensor) -> th.Tensor:
        return th.cat([self.policy_net(features), features], dim=1)

    def forward_critic(self, features: th.Tensor) -> th.Tensor:
        return self.value_net(features)


def _shift(x: th.Tensor, by: int = 1) -> th.Tensor:
    """x[..., p + by] at p (zero past the end; negative ``by`` looks back)."""
    out = th.zeros_like(x)
    if by > 0:
        out[..., :-by] = x[..., by:]
    else:
        out[..., -by:] = x[..., :by]
    return out


class SpotHead(nn.Module):
    """Logits in action-table order (see the module docstring)."""

    def __init__(
        self, hidden: int, keys: list[str], sizes: list[int], bounds: dict[str, int], gain: float
    ):
        super().__init__()
        self.hidden, self.gain = hidden, gain
        self.b = bounds
        offsets, start = {}, hidden
        for key, size in zip(keys, sizes, strict=True):
            offsets[key] = (start, start + size)
            start += size
        self.offsets = offsets
        s = bounds["sessions"]
        self.types = nn.Linear(hidden, 5)  # assign, move, swap, unassign biases; submit
        self.session = nn.Linear(hidden, s)  # which session to place next
        for layer in (self.types, self.session):
            nn.init.zeros_(layer.weight)
            nn.init.zeros_(layer.bias)
        self.assign_w = nn.Parameter(th.zeros(SPOT_FEATURES))
        self.move_w = nn.Parameter(th.zeros(SPOT_FEATURES + 1))
        self.swap_w = nn.Parameter(th.zeros(1))
        self.unassign_w = nn.Parameter(th.zeros(2))

    def part(self, latent: th.Tensor, key: str, *shape: int) -> th.Tensor:
        a, b = self.offsets[key]
        return latent[:, a:b].reshape(latent.shape[0], *shape)

    def forward(self, latent: th.Tensor) -> th.Tensor:
        f = self.features(latent)
        batch, h = latent.shape[0], latent[:, : self.hidden]
        t_clash, g_clash, r_clash, clean = f["t_clash"], f["g_clash"], f["r_clash"], f["clean"]
        fit_r = f["fit"][:, :, :, None, None]
        clean_fit = clean * fit_r
        current, must = f["current"], f["must"]

        def score(weights: th.Tensor) -> th.Tensor:
            w = weights * self.gain
            # what does not depend on the room first, on the smaller tensor
            no_room = (
                (w[0] + w[4]) * t_clash
                + (w[1] + w[4]) * g_clash
                + w[5] * f["preferred"]
                + w[8] * f["crowded"][:, None, :, None]
                + w[9] * f["adjacent"]
                + w[10] * f["same_day"]
            )
            by_room = (
                (w[2] + w[4]) * r_clash
                + w[3] * clean
                + w[6] * f["baseline"]
                + w[7] * fit_r
                + w[11] * clean_fit
            )
            return no_room[:, :, None] + by_room  # b s r d p

        types = self.types(h)
        assign = score(self.assign_w) + self.session(h)[:, :, None, None, None]
        move = score(self.move_w[:SPOT_FEATURES])
        move = move + (self.gain * self.move_w[SPOT_FEATURES] * current)[:, :, None, None, None]
        assign = assign + types[:, 0, None, None, None, None]
        move = move + types[:, 1, None, None, None, None]
        # action-table order: (s, d, p, r)
        assign = assign.permute(0, 1, 3, 4, 2).reshape(batch, -1)
        move = move.permute(0, 1, 3, 4, 2).reshape(batch, -1)
        swap = self.gain * self.swap_w * (current[:, :, None] + current[:, None, :])
        swap = swap.reshape(batch, -1) + types[:, 2:3]
        unassign = self.gain * (self.unassign_w[0] * current + self.unassign_w[1] * must)
        unassign = unassign + types[:, 3:4]
        return th.cat([assign, move, swap, unassign, types[:, 4:5]], dim=1)

    def features(self, latent: th.Tensor) -> dict[str, th.Tensor]:
        """The per-spot features (``b s d p``, or ``b s r d p`` where the room matters)."""
        b = self.b
        big_s, n_t, n_g, n_r = b["sessions"], b["teachers"], b["groups"], b["rooms"]
        n_d, n_p = b["days"], b["slots"]
        ses = self.part(latent, "sessions", big_s, -1)
        spot = self.part(latent, "session_spot", big_s, 1 + n_d + n_p + n_r)
        teacher_load = self.part(latent, "teacher_load", n_t, n_d, n_p)
        group_load = self.part(latent, "group_load", n_g, n_d, n_p)
        room_load = self.part(latent, "room_load", n_r, n_d, n_p)
        preferred = self.part(latent, "teacher_preferred", n_t, n_d, n_p)

        must = ses[:, :, 1]
        two = (ses[:, :, 2] > 0).float()[:, :, None, None]  # duration 2
        col = 3
        teacher = ses[:, :, col : col + n_t]
        col += n_t
        group = ses[:, :, col : col + n_g]
        col += n_g
        fit = ses[:, :, col : col + n_r]
        col += n_r
        base_day = ses[:, :, col : col + n_d]
        base_slot = ses[:, :, col + n_d : col + n_d + n_p]
        base_room = ses[:, :, col + n_d + n_p : col + n_d + n_p + n_r]
        placed = spot[:, :, 0]
        day = spot[:, :, 1 : 1 + n_d]
        slot = spot[:, :, 1 + n_d : 1 + n_d + n_p]
        room = spot[:, :, 1 + n_d + n_p :]

        # the cells each session occupies now, and the loads of the others
        cover = slot + two[:, :, :, 0] * _shift(slot, -1)
        own = placed[:, :, None, None] * day[:, :, :, None] * cover[:, :, None, :]
        t_load = th.einsum("bst,btdp->bsdp", teacher, teacher_load) - own
        g_load = th.einsum("bsg,bgdp->bsdp", group, group_load) - own
        r_load = room_load[:, None] - own[:, :, None] * room[:, :, :, None, None]

        def window(x: th.Tensor, length: th.Tensor) -> th.Tensor:
            return x + length * _shift(x)

        t_clash = window(t_load, two)  # b s d p
        g_clash = window(g_load, two)
        r_clash = window(r_load, two[:, :, None])  # b s r d p
        clean = ((t_clash + g_clash)[:, :, None] + r_clash < 0.5).float()
        pref = th.einsum("bst,btdp->bsdp", teacher, preferred)
        pref = pref * (1 - two + two * _shift(pref))
        baseline = base_day[:, :, None, :, None] * base_slot[:, :, None, None, :]
        baseline = baseline * base_room[:, :, :, None, None]
        per_day = (placed[:, :, None] * day).sum(1)  # b d
        count = placed.sum(1, keepdim=True).clamp(min=1.0)
        crowded = (per_day - count / n_d) / count
        t_busy = (t_load > 0.5).float()
        g_busy = (g_load > 0.5).float()
        after = two * _shift(t_busy, 2) + (1 - two) * _shift(t_busy, 1)
        g_after = two * _shift(g_busy, 2) + (1 - two) * _shift(g_busy, 1)
        adjacent = _shift(t_busy, -1) + after + _shift(g_busy, -1) + g_after
        same_day = (t_busy.amax(-1) + g_busy.amax(-1))[:, :, :, None]
        current = (own * (t_load + g_load)).sum((2, 3)) + (
            own[:, :, None] * r_load * room[:, :, :, None, None]
        ).sum((2, 3, 4))

        return {
            "t_clash": t_clash,
            "g_clash": g_clash,
            "r_clash": r_clash,
            "clean": clean,
            "preferred": pref,
            "baseline": baseline,
            "fit": fit,
            "crowded": crowded,
            "adjacent": adjacent,
            "same_day": same_day,
            "current": current,
            "must": must,
        }


class SpotPolicy(MaskableMultiInputActorCriticPolicy):
    """``MaskablePPO(SpotPolicy, env, policy_kwargs={"bounds": ...})`` for TimetablePlanner-v0.

    ``bounds`` are the env's (``dict(vars(env.unwrapped.bounds))``); ``gain`` scales the
    shared weights' learning rate relative to the trunk's.
    """

    def __init__(
        self,
        *args: Any,
        bounds: dict[str, int] | None = None,
        hidden: int = 64,
        gain: float = 5.0,
        **kwargs: Any,
    ) -> None:
        if bounds is None:
            raise ValueError("SpotPolicy needs the env's bounds: policy_kwargs={'bounds': ...}")
        self.bounds, self.hidden, self.gain = dict(bounds), hidden, gain
        kwargs.setdefault("features_extractor_class", FlatExtractor)
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        extractor = self.features_extractor
        assert isinstance(extractor, FlatExtractor)
        self.mlp_extractor = Trunk(extractor.features_dim, self.hidden, self.activation_fn)

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        extractor = self.features_extractor
        assert isinstance(extractor, FlatExtractor)
        self.action_net = SpotHead(
            self.hidden, extractor.keys, extractor.sizes, self.bounds, self.gain
        )
        self.optimizer = self.optimizer_class(
            self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs
        )

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data.update(bounds=self.bounds, hidden=self.hidden, gain=self.gain)
        return data
