"""The training examples' shared pieces: SB3 callbacks (evaluation, cap) and the run files."""

from __future__ import annotations

import csv
import json
import time

import pytest

from meeting_gym.agents.training import sb3_callbacks, write_run


def test_write_run_writes_the_table_the_curve_and_the_results(tmp_path):
    curve = [{"timesteps": 0, "score": 0.5}, {"timesteps": 100, "score": 0.75}]
    write_run(tmp_path, "| a | b |", curve, {"curve": curve, "halfway": 0.6})
    assert (tmp_path / "table.md").read_text() == "| a | b |\n"
    with open(tmp_path / "curve.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert rows == [{"timesteps": "0", "score": "0.5"}, {"timesteps": "100", "score": "0.75"}]
    assert json.loads((tmp_path / "results.json").read_text())["halfway"] == 0.6


def _ppo():
    pytest.importorskip("sb3_contrib")
    import gymnasium as gym
    from stable_baselines3 import PPO

    return PPO("MlpPolicy", gym.make("CartPole-v1"), n_steps=64, batch_size=32, n_epochs=1)


def test_callbacks_evaluate_every_n_steps():
    model = _ppo()
    seen: list[int] = []
    callbacks = sb3_callbacks(lambda: seen.append(model.num_timesteps), 64, 256, progress=False)
    model.learn(256, callback=callbacks)
    assert seen == [64, 128, 192, 256]


def test_the_deadline_stops_training_and_the_bar_runs():
    model = _ppo()
    callbacks = sb3_callbacks(lambda: None, 10_000, 10_000, deadline=time.perf_counter() - 1)
    model.learn(10_000, callback=callbacks)
    assert model.num_timesteps < 10_000  # stopped at the first step past the deadline


def test_reference_summaries_are_the_evaluation_runners_summaries_in_discrete_mode():
    from meeting_gym.agents.evaluate import evaluate, summarize
    from meeting_gym.agents.policies import make_policy
    from meeting_gym.agents.training import reference_summaries
    from meeting_gym.core.splits import load_split

    items = load_split("curated", env="TimetablePlanner-v0")[:3]
    got = reference_summaries(("greedy", "random"), items, "TimetablePlanner-v0", 7)
    assert list(got) == ["greedy", "random"]
    rows = evaluate(
        lambda: make_policy("random", seed=7, env="TimetablePlanner-v0"),
        items,
        env="TimetablePlanner-v0",
        mode="discrete",
        seed=7,
        show_progress=False,
    )
    assert got["random"] == summarize(rows)
    assert got["greedy"]["score"] > got["random"]["score"]
