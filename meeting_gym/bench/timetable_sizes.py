"""TimetablePlanner's sizes per difficulty: discrete action counts and the text observation.

For each difficulty, over the catalogue's scenarios of that difficulty (the 15
hand-crafted and the original timetable_planner's 8 generated) and ``--seeds`` freshly
generated ones:

* ``Discrete(n)``: the action space, fixed at ``gym.make`` from the default bounds (the
  same for every difficulty);
* ``actions``: the actions that address the scenario (its sessions, rooms, days and
  slots; ``ActionTable.counts``), min-max;
* ``legal at reset``: what ``info["action_mask"]`` allows on the empty timetable, min-max
  (medium and up mask wrong room types, too small rooms and unavailable cells);
* ``text chars``: the size of the first text-mode observation, max, with two token
  estimates: characters / 4, and a count of GPT-style pre-tokenizer pieces (runs of
  letters, of up to 3 digits, of punctuation), which a BPE tokenizer never goes below.

    python -m meeting_gym.bench.timetable_sizes [--seeds 20] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import re
from typing import Any

import gymnasium as gym

import meeting_gym  # noqa: F401  (registers the env ids)
from meeting_gym.envs.timetable_planner.discrete.interface import ActionTable
from meeting_gym.envs.timetable_planner.domain.catalogue import CATALOGUE_IDS, get_scenario
from meeting_gym.envs.timetable_planner.domain.generator import SIZES, generate
from meeting_gym.envs.timetable_planner.domain.problem import problem_of
from meeting_gym.envs.timetable_planner.domain.scenario import Scenario

ENV = "TimetablePlanner-v0"
PIECES = re.compile(r" ?[^\W\d_]+| ?\d{1,3}|[^\w\s]+|_+|\s+")
"""Letters, digits in threes, punctuation, underscores, spaces: a lower bound on BPE tokens."""


def token_estimates(text: str) -> dict[str, int]:
    """``chars / 4`` and the pre-tokenizer piece count of ``text``."""
    return {"chars": len(text), "chars_over_4": round(len(text) / 4), "pieces": _pieces(text)}


def _pieces(text: str) -> int:
    return sum(1 for _ in PIECES.finditer(text))


def scenarios(difficulty: str, seeds: int) -> list[Scenario]:
    """The catalogue's scenarios of ``difficulty``, then ``seeds`` generated ones."""
    out = [get_scenario(i) for i in CATALOGUE_IDS]
    out = [s for s in out if s.task_name == difficulty]
    out += [generate(random.Random(f"sizes:{seed}"), difficulty) for seed in range(seeds)]
    return out


def measure(seeds: int = 20) -> list[dict[str, Any]]:
    """One row per difficulty (see the module docstring)."""
    discrete = gym.make(ENV, disable_env_checker=True)
    text = gym.make(ENV, mode="text", disable_env_checker=True)
    table = ActionTable(discrete.unwrapped.bounds)
    rows = []
    for difficulty in SIZES:
        actions, legal, chars = [], [], []
        largest: tuple[int, str, str] = (0, "", "")
        for scenario in scenarios(difficulty, seeds):
            actions.append(sum(table.counts(problem_of(scenario)).values()))
            _, info = discrete.reset(options={"scenario": scenario})
            legal.append(int(info["action_mask"].sum()))
            observation, _ = text.reset(options={"scenario": scenario})
            chars.append(len(observation))
            largest = max(largest, (len(observation), scenario.scenario_id, observation))
        rows.append(
            {
                "difficulty": difficulty,
                "scenarios": len(actions),
                "n": table.n,
                "actions": (min(actions), max(actions)),
                "legal_at_reset": (min(legal), max(legal)),
                "largest_text": largest[1],
                **token_estimates(largest[2]),
            }
        )
    return rows


def format_rows(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| difficulty | scenarios | Discrete(n) | actions | legal at reset "
        "| largest text obs (chars) | ~tokens (chars/4) | pre-token pieces |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['difficulty']} | {r['scenarios']} | {r['n']:,} "
            f"| {r['actions'][0]:,}-{r['actions'][1]:,} "
            f"| {r['legal_at_reset'][0]:,}-{r['legal_at_reset'][1]:,} "
            f"| {r['chars']:,} ({r['largest_text']}) | {r['chars_over_4']:,} "
            f"| {r['pieces']:,} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20, help="generated scenarios each")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    rows = measure(args.seeds)
    print(json.dumps(rows, indent=2) if args.json else format_rows(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
