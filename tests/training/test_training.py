"""The training examples' shared pieces: SB3 callbacks (evaluation, cap) and the run files."""

from __future__ import annotations

import csv
import itertools
import json
import time
from pathlib import Path
from typing import Any

import pytest

from meeting_gym.training.ppo_runs import RECIPES, reward_curve, save_curve
from meeting_gym.training.runs import RATE_LABEL, curve_figure, sb3_callbacks, write_run


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
    from meeting_gym.agents.policies import make_policy
    from meeting_gym.core.splits import load_split
    from meeting_gym.evaluation.evaluate import evaluate, summarize
    from meeting_gym.training.runs import reference_summaries

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


# ----------------------------------------------------------------------------- the curve

CURVE = [
    {"timesteps": t, "reward": r, "exact": e, "partial": p, "score": s}
    for t, r, e, p, s in ((0, 0.2, 0.1, 0.2, 0.3), (100, 0.9, 0.7, 0.3, 0.6))
]
MEETING_TABLE = {"gold": {"reward": 1.2}, "naive": {"reward": 0.293}}
TIMETABLE_TABLE = {"greedy": {"score": 0.8}, "random": {"score": 0.2}}


def _lines(ax) -> set[str]:
    return {line.get_label() for line in ax.get_lines()}


def _assert_labelled(fig) -> None:
    for ax in fig.get_axes():
        assert ax.get_xlabel() == "timesteps", ax
        assert ax.get_ylabel(), f"axes {ax.get_title()!r} has no y-axis label"


def _png(path: Path) -> None:
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _reward_and_rates_figure(curve: list[dict[str, float]]) -> Any:
    """MeetingSlot's figure: the reward against gold on one axes, the two rates on another."""
    return curve_figure(
        curve,
        ("reward", "mean reward"),
        [("gold", 1.2, ":")],
        [("exact", "exact rate"), ("partial", "partial rate")],
        title="t",
    )


def test_the_curve_puts_reward_and_rates_on_separate_labelled_axes():
    pytest.importorskip("matplotlib")
    fig = _reward_and_rates_figure(CURVE)
    reward_ax, rate_ax = fig.get_axes()
    _assert_labelled(fig)
    assert reward_ax.get_ylabel() == "mean reward" and rate_ax.get_ylabel() == RATE_LABEL
    assert _lines(reward_ax) == {"model", "gold 1.200"}
    assert _lines(rate_ax) == {"exact rate", "partial rate"}
    assert rate_ax.get_ylim() == (0, 1.05)


def test_a_curve_without_rates_is_one_labelled_axes():
    pytest.importorskip("matplotlib")
    fig = curve_figure(CURVE, ("score", "mean score"), [("greedy", 0.8, "--")], title="t")
    (ax,) = fig.get_axes()
    _assert_labelled(fig)
    assert _lines(ax) == {"model", "greedy 0.800"}


