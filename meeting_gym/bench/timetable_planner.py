"""TimetablePlanner's rows of ``meeting-gym bench``: steps with masks, scaling, resets, frames.

Targets (the issue): discrete ``step()`` including the mask at least 10% of CartPole's
steps per second on expert scenarios, and a step's cost growing sub-linearly with the
number of sessions (4x the sessions costs less than 4x the time per step).

What a row counts:

* ``step()``: steps per second of time spent inside ``env.step`` only, with random legal
  actions (uniform over ``info["action_mask"]``, chosen outside the clock); an episode
  that ends is reset outside the clock. ``expert`` rows play generated expert scenarios;
  ``4x sessions`` rows play one generated expert scenario with four times the teachers,
  groups, rooms and sessions (96 sessions; the env made with bounds that hold it), with
  its budget raised so that the timetable fills up;
* ``engine step``: the domain's step alone (parse-free actions, scoring included), on a
  full timetable, with random moves and swaps, at 1x and 4x;
* ``cost 4x / 1x``: the time per step at 4x the sessions over the time at 1x, measured
  back to back in each repeat (below 4 is sub-linear);
* ``rollouts``: steps per second of a masked random policy's whole loop, resets included;
* ``reset()``: median time of one reset that generates a fresh scenario;
* ``rgb_array frame``: frames per second of time inside ``env.render()``.
"""

from __future__ import annotations

import random
import time
from typing import Any

import numpy as np

from meeting_gym.bench import (
    Budget,
    Measure,
    make_env,
    masked_chooser,
    play_row,
    render_row,
    reset_rows,
)
from meeting_gym.envs.timetable_planner.domain.actions import Action
from meeting_gym.envs.timetable_planner.domain.episode import TimetableEpisode
from meeting_gym.envs.timetable_planner.domain.generator import SIZES, Sizes, generate
from meeting_gym.envs.timetable_planner.domain.greedy import first_fit
from meeting_gym.envs.timetable_planner.domain.problem import Problem, problem_of
from meeting_gym.envs.timetable_planner.domain.scenario import Scenario
from meeting_gym.envs.timetable_planner.domain.scoring import Timetable

STEP_TARGET = 0.10
"""discrete ``step()`` (mask included) on expert scenarios: at least this share of CartPole."""
SCALE = 4
SUBLINEAR = float(SCALE)
"""The time per step at SCALE x the sessions must stay below SCALE x the time at 1x."""
BIG_BUDGET = 100_000

EVAL_ITEM_SECONDS = 0.05
"""A -v1 eval item's reset target here: its generator, the slowest of the family, draws
about 16 scenarios (one in 16 is held out) of about 1.7 ms each."""


def scaled_scenario(
    scale: int = SCALE,
    seed: int = 0,
    *,
    budget: int = BIG_BUDGET,
    rng: random.Random | None = None,
) -> Scenario:
    """A generated expert scenario with ``scale`` x the entities and sessions and a step
    ``budget``, drawn by ``rng`` (by default one seeded from ``scale`` and ``seed``)."""
    base = SIZES["expert"]
    sizes = Sizes(
        base.teachers * scale,
        base.groups * scale,
        base.rooms * scale,
        base.sessions * scale,
        base.slots_per_day,
        budget,
    )
    rng = random.Random(f"bench:{scale}:{seed}") if rng is None else rng
    return generate(rng, "expert", sizes=sizes)


def long_scenario(scenario: Scenario) -> Scenario:
    """The same scenario with a budget that does not run out during a measurement."""
    data = scenario.to_dict()
    data["step_budget"] = BIG_BUDGET
    return Scenario.from_dict(data)


def env_for(env_id: str, scenario: Scenario, **kwargs: Any) -> Any:
    """A discrete env whose bounds hold ``scenario`` (made without the checker)."""
    p = problem_of(scenario)
    return make_env(
        env_id,
        max_sessions=max(25, len(p.sessions)),
        max_teachers=max(7, len(p.teacher_ids)),
        max_groups=max(7, len(p.group_ids)),
        max_rooms=max(8, len(p.room_ids)),
        **kwargs,
    )


def steps_on(env: Any, scenario: Scenario, steps: int, seed: int) -> float:
    """``env.step`` rate on one scenario, submits skipped (they would end the episode)."""
    rng = random.Random(seed)
    clock = time.perf_counter
    _, info = env.reset(options={"scenario": scenario})
    inside = 0.0
    for _ in range(steps):
        legal = np.flatnonzero(info["action_mask"][:-1])
        action = int(legal[int(rng.random() * len(legal))])
        start = clock()
        _, _, terminated, truncated, info = env.step(action)
        inside += clock() - start
        if terminated or truncated:
            _, info = env.reset(options={"scenario": scenario})
    return steps / inside


def engine_actions(problem: Problem, count: int, seed: int) -> tuple[dict, list[Action]]:
    """A full (greedy) timetable and random moves and swaps on it."""
    rng = random.Random(seed)
    start = first_fit(problem)
    for s in range(len(problem.sessions)):  # fill it: what greedy left out goes anywhere
        if s not in start:
            start[s] = (0, 0, 0)
    placed = [problem.session_ids[s] for s in start]
    return start, random_moves(problem, placed, count, rng)


