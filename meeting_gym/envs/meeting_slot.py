"""MeetingSlot-v0: find the earliest UTC start that fits every attendee."""

from __future__ import annotations

import random
from typing import Any, ClassVar

import gymnasium as gym

from meeting_gym.calendar.curated import CURATED_BY_ID
from meeting_gym.calendar.generator import DIFFICULTIES, generate
from meeting_gym.calendar.scenario import Scenario
from meeting_gym.envs.text import TextInterface
from meeting_gym.episode import Episode
from meeting_gym.prompts import SYSTEM_PROMPT, question
from meeting_gym.tools import TOOLSET

MODES = ("text",)


class MeetingSlotEnv(gym.Env):
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

    ## Observation Space (``mode="text"``)
    A string (``AnyText``, up to 65,536 characters): the question at reset,
    then the tool result (a JSON array of results for several calls) or an
    error message.

    ## Rewards
    0 until the end. The answer is graded by the rubric
    ``1.0*exact_match + 0.2*format + 0.2*partial_credit``: 1.2 for the earliest
    start, 0.3 for a valid start that is not the earliest, 0.2 for a
    well-formed wrong answer, 0 without an ``<answer>`` block.

    ## Episode End
    Terminated when an answer is given; truncated (reward 0) after
    ``max_turns`` turns without one.

    ## Information
    ``reset`` returns ``system_prompt`` (rules and the text tool-call protocol),
    ``tools`` (OpenAI function schemas), ``scenario_id``, ``difficulty`` and
    ``request`` (duration and window, as in the question). Every step returns
    ``turn``; the last one adds ``exact_match``, ``format``,
    ``partial_credit``, ``reward``, ``gold`` and ``answered``.

    ## Arguments
    ``gymnasium.make("MeetingSlot-v0", mode="text", difficulty=None, max_turns=40)``

    * ``difficulty``: ``None`` (the predecessor's 40/35/25 mix of easy, medium
      and hard), ``"easy"``, ``"medium"``, ``"hard"`` or ``"expert"``.
    * ``max_turns``: turns before truncation.
    * ``reset(options=...)`` may pass ``{"scenario": dict}``,
      ``{"scenario_id": "dst_eu_monday"}`` (a curated case) or
      ``{"difficulty": "hard"}``; otherwise a scenario is drawn from
      ``np_random``.

    ## Version History
    * v0: initial release.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(
        self,
        mode: str = "text",
        difficulty: str | None = None,
        max_turns: int = 40,
        render_mode: str | None = None,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; choose one of {MODES}")
        _check_difficulty(difficulty)
        if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1:
            raise ValueError(f"max_turns must be a positive integer, got {max_turns!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"unknown render_mode {render_mode!r}")
        self.mode = mode
        self.difficulty = difficulty
        self.max_turns = max_turns
        self.render_mode = render_mode
        self.interface = TextInterface()
        self.action_space = self.interface.action_space
        self.observation_space = self.interface.observation_space
        self.episode: Episode | None = None
        self.turns = 0
        self.transcript: list[tuple[str, str]] = []

    # ------------------------------------------------------------------ gym API

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        scenario = self._choose(options or {})
        self.episode = Episode(scenario)
        self.turns = 0
        observation = question(scenario)
        self.transcript = [("question", observation)]
        info = {
            "scenario_id": scenario.id,
            "difficulty": scenario.difficulty,
            "system_prompt": SYSTEM_PROMPT,
            "tools": TOOLSET.schemas(),
            "request": {
                "duration_minutes": scenario.duration_minutes,
                "window_start": scenario.window_start.isoformat(),
                "window_days": scenario.window_days,
            },
            "turn": 0,
        }
        return observation, info

    def step(self, action: Any) -> tuple[str, float, bool, bool, dict[str, Any]]:
        episode = self.episode
        if episode is None or episode.done or self.turns >= self.max_turns:
            raise RuntimeError("the episode is over (or never started): call reset()")
        observation, terminated = self.interface.apply(episode, action)
        self.turns += 1
        truncated = not terminated and self.turns >= self.max_turns
        self.transcript.append(("action", action if isinstance(action, str) else repr(action)))
        self.transcript.append(("observation", observation))
        info: dict[str, Any] = {"scenario_id": episode.scenario.id, "turn": self.turns}
        reward = 0.0
        if terminated or truncated:
            info.update(episode.outcome())
            reward = info["reward"]
        return observation, reward, terminated, truncated, info

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        return "\n".join(f"[{kind}] {text}" for kind, text in self.transcript) + "\n"

    # ------------------------------------------------------------------ helpers

    def _choose(self, options: dict[str, Any]) -> Scenario:
        unknown = set(options) - {"scenario", "scenario_id", "difficulty"}
        if unknown:
            raise ValueError(f"unknown reset option(s): {', '.join(sorted(unknown))}")
        if "scenario" in options:
            given = options["scenario"]
            return given if isinstance(given, Scenario) else Scenario.from_dict(given)
        if "scenario_id" in options:
            key = options["scenario_id"]
            if key not in CURATED_BY_ID:
                raise ValueError(
                    f"unknown curated scenario_id {key!r}; known: {', '.join(CURATED_BY_ID)}"
                )
            return CURATED_BY_ID[key]
        difficulty = options.get("difficulty", self.difficulty)
        _check_difficulty(difficulty)
        seed = int(self.np_random.integers(0, 2**63 - 1))
        return generate(random.Random(seed), difficulty)


def _check_difficulty(difficulty: str | None) -> None:
    if difficulty is not None and difficulty not in DIFFICULTIES:
        raise ValueError(f"unknown difficulty {difficulty!r}; choose None or one of {DIFFICULTIES}")
