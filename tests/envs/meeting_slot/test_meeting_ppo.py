"""Short MaskablePPO runs on MeetingSlot-v0 (the full run: examples/train_ppo.py)."""

from __future__ import annotations

import pytest

import meeting_gym

MEETING_SLOT_IDS = [i for i in meeting_gym.ENV_IDS if i.startswith("MeetingSlot")]

sb3_contrib = pytest.importorskip("sb3_contrib")


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_pointer_policy_trains_saves_and_evaluates(tmp_path, capsys):
    from stable_baselines3.common.env_util import make_vec_env

    from meeting_gym.cli import main
    from meeting_gym.envs.meeting_slot.models.sb3_policy import PointerPolicy

    venv = make_vec_env("MeetingSlot-v0", n_envs=4, seed=0)
    model = sb3_contrib.MaskablePPO(
        PointerPolicy,
        venv,
        n_steps=256,
        batch_size=256,
        n_epochs=2,
        learning_rate=1e-3,
        gamma=1.0,
        seed=0,
        device="cpu",
    )
    model.learn(3072)
    path = tmp_path / "model.zip"
    model.save(path)
    assert main(["eval", "--policy", f"ppo:{path}", "--split", "curated", "-n", "3"]) == 0
    out = capsys.readouterr().out
    assert "mode=discrete" in out and "avg reward" in out
    # the exploration prior: a fresh pointer policy gathers before it answers
    assert "mean turns" in out
    turns = float(out.split("mean turns")[1].split()[0])
    assert turns > 3
