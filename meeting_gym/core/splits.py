"""Named lists of scenarios (``train``, ``eval``, ``curated``) and their JSONL export."""

from __future__ import annotations

import json
import random
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from meeting_gym.envs.meeting_slot.domain.curated import CURATED
from meeting_gym.envs.meeting_slot.domain.generator import DIFFICULTIES, generate
from meeting_gym.envs.meeting_slot.domain.scenario import Scenario
from meeting_gym.envs.meeting_slot.domain.solver import solve
from meeting_gym.envs.meeting_slot.domain.timeutil import format_utc
from meeting_gym.envs.meeting_slot.prompts import question

SPLITS = ("train", "eval", "curated")
DEFAULT_SIZES = {"train": 500, "eval": 100, "curated": len(CURATED)}
DEFAULT_SEED = 42


def item_rng(seed: int, index: int) -> random.Random:
    """The generator of item ``index`` of a generated list: any item regenerates alone."""
    return random.Random(f"meeting_gym:{seed}:{index}")


def generated(
    n: int, seed: int, difficulty: str | None = None, *, exclude: Iterable[str] = ()
) -> list[Scenario]:
    """``n`` distinct generated scenarios; item i is drawn from ``item_rng(seed, i)``."""
    seen = set(exclude)
    out: list[Scenario] = []
    index = 0
    while len(out) < n:
        if index > 50 * n + 100:
            raise RuntimeError(f"could only generate {len(out)} distinct scenarios (wanted {n})")
        scenario = generate(item_rng(seed, index), difficulty)
        index += 1
        if scenario.id not in seen:
            seen.add(scenario.id or "")
            out.append(scenario)
    return out


def load_split(
    name: str, n: int | None = None, seed: int = DEFAULT_SEED, difficulty: str | None = None
) -> list[Scenario]:
    """A split as a list of scenarios.

    ``train``: generated from ``seed``. ``eval``: the curated cases first, then
    generated from ``seed + 1``. ``curated``: the 15 curated cases. ``difficulty``
    filters curated cases and pins generation.
    """
    if name not in SPLITS:
        raise ValueError(f"unknown split {name!r}; choose one of {', '.join(SPLITS)}")
    if difficulty is not None and difficulty not in DIFFICULTIES:
        raise ValueError(f"unknown difficulty {difficulty!r}; choose one of {DIFFICULTIES}")
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 0):
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    size = DEFAULT_SIZES[name] if n is None else n
    if name == "train":
        return generated(size, seed, difficulty)
    curated = [s for s in CURATED if difficulty is None or s.difficulty == difficulty]
    if name == "curated":
        return curated[:size]
    head = curated[:size]
    return head + generated(
        size - len(head), seed + 1, difficulty, exclude=[s.id or "" for s in head]
    )


def to_row(scenario: Scenario) -> dict[str, Any]:
    """One JSONL row for LLM trainers: question, gold answer, and the scenario as info."""
    gold = solve(scenario).gold
    return {
        "question": question(scenario),
        "answer": "NONE" if gold is None else format_utc(gold),
        "info": scenario.to_dict(),
    }


def export_jsonl(scenarios: Iterable[Scenario], path: str | Path) -> int:
    count = 0
    with open(path, "w", encoding="utf-8") as handle:
        for scenario in scenarios:
            handle.write(json.dumps(to_row(scenario), ensure_ascii=False) + "\n")
            count += 1
    return count
