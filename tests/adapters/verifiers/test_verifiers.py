"""The verifiers 0.4 taskset (``verifiers.v1``), without a model: it runs in the verifiers venv.

verifiers 0.4 pins openai 2.x and mcp 2.0, which the main venv cannot hold, so these tests
skip there; ``.ci/run`` runs them in ``.venv-verifiers``. Parity: the hand-written
completions of ``verifiers_cases`` (gold, a near miss, malformed, no tag, on every curated
item) scored through the taskset's rewards give each rubric term exactly as ``env.step``
does, with the rubric's weights, and their weighted sum is the env's reward.
"""

from __future__ import annotations

import asyncio
import json

import gymnasium as gym
import pytest

from meeting_gym.adapters.verifiers import verifiers_version

if (verifiers_version() or (0,)) < (0, 4):
    pytest.skip("needs verifiers 0.4 (the .venv-verifiers venv)", allow_module_level=True)

import verifiers.v1 as vf
from verifiers.v1.graph import MessageNode
from verifiers.v1.utils.loaders import taskset_class, taskset_config_type
from verifiers_cases import ENVS, cases, env_reward

import meeting_gym
from meeting_gym.adapters.verifiers.taskset import (
    INFO_KEY,
    MeetingGymConfig,
    MeetingGymTaskset,
    MeetingGymToolset,
    MeetingGymToolsetConfig,
)
from meeting_gym.core.registry import task_class

PLUGIN = "meeting-gym-verifiers"


def taskset(env: str, **config) -> MeetingGymTaskset:
    return MeetingGymTaskset(MeetingGymConfig(id=PLUGIN, env=env, **config))


def curated_tasks(env: str) -> list:
    return list(taskset(env, split="curated"))


def trace_of(task, messages: list[dict], results: list[str]) -> vf.Trace:
    """A finished rollout: the task's prompt, then ``messages`` (tool results answered)."""
    nodes = [
        MessageNode(message=vf.SystemMessage(content=task.data.system_prompt)),
        MessageNode(message=vf.UserMessage(content=task.data.prompt), parent=0),
    ]

    def add(message, sampled=False):
        nodes.append(MessageNode(message=message, parent=len(nodes) - 1, sampled=sampled))

    for message, observation in zip(messages, results, strict=True):
        calls = [
            vf.ToolCall(
                id=c["id"], name=c["function"]["name"], arguments=c["function"]["arguments"]
            )
            for c in message.get("tool_calls") or []
        ]
        add(vf.AssistantMessage(content=message["content"], tool_calls=calls or None), True)
        if not calls:
            continue  # the conversation ends at a reply without tool calls
        answers = json.loads(observation) if len(calls) > 1 else [observation]
        for call, answer in zip(calls, answers, strict=True):
            add(vf.ToolMessage(tool_call_id=call.id, content=answer, name=call.name))
    return vf.Trace(
        task=vf.TraceTask(type=type(task).__name__, data=task.data),
        agent=vf.AgentInfo(config=vf.AgentConfig()),
        nodes=nodes,
    )


# ---------------------------------------------------------------------------- discovery


def test_vf_eval_finds_the_taskset_by_its_plugin_id():
    import meeting_gym_verifiers

    assert taskset_class(PLUGIN) is MeetingGymTaskset
    assert "MeetingGymTaskset" in meeting_gym_verifiers.__all__
    config = taskset_config_type(PLUGIN)(id=PLUGIN, env="CalendarMath-v0")
    assert config.task.env == "CalendarMath-v0"  # the taskset's env reaches every task


def test_a_bad_configuration_is_refused_naming_what_is_allowed():
    with pytest.raises(ValueError, match="registered envs: MeetingSlot-v0"):
        MeetingGymConfig(id=PLUGIN, env="Nope-v0")
    with pytest.raises(ValueError, match="unknown task 'nope'; choose one of"):
        MeetingGymConfig(id=PLUGIN, env="CalendarMath-v0", settings={"task": "nope"})
    with pytest.raises(ValueError, match="unknown difficulty 'impossible'"):
        MeetingGymConfig(id=PLUGIN, difficulty="impossible")
    with pytest.raises(ValueError, match="split"):
        MeetingGymConfig(id=PLUGIN, split="test")
    with pytest.raises(RuntimeError, match="serves one rollout's item"):
        MeetingGymToolset(MeetingGymToolsetConfig()).register(None)


