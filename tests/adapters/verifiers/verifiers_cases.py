"""Hand-written completions for the verifiers parity tests (no verifiers import here).

For every curated item of MeetingSlot-v0 and CalendarMath-v0: a gold completion, a near
miss that earns partial credit (a valid start that is not the earliest; a date or count
off by one; an adjacent weekday), a malformed answer and a reply with no answer tag.
Each case is written twice by hand, independently: as the text-protocol actions
``env.step`` takes, and as the OpenAI chat messages a model sends (tool calls as native
``tool_calls``), so a test can score the same completion through the env and through a
verifiers adapter. ``expected`` is what the README's rubric says the completion earns.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

import gymnasium as gym

import meeting_gym  # noqa: F401
from meeting_gym import load_split
from meeting_gym.envs.meeting_slot.domain.solver import solve
from meeting_gym.envs.meeting_slot.domain.timeutil import format_utc

ENVS = ("MeetingSlot-v0", "CalendarMath-v0")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
Calls = tuple[tuple[str, dict[str, Any]], ...]


@dataclass(frozen=True)
class Case:
    env: str
    index: int  # in the curated split
    name: str
    turns: tuple[Calls | str, ...]  # tool calls, or a text reply
    expected: float

    @property
    def options(self) -> dict[str, Any]:
        return {"split": "curated", "index": self.index}

    @property
    def id(self) -> str:
        return f"{self.env}-{self.index}-{self.name}"

    def actions(self) -> list[str]:
        """The completion as ``env.step`` actions, in the text protocol."""
        out = []
        for turn in self.turns:
            if isinstance(turn, str):
                out.append(turn)
            else:
                blocks = [
                    f"<tool_call>{json.dumps({'name': name, 'arguments': args})}</tool_call>"
                    for name, args in turn
                ]
                out.append("\n".join(blocks))
        return out

    def messages(self) -> list[dict[str, Any]]:
        """The completion as assistant chat messages (tool calls native)."""
        out = []
        for number, turn in enumerate(self.turns):
            if isinstance(turn, str):
                out.append({"role": "assistant", "content": turn})
                continue
            calls = [
                {
                    "id": f"call_{number}_{k}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)},
                }
                for k, (name, args) in enumerate(turn)
            ]
            out.append({"role": "assistant", "content": None, "tool_calls": calls})
        return out


def env_reward(case: Case) -> tuple[float, dict[str, Any], list[str]]:
    """The completion played through ``env.step``: reward, final info, observations."""
    env = gym.make(case.env, mode="text")
    env.reset(options=case.options)
    observations = []
    for action in case.actions():
        observation, reward, terminated, truncated, info = env.step(action)
        observations.append(observation)
        if terminated or truncated:
            return reward, info, observations
    return 0.0, env.unwrapped.episode.outcome(), observations


def _meeting_slot_cases() -> list[Case]:
    cases = []
    for index, scenario in enumerate(load_split("curated", env="MeetingSlot-v0")):
        solution = solve(scenario)
        first = scenario.attendees[0].name
        day = scenario.window_start.isoformat()
        look = (
            (("list_attendees", {}),),
            (("get_timezone", {"name": first}), ("get_busy", {"name": first, "date": day})),
        )
        gold = "NONE" if solution.gold is None else format_utc(solution.gold)
        cases.append(
            Case("MeetingSlot-v0", index, "gold", (*look, f"<answer>{gold}</answer>"), 1.2)
        )
        starts = (
            ()
            if solution.gold is None
            else range(solution.gold + 60, solution.gold + 86400 * 14, 60)
        )
        later = next((t for t in starts if solution.is_valid(t)), None)
        if later is not None:  # some items have one valid minute, or none
            text = f"I think <answer>{format_utc(later)}</answer> works."
            cases.append(Case("MeetingSlot-v0", index, "valid-not-earliest", (*look, text), 0.3))
        cases.append(
            Case("MeetingSlot-v0", index, "malformed", (*look, "<answer>Monday 9am</answer>"), 0.2)
        )
        cases.append(Case("MeetingSlot-v0", index, "no-tag", (*look, f"It is {gold}."), 0.0))
    return cases


def _near_miss(gold: str) -> tuple[str, float]:
    """An answer one step from gold and the reward the rubric gives it."""
    if gold in WEEKDAYS:
        return WEEKDAYS[(WEEKDAYS.index(gold) + 1) % 7], 0.26
    try:
        day = date.fromisoformat(gold)
    except ValueError:
        return str(int(gold) + 1), 0.3
    near = day + timedelta(days=1) if day < date.max else day - timedelta(days=1)
    return near.isoformat(), 0.3


def _calendar_math_cases() -> list[Case]:
    env = gym.make("CalendarMath-v0")
    cases = []
    for index in range(len(load_split("curated", env="CalendarMath-v0"))):
        env.reset(options={"split": "curated", "index": index})
        gold = env.unwrapped.episode.gold
        miss, reward = _near_miss(gold)
        cases += [
            Case(
                "CalendarMath-v0", index, "gold", (f"Thinking.\n<answer>\n{gold}\n</answer>",), 1.2
            ),
            Case("CalendarMath-v0", index, "near-miss", (f"<answer>{miss}</answer>",), reward),
            Case("CalendarMath-v0", index, "malformed", ("<answer>the 29th</answer>",), 0.2),
            Case("CalendarMath-v0", index, "no-tag", (gold,), 0.0),
        ]
    return cases


def cases() -> list[Case]:
    """Every hand-written case of both envs, curated item by item."""
    return _meeting_slot_cases() + _calendar_math_cases()


async def zero_reward(trace: Any) -> float:
    """A reward function to plug into a verifiers task config (tests the override)."""
    return 0.0
