"""MeetingSlot-v0 in discrete mode: masks, checkers, parity with text mode, grid/raw observations,
malformed actions, rendering and vector envs."""

from __future__ import annotations

import json
import random
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import meeting_gym
from meeting_gym.envs.meeting_slot.discrete.actions import ActionTable
from meeting_gym.envs.meeting_slot.domain.curated import CURATED_BY_ID
from meeting_gym.envs.meeting_slot.domain.generator import generate
from meeting_gym.envs.meeting_slot.domain.scenario import Scenario
from meeting_gym.envs.meeting_slot.domain.solver import solve, window_bounds
from meeting_gym.envs.meeting_slot.render.picture import frame_size

MEETING_SLOT_IDS = [i for i in meeting_gym.ENV_IDS if i.startswith("MeetingSlot")]

TABLE = ActionTable()
A, J, S = TABLE.max_attendees, TABLE.n_dates, TABLE.n_slots


def make(**kwargs):
    return gym.make("MeetingSlot-v0", **kwargs)


def index(kind, attendee=None, day=None, slot=None):
    from meeting_gym.envs.meeting_slot.discrete.actions import Action

    return TABLE.encode(Action(kind, attendee=attendee, day=day, slot=slot))


def gather_all(env, scenario):
    """Call every tool the answer depends on; returns the last step's output."""
    out = env.step(0)
    for i in range(len(scenario.attendees)):
        out = env.step(index("get_timezone", i))
        out = env.step(index("get_working_hours", i))
        for j in range(scenario.window_days + 2):
            out = env.step(index("get_busy", i, j))
    return out


# ---------------------------------------------------------------------------- checkers


@pytest.mark.parametrize("env_id", MEETING_SLOT_IDS)
@pytest.mark.parametrize("render_mode", [None, "rgb_array", "ansi"])
def test_gymnasium_checker(env_id, render_mode):
    env = gym.make(env_id, render_mode=render_mode)
    check_env(env.unwrapped, skip_render_check=render_mode is None)


@pytest.mark.parametrize("env_id", MEETING_SLOT_IDS)
def test_sb3_checker_without_warnings(env_id):
    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # "always" would undo meeting_gym's silencing of Gymnasium's note that a -v0 id
        # has a -v1: not a checker warning, so it stays silenced here
        warnings.filterwarnings("ignore", r".*is out of date", DeprecationWarning)
        sb3_checker.check_env(gym.make(env_id).unwrapped)
    assert [str(w.message) for w in caught] == []


def test_default_is_discrete_grid():
    env = make()
    assert env.unwrapped.mode == "discrete" and env.unwrapped.obs == "grid"
    assert env.action_space == gym.spaces.Discrete(518)
    for space in env.observation_space.spaces.values():
        assert isinstance(space, gym.spaces.Box | gym.spaces.MultiBinary | gym.spaces.Discrete)
        assert len(space.shape) <= 1


# ---------------------------------------------------------------------------- masks


def test_masks_follow_the_rules():
    env = make(max_turns=60)
    scenario = CURATED_BY_ID["dst_eu_monday"]  # 4-day window
    count, days = len(scenario.attendees), scenario.window_days
    _, info = env.reset(options={"scenario": scenario})
    mask = info["action_mask"]
    assert mask.dtype == np.int8
    np.testing.assert_array_equal(env.unwrapped.action_masks(), mask.astype(bool))
    assert mask[0] == 1 and mask[1 : TABLE.n_tools].sum() == 0  # nothing before listing
    answers = mask[TABLE.answer_offset : TABLE.none_index]
    assert answers[: days * 96].all() and not answers[days * 96 :].any()
    assert mask[TABLE.none_index] == 1

    _, _, _, _, info = env.step(0)
    mask = info["action_mask"]
    assert mask[0] == 0  # a repeat
    for i in range(A):
        assert mask[index("get_timezone", i)] == (i < count)
        assert mask[index("get_working_hours", i)] == (i < count)
        for j in range(J):
            assert mask[index("get_busy", i, j)] == (i < count and j < days + 2)
    _, _, _, _, info = env.step(index("get_busy", 0, 1))
    assert info["action_mask"][index("get_busy", 0, 1)] == 0
    assert info["action_mask"][index("get_busy", 0, 2)] == 1

    env = make(mask_repeats=False)
    env.reset(options={"scenario": scenario})
    _, _, _, _, info = env.step(0)
    assert info["action_mask"][0] == 1