@pytest.mark.parametrize(
    ("env_id", "table", "rates"),
    [("MeetingSlot-v0", MEETING_TABLE, True), ("TimetablePlanner-v0", TIMETABLE_TABLE, False)],
)
def test_each_ppo_recipe_saves_a_curve_with_every_axis_labelled(env_id, table, rates, tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "curve.png"
    fig = save_curve(RECIPES[env_id], CURVE, table, path)
    _png(path)
    _assert_labelled(fig)
    axes = fig.get_axes()
    assert len(axes) == (2 if rates else 1)
    if rates:  # reward on one axes, the rates on the other: never on one scale
        assert "exact rate" not in _lines(axes[0]) and _lines(axes[1]) == {
            "exact rate",
            "partial rate",
        }
    else:  # greedy, random and the halfway target between them
        assert _lines(axes[0]) == {"model", "greedy 0.800", "random 0.200", "halfway 0.500"}


def test_the_rllib_curve_is_meeting_slots_with_its_own_title():
    pytest.importorskip("matplotlib")
    fig = reward_curve(CURVE, MEETING_TABLE, "RLlib PPO", "mean reward per episode")
    assert fig._suptitle.get_text() == "RLlib PPO"
    assert fig.get_axes()[0].get_ylabel() == "mean reward per episode"
    assert _lines(fig.get_axes()[0]) == {"model", "gold 1.200", "naive 0.293"}


def test_the_timestep_labels_of_a_long_run_do_not_run_into_each_other():
    # 150k steps with matplotlib's default labels drew "100000120000140000" in one run
    pytest.importorskip("matplotlib")
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    curve = [
        {"timesteps": float(t), "reward": 0.3, "exact": 0.1, "partial": 0.0}
        for t in range(0, 150_001, 10_000)
    ]
    fig = _reward_and_rates_figure(curve)
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    for ax in fig.get_axes():
        low, high = ax.get_xlim()  # ticks past the limits are listed but not drawn
        labels = [
            t for t in ax.get_xticklabels() if t.get_text() and low <= t.get_position()[0] <= high
        ]
        boxes = [t.get_window_extent(renderer) for t in labels]
        assert len(boxes) >= 3
        for left, right in itertools.pairwise(boxes):
            assert left.x1 < right.x0, [t.get_text() for t in labels]


def test_a_one_step_llm_run_draws_its_points_on_whole_step_axes(tmp_path):
    pytest.importorskip("matplotlib")
    from meeting_gym.training.runs import llm_curve_figure, llm_curve_rows, write_curve_csv

    sft_log = [{"step": 1, "loss": 0.7}]
    grpo_log = [{"step": 1, "reward": 0.4, "reward_std": 0.1, "loss": 0.02}, {"step": 1}]
    curve = llm_curve_rows(sft_log, grpo_log)
    assert [r["phase"] for r in curve] == ["sft", "grpo"]  # entries without a reward are left
    fig = llm_curve_figure(curve, "one step")
    fig.savefig(tmp_path / "curve.png")
    for ax in fig.axes:
        lines = [line for line in ax.get_lines() if len(line.get_xdata()) == 1]
        assert lines and all(line.get_marker() not in (None, "None", "") for line in lines)
        ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
        assert ticks and all(float(t).is_integer() for t in ticks)
    write_curve_csv(tmp_path / "curve.csv", curve)
    with open(tmp_path / "curve.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0])[:2] == ["phase", "step"] and rows[1]["reward"] == "0.4"


def test_a_phase_without_steps_says_so_instead_of_empty_axes():
    pytest.importorskip("matplotlib")
    from meeting_gym.training.runs import llm_curve_figure, llm_curve_rows

    fig = llm_curve_figure(
        llm_curve_rows([{"step": 1, "loss": 0.3}, {"step": 2, "loss": 0.1}], []), "sft"
    )
    _, middle, right = fig.axes
    for ax in (middle, right):
        assert [t.get_text() for t in ax.texts] == ["no steps logged"]
        assert list(ax.get_xticks()) == [] and ax.get_legend() is None


def test_a_training_phase_says_step_k_of_n_with_an_eta_from_its_own_steps():
    import io

    from meeting_gym.training.runs import StepProgress

    now = [100.0]
    stream = io.StringIO()
    progress = StepProgress("sft", 10, stream=stream, clock=lambda: now[0])
    progress.say("loading smollm2 ...")
    progress.begin(4)  # resumed: 4 steps were taken by an earlier sitting
    now[0] += 30.0
    progress.step(5, loss=1.23456, tokens=5120)
    now[0] += 30.0
    progress.step(6, loss=1.1, tokens=4096)
    now[0] += 120.0
    progress.step(10, loss=0.5, tokens=10)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "sft: loading smollm2 ..."
    # 30 s a step of this sitting's, 5 left: 2:30; the last step has no ETA
    assert lines[1] == "sft: step 5/10, loss 1.235, 5,120 tokens, 30 s, ETA 2:30"
    assert lines[2] == "sft: step 6/10, loss 1.100, 4,096 tokens, 60 s, ETA 2:00"
    assert lines[3] == "sft: step 10/10, loss 0.500, 10 tokens, 180 s"
    # without begin(), the first step reported is the first since the phase was made
    other = io.StringIO()
    quick = StepProgress("grpo", 3, stream=other, clock=lambda: now[0])
    now[0] += 10.0
    quick.step(2, reward=0.4, groups_trained=1)
    assert other.getvalue() == "grpo: step 2/3, reward 0.400, 1 groups trained, 10 s, ETA 0:10\n"


@pytest.mark.parametrize("env_id", sorted(RECIPES))
def test_each_recipe_takes_both_ids_and_its_curve_names_the_id_it_ran_on(env_id, tmp_path):
    """-v0 and -v1 share a recipe's settings; the figure's title says which id ran."""
    pytest.importorskip("matplotlib")
    recipe = RECIPES[env_id]
    assert recipe.env_id == env_id
    twin = RECIPES[env_id.replace("-v1", "-v0")]
    assert (recipe.defaults, recipe.networks) == (twin.defaults, twin.networks)
    table = MEETING_TABLE if env_id.startswith("MeetingSlot") else TIMETABLE_TABLE
    fig = save_curve(recipe, CURVE, table, tmp_path / "curve.png")
    titles = [fig._suptitle.get_text() if fig._suptitle else ""]
    titles += [ax.get_title() for ax in fig.get_axes()]
    assert any(env_id in title for title in titles), titles
