"""Parity with the predecessor: every recorded step, replayed, gives what was recorded.

trajectories.json holds 98 trajectories (6 scripted ones for each of the 15 hand-crafted
scenarios, a greedy one for each of the 8 generated ones) recorded from the predecessor.
Each is replayed from a fresh episode up to the end of the episode (the first recorded
``done``); at every step the reward, the end of episode, the action_error and the
action_penalty, the remaining budget, all 8 scores (within 1e-9), the 7 conflict counts
and the timetable must be the recorded ones.

Two fixed defects change recorded steps, each shown by a named test:

* D16: a fractional day (``0.9``) was truncated (to a no-op move, -0.01); it is now an
  action_error (-0.02). The timetable is unchanged either way, so the rest of the
  trajectory replays as recorded.
* D3: steps after a submit were still processed (and repeated submits paid the bonus
  again); a submit now ends the episode, so those steps are not replayed.
"""

from __future__ import annotations

import json
import random

import pytest
from timetable_fixtures import (
    given_but_refused,
    has_fraction,
    recording,
    reference,
    trajectories,
    trajectory_keys,
)

from meeting_gym.envs.timetable_planner.domain.catalogue import CATALOGUE_IDS, get_scenario
from meeting_gym.envs.timetable_planner.domain.episode import (
    INVALID_PENALTY,
    NOOP_PENALTY,
    TimetableEpisode,
)
from meeting_gym.envs.timetable_planner.domain.generator import generate_dict, predecessor_id
from meeting_gym.envs.timetable_planner.observation import observation_dict

TOLERANCE = 1e-9


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= TOLERANCE


def test_catalogue_is_the_predecessor_round_robin_order():
    recorded = reference("trajectories.json")["round_robin_order_fresh_instance"]
    assert list(CATALOGUE_IDS) == recorded[:23]
    assert recorded[23] == recorded[0]  # then it wraps around


def test_generated_scenarios_are_the_recorded_ones_byte_for_byte():
    for g in reference("trajectories.json")["generated"]:
        made = generate_dict(
            random.Random(g["seed"]),
            g["task_name"],
            predecessor_id(g["task_name"], g["seed"]),
        )
        assert json.dumps(made) == json.dumps(g["scenario"]), g["scenario_id"]
        assert get_scenario(g["scenario_id"]).to_dict() == g["scenario"]


def test_empty_timetable_scores_and_conflicts():
    data = reference("trajectories.json")
    for s in data["scenarios"]:
        episode = TimetableEpisode(get_scenario(s["scenario_id"]))
        assert episode.conflicts.as_dict() == s["empty_timetable_conflicts"]
        for key, value in s["empty_timetable_score"].items():
            assert _close(episode.scores.as_dict()[key], value), (s["scenario_id"], key)
        assert _close(episode.score, data["empty_timetable_overall_score"][s["scenario_id"]])
    for g in data["generated"]:
        episode = TimetableEpisode(get_scenario(g["scenario_id"]))
        for key, value in g["empty_timetable_score"].items():
            assert _close(episode.scores.as_dict()[key], value), (g["scenario_id"], key)


@pytest.mark.parametrize("index", range(15))
def test_reset_observation_is_the_recorded_one(index):
    recorded = reference("trajectories.json")["scenarios"][index]
    observation = observation_dict(TimetableEpisode(get_scenario(recorded["scenario_id"])))
    for key, value in recorded["reset_observation"].items():
        # byte for byte: same values, same key order, same list order
        assert json.dumps(observation[key]) == json.dumps(value), key


def _check_step(where: str, result, episode, step: dict) -> None:
    scores = result.scores.as_dict()
    assert scores.keys() == step["score_breakdown"].keys(), where
    for key, value in step["score_breakdown"].items():
        assert _close(scores[key], value), (where, key, scores[key], value)
    assert result.conflicts.as_dict() == step["conflict_summary"], where
    assert episode.timetable.as_dict() == step["timetable"], where
    assert result.remaining_budget == step["remaining_step_budget"], where
    assert result.done == step["done"], where
    if has_fraction(step["action"]):
        # D16 (test_defect_D16_...): the predecessor truncated the day to a no-op move
        assert step["action_error"] is None and step["action_penalty"] == NOOP_PENALTY, where
        assert result.action_error.startswith("day must be an integer"), where
        assert result.action_penalty == INVALID_PENALTY, where
        assert _close(result.reward, step["reward"] - NOOP_PENALTY + INVALID_PENALTY), where
    else:
        field = given_but_refused(step)
        if field is None:
            assert result.action_error == step["action_error"], where
        else:  # test_a_given_but_refused_day_or_start_slot_is_named_not_called_missing
            assert result.action_error.startswith(f"{field} must be an integer"), where
        assert result.action_penalty == step["action_penalty"], where
        assert _close(result.reward, step["reward"]), (where, result.reward, step["reward"])


@pytest.mark.parametrize("key", trajectory_keys())
def test_replayrecorded(key):
    sid, trajectory = recording(key)
    episode = TimetableEpisode(get_scenario(sid))
    for key_, value in trajectory["reset"]["score_breakdown"].items():
        assert _close(episode.scores.as_dict()[key_], value)
    assert episode.conflicts.as_dict() == trajectory["reset"]["conflict_summary"]
    replayed = 0
    for number, step in enumerate(trajectory["steps"]):
        if step["after_done"]:
            break
        result = episode.step(step["action"])
        _check_step(f"{key} step {number}", result, episode, step)
        replayed += 1
    # the replay stops exactly where the predecessor first said done, and so do we
    assert episode.done
    assert trajectory["steps"][replayed - 1]["done"]
    assert all(s["after_done"] for s in trajectory["steps"][replayed:])


