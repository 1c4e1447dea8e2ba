"""The TRL adapter, called the way GRPOTrainer calls it (and, in the slow run, by GRPOTrainer).

The environment_factory class must expose the task's tools as methods whose schemas TRL
renders exactly as the env's own, reset from a dataset row, and report the env's own
reward through get_reward(); the single-turn reward function must grade as env.step does.
"""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import meeting_gym  # noqa: F401
from meeting_gym.adapters import trl as adapter
from meeting_gym.agents.policies import make_policy
from meeting_gym.core.protocol import AnswerAction, ToolCallsAction, parse_action
from meeting_gym.core.registry import ENVS, load_object, task_class

transformers = pytest.importorskip("transformers")

from trl_tiny import tiny_grpo_config, tiny_qwen3, tiny_tool_run, trl_methods  # noqa: E402


def test_the_tool_methods_render_the_envs_own_schemas():
    from transformers.utils import get_json_schema

    instance = adapter.environment_factory("MeetingSlot-v0")()
    methods = trl_methods(instance)
    toolset = task_class("MeetingSlot-v0").toolset
    assert set(methods) == {*toolset.names, "answer"}
    ours = {s["function"]["name"]: s["function"] for s in toolset.schemas()}
    for name, method in methods.items():
        schema = get_json_schema(method)["function"]
        if name == "answer":
            assert schema["parameters"]["required"] == ["answer"]
            continue
        # transformers keeps every paragraph before Args; the env's schema keeps the first
        assert schema["description"].startswith(ours[name]["description"])
        theirs = schema["parameters"]
        assert theirs.get("required", []) == ours[name]["parameters"].get("required", [])
        assert set(theirs["properties"]) == set(ours[name]["parameters"]["properties"])
        for arg, prop in theirs["properties"].items():
            assert prop["type"] == ours[name]["parameters"]["properties"][arg]["type"]


def play_gold_through_methods(instance, row: dict, env_id: str = "MeetingSlot-v0") -> float:
    """The reference policy, its tool calls executed as TRL would: by calling the methods."""
    assert instance.reset(**row) is None  # the row's prompt already holds the question
    question = row["prompt"][-1]["content"]
    env = gym.make(env_id, mode="text")
    _, info = env.reset(options={k: row[k] for k in adapter.ROW_KEYS if k in row})
    task = env.unwrapped.task
    policy = make_policy(task.reference_policy, env=env_id)
    policy.reset(question, info)
    observation = question
    methods = trl_methods(instance)
    for _ in range(200):
        text = policy.act(observation)
        if task.episode_class.action_fields and text.lstrip().startswith("{"):
            # an action object (TimetablePlanner's): its action_type names the tool
            arguments = json.loads(text)
            calls = [(arguments.pop("action_type"), arguments)]
        else:
            action = parse_action(text, answer_tag=task.answer_tag)
            if isinstance(action, AnswerAction):
                instance.answer(action.answer)
                return instance.get_reward()
            assert isinstance(action, ToolCallsAction)
            calls = [(call.name, call.arguments) for call in action.calls]
        results = [methods[name](**arguments) for name, arguments in calls]
        if env.unwrapped.task.toolset is not None and instance._done:
            return instance.get_reward()  # a tool ended the episode (submit_timetable)
        observation = results[0] if len(results) == 1 else json.dumps(results)
    raise AssertionError("the reference policy did not end the episode")


def test_gold_through_the_factory_earns_the_envs_maximum_on_curated():
    rows = adapter.rows("MeetingSlot-v0", split="curated")
    assert [r["index"] for r in rows] == list(range(15)) and rows[0]["split"] == "curated"
    assert (
        rows[0]["prompt"][0]["role"] == "system" and "earliest" in rows[0]["prompt"][1]["content"]
    )
    factory = adapter.environment_factory("MeetingSlot-v0")
    instance = factory()  # GRPOTrainer reuses instances across rollouts: one for all rows
    rewards = [play_gold_through_methods(instance, row) for row in rows]
    assert rewards == [pytest.approx(1.2)] * 15