def test_a_curriculum_taskset_draws_each_task_as_it_is_read_from_the_rewards_so_far():
    """curriculum=...: train items at the curriculum's level, drawn lazily; each scored
    rollout moves it, so two solved easy items make the third task a medium one."""
    from meeting_gym.core.curriculum import Curriculum, Rules

    option = {"window": 2, "min_outcomes": 2, "seed": 3}
    tasks = iter(taskset("CalendarMath-v0", split="train", curriculum=option))
    expected = Curriculum.for_env("CalendarMath-v0", seed=3, rules=Rules(window=2, min_outcomes=2))
    env = gym.make("CalendarMath-v0", mode="text")
    levels = []
    for _ in range(3):
        task = next(tasks)
        draw = expected.next()
        assert task.data.options == draw.options  # the same draws as the curriculum in-process
        question, _ = env.reset(options=task.data.options)
        assert task.data.prompt == question
        levels.append(task.data.options["difficulty"])
        reply = {"role": "assistant", "content": f"<answer>{task.data.answer}</answer>"}
        trace = trace_of(task, [reply], ["x"])
        asyncio.run(task.score(trace))
        asyncio.run(task.score(trace))  # scored twice, told once (the replay is kept)
        expected.report(draw, trace.info[INFO_KEY]["reward"])
    assert levels == ["easy", "easy", "medium"]
    assert task.curriculum.state() == expected.state()
    bounded = taskset("CalendarMath-v0", split="train", curriculum=True, n=4)
    assert bounded.bounded and len(list(bounded)) == 4
    assert not taskset("CalendarMath-v0", split="train", curriculum=True).bounded


def test_a_curriculum_option_is_checked_when_the_taskset_is_configured():
    with pytest.raises(ValueError, match="give split 'train' and no difficulty"):
        MeetingGymConfig(id=PLUGIN, env="CalendarMath-v0", curriculum=True)
    with pytest.raises(ValueError, match="give split 'train' and no difficulty"):
        MeetingGymConfig(id=PLUGIN, split="train", difficulty="easy", curriculum=True)
    with pytest.raises(ValueError, match="unknown curriculum field"):
        MeetingGymConfig(id=PLUGIN, split="train", curriculum={"speed": 2})
    with pytest.raises(ValueError, match="window"):
        MeetingGymConfig(id=PLUGIN, split="train", curriculum={"window": 10**9})


@pytest.mark.parametrize("env_id", ENVS)
def test_tasks_are_the_split_items_as_the_env_presents_them(env_id):
    env = gym.make(env_id, mode="text")
    tasks = curated_tasks(env_id)
    assert len(tasks) == 15
    rubric = task_class(env_id).rubric
    for task in tasks:
        question, info = env.reset(options=task.data.options)
        assert task.data.prompt == question
        assert task.data.system_prompt == info["system_prompt"]
        assert task.data.id == info[env.unwrapped.task.id_key]
        assert task.data.answer == env.unwrapped.episode.gold
        assert task.data.rubric == {t.name: t.weight for t in rubric.terms}
        assert task.data.max_turns == env.unwrapped.max_turns


def test_split_size_seed_difficulty_and_settings_reach_the_items():
    tasks = list(taskset("CalendarMath-v0", split="eval", n=30, settings={"task": "weekday"}))
    assert len(tasks) == 30 and all("day of the week" in t.data.prompt for t in tasks)
    hard = list(taskset("MeetingSlot-v0", split="train", n=3, split_seed=7, difficulty="hard"))
    env = gym.make("MeetingSlot-v0", mode="text")
    for task in hard:
        assert task.data.options == {"split": "train", "index": task.data.idx, "split_seed": 7,
                                     "difficulty": "hard"}  # fmt: skip
        _, info = env.reset(options=task.data.options)
        assert info["difficulty"] == "hard" and info["scenario_id"] == task.data.id


def test_single_turn_tasks_have_no_tools_and_meeting_slot_has_its_four():
    (math_task, *_) = curated_tasks("CalendarMath-v0")
    assert math_task.toolsets(math_task.config) == []
    (slot_task, *_) = curated_tasks("MeetingSlot-v0")
    (toolset,) = slot_task.toolsets(slot_task.config)
    assert isinstance(toolset, MeetingGymToolset) and toolset.server_name == ""


# ---------------------------------------------------------------------------- the toolset