def test_masks_match_between_info_and_method_and_are_fresh():
    env = make()
    _, info = env.reset(seed=3)
    first = info["action_mask"]
    first[:] = 0
    _, _, _, _, info = env.step(0)
    assert info["action_mask"].sum() > 0
    again = env.unwrapped.action_masks()
    again[:] = False
    assert env.unwrapped.action_masks().any()


@pytest.mark.parametrize("env_id", ["MeetingSlot-v0", "MeetingSlot-Raw-v0"])
def test_observations_are_fresh_and_their_arrays_disjoint(env_id):
    """No array is shared between keys or steps; scribbling on one changes nothing."""
    scribbled, clean = gym.make(env_id), gym.make(env_id)
    observations = [scribbled.reset(seed=4)[0]]
    expected = [clean.reset(seed=4)[0]]
    for action in (0, 1, 5, 9):
        for value in observations[-1].values():
            if isinstance(value, np.ndarray):
                value[...] = 1
        observations.append(scribbled.step(action)[0])
        expected.append(clean.step(action)[0])
    for key, value in observations[-1].items():
        np.testing.assert_array_equal(value, expected[-1][key])
    arrays = [v for obs in observations for v in obs.values() if isinstance(v, np.ndarray)]
    for i, left in enumerate(arrays):
        for right in arrays[i + 1 :]:
            assert not np.shares_memory(left, right)


# ---------------------------------------------------------------------------- parity


def text_call(env, scenario, action):
    kind, payload = TABLE.call(action, scenario)
    if kind == "answer":
        return payload
    name, arguments = payload
    return json.dumps({"name": name, "arguments": arguments})


def test_parity_with_text_mode_over_many_seeds():
    discrete, text = make(), make(mode="text")
    rng = random.Random(0)
    for seed in range(300):
        _, d_info = discrete.reset(seed=seed)
        _, t_info = text.reset(seed=seed)
        assert d_info["scenario_id"] == t_info["scenario_id"]
        assert d_info["request"] == t_info["request"]
        scenario = discrete.unwrapped.episode.item
        for _ in range(rng.randrange(1, 12)):
            mask = discrete.unwrapped.action_masks()
            tools = [a for a in range(TABLE.n_tools) if mask[a] or rng.random() < 0.05]
            action = rng.choice(tools)
            _, _, _, _, d_step = discrete.step(action)
            t_obs, *_ = text.step(text_call(text, scenario, action))
            assert d_step["result"] == t_obs
        answer = rng.choice([TABLE.none_index, TABLE.answer_offset + rng.randrange(S)])
        if rng.random() < 0.3 and solve(scenario).gold is not None:
            lo = window_bounds(scenario)[0]
            answer = TABLE.answer_offset + (solve(scenario).gold - lo) // 900
        _, d_reward, d_term, _, d_end = discrete.step(answer)
        _, t_reward, t_term, _, t_end = text.step(text_call(text, scenario, answer))
        assert d_term and t_term and d_reward == t_reward
        for key in ("exact_match", "format", "partial_credit", "reward", "gold", "answer"):
            assert d_end[key] == t_end[key]
        assert d_end["format"] == 1.0
        assert discrete.unwrapped.episode.calls == text.unwrapped.episode.calls


def test_gold_policy_scores_the_same_in_both_modes():
    from meeting_gym.agents.policies import make_policy
    from meeting_gym.core.splits import load_split
    from meeting_gym.evaluation.evaluate import evaluate, summarize

    curated = summarize(
        evaluate(lambda: make_policy("gold"), load_split("curated"), mode="discrete")
    )
    assert curated["reward"] == pytest.approx(1.2)
    scenarios = load_split("eval", n=60)
    discrete = evaluate(lambda: make_policy("gold"), scenarios, mode="discrete")
    text = evaluate(lambda: make_policy("gold"), scenarios)
    assert [r.reward for r in discrete] == [r.reward for r in text]


