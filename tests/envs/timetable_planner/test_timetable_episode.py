"""The step pipeline (RULES 3.2): penalties, budget, submit and its bonus, the end of episode."""

from __future__ import annotations

import pickle
import random

import pytest
from timetable_fixtures import ASSIGN, random_action

from meeting_gym.envs.timetable_planner.domain.actions import Action
from meeting_gym.envs.timetable_planner.domain.catalogue import CATALOGUE_IDS, get_scenario
from meeting_gym.envs.timetable_planner.domain.episode import (
    INVALID_PENALTY,
    NOOP_PENALTY,
    SUBMIT_BONUS,
    TimetableEpisode,
)


def test_a_valid_action_earns_the_score_delta():
    episode = TimetableEpisode(get_scenario("easy_1"))
    before = episode.score
    result = episode.step(ASSIGN)
    assert result.outcome == "apply" and result.action == Action.assign("E1_S1", 0, 0, "R2")
    assert result.reward == pytest.approx(result.scores.overall_score - before, abs=1e-15)
    assert result.action_error is None and result.action_penalty is None
    assert (result.remaining_budget, episode.step_count) == (19, 1)


def test_invalid_and_noop_cost_their_penalty_and_a_unit_of_budget():
    episode = TimetableEpisode(get_scenario("easy_1"))
    episode.step(ASSIGN)
    scores = episode.scores
    invalid = episode.step(ASSIGN)  # assigned twice
    assert (invalid.outcome, invalid.reward, invalid.action_penalty) == (
        "invalid",
        INVALID_PENALTY,
        INVALID_PENALTY,
    )
    noop = episode.step({**ASSIGN, "action_type": "move_session"})
    assert (noop.outcome, noop.reward, noop.action_penalty, noop.action_error) == (
        "noop",
        NOOP_PENALTY,
        NOOP_PENALTY,
        None,
    )
    parse = episode.step({"action_type": None})
    assert (parse.outcome, parse.action, parse.reward) == ("invalid", None, INVALID_PENALTY)
    assert episode.scores == scores and episode.remaining_budget == 16
    assert (episode.invalid_actions, episode.noop_actions) == (2, 1)


def test_the_step_that_spends_the_last_unit_truncates_and_then_step_raises():
    episode = TimetableEpisode(get_scenario("easy_1"))
    for _ in range(19):
        assert not episode.step({"action_type": "unassign_session", "session_id": "E1_S1"}).done
    last = episode.step({"action_type": "unassign_session", "session_id": "E1_S1"})
    assert (last.truncated, last.terminated, last.remaining_budget) == (True, False, 0)
    assert last.reward == NOOP_PENALTY  # no terminal adjustment
    with pytest.raises(RuntimeError, match="episode is over"):
        episode.step({"action_type": "submit_timetable"})


def test_a_submit_on_the_last_unit_terminates():
    episode = TimetableEpisode(get_scenario("easy_1"))
    for _ in range(19):
        episode.step({"action_type": "bogus"})
    result = episode.step({"action_type": "submit_timetable"})
    assert (result.terminated, result.truncated, result.remaining_budget) == (True, False, 0)


def test_submit_bonus_needs_a_score_of_at_least_0_90():
    low = TimetableEpisode(get_scenario("easy_1"))
    result = low.step(Action.submit())
    assert (result.reward, result.submit_bonus, result.terminated) == (0.0, 0.0, True)
    assert result.scores.overall_score == pytest.approx(0.65)  # D17: the empty easy timetable
    high = TimetableEpisode(get_scenario("hard_1"), start="baseline")
    assert high.score >= 0.90
    result = high.step(Action.submit())
    assert (result.reward, result.submit_bonus, result.action_penalty) == (
        SUBMIT_BONUS,
        SUBMIT_BONUS,
        None,
    )


# RULES section 9: the baseline's overall score once the disruption is applied
BASELINES = {
    "hard_1": (0.950, {"teacher_availability_violation": 2}),
    "hard_2": (0.952, {"room_availability_violation": 2}),
    "hard_3": (0.949, {}),
    "hard_4": (0.917, {"room_availability_violation": 2}),
    "expert_1": (0.909, {}),
    "expert_2": (0.899, {"room_availability_violation": 3}),
}


