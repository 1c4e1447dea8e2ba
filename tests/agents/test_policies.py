"""Reference policies through the text interface, and the eval command's table."""

from __future__ import annotations

import json

import pytest

from meeting_gym.agents.policies import make_policy
from meeting_gym.cli import main
from meeting_gym.core.splits import load_split
from meeting_gym.envs.meeting_slot.policies import GoldPolicy, NaivePolicy, RandomPolicy
from meeting_gym.evaluation.evaluate import evaluate, summarize

NAIVE_ANSWERS = {  # the predecessor's published naive answers on the curated split
    "same_tz_empty_busy": "2024-03-11T09:00:00Z",
    "overlapping_busy": "2024-03-11T14:01:00Z",
    "no_overlap_ny_kolkata": "2024-03-11T09:00:00Z",
    "weekend_skip_dst": "2024-03-11T09:00:00Z",
    "dst_us_spring_monday": "2024-03-11T09:00:00Z",
    "inclusive_busy_utc": "2024-03-11T11:01:00Z",
    "gap_30min": "2024-03-11T16:01:00Z",
    "gap_60min": "NONE",
    "four_person_summer": "2024-06-10T09:00:00Z",
    "sydney_ny_none": "2024-06-10T09:00:00Z",
    "shanghai_tokyo": "2024-03-11T09:00:00Z",
    "last_friday_slot": "2024-03-11T09:00:00Z",
    "dst_eu_monday": "2024-04-01T09:00:00Z",
    "three_person_busy": "2024-06-10T14:01:00Z",
    "no_slot_fully_booked": "NONE",
}


def test_gold_on_curated_is_perfect():
    summary = summarize(evaluate(GoldPolicy, load_split("curated")))
    assert (
        round(summary["reward"], 3),
        summary["exact_match"],
        summary["format"],
        summary["partial_credit"],
    ) == (1.2, 1.0, 1.0, 0.0)


def test_naive_on_curated_matches_the_predecessor():
    results = evaluate(NaivePolicy, load_split("curated"))
    assert {r.item_id: r.answer for r in results} == NAIVE_ANSWERS
    summary = summarize(results)
    assert round(summary["reward"], 3) == 0.293
    assert round(summary["exact_match"], 3) == 0.067
    assert summary["format"] == 1.0
    assert round(summary["partial_credit"], 3) == 0.133


@pytest.mark.parametrize("difficulty", ["easy", "medium", "hard", "expert"])
def test_gold_policy_is_perfect_on_generated(difficulty):
    results = evaluate(GoldPolicy, load_split("train", n=60, seed=7, difficulty=difficulty))
    assert all(r.reward == pytest.approx(1.2) for r in results), [
        (r.item_id, r.gold, r.answer) for r in results if r.reward < 1.2
    ]


def test_random_policy_is_reproducible_and_scored():
    scenarios = load_split("eval", n=30)
    first = evaluate(lambda: RandomPolicy(seed=1), scenarios, seed=1)
    second = evaluate(lambda: RandomPolicy(seed=1), scenarios, seed=1)
    assert [r.as_dict() for r in first] == [r.as_dict() for r in second]
    assert 0.0 <= summarize(first)["reward"] < 0.6


def test_unknown_policy():
    with pytest.raises(ValueError, match="unknown policy"):
        make_policy("oracle")


def test_eval_command_prints_the_curated_figures(capsys):
    assert main(["eval", "--policy", "gold", "--split", "curated"]) == 0
    out = capsys.readouterr().out
    assert "avg reward      1.200" in out and "exact           1.000" in out
    assert main(["eval", "--policy", "naive", "--split", "curated", "--verbose"]) == 0
    out = capsys.readouterr().out
    assert "avg reward      0.293" in out and "partial         0.133" in out
    assert "gap_60min" in out


def test_eval_command_json(capsys):
    assert main(["eval", "--policy", "gold", "--split", "eval", "-n", "20", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["n"] == 20 and payload["reward"] == pytest.approx(1.2)


def test_export_command(tmp_path, capsys):
    out = tmp_path / "train.jsonl"
    assert main(["export", "--split", "train", "-n", "5", "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 5 and {"question", "answer", "info"} <= set(rows[0])


@pytest.mark.parametrize("env_id", ["MeetingSlot-v0", "CalendarMath-v0", "CronSchedule-Tools-v0",
                                    "TimetablePlanner-v0"])  # fmt: skip
def test_every_reference_policy_is_an_agent_the_one_loop_plays(env_id):
    """One agent interface: a policy goes to play() as it is, as a model or a network does,
    and plays exactly what the 0.2 wrapper (deprecated) played."""
    import gymnasium as gym

    from meeting_gym.agents.policies import TextPolicyAgent, policy_names
    from meeting_gym.core.loop import play

    env = gym.make(env_id, mode="text")
    options = {"split": "curated", "index": 1}
    for name in policy_names(env_id):
        direct = play(env, make_policy(name, seed=5, env=env_id), seed=5, options=options)
        with pytest.warns(DeprecationWarning, match="a Policy is an Agent"):
            wrapped_agent = TextPolicyAgent(make_policy(name, seed=5, env=env_id))
        wrapped = play(env, wrapped_agent, seed=5, options=options)
        assert direct.error is None and direct.done, name
        assert (direct.rewards, direct.turns) == (wrapped.rewards, wrapped.turns), name
        assert direct.info["answer"] == wrapped.info["answer"], name
