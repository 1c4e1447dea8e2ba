"""TimetablePlanner robustness: malformed actions, reward hacking, score bounds, the ceiling.

* Every malformed JSON action, whatever it holds, is one ``action_error`` with the invalid
  penalty and a unit of budget, never an exception (hypothesis, through the text env).
* Reward hacking gets exactly what RULES.md and the issue's decisions say: repeated
  no-ops cost 0.01 each, assign/unassign cycles earn nothing, an early submit earns the
  bonus only at 0.90, a second submit is refused (D3), the return never exceeds 1.05.
* ``overall_score`` never leaves [0, 1] along random walks of random scenarios, from
  either start.
* No timetable found by perturbing the solver's and greedy's timetables beats the
  solver's documented score on any of the 23 scenarios.
"""

from __future__ import annotations

import json
import random

import gymnasium as gym
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from timetable_fixtures import ASSIGN

import meeting_gym  # noqa: F401
from meeting_gym.envs.timetable_planner.domain.actions import ACTION_FIELDS
from meeting_gym.envs.timetable_planner.domain.best import documented_timetable, known_best
from meeting_gym.envs.timetable_planner.domain.catalogue import CATALOGUE_IDS, get_scenario
from meeting_gym.envs.timetable_planner.domain.episode import (
    INVALID_PENALTY,
    NOOP_PENALTY,
    SUBMIT_BONUS,
)
from meeting_gym.envs.timetable_planner.domain.generator import generate
from meeting_gym.envs.timetable_planner.domain.greedy import first_fit
from meeting_gym.envs.timetable_planner.domain.problem import problem_of
from meeting_gym.envs.timetable_planner.domain.scoring import Timetable
from meeting_gym.envs.timetable_planner.task import content_key

ENV = "TimetablePlanner-v0"


def make(mode: str = "text", **kwargs) -> gym.Env:
    return gym.make(ENV, mode=mode, disable_env_checker=True, **kwargs)


# ----------------------------------------------------------------------------- fuzz

_ANY = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=8,
)
_HUGE = st.builds(lambda c, n: c * n, st.characters(), st.integers(10_000, 200_000))
_SESSION = st.sampled_from(["E1_S1", "E1_S2", "E1_S12"])
_ROOM = st.sampled_from(["R1", "R2", "R4"])
_TYPES = ("assign_session", "move_session", "swap_sessions", "unassign_session")


def _broken_place() -> st.SearchStrategy:
    """An assign or move that is wrong in at least one field, never well formed."""
    wrong_day = st.one_of(
        st.integers(max_value=-1),
        st.integers(min_value=5),
        st.sampled_from(["Sun", "", "0.5"]),
        st.floats(allow_nan=True).filter(lambda f: not (f == f and f.is_integer())),
        st.lists(st.integers(), max_size=2),
        st.booleans(),
        st.none(),
        _HUGE,
    )
    wrong_slot = st.one_of(
        st.integers(max_value=-1),
        st.integers(min_value=4),
        st.none(),
        st.text(max_size=5),
        st.floats().filter(lambda f: not (f == f and f.is_integer())),
        st.booleans(),
    )
    wrong_id = st.one_of(
        st.sampled_from(["nope", "", "  "]),
        st.none(),
        _HUGE,
        st.integers(),
        st.lists(st.integers(), max_size=2),
    )
    field = st.sampled_from(["day", "start_slot", "session_id", "room_id"])

    def build(kind, session, day, slot, room, which, bad_day, bad_slot, bad_id, drop):
        action = {
            "action_type": kind,
            "session_id": session,
            "day": day,
            "start_slot": slot,
            "room_id": room,
        }
        if drop:
            del action[which]
        elif which == "day":
            action["day"] = bad_day
        elif which == "start_slot":
            action["start_slot"] = bad_slot
        else:
            action[which] = bad_id
        return action

    return st.builds(
        build,
        st.sampled_from(["assign_session", "move_session"]),
        _SESSION,
        st.integers(0, 4),
        st.integers(0, 3),
        _ROOM,
        field,
        wrong_day,
        wrong_slot,
        wrong_id,
        st.booleans(),
    )


