"""The served env as an OpenEnv 0.10 MCP tool environment: ``ListToolsAction`` and
``CallToolAction`` steps, the ``mcp`` WebSocket message and ``POST /mcp``, against the
in-process env (issue 48, item 1)."""

from __future__ import annotations

import asyncio
import json
from contextlib import contextmanager

import gymnasium as gym
import pytest
from uvicorn_thread import served

import meeting_gym  # noqa: F401
from meeting_gym.agents.policies import make_policy
from meeting_gym.core.protocol import AnswerAction, ToolCallsAction, parse_action

pytest.importorskip("openenv.core.env_server.mcp_types")  # OpenEnv 0.10
httpx = pytest.importorskip("httpx")
websockets = pytest.importorskip("websockets")

from openenv.core.env_server.mcp_types import (  # noqa: E402
    CallToolAction,
    CallToolObservation,
    ListToolsAction,
    ListToolsObservation,
)

from meeting_gym.adapters.openenv import client, create_server_app  # noqa: E402

TOOL_ENVS = ["MeetingSlot-v0", "MeetingSlot-Raw-v1", "CronSchedule-Tools-v0"]


@contextmanager
def running(env_id: str):
    with served(create_server_app(env_id), 20) as port:
        yield port


def gold_turns(env_id: str, seed: int) -> list[tuple[str, dict] | str]:
    """Gold's episode as single moves: each tool call alone, ``(name, arguments)``, then
    the answer's content. Gold batches calls in a turn; over MCP each call is a turn."""
    env = gym.make(env_id, mode="text")
    observation, info = env.reset(seed=seed)
    task = env.unwrapped.task
    policy = make_policy(task.reference_policy, seed=seed, env=env_id)
    policy.reset(observation, info, seed=seed)
    moves: list[tuple[str, dict] | str] = []
    done = False
    while not done:
        text = policy.act(observation)
        parsed = parse_action(text, answer_tag=task.answer_tag)
        if isinstance(parsed, AnswerAction):
            moves.append(parsed.answer)
        else:
            assert isinstance(parsed, ToolCallsAction), text
            moves += [(call.name, dict(call.arguments or {})) for call in parsed.calls]
        observation, _, terminated, truncated, _ = env.step(text)
        done = terminated or truncated
    return moves


def in_process(env_id: str, seed: int, moves) -> list[tuple[str, float, bool, dict]]:
    """The single moves played in process: each turn's text, reward, done and info."""
    env = gym.make(env_id, mode="text")
    env.reset(seed=seed)
    tag = env.unwrapped.task.answer_tag
    out = []
    for move in moves:
        if isinstance(move, str):
            text = f"<{tag}>{move}</{tag}>"
        else:
            text = json.dumps([{"name": move[0], "arguments": move[1]}])
        observation, reward, terminated, truncated, info = env.step(text)
        out.append(
            (observation, float(reward), terminated or truncated, json.loads(json.dumps(info)))
        )
    return out


@pytest.mark.parametrize("env_id", TOOL_ENVS)
def test_gold_through_call_tool_actions_reaches_the_env_s_best_and_every_observation_matches(
    env_id,
):
    seed = 5
    moves = gold_turns(env_id, seed)
    expected = in_process(env_id, seed, moves)
    task = gym.make(env_id, mode="text").unwrapped.task
    assert expected[-1][1] == pytest.approx(task.max_reward) and expected[-1][2]
    with running(env_id) as port, client(env_id, f"http://127.0.0.1:{port}").sync() as remote:
        listed = remote.step(ListToolsAction()).observation  # before any reset: no episode needed
        assert isinstance(listed, ListToolsObservation)
        assert [t.name for t in listed.tools] == [t.name for t in task.toolset]
        remote.reset(seed=seed)
        for move, (text, reward, done, info) in zip(moves, expected, strict=True):
            if isinstance(move, str):
                result = remote.step({"answer": move})
                got_text, got_info = result.observation.text, result.observation.info
            else:
                result = remote.step(CallToolAction(tool_name=move[0], arguments=move[1]))
                observation = result.observation
                assert isinstance(observation, CallToolObservation)
                assert observation.tool_name == move[0] and observation.error is None
                got_text, got_info = observation.result, observation.metadata["info"]
            assert (got_text, result.reward, result.done, got_info) == (text, reward, done, info)
    assert result.reward == pytest.approx(task.max_reward)


def test_the_tool_list_is_the_task_s_own_tools_with_their_schemas():
    from meeting_gym.core.registry import task_class

    for env_id in ("MeetingSlot-v0", "CronSchedule-Tools-v0", "CalendarMath-v0"):
        with running(env_id) as port, client(env_id, f"http://127.0.0.1:{port}").sync() as remote:
            tools = remote.step(ListToolsAction()).observation.tools
        toolset = task_class(env_id).toolset
        want = [] if toolset is None else [(t.name, t.description, t.parameters) for t in toolset]
        assert [(t.name, t.description, t.input_schema) for t in tools] == want
    assert len(want) == 0 and len(task_class("MeetingSlot-v0").toolset) == 4


