"""MeetingSlot's rows of ``meeting-gym bench``: both interfaces, resets, solving, vector envs.

Targets (discrete mode): ``step()`` at least 35% of CartPole's steps per second, random
rollouts at least 15%, ``reset()`` median under 1 ms; generating 500 scenarios with
gold under 0.3 s. The text rows have no target and are shown for comparison.

What a row counts:

* ``step()``: steps per second of time spent inside ``env.step`` only (random legal
  actions; resets and action choice are outside the clock);
* ``rollouts``: steps per second of wall time of a random-policy loop, resets and
  action choice included;
* ``reset()``: median time of one ``env.reset()`` that generates a fresh scenario;
* ``gold solve``: median time of :func:`~.domain.solver.solve`;
* ``make_vec``: sub-environment steps per second of a vector env stepped with random
  legal actions (autoreset included);
* ``rgb_array frame``: frames per second of time inside ``env.render()`` in discrete
  mode, rendered after every reset and step as ``RecordVideo`` does, with random legal
  tool calls and an answer about every 20 steps (n/a without the render extra).
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from meeting_gym.bench import (
    Budget,
    Measure,
    clock,
    make_env,
    masked_chooser,
    play_row,
    render_row,
    reset_rows,
)
from meeting_gym.envs.meeting_slot.domain import solver, zones
from meeting_gym.envs.meeting_slot.domain.generator import DIFFICULTIES, PEOPLE, generate
from meeting_gym.envs.meeting_slot.domain.solver import solve

STEP_TARGET = 0.35
"""discrete ``step()`` at least this share of CartPole's steps per second."""
ROLLOUT_TARGET = 0.15
"""discrete random rollouts (resets included) at least this share."""
RESET_TARGET_S = 1e-3
"""``reset()`` median under this many seconds."""
GENERATE_TARGET_S = 0.3
"""500 scenarios with gold under this many seconds."""


def text_action_pool() -> list[str]:
    """Legal text actions a random agent might send, answers last (see :func:`text_chooser`).

    Tool calls name every attendee the generator uses plus one unknown name, so some
    calls return ``error:`` results, as a random agent's would.
    """
    names = [*PEOPLE, "Nobody"]
    dates = ["2024-03-10", "2024-03-11", "2024-06-10", "2024-10-28"]
    pool = [json.dumps({"name": "list_attendees", "arguments": {}})]
    for name in names:
        pool.append(json.dumps({"name": "get_timezone", "arguments": {"name": name}}))
        pool.append(json.dumps({"name": "get_working_hours", "arguments": {"name": name}}))
        pool += [
            "<tool_call>"
            + json.dumps({"name": "get_busy", "arguments": {"name": name, "date": d}})
            + "</tool_call>"
            for d in dates
        ]
    return pool


TEXT_ANSWERS = ("<answer>2024-03-11T14:00:00Z</answer>", "<answer>NONE</answer>")
TEXT_ANSWER_RATE = 0.1
"""A random text agent answers (ending the episode) with this probability per turn."""


def text_chooser(seed: int) -> Callable[[Any], str]:
    rng = random.Random(seed)
    pool = text_action_pool()

    def choose(info: Any) -> str:
        if rng.random() < TEXT_ANSWER_RATE:
            return TEXT_ANSWERS[rng.random() < 0.5]
        return pool[int(rng.random() * len(pool))]

    return choose


def chooser(mode: str, seed: int) -> Callable[[Any], Any]:
    return masked_chooser(seed) if mode == "discrete" else text_chooser(seed)


def solve_times(scenarios: Sequence[Any]) -> list[float]:
    out = []
    for scenario in scenarios:
        start = time.perf_counter()
        solve(scenario)
        out.append(time.perf_counter() - start)
    return out


