"""TimetablePlanner's reference policies, greedy and solver as pure planners, and the table.

The policies plan from the first observation only; in discrete mode they act through
the adapter. Greedy is a clean first fit; the solver's model is faithful (its value of a
timetable is the env's score) and its documented timetables replay to their scores.
"""

from __future__ import annotations

import json
import random

import gymnasium as gym
import numpy as np
import pytest

import meeting_gym  # noqa: F401  (registers the env ids)
from meeting_gym.agents.policies import make_policy
from meeting_gym.envs.timetable_planner.domain import catalogue
from meeting_gym.envs.timetable_planner.domain.best import documented_timetable, known_best
from meeting_gym.envs.timetable_planner.domain.catalogue import CATALOGUE_IDS, get_scenario
from meeting_gym.envs.timetable_planner.domain.episode import TimetableEpisode
from meeting_gym.envs.timetable_planner.domain.generator import generate
from meeting_gym.envs.timetable_planner.domain.greedy import first_fit, plan_actions
from meeting_gym.envs.timetable_planner.domain.problem import problem_of
from meeting_gym.envs.timetable_planner.domain.scoring import Timetable
from meeting_gym.envs.timetable_planner.task import TimetablePlannerTask, content_key
from meeting_gym.evaluation.evaluate import evaluate, summarize

ENV = "TimetablePlanner-v0"


@pytest.mark.parametrize("scenario_id", CATALOGUE_IDS)
def test_greedy_is_a_clean_first_fit(scenario_id):
    """Conflict-free, and a session left out has no clean spot left at the end (occupancy
    only grows, so a spot clean at the end was clean when the session's turn came)."""
    from meeting_gym.envs.timetable_planner.domain.greedy import _Occupancy

    problem = problem_of(get_scenario(scenario_id))
    target = first_fit(problem)
    assert Timetable(problem, target.items()).conflicts().total == 0
    # placed in its documented order (must first, longer first, then by index), each at
    # the first clean spot in (room, day, start) order when its turn came: an honest first
    # fit, not a weakened one (nothing skipped, nothing placed later than it could be)
    order = list(target)
    assert order == sorted(
        order, key=lambda s: (not problem.session_must[s], -problem.session_length[s], s)
    )
    taken = _Occupancy(problem)
    for s, spot in target.items():
        length = problem.session_length[s]
        first = next(
            (d, t, r)
            for r in range(len(problem.room_ids))
            for d in range(problem.n_days)
            for t in range(problem.per_day - length + 1)
            if taken.clean(s, (d, t, r))
        )
        assert spot == first, (scenario_id, problem.session_ids[s])
        taken.take(s, spot)
    for s in range(len(problem.sessions)):
        if s in target:
            continue
        length = problem.session_length[s]
        assert not any(
            taken.clean(s, (d, t, r))
            for d in range(problem.n_days)
            for t in range(problem.per_day - length + 1)
            for r in range(len(problem.room_ids))
        ), (scenario_id, problem.session_ids[s])


@pytest.mark.parametrize("start", ["initial", "baseline"])
@pytest.mark.parametrize("mode", ["text", "discrete"])
def test_greedy_policy_reaches_its_plan_in_both_modes(mode, start):
    items = [get_scenario(i) for i in ("medium_4", "hard_2", "expert_2", "gen_hard_3002")]
    results = evaluate(
        lambda: make_policy("greedy", env=ENV),
        items,
        env=ENV,
        mode=mode,
        env_kwargs={"start": start},
    )
    for scenario, result in zip(items, results, strict=True):
        problem = problem_of(scenario)
        begin = TimetableEpisode(problem, start)
        target = first_fit(problem, begin.timetable.items())
        expected = Timetable(problem, target.items()).scores().overall_score
        assert result.score == expected and result.stats["invalid_actions"] == 0
        assert result.stats["submitted"] == 1 and result.stats["noop_actions"] == 0


def test_plan_actions_turn_one_timetable_into_another():
    problem = problem_of(get_scenario("expert_1"))
    begin = TimetableEpisode(problem, "baseline")
    current = dict(begin.timetable.items())
    target = documented_timetable(problem)
    for action in plan_actions(problem, current, target):
        assert begin.step(action).outcome == "apply"
    assert dict(begin.timetable.items()) == target


@pytest.mark.parametrize("mode", ["text", "discrete"])
def test_solver_replays_its_documented_timetable_on_the_23(mode):
    items = [get_scenario(i) for i in CATALOGUE_IDS]
    results = evaluate(lambda: make_policy("solver", env=ENV), items, env=ENV, mode=mode)
    task = TimetablePlannerTask()
    for scenario, result in zip(items, results, strict=True):
        documented = known_best()[content_key(scenario)]
        assert result.score == documented["score"], scenario.scenario_id
        assert result.reward == pytest.approx(task.max_reward_for(scenario))
        assert result.gold == f"{documented['score']:.4f}"


