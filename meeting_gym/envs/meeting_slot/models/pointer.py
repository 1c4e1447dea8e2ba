"""The pointer head over answer starts, in plain torch: shared by the SB3 and RLlib policies.

Imports torch: import this module only where training or loading a model
(``import meeting_gym`` never does). :mod:`.sb3_policy` (MaskablePPO) and
:mod:`.rllib_module` (RLlib) wrap these two pieces in their framework's policy
class; neither re-implements them.

* :func:`slot_channels`: per-start features read from the ``grid`` observation,
  ``SLOT_CHANNELS`` per answer start ``k``: ``fit[k]``, ``fit[k-1]``, any fit
  before ``k`` (a causal running max), ``in_window[k]``, the share of attendees
  available / unavailable at ``k``, ``k / S``.
* :class:`PointerHead`: logits in action-table order (tools, answer starts,
  NONE); every start is scored by one linear layer shared by all starts, plus an
  answer bias from the trunk; the NONE logit also sees ``max(fit)``.
"""

from __future__ import annotations

import math

import torch as th
from torch import nn

SLOT_CHANNELS = 7


def slot_channels(
    fit: th.Tensor,
    in_window: th.Tensor,
    available: th.Tensor,
    unavailable: th.Tensor,
    n_attendees: int,
    position: th.Tensor,
) -> th.Tensor:
    """``(batch, S, SLOT_CHANNELS)`` features of every answer start.

    ``fit`` and ``in_window`` are ``(batch, S)``; ``available`` and ``unavailable``
    ``(batch, A*S)`` attendee-major, as the ``grid`` observation has them;
    ``position`` is ``linspace(0, 1, S)``.
    """
    batch, n_slots = fit.shape
    previous = nn.functional.pad(fit, (1, 0))[:, :-1]
    before = th.cummax(previous, dim=1).values
    shape = (batch, n_attendees, n_slots)
    free = available.reshape(shape).mean(1)
    busy = unavailable.reshape(shape).mean(1)
    return th.stack(
        [fit, previous, before, in_window, free, busy, position.expand(batch, -1)], dim=2
    )


class PointerHead(nn.Module):
    """Logits in action-table order: tools, answer starts (shared scorer), NONE.

    Input: the actor's hidden features ``(batch, hidden)`` followed by the flattened
    slot channels ``(batch, S * SLOT_CHANNELS)``. The scorer's weights start at
    zero; the answer and NONE logits start ``answer_bias`` below a tool call's,
    each start counted as ``1/S`` of an answer, so a fresh policy mostly gathers
    information before it answers.
    """

    def __init__(
        self, hidden: int, n_slots: int, n_tools: int, answer_bias: float, gain: float = 10.0
    ) -> None:
        super().__init__()
        self.hidden, self.n_slots, self.n_tools, self.gain = hidden, n_slots, n_tools, gain
        self.tools = nn.Linear(hidden, n_tools + 2)  # tools, NONE, answer bias
        nn.init.orthogonal_(self.tools.weight, gain=0.01)
        nn.init.zeros_(self.tools.bias)
        with th.no_grad():  # all answers together: exp(answer_bias) times one tool call
            self.tools.bias[-2] = answer_bias
            self.tools.bias[-1] = answer_bias - math.log(n_slots)
        self.slot = nn.Linear(SLOT_CHANNELS, 1)
        nn.init.zeros_(self.slot.weight)
        nn.init.zeros_(self.slot.bias)
        self.none_fit = nn.Parameter(th.zeros(1))

    def forward(self, latent: th.Tensor) -> th.Tensor:
        h = latent[:, : self.hidden]
        slots = latent[:, self.hidden :].view(latent.shape[0], self.n_slots, SLOT_CHANNELS)
        head = self.tools(h)
        tools, none, bias = head[:, : self.n_tools], head[:, -2:-1], head[:, -1:]
        answers = bias + self.gain * self.slot(slots).squeeze(2)
        none = none + self.gain * self.none_fit * slots[:, :, 0].amax(dim=1, keepdim=True)
        return th.cat([tools, answers, none], dim=1)
