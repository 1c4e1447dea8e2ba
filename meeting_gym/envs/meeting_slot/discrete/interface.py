"""The discrete interface: one ``Discrete(N)`` action per tool call or answer, dict observations.

Mirrors :class:`~meeting_gym.core.text_env.TextInterface` (``action_space``,
``observation_space``, ``apply(episode, action)``) plus :meth:`begin` for the
first observation and :meth:`action_mask`. Every action goes through
``Episode.call`` or ``Episode.submit("<answer>...</answer>")``, so tool results
and the rubric are literally those of the text interface.

Malformed and masked actions never raise:

* not an integer in ``0..N-1`` (out of range, a float, a bool, an array of more
  than one element): an ``error:`` result, nothing else happens, the turn is used;
  integer numpy scalars and one-element integer arrays are read as their value;
* masked but in range: executed anyway. A repeated tool call repeats; an
  attendee slot the scenario does not fill sends the name ``#i`` and gets the
  tool's ``error:`` string; a tool called before ``list_attendees`` works as in
  text mode; an answer start outside the window is graded like any answer
  (not valid, so 0.2 for format only).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from meeting_gym.core.bounded import show
from meeting_gym.core.episode import Episode
from meeting_gym.core.spaces import coerce_action
from meeting_gym.envs.meeting_slot.discrete.actions import ActionTable
from meeting_gym.envs.meeting_slot.discrete.observations import Encoder, observation_space
from meeting_gym.envs.meeting_slot.discrete.reveal import Revealed


class DiscreteInterface:
    name = "discrete"

    def __init__(
        self,
        obs: str = "grid",
        *,
        mask_repeats: bool = True,
        max_attendees: int = 4,
        max_window_days: int = 5,
        grid_minutes: int = 15,
        max_turns: int = 40,
    ) -> None:
        self.table = ActionTable(max_attendees, max_window_days, grid_minutes)
        self.encoding = obs
        self.mask_repeats = bool(mask_repeats)
        self.max_turns = max_turns
        self.observation_space = observation_space(self.table, obs)
        self.action_space = spaces.Discrete(self.table.n)
        self.revealed: Revealed | None = None
        self.encoder: Encoder | None = None
        self.last_result: str | None = None
        self.last_action: str | None = None
        self.turns = 0
        self._mask = np.zeros(self.table.n, dtype=np.int8)
        self._allowed = np.zeros(self.table.n, dtype=np.int8)

    # ------------------------------------------------------------------ episode

    def begin(self, episode: Episode) -> dict[str, Any]:
        """Start tracking ``episode``; returns the first observation."""
        table, scenario = self.table, episode.item
        self.revealed = Revealed(scenario, table)
        self.encoder = Encoder(self.encoding, self.revealed, self.max_turns)
        self.turns = 0
        self.last_result = self.last_action = None
        self._calls: dict[int, tuple[str, Any, str]] = {}
        allowed = self._allowed
        allowed[:] = 0
        count, dates = len(scenario.attendees), scenario.window_days + 2
        allowed[0] = 1
        allowed[table.timezone_offset : table.timezone_offset + count] = 1
        allowed[table.hours_offset : table.hours_offset + count] = 1
        busy = allowed[table.busy_offset : table.answer_offset].reshape(
            table.max_attendees, table.n_dates
        )
        busy[:count, :dates] = 1
        allowed[table.answer_offset : table.answer_offset + self.revealed.window_slots] = 1
        allowed[table.none_index] = 1
        self._mask[:] = 0
        self._mask[0] = 1
        self._mask[table.answer_offset :] = allowed[table.answer_offset :]
        return self.encoder.observe(self.max_turns)

    def apply(self, episode: Episode, action: Any) -> tuple[dict[str, Any], bool]:
        """Run one action; returns (observation, terminated)."""
        rev, encoder, table = self.revealed, self.encoder, self.table
        if rev is None or encoder is None or rev.scenario is not episode.item:
            raise RuntimeError("call begin(episode) before apply()")
        self.turns += 1
        index = coerce_action(action, table.n)
        terminated = False
        if index is None:
            self.last_action = show(action)
            self.last_result = f"error: action {show(action)} is not an integer in 0..{table.n - 1}"
        else:
            if index not in self._calls:  # per-episode cache: names and dates are fixed
                kind, payload = table.call(index, episode.item)
                self._calls[index] = (kind, payload, table.describe_call(kind, payload))
            kind, payload, self.last_action = self._calls[index]
            if kind == "answer":
                episode.submit(payload)
                self.last_result = None
                terminated = True
            else:
                name, arguments = payload
                self.last_result = episode.call(name, dict(arguments))
                self._record(index, self.last_result)
        return encoder.observe(self.max_turns - self.turns), terminated

    def reset_info(self) -> dict[str, Any]:
        return {"action_mask": self.action_mask()}

    def step_info(self) -> dict[str, Any]:
        return {
            "action": self.last_action,
            "result": self.last_result,
            "action_mask": self.action_mask(),
        }

    def action_mask(self) -> np.ndarray:
        """A fresh int8 array, 1 where an action is allowed (see the module docstring)."""
        return self._mask.copy()

    def describe_action(self, index: int, episode: Episode | None) -> str:
        """Readable text for ``index``, e.g. ``get_busy(Ava, 2024-03-11)``."""
        return self.table.describe(index, None if episode is None else episode.item)

    # ------------------------------------------------------------------ helpers

    def _record(self, index: int, result: str) -> None:
        rev, table = self.revealed, self.table
        assert rev is not None and self.encoder is not None
        self.encoder.record(index)
        ok = not result.startswith("error")
        action = table.decode(index)
        if ok:
            if action.kind == "list_attendees":
                rev.reveal_list()
                self._mask[: table.n_tools] = self._allowed[: table.n_tools]
                if self.mask_repeats:
                    self._mask[: table.n_tools] &= 1 - self.encoder.called
            elif action.kind == "get_timezone":
                rev.reveal_zone(action.attendee or 0)
            elif action.kind == "get_working_hours":
                rev.reveal_hours(action.attendee or 0)
            else:
                rev.reveal_busy(action.attendee or 0, action.day or 0)
        if self.mask_repeats:
            self._mask[index] = 0
