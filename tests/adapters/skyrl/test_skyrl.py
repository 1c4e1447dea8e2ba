"""meeting_gym.adapters.skyrl against skyrl-gym itself: every env id made by ``skyrl_gym.make``
as SkyRL's generator makes it, played the way the generator plays it (``init``, then ``step``
with each reply until ``done``)."""

from __future__ import annotations

import gymnasium as gym
import pytest

import meeting_gym  # noqa: F401
from meeting_gym.agents.policies import make_policy
from meeting_gym.core.loop import ScriptedAgent, play
from meeting_gym.core.registry import ENVS, load_object, task_class

skyrl_gym = pytest.importorskip("skyrl_gym", reason='needs pip install "meeting-gym[skyrl]"')
from meeting_gym.adapters import skyrl  # noqa: E402

skyrl.register()
TEXT_ENVS = [e for e in ENVS if "text" in load_object(gym.spec(e).entry_point).modes]


def extras(row: dict) -> dict:
    """What SkyRL's generator passes as ``extras``: the row less its prompt and env class."""
    return {k: v for k, v in row.items() if k not in ("prompt", "env_class")}


def play_through_skyrl(row: dict, policy: str) -> tuple[list[float], list[str]]:
    """``policy`` played through a skyrl-gym env made from ``row``: its step rewards and the
    replies it sent (the policy reads the env behind the adapter, as it does in-process)."""
    env = skyrl_gym.make(row["env_class"], env_config=None, extras=extras(row))
    messages, _ = env.init(row["prompt"])
    agent = make_policy(policy, seed=0, env=row["env_class"])
    agent.reset(messages[-1]["content"], env.reset_info, env=env.env, seed=None)
    observation, rewards, actions, done = messages[-1]["content"], [], [], False
    while not done:
        action = agent.act(observation, env.last_info or env.reset_info)
        out = env.step(action)
        rewards.append(out["reward"])
        actions.append(action)
        done = out["done"]
        if not done:
            assert [m["role"] for m in out["observations"]] == ["user"]
            observation = out["observations"][0]["content"]
    env.close()
    return rewards, actions


def in_process(env_id: str, row: dict, policy: str) -> list[float]:
    env = gym.make(env_id, mode="text", disable_env_checker=True)
    options = {k: row[k] for k in skyrl.ADDRESS_KEYS if k in row}
    rollout = play(env, make_policy(policy, seed=0, env=env_id), options=options)
    env.close()
    return rollout.rewards


def test_every_env_id_is_registered_with_skyrl_gym_under_its_own_id():
    assert set(TEXT_ENVS) <= set(skyrl_gym.registry)
    assert skyrl.register() == []  # a second call registers nothing again
    made = skyrl_gym.make("CalendarMath-v1", env_config=None, extras={"split": "curated"})
    assert isinstance(made, skyrl_gym.envs.base_text_env.BaseTextEnv)
    assert made.env.spec.id == "CalendarMath-v1"


@pytest.mark.parametrize("env_id", TEXT_ENVS)
def test_gold_reaches_the_envs_maximum_on_every_curated_item(env_id):
    rows = skyrl.dataset_rows(env_id, "curated")
    task = task_class(env_id)()
    best = [task.max_reward_for(item) for item in task.curated()]
    gold = task.reference_policy  # the env's gold-answer policy (TimetablePlanner's: solver)
    returns = [sum(play_through_skyrl(row, gold)[0]) for row in rows]
    assert returns == [pytest.approx(task.max_reward if b is None else b) for b in best]


@pytest.mark.parametrize("env_id", TEXT_ENVS)
def test_gold_and_naive_earn_their_in_process_rewards(env_id):
    task = task_class(env_id)
    names = [task.reference_policy, *(p for p in ("naive", "greedy") if p in task.policies)]
    for row in skyrl.dataset_rows(env_id, "curated", 5):
        for name in names:
            assert play_through_skyrl(row, name)[0] == in_process(env_id, row, name), (name, row)


@pytest.mark.parametrize("env_id", ["MeetingSlot-v0", "CronSchedule-Tools-v0", "CalendarMath-v0"])
def test_a_malformed_reply_gets_the_envs_error_and_costs_a_turn(env_id):
    row = skyrl.dataset_rows(env_id, "curated", 1)[0]
    env = skyrl_gym.make(env_id, env_config=None, extras=extras(row))
    env.init(row["prompt"])
    out = env.step("{not json and no answer")
    reference = gym.make(env_id, mode="text", disable_env_checker=True)
    reference.reset(options={k: row[k] for k in skyrl.ADDRESS_KEYS if k in row})
    observation, reward, terminated, truncated, _ = reference.step("{not json and no answer")
    assert out["reward"] == reward and out["done"] == (terminated or truncated)
    if not out["done"]:  # a multi-turn env answers with its error and goes on
        assert out["observations"][0]["content"] == observation
        assert observation.startswith("error:")
    assert env.get_metrics()["turns"] == 1


def test_a_row_replays_on_a_fresh_env_to_the_same_rewards():
    row = skyrl.dataset_rows("MeetingSlot-v0", "train", 3, seed=7)[2]  # a generated item
    rewards, actions = play_through_skyrl(row, "gold")
    env = gym.make("MeetingSlot-v0", mode="text", disable_env_checker=True)
    options = {k: row[k] for k in skyrl.ADDRESS_KEYS if k in row}
    replay = play(env, ScriptedAgent(actions), options=options)
    assert replay.rewards == rewards and replay.error is None and replay.done


def test_the_address_may_sit_under_extra_info_and_settings_reach_the_env():
    row = skyrl.dataset_rows("CalendarMath-v0", "train", 2, task="weekday")[1]
    assert row["env_kwargs"] == {"task": "weekday"}
    nested = {
        "env_kwargs": row["env_kwargs"],
        "extra_info": {k: row[k] for k in skyrl.ADDRESS_KEYS if k in row},
    }
    env = skyrl_gym.make("CalendarMath-v0", env_config=None, extras=nested)
    messages, meta = env.init(row["prompt"])
    assert messages == row["prompt"] and meta["index"] == 1


def test_a_prompt_for_another_item_is_refused_and_an_empty_one_gets_the_envs():
    first, second = skyrl.dataset_rows("CalendarMath-v0", "curated", 2)
    env = skyrl_gym.make("CalendarMath-v0", env_config=None, extras=extras(first))
    with pytest.raises(ValueError, match="does not ask the question"):
        env.init(second["prompt"])
    messages, _ = env.init([])
    assert messages == first["prompt"]


def test_max_turns_from_the_generator_truncates_the_episode():
    row = skyrl.dataset_rows("MeetingSlot-v0", "curated", 1)[0]
    env = skyrl_gym.make("MeetingSlot-v0", env_config=None, extras={**extras(row), "max_turns": 2})
    env.init(row["prompt"])
    call = '{"name": "list_attendees", "arguments": {}}'
    assert env.step(call)["done"] is False
    last = env.step(call)
    assert last["done"] is True and last["observations"] == []


def test_bad_rows_are_named():
    with pytest.raises(ValueError, match="env_kwargs must be an object"):
        skyrl_gym.make("CalendarMath-v0", env_config=None, extras={"env_kwargs": "weekday"})
    with pytest.raises(ValueError, match="unknown env id"):
        skyrl.MeetingGymEnv(extras={}, env_id="Nope-v0")