@pytest.mark.parametrize("scenario_id", sorted(BASELINES))
def test_baseline_start(scenario_id):
    score, conflicts = BASELINES[scenario_id]
    episode = TimetableEpisode(get_scenario(scenario_id), start="baseline")
    assert round(episode.score, 3) == score
    assert {k: v for k, v in episode.conflicts.as_dict().items() if v} == conflicts
    assert episode.scores.stability_score == 1.0
    if scenario_id == "hard_3":  # the added session is not in the baseline (D9)
        assert episode.scores.coverage_score < 1.0
    # D2: by default every episode starts from the (empty) initial timetable
    assert len(TimetableEpisode(get_scenario(scenario_id)).timetable) == 0


def test_unknown_start_is_an_error():
    with pytest.raises(ValueError, match="unknown start 'base'"):
        TimetableEpisode(get_scenario("hard_1"), start="base")


def test_an_action_object_and_its_json_step_the_same():
    a, b = TimetableEpisode(get_scenario("medium_4")), TimetableEpisode(get_scenario("medium_4"))
    rng = random.Random(2)
    for _ in range(30):
        raw = random_action(rng, a.problem, a.timetable)
        parsed = a.parse(raw)
        ra = a.step(raw)
        rb = b.step(parsed)
        assert ra == rb


def _play(scenario_id: str, seed: int, steps: int) -> list:
    episode = TimetableEpisode(get_scenario(scenario_id))
    rng = random.Random(seed)
    out = []
    for _ in range(steps):
        if episode.done:
            break
        out.append(episode.step(random_action(rng, episode.problem, episode.timetable)))
    return out


def test_defect_D5_concurrent_episodes_do_not_interfere():
    """Old: the predecessor's server allowed one session at a time (max_concurrent_envs=1).

    New: an episode is a self-contained object over an immutable, shared problem; any
    number of them, on the same or different scenarios, interleaved, give exactly what
    each gives alone. (The server that hosts them is a later increment.)
    """
    plan = [(sid, seed) for seed, sid in enumerate(["hard_2", "hard_2", "easy_1", "expert_2"])]
    alone = [_play(sid, seed, 40) for sid, seed in plan]
    episodes = [TimetableEpisode(get_scenario(sid)) for sid, _ in plan]
    rngs = [random.Random(seed) for _, seed in plan]
    together: list[list] = [[] for _ in plan]
    for _ in range(40):
        for i, episode in enumerate(episodes):
            if not episode.done:
                together[i].append(
                    episode.step(random_action(rngs[i], episode.problem, episode.timetable))
                )
    assert together == alone


def test_defect_D15_a_step_acts_on_its_own_episode():
    """Old: over HTTP each request built a fresh env, so a step after ``reset(hard_2)``
    acted on an auto-reset ``easy_1``; and a step before any reset auto-reset to the
    round-robin scenario.

    New: there is no implicit scenario: an episode is made from one, every step acts on
    it, and it survives a pickle round trip (a server can keep or ship it between
    requests) and continues identically.
    """
    episode = TimetableEpisode(get_scenario("hard_2"))
    episode.step(
        {
            "action_type": "assign_session",
            "session_id": "H1_S1",
            "day": 0,
            "start_slot": 0,
            "room_id": "HR1",
        }
    )
    copy = pickle.loads(pickle.dumps(episode))
    assert (
        copy.scenario.scenario_id == "hard_2"
        and copy.timetable.as_dict() == episode.timetable.as_dict()
    )
    rng_a, rng_b = random.Random(9), random.Random(9)
    for _ in range(20):
        a = episode.step(random_action(rng_a, episode.problem, episode.timetable))
        b = copy.step(random_action(rng_b, copy.problem, copy.timetable))
        assert a == b
    with pytest.raises(TypeError):
        TimetableEpisode()  # type: ignore[call-arg]


@pytest.mark.parametrize("scenario_id", CATALOGUE_IDS)
def test_total_reward_is_the_score_change_plus_penalties_and_bonus(scenario_id):
    episode = TimetableEpisode(get_scenario(scenario_id))
    start = episode.score
    penalties = bonus = 0.0
    rng = random.Random(len(scenario_id))
    while not episode.done:
        raw = random_action(rng, episode.problem, episode.timetable)
        if rng.random() < 0.03:
            raw = {"action_type": "submit_timetable"}
        result = episode.step(raw)
        penalties += result.action_penalty or 0.0
        bonus += result.submit_bonus
    assert episode.total_reward == pytest.approx(
        episode.score - start + penalties + bonus, abs=1e-9
    )
