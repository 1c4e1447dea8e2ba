"""CronSchedule-v0 and CronSchedule-Tools-v0 as environments: the family's shell, end to end."""

from __future__ import annotations

import json
from datetime import datetime

import cron_oracle
import gymnasium as gym
import pytest

import meeting_gym  # noqa: F401
from meeting_gym.cli import main
from meeting_gym.core.splits import load_split
from meeting_gym.envs.cron_schedule.curated import CURATED, CURATED_BY_ID
from meeting_gym.envs.cron_schedule.items import CronItem, ItemError

ENV, TOOLS = "CronSchedule-v0", "CronSchedule-Tools-v0"


@pytest.fixture
def env():
    made = gym.make(ENV)
    yield made
    made.close()


def _curated(env, item_id: str):
    index = [item.id for item in CURATED].index(item_id)
    return env.reset(options={"split": "curated", "index": index})


# ----------------------------------------------------------------------------- single turn


def test_a_write_task_end_to_end(env):
    observation, info = _curated(env, "write_or_13th_or_friday")
    assert observation.startswith("Schedule: At 09:00 on the 13th of the month and also on")
    assert "<cron>" in observation and "<cron>" in info["system_prompt"] and info["tools"] == []
    assert (info["kind"], info["answer_tag"], info["difficulty"]) == ("write", "cron", "3")
    assert info["both_days_restricted"] is True and "expression" not in info
    _, reward, terminated, truncated, end = env.step("Both rules apply: <cron>0 9 13 * FRI</cron>")
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert (end["correct"], end["formatted"], end["gold"]) == (1.0, 1.0, "0 9 13 * 5")
    assert end["answer"] == "0 9 13 * FRI"


def test_a_read_task_end_to_end(env):
    observation, info = _curated(env, "read_or_13th_or_friday")
    assert "Cron expression: 0 9 13 * FRI\nStart: 2024-11-07 12:00" in observation
    assert (info["kind"], info["num_times"], info["start"]) == ("read", 3, "2024-11-07 12:00")
    reply = "<times>\n2024-11-08 09:00\n2024-11-15 09:00\n2024-11-22 09:00\n</times>"
    _, reward, *_, end = env.step(reply)  # Friday the 13th thinking: only the first is right
    assert reward == pytest.approx(1 / 3) and end["formatted"] == 1.0
    assert end["gold"] == "2024-11-08 09:00\n2024-11-13 09:00\n2024-11-15 09:00"


@pytest.mark.parametrize(
    "reply, reward",
    [
        ("<cron>0 9 13 * 5</cron>", 1.0),
        ("<cron>0 9 13 * 5</cron> no, <cron>0 9 13 * 6</cron>", 0.0),  # the LAST block
        ("<cron>0 9 * * 5</cron> I mean < CRON >0 9 13 * 5</ cron >", 1.0),
        ("<cron>0 9 13 * 5 # OR rule</cron>", 0.0),
        ("<cron>`0 9 13 * 5`</cron>", 0.0),
        ("<cron>0 9 13 * 5</cron><cron>", 1.0),  # an unclosed last block is no block
        ("0 9 13 * 5", 0.0),
        ("<cron>0 9 13 * 5\n0 9 13 * 5</cron>", 0.0),
        ("<cron>0 0 9 13 * 5</cron>", 0.0),
    ],
)
def test_reward_hacking_through_step(env, reply, reward):
    _curated(env, "write_or_13th_or_friday")
    assert env.step(reply)[1] == reward


def test_many_lines_never_beat_the_truth(env):
    _curated(env, "read_sunday_as_7")
    every_day = "\n".join(f"2024-03-{d:02d} 00:00" for d in range(2, 30))
    _, reward, *_ = env.step(f"<times>{every_day}</times>")
    assert reward == pytest.approx(0 / 28)  # position by position: 03-02 is not 03-03
    _, _ = _curated(env, "read_sunday_as_7")
    sundays = "2024-03-03 00:00\n2024-03-10 00:00\n2024-03-17 00:00\n2024-03-24 00:00"
    assert env.step(f"<times>{sundays}</times>")[1] == pytest.approx(3 / 4)


def test_levels_accept_strings_and_ints_everywhere():
    for level in (3, "3"):
        env = gym.make(ENV, difficulty=level)
        _, info = env.reset(seed=1)
        assert info["difficulty"] == "3" and env.unwrapped.task.difficulty == "3"
        _, info = env.reset(options={"difficulty": 4 if level == 3 else "4"})
        assert info["difficulty"] == "4"
    assert load_split("train", n=5, difficulty=2, env=ENV) == load_split(
        "train", n=5, difficulty="2", env=ENV
    )
    for bad in (0, 5, True, "expert", 3.0):
        with pytest.raises(ValueError, match="unknown difficulty"):
            gym.make(ENV, difficulty=bad)