def test_the_toolset_serves_the_envs_tools_and_their_results():
    """The MCP tools: the env's names, descriptions and argument schemas; the env's results."""
    from mcp.server.mcpserver import MCPServer

    (task, *_) = curated_tasks("MeetingSlot-v0")
    toolset = MeetingGymToolset(MeetingGymToolsetConfig())
    asyncio.run(toolset.setup_task(task.data))
    server = MCPServer("test")
    toolset.register(server)
    listed = {tool.name: tool for tool in asyncio.run(server.list_tools())}
    ours = {
        s["function"]["name"]: s["function"] for s in task_class("MeetingSlot-v0").toolset.schemas()
    }
    assert list(listed) == list(ours)
    for name, tool in listed.items():
        assert tool.description == ours[name]["description"]
        schema = tool.input_schema
        assert schema.get("required", []) == ours[name]["parameters"]["required"]
        for arg, prop in ours[name]["parameters"]["properties"].items():
            assert schema["properties"][arg]["type"] == prop["type"]
            assert schema["properties"][arg]["description"] == prop["description"]

    env = gym.make("MeetingSlot-v0", mode="text")
    env.reset(options=task.data.options)
    calls = [
        ("list_attendees", {}),
        ("get_timezone", {"name": "Ava"}),
        ("get_working_hours", {"name": "Ben"}),
        ("get_busy", {"name": "Ava", "date": "2024-03-11"}),
        ("get_timezone", {"name": "Nobody"}),  # the env's error results too
        ("get_busy", {"name": "Ava", "date": "11/03"}),
    ]
    for name, arguments in calls:
        result = asyncio.run(server.call_tool(name, arguments))
        expected, *_ = env.step(json.dumps({"name": name, "arguments": arguments}))
        assert not result.is_error and [c.text for c in result.content] == [expected]


# ---------------------------------------------------------------------------- parity


@pytest.mark.parametrize("case", cases(), ids=lambda case: case.id)
def test_a_completion_scores_through_the_taskset_as_through_env_step(case):
    reward, info, observations = env_reward(case)
    assert reward == case.expected  # the README's rubric, through env.step
    task = curated_tasks(case.env)[case.index]
    trace = trace_of(task, case.messages(), observations)
    asyncio.run(task.score(trace))
    terms = {name: (r.score, r.weight) for name, r in trace.rewards.items()}
    weights = {t.name: t.weight for t in task_class(case.env).rubric.terms}
    assert terms == {name: (info[name], weights[name]) for name in weights}
    assert round(trace.reward, 10) == reward  # the env rounds its sum to 10 places
    kept = trace.info[INFO_KEY]
    assert kept["reward"] == reward and kept["gold"] == info["gold"]
    assert kept["answer"] == info["answer"]


def test_a_conversation_without_an_answer_scores_zero_and_the_turn_budget_stops_a_rollout():
    (task, *_) = curated_tasks("MeetingSlot-v0")
    call = {
        "id": "c",
        "type": "function",
        "function": {"name": "list_attendees", "arguments": "{}"},
    }
    looping = [{"role": "assistant", "content": None, "tool_calls": [call]}] * 40
    trace = trace_of(task, looping, ['["Ava", "Ben"]'] * 40)
    asyncio.run(task.score(trace))
    assert trace.reward == 0.0 and trace.info[INFO_KEY]["turns"] == 40
    assert task.turn_budget(trace) and not task.turn_budget(
        trace_of(task, looping[:39], ["[]"] * 39)
    )


def test_a_plugged_reward_of_the_same_name_replaces_the_rubric_term():
    config = MeetingGymConfig(
        id=PLUGIN, env="CalendarMath-v0", split="curated",
        task={"rewards": {"format": {"weight": 0.0, "fn": "verifiers_cases:zero_reward"}}},
    )  # fmt: skip
    (task, *_) = list(MeetingGymTaskset(config))
    trace = trace_of(task, [{"role": "assistant", "content": "<answer>2024-02-29</answer>"}], ["x"])
    asyncio.run(task.score(trace))
    assert {k: (r.score, r.weight) for k, r in trace.rewards.items()} == {
        "exact_match": (1.0, 1.0), "format": (0.0, 0.0), "partial_credit": (0.0, 0.2)
    }  # fmt: skip


def test_every_registered_env_loads_and_scores():
    """A new env is covered by registering it: its tasks load and its gold scores the maximum."""
    for env_id in meeting_gym.ENV_IDS:
        tasks = list(taskset(env_id, split="curated", n=2))
        for task in tasks:
            trace = trace_of(task, [{"role": "assistant", "content": "no answer"}], ["x"])
            asyncio.run(task.score(trace))
            # what the env pays for that one message: 0 where the rubric pays at the end, the
            # invalid-action penalty where every step pays (TimetablePlanner)
            env = gym.make(env_id, mode="text")
            env.reset(options=task.data.options)
            paid = env.step("no answer")[1]
            assert paid == (-0.02 if task_class(env_id).episode_class.dense_reward else 0.0)
            assert trace.reward == pytest.approx(paid)
            assert set(trace.rewards) == set(task.data.rubric)
