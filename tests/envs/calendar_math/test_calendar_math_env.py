"""CalendarMath-v0 as an environment: the family's shell around its task, end to end."""

from __future__ import annotations

import json
from collections import Counter

import gymnasium as gym
import pytest

import meeting_gym  # noqa: F401
from meeting_gym.agents.policies import make_policy
from meeting_gym.cli import main
from meeting_gym.core.splits import load_split
from meeting_gym.envs.calendar_math.curated import CURATED
from meeting_gym.envs.calendar_math.items import Item
from meeting_gym.evaluation.evaluate import evaluate, summarize

ENV = "CalendarMath-v0"


@pytest.fixture
def env():
    made = gym.make(ENV)
    yield made
    made.close()


def test_one_reply_ends_the_episode_with_the_rubric(env):
    observation, info = env.reset(options={"split": "curated", "index": 0})
    assert observation == CURATED[0].question
    assert (info["item_id"], info["task_type"], info["inputs"]) == (
        "add_leap_feb28",
        "add_days",
        {"start": "2024-02-28", "n": 1},
    )
    assert info["tools"] == [] and "<answer>" in info["system_prompt"]
    _, reward, terminated, truncated, end = env.step("Leap year, so <answer>2024-02-29</answer>")
    assert (reward, terminated, truncated) == (1.2, True, False)
    assert (end["exact_match"], end["format"], end["partial_credit"]) == (1.0, 1.0, 0.0)
    assert (end["answer"], end["gold"], end["answered"]) == ("2024-02-29", "2024-02-29", True)


@pytest.mark.parametrize(
    "reply, reward",
    [
        ("<answer>2024-03-01</answer>", 0.3),  # one day off
        ("<answer>2024-02-29</answer> <answer>2024-03-01</answer>", 1.2),  # the first counts
        ("<answer>2024-03-01</answer> <answer>2024-02-29</answer>", 0.3),
        ("<answer>2024-02-29 or 2024-03-01</answer>", 0.2),  # two answers in one block
        ("<answer>It is 2024-02-29</answer>", 0.2),  # extra words
        ("<answer>\uff12\uff10\uff12\uff14-\uff10\uff12-\uff12\uff19</answer>", 0.2),  # full-width
        ("<answer>2024/02/29</answer>", 0.2),
        ("2024-02-29", 0.0),  # no block
        ("<answer >2024-02-29</answer>", 0.0),  # not a tag (the predecessor's rule)
    ],
)
def test_reward_hacking_through_step(env, reply, reward):
    env.reset(options={"split": "curated", "index": 0})
    assert env.step(reply)[1] == pytest.approx(reward)


def test_a_non_string_reply_is_an_error_observation_and_uses_the_turn(env):
    env.reset(seed=0)
    observation, reward, terminated, truncated, info = env.step(12345)
    assert observation.startswith("error:") and "string" in observation
    assert (reward, terminated, truncated, info["answered"]) == (0.0, False, True, False)
    with pytest.raises(RuntimeError, match="call reset"):
        env.step("<answer>Monday</answer>")


def test_task_pins_one_task_type_everywhere():
    env = gym.make(ENV, task="weekday")
    env.reset(seed=1)
    types = {env.reset()[1]["task_type"] for _ in range(30)}
    assert types == {"weekday"}
    assert {i.task_type for i in load_split("eval", n=40, env=ENV, task="weekday")} == {"weekday"}
    assert [i.id for i in load_split("curated", env=ENV, task="weekday")] == [
        c.id for c in CURATED if c.task_type == "weekday"
    ]
    with pytest.raises(ValueError, match="unknown task 'weekdays'"):
        gym.make(ENV, task="weekdays")


def test_the_predecessors_published_table_on_curated():
    """RULES section 7: gold 1.200 (1/1/0) and naive 0.768 (0.533/1.000/0.173)."""
    for policy, expected in (("gold", (1.2, 1.0, 1.0, 0.0)), ("naive", (0.768, 0.533, 1.0, 0.173))):
        summary = summarize(evaluate(lambda p=policy: make_policy(p, env=ENV), CURATED, env=ENV))
        got = tuple(
            round(summary[k], 3) for k in ("reward", "exact_match", "format", "partial_credit")
        )
        assert got == expected, policy


