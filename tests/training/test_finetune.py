"""The SFT rows, system prompts and intervals of examples/train_grpo.py (no model needed)."""

from __future__ import annotations

import json
import math
import random
from statistics import fmean, stdev

import gymnasium as gym
import pytest

import meeting_gym
from meeting_gym.agentkit.prompts import SHORT_PROMPTS, system_prompt_for
from meeting_gym.core.registry import task_class
from meeting_gym.core.splits import export_split
from meeting_gym.evaluation.intervals import mean_interval, paired_interval
from meeting_gym.training.finetune import first_call_rows, sft_rows

SINGLE_TURN = [e for e in meeting_gym.ENV_IDS if task_class(e).max_turns == 1]


@pytest.mark.parametrize("env_id", SINGLE_TURN)
def test_every_sft_target_is_the_exported_gold_and_earns_the_maximum(tmp_path, env_id):
    path = tmp_path / "train.jsonl"
    export_split("train", path, 40, env=env_id)
    exported = [json.loads(line) for line in path.read_text().splitlines()]
    rows = sft_rows(path)
    assert len(rows) == len(exported) == 40
    env = gym.make(env_id, mode="text")
    for row, line in zip(rows, exported, strict=True):
        system, user = row["prompt"]
        (reply,) = row["completion"]
        assert user == {"role": "user", "content": line["question"]}
        assert reply["role"] == "assistant" and line["answer"] in reply["content"]
        _, info = env.reset(options=line["options"])
        assert system == {"role": "system", "content": info["system_prompt"]}  # the env's own
        _, reward, terminated, _, _ = env.step(reply["content"])  # graded again, here
        assert terminated and math.isclose(reward, env.unwrapped.task.max_reward)


def test_a_short_system_prompt_replaces_the_envs_own_and_a_bad_export_is_refused(tmp_path):
    path = tmp_path / "train.jsonl"
    export_split("train", path, 3, env="CalendarMath-v0", task="add_days")
    rows = sft_rows(path, SHORT_PROMPTS["CalendarMath-v0"])
    assert {r["prompt"][0]["content"] for r in rows} == {SHORT_PROMPTS["CalendarMath-v0"]}
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    lines[1]["answer"] = "1999-01-01"  # a wrong gold in the file: never trained on
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.raises(ValueError, match=lines[1]["id"]):
        sft_rows(path)
    lines[1] = dict(lines[0], question="What date is it?")
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.raises(ValueError, match="not the exported one"):
        sft_rows(path)


def test_system_prompt_choices():
    assert system_prompt_for("CalendarMath-v0", "env") is None
    assert system_prompt_for("CalendarMath-v0", "short") == SHORT_PROMPTS["CalendarMath-v0"]
    assert system_prompt_for("CalendarMath-v0", "Be brief.") == "Be brief."
    with pytest.raises(ValueError, match="no short system prompt for TimetablePlanner-v0"):
        system_prompt_for("TimetablePlanner-v0", "short")
    with pytest.raises(ValueError, match="empty"):
        system_prompt_for("CalendarMath-v0", "  ")
    # each short prompt names the answer block(s) its env's rubric reads
    assert "<answer>" in SHORT_PROMPTS["CalendarMath-v0"]
    assert "<cron>" in SHORT_PROMPTS["CronSchedule-v0"]
    assert "<times>" in SHORT_PROMPTS["CronSchedule-v0"]
    assert "<answer>" in SHORT_PROMPTS["MeetingSlot-v0"]


def test_intervals_match_the_normal_approximation():
    rng = random.Random(3)
    before = [rng.choice((0.0, 0.2, 0.3, 1.2)) for _ in range(300)]
    after = [b + rng.choice((0.0, 0.0, 1.0, -0.1)) for b in before]
    mean, half = mean_interval(before)
    assert mean == pytest.approx(fmean(before))
    assert half == pytest.approx(1.96 * stdev(before) / math.sqrt(300))
    diff, diff_half = paired_interval(after, before)
    deltas = [a - b for a, b in zip(after, before, strict=True)]
    assert diff == pytest.approx(fmean(deltas))
    assert diff_half == pytest.approx(1.96 * stdev(deltas) / math.sqrt(300))
    assert mean_interval([0.5]) == (0.5, 0.0)
    with pytest.raises(ValueError, match="unpaired"):
        paired_interval([1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="no values"):
        mean_interval([])


def test_first_call_rows_hold_the_reference_policys_first_call_which_the_env_answers():
    from meeting_gym.adapters.trl import environment_factory

    rows = first_call_rows("MeetingSlot-v0", 5, SHORT_PROMPTS["MeetingSlot-v0"])
    assert len(rows) == 5
    tools = environment_factory("MeetingSlot-v0")()
    for index, row in enumerate(rows):
        system, user = row["prompt"]
        assert system["content"] == SHORT_PROMPTS["MeetingSlot-v0"]
        assert user["role"] == "user" and user["content"].startswith("Find the earliest UTC start")
        (reply,) = row["completion"]
        assert reply["role"] == "assistant" and reply["content"] == ""
        (call,) = reply["tool_calls"]
        assert call["type"] == "function"
        # the call, made the way TRL makes it (the method of that name), reaches the env
        tools.reset(split="train", index=index)
        result = getattr(tools, call["function"]["name"])(**call["function"]["arguments"])
        assert json.loads(result) and not result.startswith("error:")
    with pytest.raises(ValueError, match="first turn is not a tool call"):
        first_call_rows("TimetablePlanner-v0", 1)
