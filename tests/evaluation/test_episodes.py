"""Expert episodes as chat data (evaluation.episodes) and ``meeting-gym export --episodes``.

Every multi-turn env's reference policy is recorded as a conversation, replayed on a fresh
env to its best reward, and written in TRL's ``messages`` shape; a tampered or wrong
episode is refused by name, and a single-turn env is refused in one line.
"""

from __future__ import annotations

import copy
import json

import pytest

from meeting_gym.agentkit.llm import LLMAgent
from meeting_gym.cli import main
from meeting_gym.core.splits import load_split
from meeting_gym.evaluation.episodes import episode_rows, export_episodes, replay_messages
from meeting_gym.evaluation.evaluate import evaluate

TOOL_ENVS = ("MeetingSlot-v0", "CronSchedule-Tools-v0")


@pytest.mark.parametrize("env_id", TOOL_ENVS)
def test_expert_episodes_replay_to_the_envs_best_and_alternate_assistant_and_results(env_id):
    rows = list(episode_rows(env_id, "train", 6))
    assert len(rows) == 6
    for k, row in enumerate(rows):
        assert row["options"] == {"split": "train", "index": k}
        roles = [m["role"] for m in row["messages"]]
        assert roles[:2] == ["system", "user"] and roles[-1] == "assistant"
        # assistant turns and their results alternate: the text protocol's shape
        assert roles[2:] == ["assistant", "user"] * (row["turns"] - 1) + ["assistant"]
        assert row["tool_calls"] >= 1
        assert (
            replay_messages(row)
            == row["reward"]
            == pytest.approx({"MeetingSlot-v0": 1.2, "CronSchedule-Tools-v0": 1.0}[env_id])
        )


def test_the_timetable_experts_whole_episode_replays():
    pytest.importorskip("ortools", reason="the timetable's reference policy is the CP-SAT solver")
    [row] = episode_rows("TimetablePlanner-v0", "curated", 1)
    assert row["turns"] > 1 and row["messages"][-1]["role"] == "assistant"
    assert replay_messages(row) == pytest.approx(row["reward"])


def test_a_recorded_episode_is_what_the_llm_agent_would_write_for_the_same_replies():
    """The rows are the conversations the local policy evaluates on: same messages, same shape."""
    [row] = episode_rows("MeetingSlot-v0", "train", 1)
    replies = iter(m["content"] for m in row["messages"] if m["role"] == "assistant")

    class Scripted:
        def __init__(self):
            self.chat = type("C", (), {"completions": self})()

        def create(self, **request):
            message = type("M", (), {"content": next(replies), "tool_calls": None})()
            return type("R", (), {"choices": [type("Ch", (), {"message": message})()]})()

    [item] = load_split("train", 1, env="MeetingSlot-v0")
    make = lambda: LLMAgent(Scripted(), "m", tool_protocol="text")  # noqa: E731
    [result] = evaluate(make, [item], env="MeetingSlot-v0", seed=0)
    assert result.extra["transcript"] == row["messages"]
    assert result.reward == row["reward"]


def test_a_tampered_episode_is_refused_by_name():
    [row] = episode_rows("MeetingSlot-v0", "train", 1)
    wrong_answer = copy.deepcopy(row)
    wrong_answer["messages"][-1]["content"] = "<answer>NONE</answer>"
    with pytest.raises(ValueError, match="replayed return"):
        replay_messages(wrong_answer)
    wrong_answer["reward"] = 0.2
    with pytest.raises(ValueError, match="not the env's best"):
        replay_messages(wrong_answer)
    wrong_result = copy.deepcopy(row)
    wrong_result["messages"][3]["content"] = '["Nobody"]'
    with pytest.raises(ValueError, match="turn 1's result is not the recorded one"):
        replay_messages(wrong_result)
    cut = copy.deepcopy(row)
    cut["messages"] = cut["messages"][:-1]  # no final answer
    with pytest.raises(ValueError, match="has not ended"):
        replay_messages(cut)


def test_a_single_turn_env_has_no_expert_episodes():
    with pytest.raises(ValueError, match="single-turn env exports its items"):
        list(episode_rows("CalendarMath-v0", "train", 1))


def test_export_writes_the_jsonl_trl_reads_and_the_cli_writes_the_same(tmp_path, capsys):
    path = tmp_path / "episodes.jsonl"
    assert export_episodes(path, "MeetingSlot-v0", "train", 3, difficulty="easy") == 3
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["options"]["index"] for r in rows] == [0, 1, 2]
    assert all(r["options"]["difficulty"] == "easy" for r in rows)
    cli_path = tmp_path / "cli.jsonl"
    code = main(
        [
            "export",
            "--env",
            "MeetingSlot-v0",
            "--episodes",
            "--split",
            "train",
            "-n",
            "3",
            "--difficulty",
            "easy",
            "--seed",
            "42",
            "--out",
            str(cli_path),
        ]
    )
    assert code == 0
    assert "wrote 3 expert episodes" in capsys.readouterr().out
    cli_rows = [json.loads(line) for line in cli_path.read_text().splitlines()]
    assert [r["messages"] for r in cli_rows] == [r["messages"] for r in rows]


def test_the_cli_refuses_episodes_of_a_single_turn_env_in_one_line(tmp_path, capsys):
    code = main(
        ["export", "--env", "CalendarMath-v0", "--episodes", "--out", str(tmp_path / "x.jsonl")]
    )
    err = capsys.readouterr().err
    assert code != 0 and len(err.strip().splitlines()) == 1
    assert "single-turn env exports its items" in err
    assert not (tmp_path / "x.jsonl").exists()


def test_the_short_meeting_slot_prompt_names_every_tool_and_the_answer_and_grades_the_same():
    from meeting_gym.agentkit.prompts import system_prompt_for
    from meeting_gym.envs.meeting_slot.prompts import SHORT_SYSTEM_PROMPT, SYSTEM_PROMPT
    from meeting_gym.envs.meeting_slot.tools import TOOLSET

    short = system_prompt_for("MeetingSlot-v0", "short")
    assert short == SHORT_SYSTEM_PROMPT and len(short) < len(SYSTEM_PROMPT) / 2
    for tool in TOOLSET.tools:
        assert f"{tool.name}(" in short
    for needed in ("<tool_call>", "<answer>YYYY-MM-DDTHH:MM:SSZ</answer>", "<answer>NONE</answer>"):
        assert needed in short
    rows = list(episode_rows("MeetingSlot-v0", "train", 3, system_prompt=short))
    assert all(r["messages"][0]["content"] == short for r in rows)
    assert [replay_messages(r) for r in rows] == [1.2, 1.2, 1.2]  # the env's rubric either way


def test_the_cli_exports_worked_episodes_and_refuses_an_unknown_expert(tmp_path, capsys):
    path = tmp_path / "worked.jsonl"
    args = ["export", "--env", "MeetingSlot-v0", "--episodes", "--split", "train", "-n", "2"]
    assert main([*args, "--expert", "gold-worked", "--out", str(path)]) == 0
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert all("The earliest start" in r["messages"][-1]["content"] for r in rows)
    assert main([*args, "--expert", "oracle", "--out", str(tmp_path / "x.jsonl")]) != 0
    assert "unknown expert 'oracle'" in capsys.readouterr().err