def test_task_and_num_times_settings():
    env = gym.make(ENV, task="read", num_times=7, difficulty=2)
    env.reset(seed=0)
    infos = [env.reset()[1] for _ in range(20)]
    assert {i["kind"] for i in infos} == {"read"} and {i["num_times"] for i in infos} == {7}
    env = gym.make(ENV, task="write")
    env.reset(seed=0)
    assert {env.reset()[1]["kind"] for _ in range(20)} == {"write"}
    assert {i.kind for i in load_split("curated", env=ENV, task="read")} == {"read"}
    with pytest.raises(ValueError, match="unknown task 'writes'"):
        gym.make(ENV, task="writes")
    for bad in (0, 51, "3", True):
        with pytest.raises(ValueError, match="num_times must be an integer from 1 to 50"):
            gym.make(ENV, num_times=bad)


def test_an_item_of_your_own_and_malformed_ones():
    env = gym.make(ENV, disable_env_checker=True)
    item = {"kind": "read", "expression": "@hourly", "start": "2024-02-29 23:30", "num_times": 2}
    observation, _info = env.reset(options={"item": item})
    assert "Cron expression: @hourly" in observation
    assert env.unwrapped.episode.gold == "2024-03-01 00:00\n2024-03-01 01:00"
    for bad, field in (
        (
            {
                "kind": "read",
                "expression": "0 0 31 2 *",
                "start": "2024-01-01 00:00",
                "num_times": 1,
            },
            "never fires",
        ),
        (
            {"kind": "read", "expression": "0 0 * * *", "start": "2024-01-01", "num_times": 1},
            "item.start",
        ),
        ({"kind": "write", "expression": "0 0 * * *"}, "item.description"),
        (
            {"kind": "write", "expression": "0 0 * * MON-SUN", "description": "x."},
            "descending range",
        ),
        (
            {
                "kind": "read",
                "expression": "0 0 * * *",
                "start": "2024-01-01 00:00",
                "num_times": 0,
            },
            "item.num_times",
        ),
        ({"kind": "guess", "expression": "0 0 * * *"}, "item.kind"),
        (
            {"kind": "write", "expression": "0 0 * * *", "description": "x.", "extra": 1},
            "unknown field",
        ),
    ):
        with pytest.raises(ItemError, match=field):
            env.reset(options={"item": bad})


def test_items_round_trip_through_dicts():
    for item in load_split("eval", n=60, env=ENV):
        assert CronItem.from_dict(json.loads(json.dumps(item.to_dict()))) == item


# ----------------------------------------------------------------------------- curated golds

# written out by hand (weekdays checked on a calendar), then checked by the oracle's walk
CURATED_TIMES = {
    "read_or_13th_or_friday": ["2024-11-08 09:00", "2024-11-13 09:00", "2024-11-15 09:00"],
    "read_or_full_dom_is_every_day": ["2024-01-04 09:00", "2024-01-05 09:00", "2024-01-06 09:00"],
    "read_or_empty_dom_side": ["2024-02-05 09:00", "2024-02-12 09:00", "2024-02-19 09:00"],
    "read_and_odd_mondays_start_on_run": [
        "2024-01-15 00:00",
        "2024-01-29 00:00",
        "2024-02-05 00:00",
    ],
    "read_feb_29_across_2100": ["2104-02-29 12:00", "2108-02-29 12:00", "2112-02-29 12:00"],
    "read_31st_in_short_months": ["2024-05-31 08:30", "2024-07-31 08:30", "2024-08-31 08:30"],
    "read_month_end_common_february": [
        "2023-02-28 00:00",
        "2023-03-28 00:00",
        "2023-03-29 00:00",
        "2023-03-30 00:00",
        "2023-03-31 00:00",
    ],
    "read_sunday_as_7": ["2024-03-03 00:00", "2024-03-10 00:00", "2024-03-17 00:00"],
    "read_range_to_7_start_on_run": ["2024-03-02 10:00", "2024-03-03 10:00", "2024-03-08 10:00"],
    "read_weekday_n_step": ["2024-01-05 00:00", "2024-01-07 00:00", "2024-01-12 00:00"],
    "read_names_mixed_case": ["2024-07-06 10:15", "2024-07-07 10:15", "2024-07-13 10:15"],
    "read_weekly_macro_start_on_run": ["2024-03-10 00:00", "2024-03-17 00:00", "2024-03-24 00:00"],
}


def test_curated_read_golds_are_the_hand_written_ones_and_the_oracles():
    reads = {item.id: item for item in CURATED if item.kind == "read"}
    assert set(reads) == set(CURATED_TIMES)
    for item_id, times in CURATED_TIMES.items():
        item = reads[item_id]
        assert list(item.times) == times, item_id
        start = datetime.strptime(item.start, "%Y-%m-%d %H:%M")
        walk = cron_oracle.walk(cron_oracle.parse(item.expression), start, len(times), 45000)
        assert walk == times, item_id