def test_get_reward_is_zero_until_answered_and_a_wrong_answer_gets_the_rubric():
    instance = adapter.environment_factory("MeetingSlot-v0")()
    instance.reset(prompt=[], split="curated", index=0)
    assert instance.get_reward() == 0.0
    assert json.loads(instance.list_attendees()) == ["Ava", "Ben"]
    assert instance.get_timezone("Nobody").startswith("error:")
    assert instance.answer("NONE") == "Answer received."
    assert instance.get_reward() == pytest.approx(0.2)  # well-formed, wrong
    assert instance.answer("NONE").startswith("error:")  # the episode is over
    assert instance.get_reward() == pytest.approx(0.2)
    assert instance.list_attendees().startswith("error:")  # the episode is over


TEXT_ENVS = [e for e in ENVS if "text" in load_object(gym.spec(e).entry_point).modes]
TOOL_ENVS = [e for e in TEXT_ENVS if task_class(e).toolset is not None]
SINGLE_TURN = [e for e in TEXT_ENVS if task_class(e).toolset is None]


@pytest.mark.parametrize("env_id", TOOL_ENVS)
def test_every_tool_env_plays_its_reference_policy_through_the_factory(env_id):
    rows = adapter.rows(env_id, split="curated")
    instance = adapter.environment_factory(env_id)()
    rewards = [play_gold_through_methods(instance, row, env_id) for row in rows]
    task = task_class(env_id)()
    best = [task.max_reward_for(item) for item in task.curated()]
    # the documented maximum per item (the solver's for TimetablePlanner), else the task's
    assert rewards == [pytest.approx(task.max_reward if b is None else b) for b in best]
    if not task.episode_class.answers:
        assert "answer" not in trl_methods(instance)  # only the task's own tools


@pytest.mark.parametrize("env_id", SINGLE_TURN)
def test_every_single_turn_env_grades_its_reference_answers_at_the_maximum(env_id):
    rows = adapter.rows(env_id, split="curated")
    reward = adapter.reward_function(env_id)
    columns = {key: [row[key] for row in rows] for key in adapter.ROW_KEYS if key in rows[0]}
    completions = []
    for row in rows:
        env = gym.make(env_id)
        observation, info = env.reset(options={k: row[k] for k in adapter.ROW_KEYS if k in row})
        policy = make_policy(task_class(env_id).reference_policy, env=env_id)
        policy.reset(observation, info)
        completions.append(policy.act(observation))
    assert reward(completions, **columns) == [pytest.approx(task_class(env_id).max_reward)] * len(
        rows
    )


def test_single_turn_envs_train_with_the_reward_function():
    rows = adapter.rows("CalendarMath-v0", split="curated")
    reward = adapter.reward_function("CalendarMath-v0")
    columns = {key: [row[key] for row in rows] for key in adapter.ROW_KEYS if key in rows[0]}
    gold, naive = [], []
    for row in rows:
        env = gym.make("CalendarMath-v0")
        _, info = env.reset(options={k: row[k] for k in adapter.ROW_KEYS if k in row})
        for name, out in (("gold", gold), ("naive", naive)):
            policy = make_policy(name, env="CalendarMath-v0")
            policy.reset(row["prompt"][-1]["content"], info)
            out.append(policy.act(""))
    assert reward(gold, **columns) == [pytest.approx(1.2)] * 15
    expected = []
    for row, completion in zip(rows, naive, strict=True):
        env = gym.make("CalendarMath-v0")
        env.reset(options={k: row[k] for k in adapter.ROW_KEYS if k in row})
        expected.append(env.step(completion)[1])
    assert reward(naive, **columns) == expected
    assert round(sum(expected) / 15, 3) == 0.768
    chat = [[{"role": "assistant", "content": text}] for text in gold]
    assert reward(chat, **columns) == [pytest.approx(1.2)] * 15


def test_each_adapter_refuses_the_wrong_kind_of_env():
    with pytest.raises(ValueError, match="has no tools"):
        adapter.environment_factory("CalendarMath-v0")
    with pytest.raises(ValueError, match="has tools"):
        adapter.reward_function("MeetingSlot-v0")


def test_dataset_is_a_datasets_dataset():
    pytest.importorskip("datasets")
    data = adapter.dataset("MeetingSlot-v0", split="train", n=5)
    assert len(data) == 5 and set(data.column_names) >= {"prompt", "split", "index"}