def test_solver_beats_or_equals_greedy_and_empty_everywhere():
    for scenario_id in CATALOGUE_IDS:
        problem = problem_of(get_scenario(scenario_id))
        solver = known_best()[content_key(problem.scenario)]["score"]
        greedy = Timetable(problem, first_fit(problem).items()).scores().overall_score
        assert solver >= greedy >= TimetableEpisode(problem).score, scenario_id


def test_random_policy_plays_only_unmasked_actions_in_discrete_mode():
    env = gym.make(ENV, disable_env_checker=True)
    from meeting_gym.evaluation.evaluate import as_agent

    agent = as_agent(make_policy("random", seed=3, env=ENV), env, "discrete")
    observation, info = env.reset(options={"scenario_id": "hard_2"})
    agent.reset(observation, info, env=env, seed=3)
    done, steps = False, 0
    while not done:
        action = agent.act(observation, info)
        assert info["action_mask"][action] == 1
        observation, _, terminated, truncated, info = env.step(action)
        done, steps = terminated or truncated, steps + 1
    assert info["invalid_actions"] == 0 and info["noop_actions"] == 0


def test_random_is_the_same_in_text_and_discrete_mode():
    items = [get_scenario("medium_2"), get_scenario("expert_1")]
    text = evaluate(lambda: make_policy("random", seed=1, env=ENV), items, env=ENV, mode="text")
    discrete = evaluate(
        lambda: make_policy("random", seed=1, env=ENV), items, env=ENV, mode="discrete"
    )
    assert [r.score for r in text] == [r.score for r in discrete]
    assert [r.reward for r in text] == pytest.approx([r.reward for r in discrete])


def test_empty_policy_scores_the_start():
    results = evaluate(lambda: make_policy("empty", env=ENV), [get_scenario("easy_1")], env=ENV)
    assert results[0].score == 0.65 and results[0].reward == 0.0


def test_policies_see_only_the_observation():
    """A policy reset with the text observation plans without the env (no info needed)."""
    env = gym.make(ENV, mode="text", disable_env_checker=True)
    observation, _ = env.reset(options={"scenario_id": "expert_2"})
    policy = make_policy("greedy", env=ENV)
    policy.reset(observation, {})
    first = json.loads(policy.act(observation))
    assert first["action_type"] == "assign_session"


# ----------------------------------------------------------------------------- the solver


def test_the_solver_model_scores_a_timetable_as_the_env_does():
    pytest.importorskip("ortools")
    from meeting_gym.envs.timetable_planner.domain.solver import solve

    for scenario_id in ("hard_1", "expert_1", "medium_5"):
        problem = problem_of(get_scenario(scenario_id))
        result = solve(problem, time_limit=5)
        assert abs(result.objective - result.score) < 1e-4, scenario_id
        assert result.score <= result.bound + 1e-6
        assert result.score >= known_best()[content_key(problem.scenario)]["score"] - 1e-9 or (
            not result.optimal
        )


def test_the_solver_respects_the_step_budget_from_the_baseline():
    pytest.importorskip("ortools")
    from meeting_gym.envs.timetable_planner.domain.solver import solve

    problem = problem_of(get_scenario("expert_2"))
    begin = TimetableEpisode(problem, "baseline")
    current = dict(begin.timetable.items())
    result = solve(problem, time_limit=3, current=current.items(), budget=4)
    changed = [
        s for s in set(current) | set(result.timetable) if current.get(s) != result.timetable.get(s)
    ]
    assert len(changed) <= 3
    # out of time before CP-SAT finds anything (UNKNOWN), the solver keeps its hint: the
    # greedy timetable was kept whole, 18 actions for a budget of 3; now its first changes
    # that fit, and the local searches improve on them within the budget too
    for scenario_id, start in (("gen_medium_2001", "initial"), ("gen_expert_4002", "baseline")):
        problem = problem_of(get_scenario(scenario_id))
        begin = TimetableEpisode(problem, start)
        current = dict(begin.timetable.items())
        result = solve(problem, time_limit=0.05, current=current.items(), budget=3)
        changed = [
            s
            for s in set(current) | set(result.timetable)
            if current.get(s) != result.timetable.get(s)
        ]
        assert len(changed) <= 2 and result.score > begin.score, (scenario_id, result.status)


def test_a_solver_policy_on_a_new_scenario_solves_and_plays_it():
    pytest.importorskip("ortools")
    scenario = generate(random.Random(5), "medium")
    results = evaluate(lambda: make_policy("solver", env=ENV), [scenario], env=ENV, mode="discrete")
    greedy = evaluate(lambda: make_policy("greedy", env=ENV), [scenario], env=ENV, mode="discrete")
    assert results[0].score >= greedy[0].score and results[0].stats["invalid_actions"] == 0