_MALFORMED = st.one_of(
    _broken_place(),
    st.builds(
        lambda t: {"action_type": t},
        st.text(max_size=30).filter(lambda t: t.strip() not in (*_TYPES, "submit_timetable")),
    ),
    st.builds(
        lambda k: {"action_type": "unassign_session", k: 1},
        st.text(min_size=1, max_size=10).filter(lambda k: k not in ACTION_FIELDS),
    ),
    st.builds(lambda s: {"action_type": "swap_sessions", "session_id": s}, _SESSION),
    st.builds(
        lambda s: {"action_type": "swap_sessions", "session_id": s, "target_session_id": "ghost"},
        _SESSION,
    ),
    st.builds(
        lambda n: {"name": n, "arguments": {}},
        st.text(max_size=20).filter(lambda n: n.strip() not in (*_TYPES, "submit_timetable")),
    ),
    st.builds(
        lambda a: {"name": "assign_session", "arguments": a},
        st.one_of(st.lists(st.integers(), max_size=3), st.integers(), st.just("{not json")),
    ),
    st.lists(st.integers() | st.text(max_size=5), max_size=3).map(lambda v: v or [1]),
    _ANY.filter(lambda v: not isinstance(v, dict | list)),
    _HUGE,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(actions=st.lists(_MALFORMED, min_size=1, max_size=5), as_text=st.booleans())
def test_malformed_actions_are_action_errors_with_the_penalty(actions, as_text):
    env = make("text")
    env.reset(options={"scenario_id": "easy_1"})
    base = env.unwrapped
    # place one session so that moves and swaps of E1_S1 meet a placed session
    env.step(
        json.dumps(
            {
                "action_type": "assign_session",
                "session_id": "E1_S1",
                "day": 1,
                "start_slot": 1,
                "room_id": "R2",
            }
        )
    )
    for action in actions:
        engine = base.episode.engine
        budget, score = engine.remaining_budget, engine.score
        played = len(action) if isinstance(action, list) else 1
        if as_text and not isinstance(action, str):
            try:
                action = json.dumps(action)
            except (ValueError, TypeError):
                action = repr(action)
        observation, reward, terminated, truncated, info = env.step(action)
        assert info["outcome"] == "invalid", (action, info)
        assert isinstance(info["action_error"], str) and info["action_error"]
        assert reward == pytest.approx(INVALID_PENALTY * min(played, budget)), action
        assert engine.score == score and not terminated
        assert info["remaining_step_budget"] == budget - min(played, budget)
        assert len(observation) < 70_000
        if truncated:
            break


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    action=st.one_of(
        st.integers(),
        st.floats(),
        st.none(),
        st.text(max_size=10),
        st.lists(st.integers(), max_size=3),
        st.booleans(),
    )
)
def test_discrete_actions_that_are_no_index_are_invalid_actions(action):
    env = make("discrete")
    _, info = env.reset(options={"scenario_id": "hard_1"})
    n = env.action_space.n
    if isinstance(action, int) and not isinstance(action, bool) and 0 <= action < n:
        return
    _, reward, _, _, info = env.step(action)
    assert reward == INVALID_PENALTY and info["outcome"] == "invalid"


# ----------------------------------------------------------------------------- reward hacking


def test_repeated_no_ops_cost_their_penalty_every_time():
    env = make("text")
    env.reset(options={"scenario_id": "easy_1"})
    env.step(json.dumps(ASSIGN))
    total = 0.0
    for _ in range(19):  # a budget of 20: the assign, then 19 no-ops
        _, reward, _, truncated, info = env.step(
            json.dumps({**ASSIGN, "action_type": "move_session"})
        )
        assert reward == NOOP_PENALTY and info["outcome"] == "noop"
        total += reward
    assert truncated and total == pytest.approx(19 * NOOP_PENALTY)


def test_assign_unassign_cycles_earn_nothing():
    env = make("text")
    _, _ = env.reset(options={"scenario_id": "medium_2"})
    rewards = []
    for _ in range(14):
        rewards.append(env.step(json.dumps({**ASSIGN, "session_id": "M2_S1", "room_id": "R1"}))[1])
        rewards.append(
            env.step(json.dumps({"action_type": "unassign_session", "session_id": "M2_S1"}))[1]
        )
    assert rewards[0] > 0 and sum(rewards) == pytest.approx(0.0, abs=1e-12)
    engine = env.unwrapped.episode.engine
    assert engine.score == pytest.approx(0.5) and engine.invalid_actions == 0


@pytest.mark.parametrize("scenario_id", ["easy_1", "medium_1", "hard_1", "expert_1"])
def test_an_early_submit_earns_the_score_as_it_stands_and_no_bonus(scenario_id):
    env = make("text")
    env.reset(options={"scenario_id": scenario_id})
    _, reward, terminated, _, info = env.step('{"action_type": "submit_timetable"}')
    assert terminated and reward == 0.0 and info["reward"] == 0.0 and info["submitted"]
    with pytest.raises(RuntimeError):  # D3 fixed: no second submit, no second bonus
        env.step('{"action_type": "submit_timetable"}')


def test_the_bonus_is_paid_once_at_090_and_the_return_stays_bounded():
    env = make("discrete")
    env.reset(options={"scenario_id": "easy_4"})
    base = env.unwrapped
    table, problem = base.interface.table, base.episode.engine.problem
    paid = 0.0
    for s, spot in documented_timetable(problem).items():
        paid += env.step(table.index("assign_session", s, *spot))[1]
    _, reward, terminated, _, info = env.step(table.submit_index)
    assert terminated
    paid += reward
    assert info["score"] >= 0.9 and reward == pytest.approx(SUBMIT_BONUS)
    assert info["reward"] == pytest.approx(paid) and paid <= base.task.max_reward
    assert paid == pytest.approx(info["score"] - 0.65 + SUBMIT_BONUS)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**31),
    level=st.sampled_from(["easy", "medium", "hard", "expert"]),
    start=st.sampled_from(["initial", "baseline"]),
    masked=st.booleans(),
)
def test_overall_score_stays_in_0_1_and_the_return_below_the_bound(seed, level, start, masked):
    env = make("discrete", start=start)
    _, info = env.reset(seed=seed, options={"difficulty": level})
    rng = random.Random(seed)
    n = env.action_space.n
    total, done = 0.0, False
    while not done:
        legal = info["action_mask"].nonzero()[0]
        action = int(rng.choice(legal)) if masked else rng.randrange(n)
        _, reward, terminated, truncated, info = env.step(action)
        total += reward
        assert 0.0 <= info["score"] <= 1.0
        assert all(0.0 <= v <= 1.0 for v in info["score_breakdown"].values())
        done = terminated or truncated
    assert total <= env.unwrapped.task.max_reward