@pytest.mark.slow
def test_grpo_trainer_takes_training_steps_on_meeting_slot(tmp_path, monkeypatch):
    trl = pytest.importorskip("trl")

    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    model, tokenizer, args = tiny_tool_run(tmp_path)
    trainer = trl.GRPOTrainer(
        model=model,
        processing_class=tokenizer,
        args=args,
        train_dataset=adapter.dataset("MeetingSlot-v0", split="train", n=4),
        environment_factory=adapter.environment_factory("MeetingSlot-v0"),
    )
    tools = sorted(tool.__name__ for tool in trainer._env_tools[None])
    assert tools == sorted([*task_class("MeetingSlot-v0").toolset.names, "answer"])
    trainer.train()
    history = [entry for entry in trainer.state.log_history if "loss" in entry]
    assert len(history) == 2  # two optimisation steps ran
    # the env owns the reward (get_reward), logged under the factory class's name
    assert "rewards/MeetingSlotTools/mean" in history[0]
    # a random model never answers: the env scores 0, as its rubric says for no answer
    assert all(entry["reward"] == 0.0 for entry in history)


def test_the_tokenizer_trl_uses_parses_a_tool_call_into_a_method_call(tmp_path):
    pytest.importorskip("trl")
    from trl.chat_template_utils import add_response_schema, parse_response

    _, tokenizer = tiny_qwen3(tmp_path)
    tokenizer = add_response_schema(tokenizer)
    instance = adapter.environment_factory("MeetingSlot-v0")()
    (row,) = adapter.rows("MeetingSlot-v0", split="curated", n=1)
    instance.reset(**row)
    tools = list(trl_methods(instance).values())
    prefix = tokenizer.apply_chat_template(
        row["prompt"], tools=tools, add_generation_prompt=True, tokenize=True
    )
    # transformers < 5.25 returns the ids (or a dict); 5.25 a BatchEncoding (a mapping)
    if not isinstance(prefix, list):
        prefix = list(prefix["input_ids"])
    text = '<tool_call>\n{"name": "get_timezone", "arguments": {"name": "Ava"}}\n</tool_call>'
    ids = tokenizer(text + "<|im_end|>", add_special_tokens=False)["input_ids"]
    parsed = parse_response(tokenizer, ids, prefix=prefix, tools=tools)
    (call,) = parsed["tool_calls"]
    method = trl_methods(instance)[call["function"]["name"]]
    assert method(**call["function"]["arguments"]) == "America/New_York"


def test_get_reward_of_a_dense_task_is_the_return_the_env_paid():
    """TimetablePlanner pays every step: get_reward() sums the rewards as env.step gave them."""
    env_id = "TimetablePlanner-v0"
    instance = adapter.environment_factory(env_id)()
    instance.reset(prompt=[], split="curated", index=0)
    env = gym.make(env_id, mode="text")
    observation, _ = env.reset(options={"split": "curated", "index": 0})
    scenario = json.loads(observation)
    session, room = scenario["sessions"][0]["id"], scenario["rooms"][0]["id"]
    paid = []
    for name, arguments in (
        ("assign_session", {"session_id": session, "day": 0, "start_slot": 0, "room_id": room}),
        ("assign_session", {"session_id": session, "day": 0, "start_slot": 0, "room_id": room}),
        ("unassign_session", {"session_id": "nobody"}),
        ("submit_timetable", {}),
    ):
        text = getattr(instance, name)(**arguments)
        observation, reward, terminated, _, info = env.step(
            json.dumps({"action_type": name, **arguments})
        )
        assert text == observation
        paid.append(reward)
    assert paid[1] < 0 and paid[2] < 0  # penalties count against the return, as in the env
    assert terminated and instance.get_reward() == pytest.approx(sum(paid))
    assert instance.get_reward() == pytest.approx(info["reward"])
    assert instance.submit_timetable().startswith("error:")


def test_curriculum_rows_are_drawn_when_asked_and_replay_their_items():
    from meeting_gym.core.curriculum import Curriculum

    cur = Curriculum.for_env("CalendarMath-v0", seed=5)
    stream = adapter.curriculum_rows("CalendarMath-v0", cur, 3)
    assert sum(cur.drawn.values()) == 0  # nothing drawn before the trainer reads
    first = next(stream)
    assert cur.drawn["easy"] == 1
    expected = adapter.rows("CalendarMath-v0", "train", 1, seed=5, difficulty="easy")[0]
    assert first == expected


