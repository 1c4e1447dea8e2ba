"""TimetablePlanner through the OpenAI loop, end to end, with the scripted ``timetable`` model.

The model plays the solver's actions as native tool calls (one tool per action type, the
schemas from ``info["tools"]``); the env's rewards, the evaluation table and the JSONL
rows are the ones the solver policy gets in process.
"""

from __future__ import annotations

import json

import gymnasium as gym
import pytest
from fake_openai_server import FakeOpenAIServer

import meeting_gym  # noqa: F401  (registers the env ids)
from meeting_gym.cli import main
from meeting_gym.envs.timetable_planner.domain.best import known_best
from meeting_gym.envs.timetable_planner.domain.catalogue import get_scenario
from meeting_gym.envs.timetable_planner.task import TimetablePlannerTask, content_key

pytest.importorskip("openai")


def test_run_episode_plays_the_solver_through_tool_calls():
    from meeting_gym.agentkit import make_client, run_episode

    with FakeOpenAIServer() as server:
        env = gym.make("TimetablePlanner-v0", mode="text")
        client = make_client(server.base_url, "EMPTY")
        episode = run_episode(env, client, "timetable", options={"scenario_id": "expert_2"})
        sent = server.requests["timetable"][0]
    assert episode.error is None and episode.terminated
    names = {tool["function"]["name"] for tool in sent["tools"]}
    assert names == {
        "assign_session",
        "move_session",
        "swap_sessions",
        "unassign_session",
        "submit_timetable",
    }
    scenario = get_scenario("expert_2")
    assert episode.info["score"] == known_best()[content_key(scenario)]["score"]
    assert episode.info["reward"] == pytest.approx(TimetablePlannerTask().max_reward_for(scenario))
    assert episode.info["invalid_actions"] == 0 and episode.turns == episode.requests
    tool_messages = [m for m in episode.messages if m["role"] == "tool"]
    assert len(tool_messages) == episode.turns - 1  # the submit's result is not sent back
    assert json.loads(tool_messages[0]["content"])["last_action"]["outcome"] == "apply"


def test_eval_command_with_the_scripted_model_prints_the_solver_table(tmp_path, capsys):
    out = tmp_path / "rows.jsonl"
    with FakeOpenAIServer() as server:
        code = main(
            [
                "eval",
                "--env",
                "TimetablePlanner-v0",
                "--policy",
                "openai",
                "--model",
                "timetable",
                "--base-url",
                server.base_url,
                "--split",
                "curated",
                "--json",
                "--out",
                str(out),
            ]
        )
    assert code == 0
    payload = json.loads(capsys.readouterr().out)
    task = TimetablePlannerTask()
    documented = [task.max_reward_for(s) for s in task.curated()]
    assert payload["n"] == 15 and payload["errors"] == 0
    assert payload["reward"] == pytest.approx(sum(documented) / 15)
    assert payload["invalid_actions"] == 0 and payload["submitted"] == 1.0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 15 and all(r["transcript"] for r in rows)
