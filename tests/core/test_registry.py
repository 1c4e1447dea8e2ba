"""One suite over the registry: every registered env id, in every mode its class offers.

A new environment is covered by registering it (Gymnasium's tests/envs/test_envs.py
does the same for its own envs): the checkers, same-seed determinism, pickling
mid-episode, a fuzz smoke of the text interface, split addressing, and the env's
reference policy scoring its documented maximum on its curated split.
"""

from __future__ import annotations

import json
import pickle

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import meeting_gym
from meeting_gym.agents.policies import make_policy
from meeting_gym.core.registry import ENVS, load_object, task_class
from meeting_gym.core.spaces import AnyText
from meeting_gym.core.splits import load_split, split_names
from meeting_gym.evaluation.evaluate import evaluate, summarize


def _configurations() -> list[tuple[str, str]]:
    out = []
    for env_id in ENVS:
        cls = load_object(gym.spec(env_id).entry_point)
        out.extend((env_id, mode) for mode in cls.modes)
    return out


CONFIGS = _configurations()
IDS = [f"{env_id}-{mode}" for env_id, mode in CONFIGS]


def make(env_id: str, mode: str, **kwargs) -> gym.Env:
    return gym.make(env_id, mode=mode, disable_env_checker=True, **kwargs)


def test_every_id_is_registered_with_gymnasium_and_listed():
    assert set(meeting_gym.ENV_IDS) == set(ENVS)
    assert {"MeetingSlot-v0", "MeetingSlot-Raw-v0"} <= set(ENVS)
    for env_id in ENVS:
        assert env_id in gym.registry
        cls = task_class(env_id)
        assert cls.summary and cls.max_reward > 0 and cls.reference_policy in cls.policies


@pytest.mark.parametrize("env_id, mode", CONFIGS, ids=IDS)
def test_gymnasium_check_env(env_id, mode):
    env = make(env_id, mode)
    check_env(env.unwrapped, skip_render_check=True)
    env.close()


@pytest.mark.parametrize("env_id, mode", CONFIGS, ids=IDS)
def test_sb3_check_env_where_the_spaces_allow(env_id, mode):
    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    env = make(env_id, mode)
    if isinstance(env.observation_space, AnyText):
        # SB3 takes Box/Discrete/MultiBinary/MultiDiscrete/Dict of those; a string
        # observation is for LLM agents (the README's table of modes says so)
        with pytest.raises(AssertionError):
            sb3_checker.check_env(env.unwrapped, warn=False)
    else:
        sb3_checker.check_env(env.unwrapped, warn=True)
    env.close()