def test_curriculum_draws_give_the_rows_the_stream_gives_and_leave_no_env_open(monkeypatch):
    from meeting_gym.core.curriculum import Curriculum

    opened: list[gym.Env] = []
    closed: list[gym.Env] = []
    make = gym.make

    def counting_make(*args, **kwargs):
        env = make(*args, **kwargs)
        opened.append(env)
        close = env.close
        env.close = lambda: (closed.append(env), close())[-1]
        return env

    monkeypatch.setattr(adapter.gym, "make", counting_make)
    cur = Curriculum.for_env("CalendarMath-v0", seed=5)
    draws = adapter.curriculum_draws("CalendarMath-v0", cur)
    batches = [draws(2), draws(3)]
    again = Curriculum.for_env("CalendarMath-v0", seed=5)
    assert batches[0] + batches[1] == list(adapter.curriculum_rows("CalendarMath-v0", again, 5))
    assert len(opened) == 4  # one checking the settings, one per call, one for the stream
    assert closed == opened


def test_curriculum_reward_reports_each_items_group_and_returns_the_rewards():
    from meeting_gym.core.curriculum import Curriculum, Rules

    cur = Curriculum.for_env("CalendarMath-v0", rules=Rules(window=4, min_outcomes=4))
    calls = []

    def reward(completions, **columns):
        calls.append(len(completions))
        return [1.2, 1.2, 0.0, 1.2]

    columns = {
        "difficulty": ["easy"] * 4,
        "index": [0, 0, 1, 1],
        "split_seed": [0] * 4,
        "prompt": [[]] * 4,
    }
    wrapped = adapter.curriculum_reward(reward, cur)
    assert wrapped(["a", "b", "c", "d"], **columns) == [1.2, 1.2, 0.0, 1.2]
    assert calls == [4] and wrapped.__name__ == "reward"
    assert (cur.groups, cur.zero_spread, cur.outcomes) == (2, 1, 4)
    assert cur.windows["medium"] == [] and cur.current == "easy"  # 3 of 4: inside the band


def test_grpo_trainer_follows_a_curriculum(tmp_path, monkeypatch):
    """The trainer's draws follow the outcomes: a learner that solves everything climbs."""
    trl = pytest.importorskip("trl")
    import torch

    from meeting_gym.core.curriculum import Curriculum, Rules

    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    torch.manual_seed(0)
    model, tokenizer = tiny_qwen3(tmp_path)
    cur = Curriculum.for_env("CalendarMath-v0", rules=Rules(window=4, min_outcomes=4))
    seen: list[list[str]] = []

    def solved(completions, **columns):
        """A learner that solves every easy and medium item and half of the harder ones."""
        seen.append(list(columns["difficulty"]))
        return [
            1.2 if level in ("easy", "medium") or k % 2 else 1.0
            for k, level in enumerate(columns["difficulty"])
        ]

    args = tiny_grpo_config(
        tmp_path,
        per_device_train_batch_size=4,
        max_completion_length=4,
        max_steps=8,
        shuffle_dataset=False,
    )
    trainer = trl.GRPOTrainer(
        model=model,
        processing_class=tokenizer,
        args=args,
        train_dataset=adapter.curriculum_dataset("CalendarMath-v0", cur, 64),
        reward_funcs=[adapter.curriculum_reward(solved, cur)],
    )
    trainer.train()
    assert len(seen) == 8 and all(len(batch) == 4 for batch in seen)
    levels = [level for batch in seen for level in batch]
    order = ("easy", "medium", "hard")
    # it climbs through easy and medium (always solved) and stays at hard (half solved)
    assert [level for k, level in enumerate(levels) if level != levels[k - 1] or not k] == list(
        order
    )
    assert cur.current == "hard" and [m["to"] for m in cur.moves] == ["medium", "hard"]
    # the groups of easy and medium items had no spread; hard's all had
    assert cur.groups == 16 and cur.zero_spread == sum(
        1 for batch in seen for k in range(0, 4, 2) if batch[k] != "hard"
    )
    # the reader is at most one generation batch (two items) ahead of the outcomes
    assert 16 <= sum(cur.drawn.values()) <= 16 + 2