# gen_expert_4002's documented solver timetable before the annealing was added (0.946487):
# CP-SAT stopped at its time limit, and first-improvement polish could not leave it.
OLD_GEN_EXPERT_4002 = [
    ["S2", 1, 4, "R2"], ["S3", 2, 0, "R6"], ["S5", 3, 3, "R2"], ["S6", 1, 0, "R7"],
    ["S7", 3, 2, "R7"], ["S8", 0, 2, "R7"], ["S9", 2, 2, "R7"], ["S10", 4, 1, "R4"],
    ["S11", 3, 3, "R8"], ["S12", 1, 0, "R2"], ["S13", 0, 2, "R2"], ["S14", 2, 4, "R3"],
    ["S15", 4, 2, "R6"], ["S16", 1, 1, "R2"], ["S18", 2, 0, "R7"], ["S19", 1, 1, "R7"],
    ["S20", 0, 5, "R7"], ["S21", 4, 0, "R2"], ["S22", 4, 2, "R2"], ["S23", 0, 4, "R7"],
    ["S24", 3, 4, "R6"],
]  # fmt: skip


def test_annealing_leaves_the_local_optimum_the_perturbation_search_beat():
    """The audit's perturbation search (annealing from the documented timetables) beat the
    solver on gen_expert_4002 by 0.005: a solver defect. Fixed: unless CP-SAT proved it
    optimal, the solver anneals and polishes what its rounds found. The old timetable is
    a polish optimum; the annealing leaves it, upward, deterministically, and the
    re-solved documented result is past it too."""
    from meeting_gym.envs.timetable_planner.domain.solver import anneal, exact_score, polish

    problem = problem_of(get_scenario("gen_expert_4002"))
    old = {
        problem.session_index[sid]: (day, start, problem.room_index[room])
        for sid, day, start, room in OLD_GEN_EXPERT_4002
    }
    old_score = exact_score(problem, old)
    assert old_score == pytest.approx(0.9464873680603589, abs=1e-12)
    assert exact_score(problem, polish(problem, old)) == old_score  # stuck
    annealed = anneal(problem, old, steps=60_000, seed=0)
    assert annealed == anneal(problem, old, steps=60_000, seed=0)
    assert exact_score(problem, polish(problem, annealed)) > old_score + 0.001
    # the documented result (re-solved with the annealing) is past the old one too
    assert known_best()[content_key(problem.scenario)]["score"] > old_score + 0.001


def test_annealing_never_loses_and_keeps_to_the_step_budget():
    from meeting_gym.envs.timetable_planner.domain.solver import anneal, exact_score

    problem = problem_of(get_scenario("hard_2"))
    begin = dict(TimetableEpisode(problem, "baseline").timetable.items())
    for budget in (3, 6):
        found = anneal(problem, begin, begin, budget, steps=5000, seed=1)
        assert exact_score(problem, found) >= exact_score(problem, begin)
        changed = [s for s in set(begin) | set(found) if begin.get(s) != found.get(s)]
        assert len(changed) <= budget - 1
    greedy = first_fit(problem)
    assert exact_score(problem, anneal(problem, greedy, steps=5000)) > exact_score(problem, greedy)


@pytest.mark.slow
def test_the_documented_results_are_what_the_solver_finds_now():
    """Re-solves the 23 with the documented time limit (several minutes)."""
    pytest.importorskip("ortools")
    from meeting_gym.envs.timetable_planner.domain.best import DATA
    from meeting_gym.envs.timetable_planner.domain.solver import solve

    payload = json.loads(catalogue.data_file(DATA).read_text())
    for row in payload["scenarios"]:
        problem = problem_of(get_scenario(row["scenario_id"]))
        result = solve(problem, time_limit=payload["time_limit"])
        assert result.score == pytest.approx(row["score"], abs=1e-12), row["scenario_id"]


def test_evaluation_table_reports_score_steps_and_invalid_actions():
    results = evaluate(
        lambda: make_policy("random", seed=0, env=ENV),
        [get_scenario(i) for i in ("easy_1", "hard_1")],
        env=ENV,
        mode="discrete",
    )
    summary = summarize(results, TimetablePlannerTask.rubric.names)
    assert {"score", "steps", "invalid_actions", "noop_actions", "submitted"} <= set(summary)
    assert set(summary["groups"]) == {"difficulty easy", "difficulty hard"}
    assert "steps" in summary["groups"]["difficulty hard"]
    assert np.isclose(summary["reward"], np.mean([r.reward for r in results]))
