"""``load_environment`` on the verifiers 0.3.x line: it runs in the ``.venv-verifiers03`` venv.

verifiers 0.3 pins mcp<2 (0.4 pins mcp 2.0), so these tests skip in every other venv.
The same hand-written completions as the 0.4 taskset's parity test, scored by the 0.3
rubric, give the env's terms; ``vf-eval`` 0.3 against the scripted server, in a
loopback-only network namespace, scores the gold model at the maximum on curated items.
"""

from __future__ import annotations

import asyncio
import json
import warnings

import gymnasium as gym
import pytest

from meeting_gym.adapters.verifiers import verifiers_version

if not (0, 3) <= (verifiers_version() or (0,)) < (0, 4):
    pytest.skip("needs verifiers 0.3.x (the .venv-verifiers03 venv)", allow_module_level=True)

import verifiers as vf
from loopback import link_checkout, run_bash
from readme_blocks import BLOCKS
from verifiers.types import AssistantMessage, ToolCall, ToolMessage
from verifiers_cases import ENVS, cases, env_reward

from meeting_gym.core.registry import task_class
from meeting_gym_verifiers import load_environment


def curated(env_id: str):
    """The env's 0.3 environment with its eval split cut to the curated items."""
    return load_environment(env_id, num_train_examples=2, num_eval_examples=15)


def completion(messages: list[dict], observations: list[str]) -> list:
    """The chat messages as verifiers 0.3 keeps a completion (tool results answered)."""
    out = []
    for message, observation in zip(messages, observations, strict=True):
        calls = [
            ToolCall(id=c["id"], name=c["function"]["name"], arguments=c["function"]["arguments"])
            for c in message.get("tool_calls") or []
        ]
        out.append(AssistantMessage(content=message["content"], tool_calls=calls or None))
        results = json.loads(observation) if len(calls) > 1 else [observation] * len(calls)
        for call, result in zip(calls, results, strict=True):
            out.append(ToolMessage(tool_call_id=call.id, content=result))
    return out


@pytest.fixture(scope="module")
def environments() -> dict:
    return {env_id: curated(env_id) for env_id in ENVS}


@pytest.mark.parametrize("env_id", ENVS)
def test_the_eval_dataset_is_the_curated_items_then_held_out_ones(env_id, environments):
    environment = environments[env_id]
    rows = environment.get_eval_dataset()
    env = gym.make(env_id, mode="text")
    assert len(rows) == 15
    for index, row in enumerate(rows):
        question, info = env.reset(options=row["info"]["options"])
        assert row["info"]["options"] == {"split": "eval", "index": index, "split_seed": 42}
        assert row["prompt"][-1]["content"] == question
        assert row["prompt"][0]["content"] == info["system_prompt"]
        assert row["answer"] == env.unwrapped.episode.gold
    assert len(environment.get_dataset()) == 2


def test_single_turn_and_tool_envs_take_the_right_shape(environments):
    assert isinstance(environments["CalendarMath-v0"], vf.SingleTurnEnv)
    slot = environments["MeetingSlot-v0"]
    assert isinstance(slot, vf.StatefulToolEnv) and slot.max_turns == 40
    ours = [schema["function"] for schema in task_class("MeetingSlot-v0").toolset.schemas()]
    assert [t.model_dump(exclude_none=True) for t in slot.tool_defs] == ours


def test_the_tools_run_on_each_rollouts_own_item(environments):
    slot = environments["MeetingSlot-v0"]
    rows = slot.get_eval_dataset()
    states = []
    for k in (0, 3):
        state = vf.State(input={"prompt": rows[k]["prompt"], "info": rows[k]["info"]})
        state["trajectory_id"] = f"t{k}"
        asyncio.run(slot.setup_state(state))
        states.append(state)
    env = gym.make("MeetingSlot-v0", mode="text")
    for state in states:
        env.reset(options=state["info"]["options"])
        for name, arguments in (("list_attendees", {}), ("get_timezone", {"name": "Nobody"})):
            run = slot.tool_map[name](**slot.update_tool_args(name, arguments, [], state))
            assert run == env.step(json.dumps({"name": name, "arguments": arguments}))[0]
    asyncio.run(slot.drop_episode(states[0]))
    assert list(slot.episodes) == ["t3"]


@pytest.mark.parametrize("case", cases(), ids=lambda case: case.id)
def test_a_completion_scores_through_the_0_3_rubric_as_through_env_step(case, environments):
    reward, info, observations = env_reward(case)
    assert reward == case.expected
    environment = environments[case.env]
    row = environment.get_eval_dataset()[case.index]  # eval starts with the curated items
    state = vf.State(input={"prompt": row["prompt"], "answer": row["answer"], "info": row["info"]})
    state["completion"] = completion(case.messages(), observations)
    state["trajectory"] = []
    asyncio.run(environment.rubric.score_rollout(state))
    terms = task_class(case.env).rubric.names
    assert {name: state["metrics"][name] for name in terms} == {name: info[name] for name in terms}
    assert round(state["reward"], 10) == reward
    assert state["meeting_gym"]["gold"] == info["gold"]


def test_the_predecessors_arguments_still_work():
    """calendar-math's load_environment(num_train_examples, num_eval_examples, seed, task)."""
    environment = load_environment(
        "CalendarMath-v0", num_train_examples=5, num_eval_examples=20, seed=3, task="weekday"
    )
    rows = environment.get_eval_dataset()
    assert len(rows) == 20 and all("day of the week" in r["question"] for r in rows)
    assert rows[0]["info"]["options"]["split_seed"] == 3


def test_the_readme_vf_eval_0_3_block_runs_offline_and_prints_what_the_readme_shows(tmp_path):
    """``vf-eval`` 0.3 as a predecessor user runs it, against the scripted server only."""
    (block,) = [b for b in BLOCKS if b.tag == "verifiers03"]
    done = run_bash(block.body, link_checkout(tmp_path), offline=True)
    shown = block.source.split(block.body, 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    assert done.stdout == shown
    assert done.stdout.count("reward: avg - 1.200, std - 0.000") == 2
    if not done.namespaced:
        warnings.warn("no network namespace here: loopback by address only", stacklevel=1)
