"""MeetingSlot's reference policies, acting through the text interface: gold, naive, random.

A policy sees only what an agent sees: the question's ``request`` (duration and
window, as stated in the question) and the tool results. ``gold`` rebuilds the
world from the tools and solves it (``gold-worked`` also writes its steps, a worked
solution, before the answer); ``naive`` does the same but reads every local
clock as UTC and counts a busy block's end minute as busy (the baseline of
meeting-slot, the verifiers environment MeetingSlot succeeds); ``random`` calls
random tools and answers a random grid start.
"""

from __future__ import annotations

import json
from datetime import date, timedelta
from typing import Any

from meeting_gym.core.policy import Policy
from meeting_gym.core.policy import RandomPolicy as BaseRandomPolicy
from meeting_gym.core.protocol import format_answer, format_tool_call
from meeting_gym.envs.meeting_slot.domain.scenario import Scenario
from meeting_gym.envs.meeting_slot.domain.solver import solve
from meeting_gym.envs.meeting_slot.domain.timeutil import (
    format_hm,
    format_utc,
    parse_hm,
    utc_midnight,
)
from meeting_gym.envs.meeting_slot.domain.worked import worked_solution


def _dates(request: dict[str, Any]) -> list[str]:
    """Local dates that can hold a start in the window: the day before to the day after."""
    first = date.fromisoformat(request["window_start"]) - timedelta(days=1)
    return [(first + timedelta(days=i)).isoformat() for i in range(request["window_days"] + 2)]


class _Gatherer(Policy):
    """Queries every tool the answer depends on, one attendee per turn, then solves."""

    def reset(
        self, observation: str, info: dict[str, Any], seed: int | None = None, *, env: Any = None
    ) -> None:
        self.request = dict(info["request"])
        self.names: list[str] | None = None
        self.people: list[dict[str, Any]] = []
        self.pending: str | None = None

    def act(self, observation: str, info: dict[str, Any] | None = None) -> str:
        try:
            return self._act(observation)
        except (ValueError, KeyError, TypeError):  # a tool said something unexpected
            return format_answer("NONE")

    def _act(self, observation: str) -> str:
        if self.pending == "names":
            self.names = list(json.loads(observation))
        elif self.pending is not None:
            self._record(self.pending, json.loads(observation))
        if self.names is None:
            self.pending = "names"
            return format_tool_call("list_attendees", {})
        if len(self.people) < len(self.names):
            name = self.names[len(self.people)]
            self.pending = name
            calls = [
                {"name": "get_timezone", "arguments": {"name": name}},
                {"name": "get_working_hours", "arguments": {"name": name}},
            ]
            calls += [
                {"name": "get_busy", "arguments": {"name": name, "date": day}}
                for day in _dates(self.request)
            ]
            return json.dumps(calls)
        return self.final(self.people)

    def final(self, people: list[dict[str, Any]]) -> str:
        """The last turn: the answer block."""
        return format_answer(self.solve(people))

    def _record(self, name: str, results: list[str]) -> None:
        zone, hours = results[0], json.loads(results[1])
        days = _dates(self.request)
        busy = {day: json.loads(text) for day, text in zip(days, results[2:], strict=True)}
        self.people.append(
            {
                "name": name,
                "timezone": zone,
                "working_hours": {k: hours[k] for k in ("start", "end", "weekdays")},
                "busy": {day: blocks for day, blocks in busy.items() if blocks},
            }
        )

    def world(self, people: list[dict[str, Any]]) -> dict[str, Any]:
        return {**self.request, "world": {"attendees": people}}

    def solve(self, people: list[dict[str, Any]]) -> str:
        gold = solve(Scenario.from_dict(self.world(people))).gold
        return "NONE" if gold is None else format_utc(gold)


class GoldPolicy(_Gatherer):
    name = "gold"


class WorkedGoldPolicy(_Gatherer):
    """gold, whose last turn writes its work before the answer (a worked solution)."""

    name = "gold-worked"

    def final(self, people: list[dict[str, Any]]) -> str:
        work = worked_solution(Scenario.from_dict(self.world(people)))
        return f"{work}\n{format_answer(self.solve(people))}"


class NaivePolicy(_Gatherer):
    """Treats every local clock as UTC; a busy block also blocks its end minute."""

    name = "naive"

    def solve(self, people: list[dict[str, Any]]) -> str:
        naive = []
        for person in people:
            busy = {
                day: [
                    {
                        "start": b["start"],
                        "end": format_hm(min(1440, parse_hm(b["end"], allow_24=True) + 1)),
                    }
                    for b in blocks
                ]
                for day, blocks in person["busy"].items()
            }
            naive.append({**person, "timezone": "UTC", "busy": busy})
        return super().solve(naive)


class RandomPolicy(BaseRandomPolicy):
    """Random tool calls; answers a random 15-minute start (or NONE) with probability 1/4."""

    def reset(
        self, observation: str, info: dict[str, Any], seed: int | None = None, *, env: Any = None
    ) -> None:
        self.reseed(seed)
        self.request = dict(info["request"])
        self.names = ["Ava"]

    def act(self, observation: str, info: dict[str, Any] | None = None) -> str:
        rng = self.rng
        if observation.startswith("["):
            try:
                names = json.loads(observation)
                if names and all(isinstance(n, str) and not n.startswith("error") for n in names):
                    self.names = names
            except ValueError:
                pass
        if rng.random() < 0.25:
            if rng.random() < 0.1:
                return format_answer("NONE")
            start = utc_midnight(date.fromisoformat(self.request["window_start"]))
            slots = self.request["window_days"] * 96
            return format_answer(format_utc(start + 900 * rng.randrange(slots)))
        tool = rng.choice(["list_attendees", "get_timezone", "get_working_hours", "get_busy"])
        args: dict[str, Any] = {}
        if tool != "list_attendees":
            args["name"] = rng.choice(self.names)
        if tool == "get_busy":
            args["date"] = rng.choice(_dates(self.request))
        return format_tool_call(tool, args)