def _act(env: gym.Env, policy, observation, info) -> object:
    """The reference policy's action in text mode, a random legal one otherwise."""
    if isinstance(env.action_space, AnyText):
        return policy.act(observation)
    legal = np.flatnonzero(info["action_mask"])
    return int(legal[len(legal) // 2])


def _trajectory(env_id: str, mode: str, seed: int, episodes: int = 3) -> list:
    env = make(env_id, mode)
    policy = make_policy(task_class(env_id).reference_policy, seed=seed, env=env_id)
    out = []
    observation, info = env.reset(seed=seed)
    for _ in range(episodes):
        policy.reset(observation, info, seed=seed)
        out.append(("reset", _plain(observation), _plain(info)))
        done = False
        while not done:
            action = _act(env, policy, observation, info)
            observation, reward, terminated, truncated, info = env.step(action)
            out.append(("step", _plain(observation), reward, terminated, truncated, _plain(info)))
            done = terminated or truncated
        observation, info = env.reset()
    env.close()
    return out


def _plain(value):
    """Observations and infos as comparable plain data (arrays as lists)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value


@pytest.mark.parametrize("env_id, mode", CONFIGS, ids=IDS)
def test_same_seed_same_episodes(env_id, mode):
    first = _trajectory(env_id, mode, seed=11)
    assert first == _trajectory(env_id, mode, seed=11)
    assert first != _trajectory(env_id, mode, seed=12)


@pytest.mark.parametrize("env_id, mode", CONFIGS, ids=IDS)
def test_pickled_mid_episode_continues_identically(env_id, mode):
    env = make(env_id, mode)
    observation, info = env.reset(seed=5)
    clone = pickle.loads(pickle.dumps(env))
    policy = make_policy(task_class(env_id).reference_policy, seed=5, env=env_id)
    policy.reset(observation, info, seed=5)
    action = _act(env, policy, observation, info)
    assert _plain(env.step(action)) == _plain(clone.step(action))
    assert _plain(env.reset()) == _plain(clone.reset())


@pytest.mark.parametrize("env_id, mode", CONFIGS, ids=IDS)
def test_reference_policy_scores_its_documented_maximum_on_curated(env_id, mode):
    cls = task_class(env_id)
    items = load_split("curated", env=env_id)
    assert items, f"{env_id} has no curated items"
    results = evaluate(
        lambda: make_policy(cls.reference_policy, env=env_id), items, env=env_id, mode=mode
    )
    assert all(r.error is None for r in results)
    task = cls()
    documented = [task.max_reward_for(item) for item in items]
    assert None not in documented, "every curated item has a documented best reward"
    assert [r.reward for r in results] == [pytest.approx(m) for m in documented], [
        (r.item_id, r.gold, r.answer)
        for r, m in zip(results, documented, strict=True)
        if r.reward < m
    ]
    assert all(m <= cls.max_reward + 1e-9 for m in documented)
    assert summarize(results)["reward"] == pytest.approx(sum(documented) / len(documented))


SPLIT_CASES = [
    (env_id, mode, split) for env_id, mode in CONFIGS for split in split_names(task_class(env_id))
]


@pytest.mark.parametrize(
    "env_id, mode, split", SPLIT_CASES, ids=[f"{e}-{m}-{s}" for e, m, s in SPLIT_CASES]
)
def test_reset_options_address_split_items(env_id, mode, split):
    env = make(env_id, mode)
    items = load_split(split, n=20, seed=3, env=env_id)
    task = env.unwrapped.task
    for index in (0, len(items) // 2, len(items) - 1):
        env.reset(options={"split": split, "index": index, "split_seed": 3})
        assert task.key(env.unwrapped.episode.item) == task.key(items[index])
    env.close()


@pytest.mark.parametrize("env_id", list(ENVS))
def test_reset_seed_plays_the_train_split_in_order(env_id):
    env = gym.make(env_id, disable_env_checker=True)
    task = env.unwrapped.task
    played = [env.reset(seed=9)[1][task.id_key]]
    played += [env.reset()[1][task.id_key] for _ in range(4)]
    assert played == [task.item_id(item) for item in load_split("train", n=5, seed=9, env=env_id)]


@pytest.mark.parametrize("env_id", list(ENVS))
def test_train_never_draws_an_eval_item(env_id):
    task = task_class(env_id)()
    held = {task.key(i) for i in load_split("eval", n=150, env=env_id)}
    train = {task.key(i) for i in load_split("train", n=1500, seed=42, env=env_id)}
    assert not held & train
    fixed = {task.key(i) for name in task.fixed_splits() for i in load_split(name, env=env_id)}
    assert fixed == task.curated_keys
    assert not fixed & train, "train never draws a hand-picked item"
    prefix = {task.key(i) for i in task.eval_prefix()}
    assert not (fixed - prefix) & held, "eval holds no hand-picked item but its prefix"


@pytest.mark.parametrize("env_id", list(ENVS))
def test_exported_rows_replay_with_their_options(env_id, tmp_path):
    from meeting_gym.core.splits import export_split

    path = tmp_path / "rows.jsonl"
    assert export_split("eval", path, n=20, env=env_id) == 20
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    env = gym.make(env_id, mode="text", disable_env_checker=True)
    for row in rows[::4]:
        observation, info = env.reset(options=row["options"])
        assert row["env"] == env_id and observation == row["question"]
        assert info[env.unwrapped.task.id_key] == row["id"]
        assert env.unwrapped.episode.gold == row["answer"]


@pytest.mark.parametrize("env_id", list(ENVS))
def test_bad_reset_options_and_arguments_say_what_is_wrong(env_id):
    env = gym.make(env_id, disable_env_checker=True)
    for options, fragment in (
        ({"nonsense": 1}, "unknown reset option"),
        ({"split": "eval"}, '"split" and "index" go together'),
        ({"split": "tests", "index": 0}, "unknown split"),
        ({"split": "curated", "index": 10_000}, "out of range"),
        ({"split": "train", "index": -1}, "non-negative"),
        ({"difficulty": "legendary"}, "unknown difficulty"),
    ):
        with pytest.raises(ValueError, match=fragment):
            env.reset(options=options)
    with pytest.raises(ValueError, match="unknown difficulty"):
        gym.make(env_id, difficulty="legendary", disable_env_checker=True)
    with pytest.raises(ValueError, match="max_turns"):
        gym.make(env_id, max_turns=0, disable_env_checker=True)


# ------------------------------------------------------------------ fuzz smoke (text mode)

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=6,
)
_ACTIONS = st.one_of(
    st.text(max_size=60),
    st.builds(lambda s: f"<answer>{s}</answer>", st.text(max_size=30)),
    st.builds(lambda s: f"< ANSWER >{s}", st.text(max_size=30)),
    st.builds(
        lambda name, args: json.dumps({"name": name, "arguments": args}),
        st.text(max_size=20),
        _JSON,
    ),
    st.builds(lambda value: json.dumps(value), _JSON),
    st.integers() | st.none() | st.binary(max_size=8),
)
TEXT_IDS = [env_id for env_id, mode in CONFIGS if mode == "text"]


@pytest.mark.parametrize("env_id", TEXT_IDS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(actions=st.lists(_ACTIONS, min_size=1, max_size=6), seed=st.integers(0, 2**31))
def test_text_interface_fuzz_smoke(env_id, actions, seed):
    env = make(env_id, "text")
    base = env.unwrapped
    observation, _ = env.reset(seed=seed)
    assert base.observation_space.contains(observation)
    paid = 0.0
    for turns, action in enumerate(actions, 1):
        observation, reward, terminated, truncated, info = env.step(action)
        assert info["turn"] == turns and base.observation_space.contains(observation)
        paid += reward
        # a reward every step (penalties too); the return is bounded
        if base.task.episode_class.dense_reward:
            assert paid <= base.task.max_reward + 1e-9
        else:
            assert 0.0 <= reward <= base.task.max_reward + 1e-9
        if terminated or truncated:
            assert set(base.task.rubric.names) <= set(info) and "gold" in info
            assert info["reward"] == pytest.approx(paid), "the rewards paid sum to the grade"
            break
        assert turns < base.max_turns
        if not base.task.episode_class.dense_reward:
            assert reward == 0.0
    env.close()