def vector_rate(
    env_id: str, mode: str, num_envs: int, vectorization_mode: str, vector_steps: int, seed: int
) -> float | None:
    """Sub-environment steps per second of ``gymnasium.make_vec`` (None if no such mode)."""
    import gymnasium as gym
    import numpy as np

    import meeting_gym  # noqa: F401

    vector_kwargs = {"shared_memory": False} if vectorization_mode == "async" else {}
    try:
        envs = gym.make_vec(
            env_id,
            num_envs=num_envs,
            vectorization_mode=vectorization_mode,
            vector_kwargs=vector_kwargs,
            mode=mode,
        )
    except ValueError:
        return None
    try:
        choosers = [chooser(mode, seed + i) for i in range(num_envs)]
        _, infos = envs.reset(seed=seed)
        start = time.perf_counter()
        for _ in range(vector_steps):
            actions = [choose(_sub_info(infos, i)) for i, choose in enumerate(choosers)]
            _, _, _, _, infos = envs.step(tuple(actions) if mode == "text" else np.array(actions))
        elapsed = time.perf_counter() - start
    finally:
        envs.close()
    return num_envs * vector_steps / elapsed


def _sub_info(infos: dict[str, Any], index: int) -> dict[str, Any]:
    """The one entry a chooser reads (the action mask) for sub-environment ``index``."""
    mask = infos.get("action_mask")
    return {} if mask is None else {"action_mask": mask[index]}


def tool_call_chooser(env: Any, seed: int) -> Callable[[Any], int]:
    """Mostly tool calls (19 in 20), so the picture fills up as episodes go on."""
    rng = random.Random(seed)
    tools = env.unwrapped.interface.table.n_tools

    def choose(info: Any) -> int:
        legal = [int(a) for a in info["action_mask"].nonzero()[0]]
        calls = [a for a in legal if a < tools]
        return rng.choice(calls if calls and rng.random() > 0.05 else legal)

    return choose


def generate_batch(n: int = 500, seed: int = 0) -> None:
    """Generate ``n`` scenarios of the default mix and solve their gold answers."""
    rng = random.Random(seed)
    for _ in range(n):
        solve(generate(rng))


def plan(env_id: str, budget: Budget) -> list[Measure]:
    """MeetingSlot's rows, in the order of the README's table."""
    modes = ("discrete", "text")
    envs = {mode: make_env(env_id, mode=mode) for mode in modes}
    rows: list[Measure] = []
    for mode in modes:
        env, choose = envs[mode], partial(chooser, mode)
        targets = (STEP_TARGET, ROLLOUT_TARGET) if mode == "discrete" else (None, None)
        rows.append(
            play_row(
                f"{mode} step",
                f"{mode}: step(), random legal actions",
                env,
                choose,
                budget.steps,
                min_ratio=targets[0],
            )
        )
        rows.append(
            play_row(
                f"{mode} rollout",
                f"{mode}: random rollouts incl. reset",
                env,
                choose,
                budget.steps,
                whole_loop=True,
                min_ratio=targets[1],
            )
        )
    for mode in modes:
        rows += reset_rows(
            env_id,
            budget,
            (None, *DIFFICULTIES),
            f"{mode}: reset() fresh scenario",
            key=f"{mode} reset",
            max_seconds=RESET_TARGET_S,
            mode=mode,
        )
    rng = random.Random(3)
    pool = [
        generate(rng, difficulty)
        for difficulty in DIFFICULTIES
        for _ in range(budget.solves_per_difficulty)
    ]
    solve_times(pool)  # warm the zone caches
    rows.append(
        Measure("solve", "gold solve alone (all difficulties)", lambda r: solve_times(pool), "time")
    )
    for mode in modes:
        for kind, n in (("sync", 8), ("async", 2)):
            count = budget.vector_steps * (1 if kind == "sync" else 4)

            def vector(r: int, mode: str = mode, kind: str = kind, n: int = n, count: int = count):
                return vector_rate(env_id, mode, n, kind, count, seed=r)

            rows.append(Measure(f"{mode} {kind}", f"{mode}: make_vec {kind} x{n}", vector))

    rows.append(render_row(env_id, max(budget.steps // 8, 5), tool_call_chooser, mode="discrete"))

    def cold(_r: int) -> list[float]:
        zones._year.cache_clear()
        solver._day_pieces.cache_clear()
        return clock(lambda: generate_batch(500, seed=1), 1)

    def warm(_r: int) -> list[float]:
        return clock(lambda: generate_batch(500, seed=2), max(3, budget.repeats // 2))

    for key, label, run in (("cold", "cold zone cache", cold), ("warm", "warm, median", warm)):
        rows.append(
            Measure(
                f"generate {key}",
                f"generate 500 + gold ({label})",
                run,
                "once",
                max_seconds=GENERATE_TARGET_S,
            )
        )
    return rows
