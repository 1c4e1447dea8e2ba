"""MeetingSlot-v0: find the earliest UTC start that fits every attendee.

The family's text shell (:class:`~meeting_gym.core.text_env.TextEnv`) plays
:class:`~.task.MeetingSlotTask`; this class adds MeetingSlot's own discrete interface
(the default mode), the action masks and the pictures of what has been revealed.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from meeting_gym.core.discrete_mode import MaskedDiscreteMode
from meeting_gym.core.text_env import TextEnv
from meeting_gym.envs.meeting_slot.discrete.actions import ActionTable
from meeting_gym.envs.meeting_slot.discrete.interface import DiscreteInterface
from meeting_gym.envs.meeting_slot.discrete.observations import ENCODINGS
from meeting_gym.envs.meeting_slot.discrete.reveal import Revealed
from meeting_gym.envs.meeting_slot.domain.generator import MAX_ATTENDEES, MAX_WINDOW_DAYS
from meeting_gym.envs.meeting_slot.domain.solver import window_bounds
from meeting_gym.envs.meeting_slot.render import ansi as draw
from meeting_gym.envs.meeting_slot.render import picture
from meeting_gym.envs.meeting_slot.task import MeetingSlotTask

MODES = ("discrete", "text")


class MeetingSlotEnv(MaskedDiscreteMode, TextEnv):
    """Find the earliest UTC start for a meeting that fits every attendee.

    ## Description
    A meeting of ``duration_minutes`` must start inside a UTC search window and
    fit every attendee's working hours on one local date while overlapping none
    of their busy blocks. Attendees, time zones, working hours and busy
    calendars are hidden behind four tools: ``list_attendees()``,
    ``get_timezone(name)``, ``get_working_hours(name)`` and
    ``get_busy(name, date)`` (``date`` is the attendee's LOCAL date). The answer
    is the earliest valid UTC start ``YYYY-MM-DDTHH:MM:SSZ`` or ``NONE``.
    Intervals are half-open; local times in a spring-forward gap never exist,
    fall-back times exist twice; no meeting crosses local midnight.

    ## Action Space (``mode="discrete"``, the default)
    ``Discrete(N)``: one index per tool call and per answer, for bounds
    ``max_attendees`` (A), ``max_window_days`` (D) and ``grid_minutes`` (G); with
    the defaults (4, 5, 15) ``N = 518``. Layout (``J = D + 2`` local dates from the
    day before the window to the day after it, ``S = D * 1440 / G`` answer starts):
    ``0`` list_attendees; ``1 + i`` get_timezone(i); ``1 + A + i``
    get_working_hours(i); ``1 + 2A + i*J + j`` get_busy(i, date j);
    ``1 + 2A + A*J + k`` answer(window start + k*G minutes); the last index
    answer(NONE). ``env.unwrapped.describe(a)`` gives readable text such as
    ``get_busy(Ava, 2024-03-11)``; :mod:`.discrete.actions` has
    the table.
    An answer is submitted as ``<answer>YYYY-MM-DDTHH:MM:SSZ</answer>``, so its
    ``format`` is always 1.

    Masks (``action_masks()`` for sb3-contrib's MaskablePPO, and
    ``info["action_mask"]``, int8): attendee tools are masked until
    ``list_attendees`` has been called and for slots beyond the attendee count;
    dates and answer starts outside the window are masked; with
    ``mask_repeats=True`` tool calls already made are masked. A masked action is
    still executed if sent (a repeat repeats; an empty attendee slot gets the
    tool's error; an answer outside the window is graded as invalid); a value
    that is not an integer in ``0..N-1`` gets an ``error:`` result and uses the
    turn. Integer numpy scalars and one-element integer arrays are accepted.

    ## Action Space (``mode="text"``)
    Any string (``AnyText``, up to 1,048,576 characters):

    * a tool call as JSON ``{"name": "get_busy", "arguments": {"name": "Ava",
      "date": "2024-03-11"}}`` (arguments may be a JSON-encoded string),
      optionally inside ``<tool_call>...</tool_call>``; several calls (a JSON
      array, or several ``<tool_call>`` blocks, at most 32) run in order in one
      turn;
    * a final answer ``<answer>2024-03-11T13:00:00Z</answer>`` (an answer
      block anywhere in the action ends the episode, even beside tool calls);
    * anything else gets an ``error:`` observation saying which forms are
      accepted, and uses the turn.

    ## Observation Space (``mode="discrete"``)
    A flat ``Dict`` of 1-D ``Box`` / ``MultiBinary`` / ``Discrete`` spaces (SB3's
    ``MultiInputPolicy`` takes it as is), chosen by ``obs=``:

    * ``"grid"`` (default): what has been revealed, on the UTC grid of the window:
      per attendee and cell ``available`` / ``unavailable`` (neither = unknown),
      ``fit`` (starts known to fit every attendee, equal to the rubric's validity
      once everything is revealed), ``in_window``;
    * ``"raw"``: the tool results in local time: ``zone`` (one-hot over
      :data:`meeting_gym.envs.meeting_slot.discrete.ZONE_VOCAB`), ``hours``, ``weekdays``, ``busy``
      (quarter-hour bitmaps of each local date), ``date_weekday``, ``day_of_year``.

    Both add ``called`` (tool actions taken), ``attendees`` (0 until listed),
    ``window_days``, ``duration`` and ``turns_left``. Details and shapes:
    :mod:`meeting_gym.envs.meeting_slot.discrete.observations`.

    ## Observation Space (``mode="text"``)
    A string (``AnyText``, up to 65,536 characters): the question at reset,
    then the tool result (a JSON array of results for several calls) or an
    error message.

    ## Rewards
    0 until the end. The answer is graded by the rubric
    ``1.0*exact_match + 0.2*format + 0.2*partial_credit``: 1.2 for the earliest
    start, 0.3 for a valid start that is not the earliest, 0.2 for any other
    ``<answer>`` block (the format term checks only that the block is there,
    as that of meeting-slot, the verifiers environment this one succeeds, did:
    ``<answer>tomorrow</answer>`` earns it), 0 without an ``<answer>`` block.

    ## Episode End
    Terminated when an answer is given; truncated (reward 0) after
    ``max_turns`` turns without one. After the end, ``step()`` raises
    ``RuntimeError`` until ``reset()``, as in every env of the family.

    ## Information
    ``reset`` returns ``scenario_id``, ``difficulty`` and ``request`` (duration
    and window, as in the question); in text mode also ``system_prompt`` (rules
    and the text tool-call protocol) and ``tools`` (OpenAI function schemas).
    Every step returns ``scenario_id`` and ``turn``; the last one adds
    ``exact_match``, ``format``, ``partial_credit``, ``reward``, ``gold``,
    ``answer`` (the answer block's content) and ``answered``. In discrete mode
    reset and every step also return ``action_mask`` (a fresh int8 array), and
    steps return ``action`` (readable text) and ``result`` (the tool's string
    result, an ``error:`` string, or None for an answer).

    ## Arguments
    ``gymnasium.make("MeetingSlot-v0", mode="discrete", obs="grid", difficulty=None,
    max_turns=40, mask_repeats=True, max_attendees=4, max_window_days=5,
    grid_minutes=15, render_mode=None)``

    * ``mode``: ``"discrete"`` or ``"text"``; ``obs``: ``"grid"`` or ``"raw"``
      (discrete mode only). ``mask_repeats`` and the bounds shape the action
      table; a scenario beyond the bounds is refused at reset in discrete mode.
    * ``render_mode``: ``"rgb_array"`` returns a frame (Pillow; a constant size
      set by ``max_attendees``) of what the episode has revealed on a UTC axis:
      one row per attendee (name, zone and hours once revealed), free / busy /
      outside working hours / not revealed yet, the starts known to fit
      everyone, the answer and, at the end, gold as labelled markers, a legend,
      the turn, the last call and its result, and the reward terms at the end
      (:mod:`.picture`); ``"human"`` shows that frame in a
      pygame window, updated on every step and reset at ``render_fps``;
      ``"ansi"`` prints a text grid (after the transcript in text mode). Both
      frame modes need ``pip install "meeting-gym[render]"``.

    * ``difficulty``: ``None`` (meeting-slot's 40/35/25 mix of easy, medium
      and hard), ``"easy"``, ``"medium"``, ``"hard"`` or ``"expert"``.
    * ``max_turns``: turns before truncation.
    * ``reset(seed=s)`` plays ``load_split("train", seed=s)[0]`` and each
      following ``reset()`` the next training scenario (never a held-out
      ``eval`` or a curated one). ``reset(options=...)`` may pass
      ``{"split": "eval", "index": 7}`` (plus ``"split_seed"``) for that split
      item, ``{"scenario": dict}`` or ``{"item": dict}`` for a scenario of your
      own, ``{"scenario_id": "dst_eu_monday"}`` for a curated case, or
      ``{"difficulty": "hard"}`` for the next draw.

    ## Registered Configurations
    * ``MeetingSlot-v0``: discrete actions, ``grid`` observations.
    * ``MeetingSlot-Raw-v0``: discrete actions, ``raw`` observations.
    Text mode is ``gymnasium.make("MeetingSlot-v0", mode="text")``. No
    ``TimeLimit`` is added: the env truncates after ``max_turns`` itself.

    ## Version History
    * v0: initial release. (Package 0.2.0 moved it behind the family's Task seam:
      the same spaces, rules and rubric; scenarios for a seed now come from the
      train split's map, so a seed draws other scenarios than in 0.1.0.)
    """

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi", "rgb_array", "human"],
        "render_fps": 4,
    }
    modes: ClassVar[tuple[str, ...]] = MODES
    DISCRETE = DiscreteInterface
    policy_adapters: ClassVar[dict[str, str]] = {
        "discrete": "meeting_gym.envs.meeting_slot.agents:TextPolicyAdapter"
    }

    @classmethod
    def make_kwargs_for(cls, observation_space: Any) -> dict[str, Any]:
        """``obs="raw"`` for a model trained on the raw encoding (it has a ``zone`` entry)."""
        spaces = getattr(observation_space, "spaces", {})
        return {"obs": "raw" if "zone" in set(spaces) else "grid"}

    def __init__(
        self,
        mode: str = "discrete",
        difficulty: str | None = None,
        max_turns: int = 40,
        render_mode: str | None = None,
        obs: str = "grid",
        mask_repeats: bool = True,
        max_attendees: int = MAX_ATTENDEES,
        max_window_days: int = MAX_WINDOW_DAYS,
        grid_minutes: int = 15,
        task_class: type[MeetingSlotTask] | str = MeetingSlotTask,
        eval_draws: str = "distinct",
    ) -> None:
        if obs not in ENCODINGS:
            raise ValueError(f"unknown obs {obs!r}; choose one of {ENCODINGS}")
        self.obs = obs
        self._discrete_args = {
            "mask_repeats": mask_repeats,
            "max_attendees": max_attendees,
            "max_window_days": max_window_days,
            "grid_minutes": grid_minutes,
        }
        super().__init__(
            task_class,
            mode=mode,
            max_turns=max_turns,
            render_mode=render_mode,
            eval_draws=eval_draws,
            difficulty=difficulty,
        )
        self._seen: Revealed | None = None
        self._seen_calls = 0
        # rgb_array and human frames (Pillow, and pygame for the window: imported only here)
        self.painter = picture.Painter() if render_mode in ("rgb_array", "human") else None
        self.human_window = picture.Window() if render_mode == "human" else None

    def make_interface(self, mode: str) -> Any:
        if mode == "discrete":
            return DiscreteInterface(self.obs, max_turns=self.max_turns, **self._discrete_args)
        return super().make_interface(mode)

    # ------------------------------------------------------------------ gym API

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        self._seen, self._seen_calls = None, 0
        result = super().reset(seed=seed, options=options)
        if self.render_mode == "human":
            self.render()
        return result

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        result = super().step(action)
        if self.render_mode == "human":
            self.render()
        return result

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None or self.episode is None:
            return None
        seen, answer, gold = self._picture()
        if self.painter is not None:
            status = picture.Status.of(
                self.episode, self.turns, self.max_turns, self.transcript, self.mode
            )
            frame = self.painter.frame(seen, status)
            if self.human_window is None:
                return frame
            self.human_window.show(frame, self.metadata["render_fps"])
            return None
        grid = draw.ansi(seen, answer, gold)
        if isinstance(self.interface, DiscreteInterface):
            interface = self.interface
            if interface.last_action is None:
                return grid
            result = "" if interface.last_result is None else f" -> {interface.last_result[:80]}"
            return f"turn {self.turns}: {interface.last_action}{result}\n{grid}"
        return "\n".join(f"[{kind}] {text}" for kind, text in self.transcript) + "\n\n" + grid

    def close(self) -> None:
        if self.human_window is not None:
            self.human_window.close()

    # ------------------------------------------------------------------ helpers

    def _picture(self) -> tuple[Revealed, int | None, int | None]:
        """The revealed state to draw, the answer cell and (at the end) the gold cell."""
        episode = self.episode
        assert episode is not None
        scenario = episode.item
        if isinstance(self.interface, DiscreteInterface):
            assert self.interface.revealed is not None
            seen, table = self.interface.revealed, self.interface.table
        else:
            if self._seen is None:
                table = ActionTable(
                    max(MAX_ATTENDEES, len(scenario.attendees)),
                    max(MAX_WINDOW_DAYS, scenario.window_days),
                )
                self._seen, self._seen_calls = Revealed(scenario, table), 0
            seen, table = self._seen, self._seen.table
            for name, arguments, result in episode.calls[self._seen_calls :]:
                seen.reveal_call(name, arguments, result)
            self._seen_calls = len(episode.calls)

        def cell(text: str | None) -> int | None:
            if text is None:
                return None
            index = table.encode_answer(text, scenario)
            if index is None:
                return None
            return -1 if index == table.none_index else index - table.answer_offset

        answer = cell(episode.answer)
        gold = None
        if episode.done or self.turns >= self.max_turns:
            solution_gold = episode.truth.gold
            if solution_gold is None:
                gold = -1
            else:
                offset = solution_gold - window_bounds(scenario)[0]
                gold = offset // table.grid_seconds
        return seen, answer, gold