def test_cli_prints_gold_on_curated(capsys):
    from meeting_gym.cli import main

    assert main(["eval", "--policy", "gold", "--mode", "discrete", "--split", "curated"]) == 0
    out = capsys.readouterr().out
    assert "mode=discrete" in out and "avg reward      1.200" in out


# ---------------------------------------------------------------------------- grid observation


@pytest.mark.parametrize("difficulty", ["easy", "medium", "hard", "expert"])
def test_fit_channel_equals_validity_once_everything_is_revealed(difficulty):
    env = make(max_turns=60)
    rng = random.Random(difficulty)
    for _ in range(40):
        scenario = generate(rng, difficulty)
        env.reset(options={"scenario": scenario})
        obs, *_ = gather_all(env, scenario)
        solution, lo = solve(scenario), window_bounds(scenario)[0]
        expected = [solution.is_valid(lo + 900 * k) for k in range(S)]
        np.testing.assert_array_equal(obs["fit"].astype(bool), expected)


def test_grid_reveals_nothing_before_its_tool_is_called():
    scenario = CURATED_BY_ID["dst_eu_monday"]
    data = scenario.to_dict()
    person = data["world"]["attendees"][0]
    monday = (TABLE.first_date(scenario) + _days(4)).isoformat()  # date index 4, a work day
    assert monday == "2024-04-01"
    busy = {**person["busy"], monday: [{"start": "00:00", "end": "23:45"}]}
    people = data["world"]["attendees"]
    other = dict(data, world={"attendees": [dict(person, busy=busy), *people[1:]]})

    def observe(world, actions):
        env = make()
        obs, _ = env.reset(options={"scenario": world})
        for action in actions:
            obs, *_ = env.step(action)
        return obs

    hidden = [0, index("get_timezone", 0), index("get_working_hours", 0), index("get_busy", 0, 0)]
    for prefix in (hidden[:1], hidden[:3], hidden):
        a, b = observe(data, prefix), observe(Scenario.from_dict(other), prefix)
        for key in a:
            np.testing.assert_array_equal(a[key], b[key])
    a = observe(data, [*hidden, index("get_busy", 0, 4)])
    b = observe(Scenario.from_dict(other), [*hidden, index("get_busy", 0, 4)])
    assert not np.array_equal(a["available"], b["available"])


def test_grid_channels_step_by_step():
    env = make()
    scenario = CURATED_BY_ID["dst_eu_monday"]
    obs, _ = env.reset(options={"scenario": scenario})
    assert obs["attendees"] == 0 and obs["window_days"] == scenario.window_days
    assert obs["available"].sum() == obs["unavailable"].sum() == obs["fit"].sum() == 0
    assert obs["in_window"].sum() == scenario.window_days * 96
    assert obs["turns_left"][0] == 1.0
    obs, *_ = env.step(0)
    assert obs["attendees"] == len(scenario.attendees) and obs["called"][0] == 1
    obs, *_ = env.step(index("get_timezone", 0))
    assert obs["available"].sum() == obs["unavailable"].sum() == 0  # hours still unknown
    obs, *_ = env.step(index("get_working_hours", 0))
    row = slice(0, S)
    assert obs["available"][row].sum() == 0  # no busy date revealed: nothing known free
    assert obs["unavailable"][row].sum() > 0  # but nights are known to be off
    obs, *_ = env.step(index("get_busy", 0, 1))  # 2024-03-29: booked all day
    assert obs["available"][row].sum() == 0
    obs, *_ = env.step(index("get_busy", 0, 4))  # 2024-04-01: free 09:00-17:00 London
    assert obs["available"][row].sum() == 8 * 4
    assert not (obs["available"] * obs["unavailable"]).any()
    assert obs["turns_left"][0] == pytest.approx(1 - 5 / 40)


