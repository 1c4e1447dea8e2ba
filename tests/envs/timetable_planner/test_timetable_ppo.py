"""MaskablePPO on TimetablePlanner-v0: the spot policy's features, short runs, the CLI.

The full run is ``examples/train_ppo.py --env TimetablePlanner-v0`` (README); here the
policy's per-spot features are checked against the engine, a plain ``MultiInputPolicy`` and the spot
policy train a few steps, and a saved model evaluates through ``meeting-gym eval``.
"""

from __future__ import annotations

import random

import gymnasium as gym
import numpy as np
import pytest

import meeting_gym  # noqa: F401  (registers the env ids)
from meeting_gym.envs.timetable_planner.domain.actions import check_action

sb3_contrib = pytest.importorskip("sb3_contrib")
th = pytest.importorskip("torch")

ENV = "TimetablePlanner-v0"


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _model(env, **kwargs):
    from meeting_gym.envs.timetable_planner.discrete.interface import DEFAULT_BOUNDS
    from meeting_gym.envs.timetable_planner.models.sb3_policy import SpotPolicy

    bounds = dict(vars(DEFAULT_BOUNDS))
    return sb3_contrib.MaskablePPO(
        SpotPolicy,
        env,
        policy_kwargs={"bounds": bounds},
        n_steps=128,
        batch_size=64,
        n_epochs=1,
        seed=0,
        device="cpu",
        **kwargs,
    )


@pytest.mark.parametrize("scenario_id", ["medium_4", "expert_2", "gen_expert_4001"])
def test_the_spot_features_say_which_placements_clash(scenario_id):
    """``clean`` is 1 exactly where assigning (or moving) the session adds no overlap."""
    env = gym.make(ENV, disable_env_checker=True)
    model = _model(env)
    observation, info = env.reset(options={"scenario_id": scenario_id})
    engine = env.unwrapped.episode.engine
    problem, table = engine.problem, env.unwrapped.interface.table
    rng = random.Random(scenario_id)
    for _ in range(problem.step_budget // 2):  # a half-built timetable, clashes included
        legal = np.flatnonzero(info["action_mask"][: table.swap_offset])
        observation, _, _, _, info = env.step(int(rng.choice(legal)))
    tensors = {k: th.as_tensor(v[None]) for k, v in observation.items()}
    policy = model.policy
    with th.no_grad():
        latent = policy.mlp_extractor.forward_actor(policy.extract_features(tensors))
        features = policy.action_net.features(latent)
    clean = features["clean"][0]  # s r d p
    seen = {True: 0, False: 0}  # placements found clean, and clashing
    for index in rng.sample(list(np.flatnonzero(info["action_mask"][: table.swap_offset])), 300):
        action = table.decode(int(index), problem)
        check = check_action(problem, engine.timetable, action)
        s, (d, t, r) = check.session, check.spot
        timetable = engine.timetable.copy()
        old = timetable.spot(s)
        timetable.remove(s) if old is not None else None
        left = timetable.conflicts()
        timetable.place(s, (d, t, r))
        after = timetable.conflicts()
        added = sum(
            getattr(after, k) - getattr(left, k)
            for k in ("teacher_overlap", "group_overlap", "room_overlap")
        )
        assert bool(clean[s, r, d, t]) == (added == 0), (table.describe(int(index), problem), added)
        seen[added == 0] += 1
    # both answers were checked (the assert after the loop was ``overlaps >= 0``: a sum of
    # counts, it could not fail)
    assert seen[True] and seen[False], seen


def test_a_fresh_spot_policy_is_the_masked_random_policy():
    env = gym.make(ENV, disable_env_checker=True)
    model = _model(env)
    observation, info = env.reset(seed=0)
    tensors = {k: th.as_tensor(v[None]) for k, v in observation.items()}
    mask = info["action_mask"].astype(bool)
    dist = model.policy.get_distribution(tensors, action_masks=mask[None])
    probs = dist.distribution.probs[0].detach().numpy()
    assert np.allclose(probs[mask], 1 / mask.sum()) and probs[~mask].max() == 0


def test_spot_policy_trains_saves_and_evaluates_through_the_cli(tmp_path, capsys):
    from stable_baselines3.common.env_util import make_vec_env

    from meeting_gym.cli import main

    venv = make_vec_env(ENV, n_envs=2, seed=0)
    model = _model(venv)
    model.learn(512)
    path = tmp_path / "model.zip"
    model.save(path)
    code = main(
        ["eval", "--env", ENV, "--policy", f"ppo:{path}", "--split", "generated", "--verbose"]
    )
    out = capsys.readouterr().out
    assert code == 0 and "mode=discrete" in out and "gen_expert_4002" in out
    assert "invalid actions" in out and "\nscore " in out
