"""RLlib on MeetingSlot and TimetablePlanner: registration, masks honoured, tiny PPO, the pointer.

Needs the rllib extra (``.venv-rllib`` in CI, gymnasium 1.2.2); skipped without it. One
local Ray instance for the module; every run is tiny (512 steps per update), seconds in
all. The full training run is ``examples/train_rllib.py`` (README, RLlib section).
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("ray.rllib")
pytest.importorskip("torch")

import ray
import torch

from meeting_gym.adapters import rllib as adapter
from meeting_gym.agents.rllib_agent import RLlibAgent, load_rllib
from meeting_gym.core.splits import load_split
from meeting_gym.envs.meeting_slot.models import rllib_module
from meeting_gym.evaluation.evaluate import evaluate, summarize

TINY = {"train_batch_size": 512, "minibatch_size": 128, "num_epochs": 2, "envs_per_env_runner": 4}


@pytest.fixture(scope="module", autouse=True)
def ray_instance():
    torch.set_num_threads(1)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def build(spec, env_id="MeetingSlot-v0", **overrides):
    return adapter.ppo_config(env_id, spec, **{**TINY, **overrides}).build_algo()


def test_register_puts_every_discrete_id_in_rays_registry():
    from ray.tune.registry import ENV_CREATOR, _global_registry

    assert adapter.register() == adapter.discrete_env_ids()
    for env_id in adapter.discrete_env_ids():
        assert _global_registry.contains(ENV_CREATOR, env_id)
        env = _global_registry.get(ENV_CREATOR, env_id)({"difficulty": "hard"})
        assert isinstance(env, adapter.MaskedObservation)
        assert env.reset(seed=0)[1]["difficulty"] == "hard"
    with pytest.raises(ValueError, match="unknown env"):
        adapter.register(["NoSuchEnv-v0"])


def _sampled_steps(algo, timesteps: int) -> tuple[int, int, float]:
    """(steps, masked actions taken, masked actions a uniform policy would take) in a sample."""
    episodes = algo.env_runner.sample(num_timesteps=timesteps, explore=True)
    steps = masked = 0
    expected = 0.0
    for episode in episodes:
        masks = np.asarray(episode.get_observations()["action_mask"])
        actions = np.asarray(episode.get_actions())
        for mask, action in zip(masks, actions, strict=False):  # the last obs has no action
            steps += 1
            masked += int(mask[action] == 0)
            expected += 1.0 - mask.mean()
    return steps, masked, expected


@pytest.mark.parametrize("module", ["masked-mlp", "pointer"])
def test_a_masked_action_is_never_sampled(module):
    # the pointer module with answers favoured: most answer starts of a short window are
    # masked, so an unmasked sampler would pick masked actions all the time
    spec = (
        adapter.masked_mlp_spec()
        if module == "masked-mlp"
        else rllib_module.pointer_spec(answer_bias=8.0)
    )
    algo = build(spec)
    try:
        steps, masked, expected = _sampled_steps(algo, 1000)
        assert steps >= 1000 and expected > 100, (steps, expected)  # the check is not vacuous
        assert masked == 0
        algo.train()  # and after an update
        steps, masked, _ = _sampled_steps(algo, 500)
        assert steps >= 500 and masked == 0
    finally:
        algo.stop()


def test_the_timetables_masks_are_honoured_through_a_ppo_update():
    """TimetablePlanner's discrete interface (12,651 actions, most masked) on RLlib's module."""
    algo = build(adapter.masked_mlp_spec(), "TimetablePlanner-v0")
    try:
        steps, masked, expected = _sampled_steps(algo, 600)
        assert steps >= 600 and expected > 0.9 * steps, (steps, expected)  # mostly masked
        assert masked == 0
        result = algo.train()
        assert math.isfinite(result["learners"]["default_policy"]["total_loss"])
        steps, masked, _ = _sampled_steps(algo, 300)
        assert steps >= 300 and masked == 0
    finally:
        algo.stop()


def test_the_mask_check_catches_a_module_that_ignores_the_mask(monkeypatch):
    """The test above fails if the module stops applying the mask."""
    monkeypatch.setattr(rllib_module, "mask_logits", lambda logits, mask: logits)
    algo = build(rllib_module.pointer_spec(answer_bias=8.0))
    try:
        _, masked, _ = _sampled_steps(algo, 500)
        assert masked > 0
    finally:
        algo.stop()


def test_tiny_ppo_on_meeting_slot_trains_saves_and_evaluates(tmp_path):
    algo = build(rllib_module.pointer_spec())
    try:
        for _ in range(2):
            result = algo.train()
        learner = result["learners"]["default_policy"]
        assert math.isfinite(learner["total_loss"]) and math.isfinite(learner["vf_loss"])
        assert result["env_runners"]["num_env_steps_sampled_lifetime"] >= 1024
        items = load_split("curated")[:4]
        live = summarize(evaluate(lambda: RLlibAgent(algo.get_module()), items, mode="discrete"))
        algo.save_to_path(str(tmp_path / "checkpoint"))
    finally:
        algo.stop()
    loaded = load_rllib(tmp_path / "checkpoint")
    rows = evaluate(lambda: loaded, items, mode="discrete")
    assert all(r.error is None for r in rows)
    summary = summarize(rows)
    assert summary["reward"] == pytest.approx(live["reward"])
    assert summary["mean_turns"] > 3  # the exploration prior: it gathers before it answers


def test_a_saved_module_is_refused_where_there_is_none(tmp_path):
    with pytest.raises(ValueError, match="no RLlib checkpoint"):
        load_rllib(tmp_path / "nothing")


def test_the_pointer_module_computes_what_sb3s_pointer_policy_computes():
    """Same weights, same observation: the same masked action distribution and value."""
    pytest.importorskip("sb3_contrib")
    from meeting_gym.envs.meeting_slot.models.sb3_policy import PointerPolicy

    env = gym.make("MeetingSlot-v0")
    sb3 = PointerPolicy(env.observation_space, env.action_space, lambda _: 1e-3)
    module = rllib_module.pointer_spec().build()
    with torch.no_grad():
        module.policy_net.load_state_dict(sb3.mlp_extractor.policy_net.state_dict())
        module.value_net.load_state_dict(sb3.mlp_extractor.value_net.state_dict())
        module.value_head.load_state_dict(sb3.value_net.state_dict())
        module.head.load_state_dict(sb3.action_net.state_dict())
        for parameter in module.head.parameters():  # the scorer starts at zero: move it
            parameter.add_(torch.randn_like(parameter) * 0.1)
        sb3.action_net.load_state_dict(module.head.state_dict())
    observation, info = env.reset(seed=4)
    for action in (0, 1, 5, 9):  # list_attendees, a zone, working hours, a busy day
        observation, _, _, _, info = env.step(action)
    mask = info["action_mask"].astype(bool)
    tensor, _ = sb3.obs_to_tensor(observation)
    converted = adapter.to_rllib(env.observation_space, observation, info["action_mask"])
    batch = {"obs": {k: torch.from_numpy(v).unsqueeze(0) for k, v in converted.items()}}
    with torch.no_grad():
        expected = sb3.get_distribution(tensor, action_masks=mask).distribution.logits[0]
        logits = module.forward_inference(batch)["action_dist_inputs"][0]
        value = module.compute_values(batch)[0]
        expected_value = sb3.predict_values(tensor)[0, 0]
    got = torch.log_softmax(logits, dim=0)
    assert torch.allclose(got[mask], expected[mask], atol=1e-5)
    assert torch.exp(got[~mask]).max() == 0.0
    assert value == pytest.approx(float(expected_value), abs=1e-5)