# ----------------------------------------------------------------------------- the ceiling


def _perturb(rng: random.Random, problem, table: Timetable) -> tuple | None:
    """A random change: move, swap, unassign or assign; returns how to undo it."""
    placed = [s for s, _ in table.items()]
    unplaced = [s for s in range(len(problem.sessions)) if s not in table]
    roll = rng.random()

    def spot(s: int) -> tuple[int, int, int]:
        return (
            rng.randrange(problem.n_days),
            rng.randrange(problem.per_day - problem.session_length[s] + 1),
            rng.randrange(len(problem.room_ids)),
        )

    if roll < 0.5 and placed:
        s = rng.choice(placed)
        old = table.spot(s)
        table.move(s, spot(s))
        return ("move", s, old)
    if roll < 0.7 and len(placed) > 1:
        a, b = rng.sample(placed, 2)
        sa, sb = table.spot(a), table.spot(b)
        if sa[1] + problem.session_length[b] > problem.per_day or (
            sb[1] + problem.session_length[a] > problem.per_day
        ):
            return None
        table.swap(a, b)
        return ("swap", a, b)
    if roll < 0.85 and placed:
        s = rng.choice(placed)
        return ("unassign", s, table.remove(s))
    if unplaced:
        s = rng.choice(unplaced)
        table.place(s, spot(s))
        return ("assign", s, None)
    return None


def _undo(table: Timetable, change: tuple) -> None:
    kind, a, b = change
    if kind == "move":
        table.move(a, b)
    elif kind == "swap":
        table.swap(a, b)
    elif kind == "unassign":
        table.place(a, b)
    else:
        table.remove(a)


@pytest.mark.parametrize("scenario_id", CATALOGUE_IDS)
def test_no_perturbation_of_the_solver_or_greedy_timetable_beats_the_solver(scenario_id):
    """A hill climb (first improvement, with random restarts from both timetables).

    The search has teeth: from greedy it climbs well above greedy on every one of the 23
    (to within a few hundredths of the ceiling), so a solver that left an improvement by
    single moves, swaps, assigns or unassigns on the table would be caught. (A longer
    search, simulated annealing from both timetables, beat two of the four scenarios
    CP-SAT had not proved optimal: gen_expert_4002 by 0.0056, gen_medium_2001 by 8e-5. A
    solver defect, fixed: the solver now ends with such an annealing, and
    test_annealing_leaves_the_local_optimum_the_perturbation_search_beat keeps it.)"""
    scenario = get_scenario(scenario_id)
    problem = problem_of(scenario)
    documented = known_best()[content_key(scenario)]
    ceiling = documented["score"]
    rng = random.Random(scenario_id)
    greedy = first_fit(problem)
    greedy_score = Timetable(problem, greedy.items()).scores().overall_score
    for origin in (documented_timetable(problem), greedy):
        climbed = []
        for _ in range(3):
            table = Timetable(problem, origin.items())
            score = table.scores().overall_score
            for _ in range(3000):
                change = _perturb(rng, problem, table)
                if change is None:
                    continue
                new = table.scores().overall_score
                if new >= score:
                    score = new
                else:
                    _undo(table, change)
            climbed.append(score)
            assert score <= ceiling + 1e-9, (scenario_id, score, ceiling, table.as_dict())
        if origin is greedy:
            assert greedy_score < ceiling and min(climbed) > greedy_score, climbed


def test_every_documented_timetable_is_the_solvers_and_fits_the_budget():
    rows = known_best()
    assert len(rows) == len(CATALOGUE_IDS) == 23
    for scenario_id in CATALOGUE_IDS:
        scenario = get_scenario(scenario_id)
        row = rows[content_key(scenario)]
        problem = problem_of(scenario)
        timetable = documented_timetable(problem)
        assert Timetable(problem, timetable.items()).scores().overall_score == row["score"]
        assert len(timetable) + 1 <= problem.step_budget
        assert row["bound"] >= row["score"] - 1e-6
        if row["optimal"]:
            assert row["bound"] == pytest.approx(row["score"], abs=1e-4)


def test_a_fresh_solve_is_never_below_greedy():
    pytest.importorskip("ortools")
    from meeting_gym.envs.timetable_planner.domain.solver import exact_score, solve

    for level in ("medium", "expert"):
        problem = problem_of(generate(random.Random(level), level))
        result = solve(problem, time_limit=0.5)
        assert result.score >= exact_score(problem, first_fit(problem)) - 1e-12