def test_eval_command_json_gives_1_2(capsys):
    argv = ["eval", "--env", ENV, "--policy", "gold", "--split", "curated", "--json"]
    assert main(argv) == 0
    payload = json.loads(capsys.readouterr().out)
    assert (payload["env"], payload["n"], payload["reward"]) == (ENV, 15, pytest.approx(1.2))
    assert (payload["exact_match"], payload["format"], payload["partial_credit"]) == (1, 1, 0)


def test_eval_command_takes_the_task_setting(capsys):
    argv = ["eval", "--env", ENV, "--task", "days_between", "--split", "eval", "-n", "20"]
    assert main([*argv, "--json", "--verbose"]) == 0
    payload = json.loads(capsys.readouterr().out)
    items = {i.id: i for i in load_split("eval", n=20, env=ENV, task="days_between")}
    assert [e["item_id"] for e in payload["episodes"]] == list(items)
    assert {items[e["item_id"]].task_type for e in payload["episodes"]} == {"days_between"}


def test_difference_5_train_never_holds_an_eval_question():
    """The predecessor's train split held 4 of its 100 eval questions (2 of them curated)."""
    eval_questions = {i.question for i in load_split("eval", env=ENV)}
    train = load_split("train", n=5000, env=ENV)
    assert not eval_questions & {i.question for i in train}
    # the two curated weekday questions it leaked are drawn often by hard weekday items
    hard_weekdays = load_split("train", n=3000, difficulty="hard", env=ENV, task="weekday")
    leaked = {CURATED[9].question, CURATED[10].question}
    assert {"wd_2000_jan1", "wd_1900_jan1"} == {CURATED[9].id, CURATED[10].id}
    assert not leaked & {i.question for i in hard_weekdays}
    assert len({i.question for i in hard_weekdays}) < 3000  # repeats are allowed in train


def test_difference_5_train_keeps_the_nominal_mix():
    """Dedup on a tiny boundary pool skewed the predecessor's mix (270 hard weekday rows
    against 465 hard add_days in 5,000); train draws independently and keeps 1/3 each."""
    train = load_split("train", n=6000, env=ENV)
    hard = Counter(i.task_type for i in train if i.difficulty == "hard")
    total = sum(hard.values())
    assert total == pytest.approx(0.25 * 6000, rel=0.1)
    for task_type in ("add_days", "days_between", "weekday"):
        assert hard[task_type] == pytest.approx(total / 3, rel=0.15), hard


def test_difference_8_7_a_short_eval_split_says_it_drops_curated_cases(capsys):
    """The predecessor's eval with fewer than 15 rows dropped curated cases silently."""
    with pytest.warns(UserWarning, match="keeps only the first 5 of its 15 curated items"):
        short = load_split("eval", n=5, env=ENV)
    assert short == list(CURATED[:5])  # a prefix: item i is the same whatever n is
    assert main(["eval", "--env", ENV, "--split", "eval", "-n", "5"]) == 0
    assert (
        "note: eval n=5 keeps only the first 5 of its 15 curated items" in capsys.readouterr().err
    )


def test_eval_has_no_repeats_and_starts_with_the_curated_cases():
    items = load_split("eval", n=300, env=ENV)
    assert items[:15] == list(CURATED)
    assert len({i.question for i in items}) == 300


def test_an_item_of_your_own_and_bad_items():
    env = gym.make(ENV)
    own = {"task_type": "days_between", "inputs": {"start": "1582-10-04", "end": "1582-10-15"}}
    observation, info = env.reset(options={"item": own})
    assert "1582-10-04" in observation and info["task_type"] == "days_between"
    # proleptic Gregorian: no ten days dropped in October 1582
    assert env.step("<answer>11</answer>")[1] == pytest.approx(1.2)
    with pytest.raises(ValueError, match=r"item\.inputs\.n"):
        env.reset(options={"item": {"task_type": "add_days", "inputs": {"start": "2024-01-01"}}})
    assert isinstance(env.unwrapped.task.load_item(Item.from_dict(own)), Item)


def test_import_loads_no_env_modules_until_an_env_is_made():
    import subprocess
    import sys

    code = (
        "import sys, gymnasium, meeting_gym\n"
        "assert not [m for m in sys.modules if m.startswith('meeting_gym.envs')]\n"
        "gymnasium.make('CalendarMath-v0')\n"
        "assert not [m for m in sys.modules if m.startswith('meeting_gym.envs.meeting_slot')]\n"
        "for heavy in ('torch', 'openai', 'stable_baselines3', 'PIL', 'pygame'):\n"
        "    assert heavy not in sys.modules, heavy\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
