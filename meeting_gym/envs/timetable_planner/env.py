"""TimetablePlanner-v0: build a weekly timetable under teacher, group and room constraints.

The family's text shell (:class:`~meeting_gym.core.text_env.TextEnv`) plays
:class:`~.task.TimetablePlannerTask`; this class adds the env's two interfaces over one
episode engine (discrete, the default, and text), the action masks and the pictures.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

import numpy as np

from meeting_gym.core.bounded import show
from meeting_gym.core.discrete_mode import MaskedDiscreteMode
from meeting_gym.core.spaces import AnyText
from meeting_gym.core.text_env import (
    MAX_ACTION_CHARS,
    MAX_OBSERVATION_CHARS,
    MAX_TRANSCRIPT_ENTRY_CHARS,
    TextEnv,
    clip,
    oversized,
    shorten,
)
from meeting_gym.envs.timetable_planner.discrete.interface import (
    DEFAULT_BOUNDS,
    Bounds,
    DiscreteInterface,
)
from meeting_gym.envs.timetable_planner.domain.actions import Rejected
from meeting_gym.envs.timetable_planner.task import PlannerEpisode, TimetablePlannerTask
from meeting_gym.envs.timetable_planner.tools import read_actions
from meeting_gym.envs.timetable_planner.view import reset_text, result_text, step_text

MODES = ("discrete", "text")
NOT_RUN = "error: not run: the episode ended before this action"


class TextInterface:
    """Text actions (JSON action objects or tool calls) over a :class:`~.task.PlannerEpisode`.

    One step plays every action the text holds, in order (at most 32; see
    :func:`~.tools.read_actions`), each using a unit of the budget; the step's reward is
    the sum of theirs. The observation is the state after the step
    (:func:`~.view.step_text`); for several actions, a JSON array with one string per
    action: each one's result, the last one the state (actions after the end of the
    episode are not run and say so).
    """

    name = "text"

    def __init__(self, task: TimetablePlannerTask) -> None:
        self.task = task
        self.action_space = AnyText(MAX_ACTION_CHARS)
        self.observation_space = AnyText(MAX_OBSERVATION_CHARS)
        self.last_action: str | None = None
        self.last_result: str | None = None
        self.episode: PlannerEpisode | None = None

    def begin(self, episode: PlannerEpisode) -> str:
        self.episode = episode
        self.last_action = self.last_result = None
        return clip(reset_text(episode.engine))

    def reset_info(self) -> dict[str, Any]:
        toolset = self.task.toolset
        assert toolset is not None
        return {"system_prompt": self.task.system_prompt(), "tools": toolset.schemas()}

    def step_info(self) -> dict[str, Any]:
        assert self.episode is not None
        return self.episode.step_info()

    def apply(self, episode: PlannerEpisode, action: Any) -> tuple[str, bool]:
        if episode is not self.episode:
            raise RuntimeError("call begin(episode) before apply()")
        refused = oversized(action)
        if refused is not None:  # never parsed: one malformed action (a unit of the budget)
            self.last_action = shorten(action, 1000)
            objects: list[Any] = [Rejected(refused.removeprefix("error: "))]
        else:
            # cut as the transcript keeps it: an env would otherwise hold its last action
            # whole until the next step
            self.last_action = (
                shorten(action, MAX_TRANSCRIPT_ENTRY_CHARS)
                if isinstance(action, str)
                else show(action, 1000)
            )
            objects = read_actions(action)
        results: list[str] = []
        for index, item in enumerate(objects):
            if episode.done:
                results.append(NOT_RUN)
                continue
            result = episode.play(item)
            last = index == len(objects) - 1 or episode.done
            results.append(step_text(episode.engine) if last else result_text(result))
        joined = results[0] if len(results) == 1 else json.dumps(results, ensure_ascii=False)
        self.last_result = observation = clip(joined)
        return observation, episode.engine.terminated


class TimetablePlannerEnv(MaskedDiscreteMode, TextEnv):
    """Build a weekly timetable: place class sessions at (day, start slot, room).

    ## Description
    The timetable planner ``ajay-sreeram/timetable_planner`` (the OpenEnv env this one
    succeeds), as a Gymnasium env. A scenario has teachers (available and preferred
    slots), student groups, rooms (type, capacity, available slots) and sessions (a
    teacher, a group, allowed room types, a required capacity, a duration in
    consecutive slots, whether it must be scheduled); hard and expert scenarios also
    have a baseline timetable and a disruption applied at load time. The agent assigns,
    moves, swaps and unassigns sessions, then submits. Seven sub-scores, weighted by
    difficulty, make ``overall_score`` in [0, 1] (RULES.md section 5, kept exactly,
    quirks included).

    ## Action Space (``mode="discrete"``, the default)
    ``Discrete(N)``: one index per (action type, session, day, slot, room), with
    spaces fixed at ``gym.make`` by the bounds ``max_sessions`` (S), ``max_days`` (D),
    ``max_slots`` (P), ``max_rooms`` (R): ``2*S*D*P*R`` assigns and moves, ``S*S``
    swaps, ``S`` unassigns and one submit; the defaults (25, 5, 6, 8) give
    ``N = 12651``. ``env.unwrapped.describe(a)`` prints one, e.g.
    ``assign_session(S3, Tue, 2, R1)``; :mod:`.discrete` has the layout.
    ``action_masks()`` (sb3-contrib's MaskablePPO) and ``info["action_mask"]``
    (int8) mask absent sessions and rooms, assigning a placed session, moving or
    swapping an unplaced one, a move onto itself, a swap with itself, and (medium and
    up, where these are hard constraints) a room of a wrong type or too small and a
    cell outside the teacher's or the room's availability. A masked action is still
    played if sent (the engine's error and penalty).

    ## Action Space (``mode="text"``)
    A string: the original's JSON action object ``{"action_type":
    "assign_session", "session_id": "S1", "day": 0, "start_slot": 1, "room_id":
    "R2"}`` (``day`` may be a name such as ``"Mon"``), or a tool call ``{"name":
    "assign_session", "arguments": {...}}`` (one tool per action type;
    ``info["tools"]`` has their OpenAI schemas), optionally in
    ``<tool_call>...</tool_call>``, or a JSON array of up to 32 of them played in
    order. Anything unreadable is one invalid action.

    ## Observation Space
    Discrete mode: a flat ``Dict`` of 1-D ``Box`` / ``MultiBinary`` spaces that SB3's
    ``MultiInputPolicy`` takes as is: occupancy per (teacher, group, room) x day x
    slot, availability and preference grids, session features and current spots,
    present days, slots and entities, the difficulty, the budget left, the eight
    scores, the seven conflict rates (:class:`.discrete.Encoder`). Text mode: compact
    JSON (:mod:`.view`): the problem and the state at reset, the state after each step.

    ## Rewards
    As in the original: ``reward = (score after - score before) + penalty``, the
    penalty -0.02 for an invalid action (``info["action_error"]`` says why, in the
    original's words, except that a given but invalid ``day`` or ``start_slot`` is
    named with its value and the allowed values) and -0.01 for a valid action that
    changes nothing, plus
    +0.05 on a submit whose score is at least 0.90. Every step, valid or not, uses one
    unit of the scenario's step budget.

    ## Episode End
    ``submit_timetable`` terminates (once: D3 fixed); the step that uses the last unit
    of budget truncates (a submit on the last unit terminates). After the end,
    ``step()`` raises ``RuntimeError`` until ``reset()``, as in every env of the family
    (the original answered ``step_budget_exhausted``).

    ## Information
    Reset: ``scenario_id``, ``difficulty``, ``task_name``, ``step_budget``, ``turn``;
    text mode adds ``system_prompt`` and ``tools``, discrete mode ``action_mask``.
    Every step: ``score`` (``overall_score``), ``score_breakdown`` (the eight
    scores), ``conflict_summary`` (the seven counts), ``remaining_step_budget``,
    ``outcome`` (``apply`` / ``noop`` / ``invalid``), ``action_error`` and
    ``action_penalty`` (the original's fields), ``turn``; discrete mode adds
    ``action_mask``. The last step adds each component by name, ``reward`` (the
    return), ``submitted``, ``steps``, ``invalid_actions``, ``noop_actions``,
    ``answer`` (the final score as text) and ``gold`` (the best known score: the
    solver's, for the 23 catalogue scenarios).

    ## Arguments
    ``gymnasium.make("TimetablePlanner-v0", mode="discrete", difficulty=None,
    start="initial", max_turns=None, render_mode=None, max_sessions=25,
    max_teachers=7, max_groups=7, max_rooms=8, max_days=5, max_slots=6)``

    * ``start="baseline"`` starts hard and expert scenarios from their disrupted
      baseline (the original's README); ``"initial"`` (default) from the
      scenario's ``initial_assignments``, empty in all 23, as in the original's code.
    * ``reset(seed=s)`` plays a generated scenario of the default difficulty mix
      (``load_split("train", seed=s)[0]``), each later ``reset()`` the next one;
      ``options``: ``{"scenario_id": "hard_4"}`` (any of the 23),
      ``{"difficulty": "hard"}`` (a generated one), ``{"task_name": "medium"}`` (the
      original's meaning: the first hand-crafted scenario of that difficulty),
      ``{"scenario": dict}``, or ``{"split": "generated", "index": 3}`` (splits
      ``train``, ``eval``, ``curated``: the 15 hand-crafted, ``generated``: the
      original's 8). An unknown id or difficulty raises ``ValueError`` (D7).
    * ``render_mode``: ``"ansi"`` the weekly grid as text, ``"rgb_array"`` the same
      as a picture (Pillow: ``pip install "meeting-gym[render]"``).

    ## Version History
    * v0: initial release.
    * v0, unreleased: a given but invalid ``day`` or ``start_slot`` (``"Sun"``, ``true``,
      ``0.9``) is named with its value and the allowed values in ``action_error``, not
      called missing; the reward is unchanged.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}
    modes: ClassVar[tuple[str, ...]] = MODES
    DISCRETE = DiscreteInterface
    policy_adapters: ClassVar[dict[str, str]] = {
        "discrete": "meeting_gym.envs.timetable_planner.agents:TextPolicyAdapter"
    }

    def __init__(
        self,
        mode: str = "discrete",
        difficulty: str | None = None,
        start: str = "initial",
        max_turns: int | None = None,
        render_mode: str | None = None,
        max_sessions: int = DEFAULT_BOUNDS.sessions,
        max_teachers: int = DEFAULT_BOUNDS.teachers,
        max_groups: int = DEFAULT_BOUNDS.groups,
        max_rooms: int = DEFAULT_BOUNDS.rooms,
        max_days: int = DEFAULT_BOUNDS.days,
        max_slots: int = DEFAULT_BOUNDS.slots,
        task_class: type[TimetablePlannerTask] | str = TimetablePlannerTask,
        eval_draws: str = "distinct",
    ) -> None:
        self.bounds = Bounds(max_sessions, max_teachers, max_groups, max_rooms, max_days, max_slots)
        super().__init__(
            task_class,
            mode=mode,
            max_turns=max_turns,
            render_mode=render_mode,
            eval_draws=eval_draws,
            difficulty=difficulty,
            start=start,
        )
        self.painter: Any = None
        if render_mode == "rgb_array":
            from meeting_gym.envs.timetable_planner.render.picture import Painter

            self.painter = Painter(self.bounds)

    def make_interface(self, mode: str) -> Any:
        if mode == "discrete":
            return DiscreteInterface(self.bounds)
        return TextInterface(self.task)

    # ------------------------------------------------------------------ extras

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None or self.episode is None:
            return None
        from meeting_gym.envs.timetable_planner.render.status import Status

        status = Status.of(self)
        if self.painter is not None:
            return self.painter.frame(status)
        return status.ansi()