def random_moves(
    problem: Problem, placed: list[str], count: int, rng: random.Random
) -> list[Action]:
    """``count`` random actions on the ``placed`` sessions: moves (six in ten) and swaps."""
    actions = []
    for _ in range(count):
        if rng.random() < 0.6:
            sid = rng.choice(placed)
            length = problem.session_length[problem.session_index[sid]]
            actions.append(
                Action.move(
                    sid,
                    rng.randrange(problem.n_days),
                    rng.randrange(problem.per_day - length + 1),
                    rng.choice(problem.room_ids),
                )
            )
        else:
            actions.append(Action.swap(rng.choice(placed), rng.choice(placed)))
    return actions


def engine_rate(problem: Problem, steps: int, seed: int) -> float:
    start, actions = engine_actions(problem, steps, seed)
    episode = TimetableEpisode(problem)
    episode.timetable = Timetable(problem, start.items())
    episode.scores = episode.timetable.scores()
    clock = time.perf_counter
    begin = clock()
    for action in actions:
        episode.step(action)
    return steps / (clock() - begin)


def plan(env_id: str, budget: Budget) -> list[Measure]:
    """TimetablePlanner's rows, in the order of the README's table."""
    expert = make_env(env_id, difficulty="expert")
    mixed = make_env(env_id)
    text = make_env(env_id, mode="text", difficulty="expert")
    small = long_scenario(generate(random.Random("bench:1:0"), "expert"))
    big = scaled_scenario()
    small_env, big_env = env_for(env_id, small), env_for(env_id, big)
    small_problem, big_problem = problem_of(small), problem_of(big)
    rows = [
        play_row(
            "step expert",
            "discrete: step() incl. mask, expert",
            expert,
            masked_chooser,
            budget.steps,
            min_ratio=STEP_TARGET,
        ),
        play_row(
            "step mix",
            "discrete: step() incl. mask, default mix",
            mixed,
            masked_chooser,
            budget.steps,
        ),
        play_row(
            "rollout",
            "discrete: masked random rollouts incl. reset",
            mixed,
            masked_chooser,
            budget.steps,
            whole_loop=True,
        ),
        Measure(
            "text step",
            "text: step(), JSON actions, expert",
            lambda r: _text_rate(text, budget.steps, r),
        ),
        Measure(
            "step 1x",
            f"discrete: step() incl. mask, 1x ({len(small_problem.sessions)} sessions)",
            lambda r: steps_on(small_env, small, budget.steps, r),
        ),
        Measure(
            "step 4x",
            f"discrete: step() incl. mask, {SCALE}x ({len(big_problem.sessions)} sessions)",
            lambda r: steps_on(big_env, big, budget.steps, r),
        ),
        Measure(
            "step cost ratio",
            f"discrete: time per step {SCALE}x / 1x sessions",
            lambda r: (
                steps_on(small_env, small, budget.steps // 2, r)
                / steps_on(big_env, big, budget.steps // 2, r)
            ),
            kind="value",
            max_value=SUBLINEAR,
            target_note=f"< {SCALE} (sub-linear)",
            unit="x",
        ),
        Measure(
            "engine 1x",
            f"engine step (scoring), 1x ({len(small_problem.sessions)} sessions)",
            lambda r: engine_rate(small_problem, budget.steps, r),
        ),
        Measure(
            "engine 4x",
            f"engine step (scoring), {SCALE}x ({len(big_problem.sessions)} sessions)",
            lambda r: engine_rate(big_problem, budget.steps, r),
        ),
        Measure(
            "engine cost ratio",
            f"engine: time per step {SCALE}x / 1x sessions",
            lambda r: (
                engine_rate(small_problem, budget.steps // 2, r)
                / engine_rate(big_problem, budget.steps // 2, r)
            ),
            kind="value",
            max_value=SUBLINEAR,
            target_note=f"< {SCALE} (sub-linear)",
            unit="x",
        ),
    ]
    rows += reset_rows(env_id, budget, (None, *SIZES), "discrete: reset() fresh scenario")
    frames = max(budget.steps // 20, 5)
    rows.append(render_row(env_id, frames, lambda _env, repeat: masked_chooser(repeat)))
    return rows


def _text_rate(env: Any, steps: int, seed: int) -> float:
    """Text ``step()`` rate: the masked random policy's actions as JSON action objects."""
    from meeting_gym.envs.timetable_planner.discrete.interface import ActionTable

    rng = random.Random(seed)
    clock = time.perf_counter
    env.reset(seed=seed)
    inside = 0.0
    done = 0
    while done < steps:
        base = env.unwrapped
        problem = base.episode.engine.problem
        table = ActionTable(base.bounds)
        index = rng.randrange(table.submit_index)
        text = _json(table.decode(index, problem).to_dict())
        start = clock()
        _, _, terminated, truncated, _ = env.step(text)
        inside += clock() - start
        done += 1
        if terminated or truncated:
            env.reset()
    return steps / inside


def _json(action: dict[str, Any]) -> str:
    import json

    return json.dumps(action)