def test_raw_observation_holds_tool_results_in_local_time():
    env = make(obs="raw")
    scenario = CURATED_BY_ID["dst_eu_monday"]
    person = scenario.attendees[0]
    from meeting_gym.envs.meeting_slot.discrete.observations import ZONE_VOCAB

    obs, _ = env.reset(options={"scenario": scenario})
    assert obs["zone"].sum() == 0 and obs["busy"].sum() == 0
    for action in (0, index("get_timezone", 0), index("get_working_hours", 0)):
        obs, *_ = env.step(action)
    zone = obs["zone"].reshape(A, -1)
    assert zone[0].argmax() == ZONE_VOCAB.index(person.timezone) and zone[1].sum() == 0
    hours = obs["hours"].reshape(A, 2)[0] * 1440
    np.testing.assert_allclose(hours, [person.work_start, person.work_end], atol=1e-3)
    assert list(np.flatnonzero(obs["weekdays"].reshape(A, 7)[0])) == list(person.weekdays)
    busy_days = [d for d in range(J) if person.busy_on(TABLE.first_date(scenario) + _days(d))]
    assert busy_days, "the curated case should have a busy block to check"
    day = busy_days[0]
    obs, *_ = env.step(index("get_busy", 0, day))
    cells = obs["busy"].reshape(A, J, 96)[0, day]
    expected = np.zeros(96)
    for start, end in person.busy_on(TABLE.first_date(scenario) + _days(day)):
        expected[start // 15 : -(-end // 15)] = 1
    np.testing.assert_array_equal(cells, expected)
    weekdays = obs["date_weekday"].reshape(J, 7)
    assert weekdays[1].argmax() == scenario.window_start.weekday()


def _days(n):
    from datetime import timedelta

    return timedelta(days=n)


# ---------------------------------------------------------------------------- malformed actions


@pytest.mark.parametrize("action", [-1, 518, 2.5, "0", None, True, np.array([1, 2])])
def test_malformed_actions_cost_a_turn_and_never_crash(action):
    env = make()
    obs0, _ = env.reset(seed=5)
    obs, reward, terminated, truncated, info = env.step(action)
    assert info["result"].startswith("error:") and reward == 0
    assert not terminated and not truncated
    assert info["turn"] == 1 and obs["turns_left"][0] == pytest.approx(39 / 40)
    np.testing.assert_array_equal(obs["called"], obs0["called"])
    assert env.unwrapped.episode.calls == []


@pytest.mark.parametrize("action", [np.int64(0), np.array(0), np.array([0], dtype=np.int32)])
def test_integer_numpy_actions_are_read_as_their_value(action):
    env = make()
    env.reset(seed=5)
    _, _, _, _, info = env.step(action)
    assert info["action"] == "list_attendees()" and info["result"].startswith("[")


def test_masked_actions_still_run_as_documented():
    env = make()
    scenario = CURATED_BY_ID["dst_eu_monday"]
    env.reset(options={"scenario": scenario})
    _, _, _, _, info = env.step(index("get_timezone", 0))  # before list_attendees
    assert info["result"] == scenario.attendees[0].timezone
    _, _, _, _, info = env.step(index("get_timezone", 3))  # an empty slot
    assert info["result"].startswith("error: unknown attendee '#3'")
    env.step(0)
    _, _, _, _, info = env.step(0)  # a repeat repeats
    assert json.loads(info["result"]) == [p.name for p in scenario.attendees]
    _, reward, terminated, _, info = env.step(TABLE.answer_offset + S - 1)  # outside the window
    assert terminated and reward == pytest.approx(0.2) and info["partial_credit"] == 0


def test_truncation_after_max_turns():
    env = make(max_turns=3)
    env.reset(seed=1)
    for _ in range(3):
        _, reward, terminated, truncated, info = env.step(0)
    assert truncated and not terminated and reward == 0 and info["answered"] is False
    with pytest.raises(RuntimeError):
        env.step(0)


def test_scenario_beyond_the_bounds_is_refused():
    env = make(max_attendees=1)
    with pytest.raises(ValueError, match="max_attendees"):
        env.reset(options={"scenario_id": "dst_eu_monday"})


# ---------------------------------------------------------------------------- rendering


@pytest.mark.parametrize("mode", ["discrete", "text"])
def test_rgb_and_ansi_rendering(mode):
    scenario = CURATED_BY_ID["dst_eu_monday"]
    images = []
    for render_mode in ("rgb_array", "ansi"):
        env = make(mode=mode, render_mode=render_mode, max_turns=60)
        env.reset(options={"scenario": scenario})
        first = env.render()
        if mode == "discrete":
            gather_all(env, scenario)
            env.step(TABLE.none_index)
        else:
            env.step(json.dumps({"name": "list_attendees", "arguments": {}}))
            name = scenario.attendees[0].name
            env.step(json.dumps({"name": "get_timezone", "arguments": {"name": name}}))
            env.step(json.dumps({"name": "get_working_hours", "arguments": {"name": name}}))
            env.step("<answer>NONE</answer>")
        last = env.render()
        if render_mode == "rgb_array":
            assert first.dtype == np.uint8 and first.ndim == 3 and first.shape[2] == 3
            assert first.shape == last.shape == (*frame_size(TABLE.max_attendees), 3)
            assert not np.array_equal(first, last)
            images.append(last)
        else:
            assert isinstance(last, str) and "fit" in last and "answer=NONE" in last
            assert ("?" in first) and ("." in last or "#" in last or ":" in last)
            if mode == "text":
                assert "[question]" in last
    assert images


# ---------------------------------------------------------------------------- vector envs


@pytest.mark.parametrize("vectorization_mode", ["sync", "async"])
def test_gymnasium_make_vec(vectorization_mode):
    envs = gym.make_vec("MeetingSlot-v0", num_envs=2, vectorization_mode=vectorization_mode)
    try:
        obs, info = envs.reset(seed=0)
        assert obs["fit"].shape == (2, S) and info["action_mask"].shape == (2, TABLE.n)
        for _ in range(5):
            actions = np.array([np.flatnonzero(m)[0] for m in info["action_mask"]])
            obs, reward, _, _, info = envs.step(actions)
        assert reward.shape == (2,)
    finally:
        envs.close()


@pytest.mark.parametrize("cls", ["DummyVecEnv", "SubprocVecEnv"])
def test_sb3_vec_envs_with_masks(cls):
    vec_env = pytest.importorskip("stable_baselines3.common.vec_env")
    env_util = pytest.importorskip("stable_baselines3.common.env_util")
    maskable = pytest.importorskip("sb3_contrib.common.maskable.utils")
    venv = env_util.make_vec_env(
        "meeting_gym:MeetingSlot-v0", n_envs=2, seed=0, vec_env_cls=getattr(vec_env, cls)
    )
    try:
        venv.reset()
        masks = maskable.get_action_masks(venv)
        assert masks.shape == (2, TABLE.n) and masks[:, 0].all() and not masks[:, 1].any()
        venv.step(np.array([0, 0]))
        masks = maskable.get_action_masks(venv)
        assert not masks[:, 0].any() and masks[:, 1].all()
    finally:
        venv.close()


def test_pickles_and_same_seed_same_rollout():
    import pickle

    def rollout(env):
        obs, _ = env.reset(seed=7)
        out = [obs["fit"].copy()]
        for action in (0, 1, 5, 9, 10):
            obs, *_ = env.step(action)
            out.append(obs["available"].copy())
        return out

    env = make()
    first = rollout(env)
    clone = pickle.loads(pickle.dumps(make()))
    for a, b in zip(first, rollout(clone), strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("clone", ["pickle", "deepcopy"])
def test_an_env_copied_mid_episode_continues_like_the_original(clone):
    import copy
    import pickle

    env = make()
    env.reset(seed=7)
    env.step(0)
    twin = pickle.loads(pickle.dumps(env)) if clone == "pickle" else copy.deepcopy(env)
    for action in (1, 5, 9, 10, 13):
        mine, *_ = env.step(action)
        theirs, *_ = twin.step(action)
        for key, value in mine.items():
            np.testing.assert_array_equal(value, theirs[key])


def test_a_saved_model_is_played_on_the_encoding_it_was_trained_on():
    """``eval --policy ppo:PATH`` makes the env with these keywords (a model's observation
    space tells a raw-encoding model from a grid one); an env of one encoding needs none."""
    from meeting_gym.envs.meeting_slot.env import MeetingSlotEnv
    from meeting_gym.envs.timetable_planner.env import TimetablePlannerEnv

    for env_id, obs in (("MeetingSlot-v0", "grid"), ("MeetingSlot-Raw-v0", "raw")):
        space = gym.make(env_id).observation_space
        assert MeetingSlotEnv.make_kwargs_for(space) == {"obs": obs}
    assert (
        TimetablePlannerEnv.make_kwargs_for(gym.make("TimetablePlanner-v0").observation_space) == {}
    )
