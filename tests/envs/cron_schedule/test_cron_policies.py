"""CronSchedule's reference policies: gold 1.0 and noop 0.0 everywhere, naive's bounds, random.

Policies act from the question text and reset info only; these tests play them through
the task's own question, reset info and grader (the env adds nothing to either).
"""

from __future__ import annotations

import pytest

from meeting_gym.agents.policies import make_policy
from meeting_gym.core.splits import load_split
from meeting_gym.envs.cron_schedule.policies import naive_answer, read_question
from meeting_gym.envs.cron_schedule.task import CronScheduleTask

ENV = "CronSchedule-v0"
TASK = CronScheduleTask()
LEVELS = ("1", "2", "3", "4")


def play(name: str, item, seed: int = 0) -> float:
    policy = make_policy(name, seed=seed, env=ENV)
    info = {"difficulty": item.difficulty, **TASK.reset_info(item), "tools": []}
    assert item.gold not in str(info)  # reset info never carries the answer
    policy.reset(item.question, info, seed=seed)
    grade, _ = TASK.grade(item, TASK.truth(item), policy.act(item.question))
    return grade.reward


def rewards(name: str, level: str, n: int) -> list[float]:
    items = load_split("train", n=n, seed=5, difficulty=level, env=ENV)
    return [play(name, item, seed=i) for i, item in enumerate(items)]


@pytest.mark.parametrize("level", LEVELS)
def test_gold_scores_1_and_noop_0_on_1000_tasks_per_level(level):
    assert rewards("gold", level, 1000) == [1.0] * 1000
    assert rewards("noop", level, 1000) == [0.0] * 1000


def test_naive_scores_at_least_0_9_on_level_1_and_at_most_0_7_on_levels_3_and_4():
    means = {level: sum(rewards("naive", level, 1000)) / 1000 for level in LEVELS}
    assert means["1"] >= 0.9, means
    assert means["3"] <= 0.7 and means["4"] <= 0.7, means


def test_random_is_reproducible_and_scores_near_zero():
    assert rewards("random", "2", 200) == rewards("random", "2", 200)
    assert sum(rewards("random", "3", 300)) / 300 < 0.05


def test_no_policy_sees_the_reference_of_a_write_task():
    for item in load_split("train", n=200, seed=1, env=ENV, task="write"):
        info = TASK.reset_info(item)
        assert item.expression not in item.question and item.expression not in str(info)


# ----------------------------------------------------------------------------- naive's mistakes


def _naive(question: str) -> str:
    return naive_answer(read_question(question))


def _read_question(expression: str, start: str, n: int = 3) -> str:
    from meeting_gym.envs.cron_schedule.items import question_text

    return question_text("read", expression, "", start, n)


def test_naive_reads_the_or_rule_as_and():
    # 2024-11-13 is a Wednesday: Vixie fires on it (OR), the naive policy waits for a
    # Friday the 13th
    answer = _naive(_read_question("0 9 13 * FRI", "2024-11-07 12:00", 1))
    assert answer == "2024-12-13 09:00"


def test_naive_numbers_weekdays_from_1_as_sunday():
    # it reads 1 as Sunday: the Mondays of 1-5 become Sunday..Thursday
    answer = _naive(_read_question("0 9 * * 1", "2024-01-01 12:00", 1))
    assert answer == "2024-01-07 09:00"  # a Sunday
    # names it reads right
    assert _naive(_read_question("0 9 * * MON", "2024-01-01 12:00", 1)) == "2024-01-08 09:00"
    write = "Schedule: At 09:00 on Mondays.\n\n"
    assert _naive(write) == "0 9 * * 2"


def test_naive_counts_the_start_when_it_fires():
    answer = _naive(_read_question("0 9 * * *", "2024-01-01 09:00", 2))
    assert answer.splitlines() == ["2024-01-01 09:00", "2024-01-02 09:00"]


def test_naive_writes_an_and_as_two_plain_lists():
    write = "Schedule: At 00:00 on Mondays that fall on an odd-numbered date.\n\n"
    assert _naive(write) == "0 0 1,3,5,7,9,11,13,15,17,19,21,23,25,27,29,31 * 2"


def test_a_foreign_question_is_refused():
    with pytest.raises(ValueError, match="not a CronSchedule question"):
        read_question("What date is 3 days after 2024-02-28?")
