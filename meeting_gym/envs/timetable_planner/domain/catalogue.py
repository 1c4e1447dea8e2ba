"""The original env's 23 scenarios: 15 hand-crafted (package data) and 8 generated.

The 15 hand-crafted scenarios ship as ``data/scenarios.json`` in this package, copied
with unchanged values and order from ``server/scenarios/scenarios.json`` of
https://github.com/ajay-sreeram/timetable_planner at commit ``2659ae6``, the env this one
succeeds (see :data:`ATTRIBUTION`). That repository's source files carry a header saying
they are "licensed under the BSD-style license found in the LICENSE file in the root
directory of this source tree", but the repository contains no LICENSE file (RULES D19):
the header is the only statement of the license these data are under.

The 8 generated scenarios are regenerated from their (difficulty, seed) on demand by
:mod:`~meeting_gym.envs.timetable_planner.domain.generator`, identically in every process.

Lookups are strict (**D7 fixed**): an unknown id or difficulty raises
:class:`UnknownScenario` naming what exists. The original silently fell back to its
round-robin scenario instead.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from meeting_gym.envs.timetable_planner.domain.generator import (
    PREDECESSOR_SEEDS,
    predecessor_id,
    predecessor_scenario,
)
from meeting_gym.envs.timetable_planner.domain.scenario import DIFFICULTIES, Scenario

__all__ = [
    "ATTRIBUTION",
    "CATALOGUE_IDS",
    "GENERATED_IDS",
    "HANDCRAFTED_IDS",
    "UnknownScenario",
    "first_of_difficulty",
    "generated",
    "get_scenario",
    "handcrafted",
    "handcrafted_dicts",
]

ATTRIBUTION = (
    "The 15 hand-crafted TimetablePlanner scenarios are data from "
    "https://github.com/ajay-sreeram/timetable_planner (commit 2659ae6, "
    "server/scenarios/scenarios.json), copied unchanged. Its files claim a BSD-style "
    "license (Meta Platforms, Inc. header) 'found in the LICENSE file', but the "
    "repository has no LICENSE file."
)

_DATA = "data/scenarios.json"

GENERATED_IDS = tuple(predecessor_id(d, seed) for d, seed in PREDECESSOR_SEEDS)
"""``gen_easy_1001`` ... ``gen_expert_4002``, in the original's catalogue order."""


class UnknownScenario(KeyError):
    """An unknown scenario id or difficulty; the message lists what exists."""

    def __str__(self) -> str:  # KeyError's str() would quote the message
        return str(self.args[0])


def data_file(name: str) -> Any:
    """A file of the env's package data (``timetable_planner/data/``), e.g.
    ``"data/scenarios.json"``."""
    return resources.files("meeting_gym.envs.timetable_planner").joinpath(name)


@cache
def _payload() -> dict[str, Any]:
    return json.loads(data_file(_DATA).read_text(encoding="utf-8"))


def handcrafted_dicts() -> list[dict[str, Any]]:
    """The 15 hand-crafted scenarios as JSON dicts, as shipped (a fresh copy)."""
    return json.loads(json.dumps(_payload()["scenarios"]))


@cache
def handcrafted() -> tuple[Scenario, ...]:
    """The 15 hand-crafted scenarios, in the original's order (easy_1 ... expert_2)."""
    return tuple(Scenario.from_dict(d) for d in _payload()["scenarios"])


@cache
def generated() -> tuple[Scenario, ...]:
    """The original's 8 generated scenarios, ``gen_easy_1001`` ... ``gen_expert_4002``."""
    return tuple(predecessor_scenario(d, seed) for d, seed in PREDECESSOR_SEEDS)


HANDCRAFTED_IDS = tuple(d["scenario_id"] for d in _payload()["scenarios"])
CATALOGUE_IDS = HANDCRAFTED_IDS + GENERATED_IDS
"""The 23 ids, in the original's round-robin order."""


def get_scenario(scenario_id: str) -> Scenario:
    """The scenario with this exact (case-sensitive) id among the 23; else UnknownScenario."""
    if isinstance(scenario_id, str):
        if scenario_id in HANDCRAFTED_IDS:
            return handcrafted()[HANDCRAFTED_IDS.index(scenario_id)]
        if scenario_id in GENERATED_IDS:
            return generated()[GENERATED_IDS.index(scenario_id)]
    raise UnknownScenario(
        f"unknown scenario_id {scenario_id!r}; choose one of {', '.join(CATALOGUE_IDS)}"
    )


def first_of_difficulty(task_name: str) -> Scenario:
    """The original's ``task_name`` reset: the first hand-crafted scenario of a difficulty.

    The name is stripped and lower-cased first, as the original did (``" Hard "`` gives
    ``hard_1``); an unknown one raises :class:`UnknownScenario`.
    """
    name = task_name.strip().lower() if isinstance(task_name, str) else task_name
    for scenario in handcrafted():
        if scenario.task_name == name:
            return scenario
    raise UnknownScenario(
        f"unknown task_name {task_name!r}; choose one of {', '.join(DIFFICULTIES)}"
    )