def test_replay_covers_every_recorded_step_before_the_end():
    """Counts the replay: every step before the end is replayed, and nothing else."""
    total = replayed = after = fractions = 0
    for _, trajectory in trajectories():
        for step in trajectory["steps"]:
            total += 1
            if step["after_done"]:
                after += 1
            else:
                replayed += 1
                fractions += has_fraction(step["action"])
    assert replayed + after == total
    assert replayed > 0 and fractions > 0
    # RULES section 12: 98 trajectories, 1794 steps, of which 106 come after done
    assert (len(trajectories()), total, after) == (98, 1794, 106)
    # the decision rests on this: every step_budget_exhausted reply (RULES 3.2
    # step 3) came after the episode had ended, so ending it there loses nothing recorded
    exhausted = [
        step
        for _, trajectory in trajectories()
        for step in trajectory["steps"]
        if step["action_error"] == "step_budget_exhausted"
    ]
    assert len(exhausted) == 30 and all(step["after_done"] for step in exhausted)


def test_defect_D16_fractional_day_was_truncated_now_an_error():
    """Old: ``day = 0.9`` was truncated to 0, a no-op move (-0.01, no error).

    New: a fractional day is an action_error (-0.02); the timetable is unchanged either
    way. Why: truncation silently turns a malformed action into a different, valid one
    (``-0.5`` became day 0).
    """
    seen = 0
    for sid, trajectory in trajectories():
        episode = TimetableEpisode(get_scenario(sid))
        for step in trajectory["steps"]:
            if step["after_done"]:
                break
            before = episode.timetable.as_dict()
            result = episode.step(step["action"])
            if has_fraction(step["action"]):
                seen += 1
                assert step["action_error"] is None
                assert step["action_penalty"] == NOOP_PENALTY
                assert result.action_error == (
                    "day must be an integer (0-based, 0 to 4) or a day name "
                    f"(Mon, Tue, Wed, Thu, Fri), got {step['action']['day']!r}"
                )
                assert result.action_penalty == INVALID_PENALTY
                assert result.outcome == "invalid"
                assert episode.timetable.as_dict() == before == step["timetable"]
    assert seen == 15  # one per hand-crafted scenario (edge_invalid)


def test_a_given_but_refused_day_or_start_slot_is_named_not_called_missing():
    """Old: ``"day": "Someday"``, ``"day": true`` and ``"start_slot": "1.5"`` were told
    ``missing required fields: day ...`` / ``start_slot``, though the field was there.

    New: the message names the field, the value given and the values it may take; the
    penalty (an invalid action, -0.02) and everything else stay as recorded. Why: "missing"
    sends an agent looking for a field it already sent.
    """
    seen: dict[str, int] = {"day": 0, "start_slot": 0}
    for sid, trajectory in trajectories():
        episode = TimetableEpisode(get_scenario(sid))
        for step in trajectory["steps"]:
            if step["after_done"]:
                break
            result = episode.step(step["action"])
            field = given_but_refused(step)
            if field is None:
                continue
            seen[field] += 1
            value = step["action"][field]
            assert step["action_error"].startswith("missing required fields: ")
            if field == "day":
                assert result.action_error == (
                    "day must be an integer (0-based, 0 to 4) or a day name "
                    f"(Mon, Tue, Wed, Thu, Fri), got {value!r}"
                )
            else:
                expected = f"start_slot must be an integer (0-based), got {value!r}"
                assert result.action_error == expected
            assert result.action_penalty == step["action_penalty"] == INVALID_PENALTY
            assert result.outcome == "invalid"
    # edge_invalid sends "Someday" in some scenarios and true and "1.5" in each one
    assert seen["day"] > 15 and seen["start_slot"] >= 15, seen


def test_defect_D3_submit_ends_the_episode():
    """Old: after a submit said done, the predecessor kept applying actions and paid the
    +0.05 bonus again on every repeated submit (recorded in ``greedy_submit``).

    New: the submit ends the episode (terminated); a further step raises, so a loop that
    ignores ``done`` cannot farm the bonus. Why: the bonus rewards finishing, once.
    """
    farmed = changed_after_submit = 0
    for sid, trajectory in trajectories():
        steps = trajectory["steps"]
        first_done = next((i for i, s in enumerate(steps) if s["done"]), None)
        if first_done is None or steps[first_done]["action"].get("action_type") is None:
            continue
        if str(steps[first_done]["action"]["action_type"]).strip() != "submit_timetable":
            continue
        after = steps[first_done + 1 :]
        farmed += sum(
            1
            for s in after
            if str(s["action"].get("action_type")).strip() == "submit_timetable"
            and s["reward"] > 0
            and s["action_error"] is None
        )
        changed_after_submit += sum(
            1 for s in after if s["timetable"] != steps[first_done]["timetable"]
        )
        episode = TimetableEpisode(get_scenario(sid))
        for s in steps[: first_done + 1]:
            result = episode.step(s["action"])
        assert result.terminated and not result.truncated
        assert result.submit_bonus == (0.05 if result.scores.overall_score >= 0.90 else 0.0)
        if after:
            with pytest.raises(RuntimeError, match="episode is over"):
                episode.step(after[0]["action"])
    # the recordings do show the old behaviour
    assert farmed > 0 and changed_after_submit > 0