def test_curated_covers_the_issues_list():
    ids = set(CURATED_BY_ID)
    for needed in (
        "_or_",
        "_and_",
        "feb_29",
        "31st",
        "sunday",
        "names",
        "macro",
        "quarterly",
        "start_on_run",
        "n_step",
    ):
        assert any(needed in i for i in ids), needed
    assert {"write", "read"} == {item.kind for item in CURATED}


def test_render_ansi():
    env = gym.make(ENV, render_mode="ansi")
    _curated(env, "write_sunday")
    env.step("<cron>45 23 * * 7</cron>")
    text = env.render()
    assert text.startswith("[question] Schedule: At 23:45 on Sundays.")
    assert text.rstrip().endswith("[end] reward=1 (correct=1, formatted=1); gold=45 23 * * 0")


# ----------------------------------------------------------------------------- tools variant


def test_the_tools_variant_runs_candidates_then_ends_on_a_cron_block():
    env = gym.make(TOOLS)
    _observation, info = env.reset(options={"split": "curated", "index": 0})
    assert [t["function"]["name"] for t in info["tools"]] == ["next_runs"]
    assert "<cron>...</cron>" in info["system_prompt"] and "next_runs" in info["system_prompt"]
    call = {
        "name": "next_runs",
        "arguments": {"expression": "0 9 13 * 5", "after": "2024-11-07 12:00", "count": 3},
    }
    result, reward, terminated, _, _ = env.step(json.dumps(call))
    assert json.loads(result) == ["2024-11-08 09:00", "2024-11-13 09:00", "2024-11-15 09:00"]
    assert (reward, terminated) == (0.0, False)
    bad = dict(call, arguments={"expression": "0 9 13 * FRI-MON", "after": "2024-11-07 12:00"})
    result, *_ = env.step(json.dumps(bad))
    assert result == (
        "error: invalid expression: day-of-week field: descending range 'FRI-MON' "
        "(ranges do not wrap)"
    )
    result, *_ = env.step("<answer>0 9 13 * 5</answer>")  # not this env's tag
    assert result.startswith("error:") and "<cron>...</cron>" in result
    _, reward, terminated, _, end = env.step("<cron>0 9 13 * 5</cron>")
    assert (reward, terminated, end["turn"]) == (1.0, True, 4)


def test_the_tools_variant_is_write_only_and_truncates():
    env = gym.make(TOOLS)
    env.reset(seed=3)
    assert {env.reset()[1]["kind"] for _ in range(30)} == {"write"}
    assert {item.kind for item in load_split("eval", n=40, env=TOOLS)} == {"write"}
    assert env.unwrapped.max_turns == 10
    for _turn in range(10):
        *_, terminated, truncated, info = env.step('{"name": "next_runs", "arguments": {}}')
    assert (terminated, truncated, info["reward"], info["answered"]) == (False, True, 0.0, False)
    with pytest.raises(TypeError):
        gym.make(TOOLS, task="read")


# ----------------------------------------------------------------------------- command line


def test_eval_json_by_kind_level_and_day_fields(capsys):
    argv = ["eval", "--env", ENV, "--policy", "naive", "--split", "eval", "-n", "60", "--json"]
    assert main([*argv, "--task", "read", "--difficulty", "3"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["terms"] == ["correct", "formatted"] and payload["n"] == 60
    groups = payload["groups"]
    assert set(groups) == {"both day fields restricted", "difficulty 3", "task read"}
    assert groups["task read"]["n"] == 60 and groups["both day fields restricted"]["n"] > 10


def test_eval_table_and_export(capsys, tmp_path):
    assert main(["eval", "--env", ENV, "--policy", "gold", "--num-times", "4"]) == 0
    out = capsys.readouterr().out
    assert "avg reward      1.000" in out and "both day fields restricted" in out
    path = tmp_path / "rows.jsonl"
    assert main(["export", "--env", ENV, "--split", "train", "-n", "30", "--out", str(path)]) == 0
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(rows) == 30 and {r["info"]["kind"] for r in rows} == {"write", "read"}
    for row in rows:
        env = gym.make(ENV, **row.get("env_kwargs", {}))
        observation, _ = env.reset(options=row["options"])
        assert observation == row["question"] and env.unwrapped.episode.gold == row["answer"]


def test_cli_rejects_bad_settings(capsys):
    assert main(["eval", "--env", ENV, "--task", "draw"]) == 2
    assert main(["eval", "--env", ENV, "--difficulty", "5"]) == 2
    assert main(["eval", "--env", ENV, "--num-times", "0"]) == 2
    assert "num_times must be an integer from 1 to 50" in capsys.readouterr().err