def test_a_bad_tool_call_is_the_env_s_error_observation_and_costs_a_turn():
    env_id = "MeetingSlot-v0"
    with running(env_id) as port, client(env_id, f"http://127.0.0.1:{port}").sync() as remote:
        remote.reset(seed=1)
        unknown = remote.step(CallToolAction(tool_name="nope", arguments={})).observation
        assert unknown.error.error_type == "tool_not_found" and unknown.result.startswith("error:")
        assert "available tools: list_attendees" in unknown.error.message
        wrong = remote.step(CallToolAction(tool_name="get_busy", arguments={"x": 1})).observation
        assert (
            wrong.error.error_type == "invalid_args" and 'unexpected argument "x"' in wrong.result
        )
        assert remote.state().turn == 2  # each cost its turn, as in process


def _ws(port: int, messages: list[dict]) -> list[dict]:
    """Each message sent over one /ws session, with its reply."""

    async def talk() -> list[dict]:
        replies = []
        async with websockets.connect(f"ws://127.0.0.1:{port}/ws") as ws:
            for message in messages:
                await ws.send(json.dumps(message))
                replies.append(json.loads(await asyncio.wait_for(ws.recv(), 30)))
        return replies

    return asyncio.run(talk())


def test_the_mcp_message_lists_and_calls_tools_on_the_session_s_episode():
    def rpc(method, params=None, rid=1):
        return {
            "type": "mcp",
            "data": {"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}},
        }

    call = {"name": "list_attendees", "arguments": {}}
    with running("MeetingSlot-v0") as port:
        listed, early, _, called, unknown, bad, step = _ws(
            port,
            [
                rpc("tools/list"),
                rpc("tools/call", call, 2),
                {"type": "reset", "data": {"seed": 1}},
                rpc("tools/call", call, 3),
                rpc("resources/list", rid=4),
                rpc("tools/call", {"name": 7}, 5),
                {"type": "step", "data": {"type": "call_tool", "tool_name": "list_attendees"}},
            ],
        )
    assert [t["name"] for t in listed["data"]["result"]["tools"]] == [
        "list_attendees",
        "get_timezone",
        "get_working_hours",
        "get_busy",
    ]
    assert early["data"]["id"] == 2 and "reset" in early["data"]["error"]["message"]
    env = gym.make("MeetingSlot-v0", mode="text")
    env.reset(seed=1)
    text, *_ = env.step(json.dumps([call]))
    result = called["data"]["result"]
    assert called["data"]["id"] == 3 and result["result"] == text and result["error"] is None
    assert unknown["data"]["error"]["code"] == -32601 and bad["data"]["error"]["code"] == -32602
    # the same call as a step: the second turn (the mcp call was the first)
    assert step["data"]["observation"]["result"] == text
    assert step["data"]["observation"]["metadata"]["info"]["turn"] == 2


def test_post_mcp_lists_tools_sends_calls_to_the_websocket_and_answers_json_rpc():
    with running("MeetingSlot-v0") as port:
        url = f"http://127.0.0.1:{port}/mcp"
        listed = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).json()
        call = httpx.post(
            url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "x"}}
        ).json()
        empty = httpx.post(url, json={}).json()
        junk = httpx.post(url, content=b"[1, 2").json()
    assert len(listed["result"]["tools"]) == 4 and listed["id"] == 1
    assert call["id"] == 2 and "/ws" in call["error"]["message"]
    assert empty["jsonrpc"] == "2.0" and empty["error"]["code"] == -32601
    assert junk["error"]["code"] == -32700


def test_a_tool_call_on_an_env_without_tools_is_refused_without_a_turn():
    with running("CalendarMath-v0") as port:
        _, refused, state = _ws(
            port,
            [
                {"type": "reset", "data": {"seed": 0}},
                {"type": "step", "data": {"type": "call_tool", "tool_name": "x"}},
                {"type": "state"},
            ],
        )
    assert refused["type"] == "error" and "has no tools" in refused["data"]["message"]
    assert state["data"]["turn"] == 0 and not state["data"]["done"]


def test_a_malformed_call_tool_action_names_its_field_and_the_session_goes_on():
    with running("MeetingSlot-v0") as port:
        _, bad, good = _ws(
            port,
            [
                {"type": "reset", "data": {"seed": 0}},
                {
                    "type": "step",
                    "data": {"type": "call_tool", "tool_name": "get_busy", "arguments": [1]},
                },
                {"type": "step", "data": {"type": "call_tool", "tool_name": "list_attendees"}},
            ],
        )
    assert bad["data"]["code"] == "VALIDATION_ERROR"
    assert bad["data"]["errors"][0]["loc"] == ["arguments"]
    assert good["type"] == "observation" and good["data"]["observation"]["error"] is None
