"""What the training examples share: SB3 callbacks, the files a run writes, its curves.

``examples/train_ppo.py`` (one recipe per env: :mod:`meeting_gym.training.ppo_runs`) and
``examples/train_rllib.py`` differ in their env, policy and table; the periodic
evaluation, the progress bar, the wall-clock cap, the run's files and the learning-curve
figure are the same and live here; so are the curve rows, CSV and figure of an LLM run
(SFT loss, GRPO reward and loss: ``examples/train_grpo.py``). stable-baselines3 and tqdm
are imported only by :func:`sb3_callbacks`, matplotlib only by the figures.
"""

from __future__ import annotations

import csv
import json
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "RATE_LABEL",
    "StepProgress",
    "curve_figure",
    "evaluate_held_out",
    "levels_figure",
    "llm_curve_figure",
    "llm_curve_rows",
    "reference_summaries",
    "sb3_callbacks",
    "write_curve_csv",
    "write_run",
]


class StepProgress:
    """Lines on stderr for a training phase of steps, from its first second.

    :meth:`say` writes what the phase is doing (loading a model, what it will train on);
    :meth:`step` one line a step: ``sft: step 3/40, loss 1.234, 5,120 tokens, 61 s, ETA
    12:40``, the ETA from this process's mean time per step since :meth:`begin` (a resumed
    phase counts only the steps it takes itself).
    """

    def __init__(
        self,
        phase: str,
        total: int,
        stream: Any = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.phase, self.total = phase, total
        self.first: int | None = None
        self.stream = stream if stream is not None else sys.stderr
        self.clock = clock
        self.started = clock()

    def begin(self, done: int | None = None) -> None:
        """The steps start now (after loading), ``done`` of them already taken by an earlier
        sitting (None: the first step reported is the first of this one)."""
        self.first, self.started = done, self.clock()

    def say(self, text: str) -> None:
        """One line: ``<phase>: <text>``."""
        self.stream.write(f"{self.phase}: {text}\n")
        self.stream.flush()

    def step(self, k: int, **facts: Any) -> None:
        """Step ``k`` (1-based) done; ``facts`` are written as ``name value`` (ints with
        thousands separators, floats to 3 decimals)."""
        if self.first is None:  # no begin(): this step is the first since the start
            self.first = k - 1
        elapsed = self.clock() - self.started
        taken = k - (self.first or 0)
        left = self.total - k
        parts = [f"step {k}/{self.total}"]
        for name, value in facts.items():
            if isinstance(value, float):
                parts.append(f"{name.replace('_', ' ')} {value:.3f}")
            elif isinstance(value, int):
                parts.append(f"{value:,} {name.replace('_', ' ')}")
            else:
                parts.append(f"{name.replace('_', ' ')} {value}")
        parts.append(f"{elapsed:.0f} s")
        if taken > 0 and left > 0:
            eta = elapsed / taken * left
            parts.append(f"ETA {int(eta // 60)}:{int(eta % 60):02d}")
        self.say(", ".join(parts))


def sb3_callbacks(
    evaluate_now: Callable[[], Any],
    eval_every: int,
    total: int,
    *,
    progress: bool = True,
    deadline: float | None = None,
) -> Any:
    """An SB3 ``CallbackList``: ``evaluate_now()`` every ``eval_every`` steps, a tqdm bar
    over ``total`` steps (unless ``progress`` is False; SB3's own bar also needs rich),
    and training stopped once ``time.perf_counter()`` passes ``deadline`` (if given)."""
    from stable_baselines3.common.callbacks import BaseCallback, CallbackList

    class Periodic(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.next = eval_every

        def _on_step(self) -> bool:
            if self.num_timesteps >= self.next:
                self.next += eval_every
                evaluate_now()
            return deadline is None or time.perf_counter() < deadline

    class Progress(BaseCallback):
        def _on_training_start(self) -> None:
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="step", dynamic_ncols=True)

        def _on_step(self) -> bool:
            self.bar.update(self.training_env.num_envs)
            return True

        def _on_training_end(self) -> None:
            self.bar.close()

    callbacks: list[Any] = [Periodic()]
    if progress:
        callbacks.append(Progress())
    return CallbackList(callbacks)


def evaluate_held_out(
    make_agent: Callable[[], Any], items: Sequence[Any], env: str, seed: int
) -> list[Any]:
    """The evaluation runner's results of ``make_agent``'s agents on ``items`` in discrete
    mode, runner seed ``seed``, without a progress bar: how a training run scores its model
    and the reference policies alike."""
    from meeting_gym.evaluation.evaluate import evaluate

    return evaluate(make_agent, items, env=env, mode="discrete", seed=seed, show_progress=False)


def reference_summaries(
    names: Sequence[str], items: Sequence[Any], env: str, seed: int
) -> dict[str, dict[str, Any]]:
    """Each reference policy's evaluation summary on ``items`` in discrete mode, by name:
    the rows a training run's table compares its model with."""
    from meeting_gym.agents.policies import make_policy
    from meeting_gym.evaluation.evaluate import summarize

    return {
        name: summarize(
            evaluate_held_out(
                lambda name=name: make_policy(name, seed=seed, env=env), items, env, seed
            )
        )
        for name in names
    }


def write_run(
    out: Path, table: str, curve: Sequence[Mapping[str, Any]], results: Mapping[str, Any]
) -> None:
    """Write a run's ``table.md`` (the Markdown table), ``curve.csv`` (one row per
    evaluation) and ``results.json`` under ``out``; ``results.json`` carries the run's
    environment (:func:`~meeting_gym.evaluation.provenance.run_environment`): the one the
    script recorded as it started (``results["environment"]``), else this one."""
    from meeting_gym.evaluation.provenance import run_environment

    if "environment" not in results:
        results = {**results, "environment": run_environment()}
    (out / "table.md").write_text(table + "\n")
    with open(out / "curve.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(curve[0]))
        writer.writeheader()
        writer.writerows(curve)
    (out / "results.json").write_text(json.dumps(results, indent=2))


RATE_LABEL = "rate (share of held-out episodes)"


def levels_figure(state: Mapping[str, Any], *, title: str) -> Any:
    """The levels a curriculum chose over a run, from its :meth:`Curriculum.state`.

    A step line of the level against the number of items drawn, one mark per move.
    """
    from matplotlib.figure import Figure

    levels = list(state["levels"])
    total = sum(state["drawn"].values())
    xs, ys = [0], [levels.index(state["start"])]
    for move in state["moves"]:
        xs.append(move["draws"])
        ys.append(levels.index(move["to"]))
    xs.append(max(total, xs[-1]))
    ys.append(ys[-1])
    fig = Figure(figsize=(6.4, 3.0), dpi=100)
    ax = fig.subplots()
    ax.step(xs, ys, where="post", color="tab:blue")
    ax.plot(xs[1:-1], ys[1:-1], "o", color="tab:blue", markersize=3)
    ax.set_yticks(range(len(levels)), levels)
    ax.set_ylim(-0.5, len(levels) - 0.5)
    ax.set_xlabel("items drawn")
    ax.set_ylabel("level drawn from")
    ax.grid(alpha=0.3)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def curve_figure(
    curve: Sequence[Mapping[str, float]],
    reward: tuple[str, str],
    references: Sequence[tuple[str, float, str]] = (),
    rates: Sequence[tuple[str, str]] = (),
    *,
    title: str,
) -> Any:
    """A run's learning curve as a matplotlib ``Figure`` (save it with ``fig.savefig``).

    ``reward`` is (curve key, y-axis label) of the reward, drawn against ``timesteps``
    with each of ``references`` (label, value, line style) as a grey line. ``rates``
    are (curve key, legend label) of rates in [0, 1]: they get an axes of their own
    beside the reward's, so neither scale squeezes the other. Every axis is labelled.
    Uses ``matplotlib.figure.Figure`` directly: no pyplot state, no backend switch.
    """
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter

    steps = [point["timesteps"] for point in curve]
    fig = Figure(figsize=(10.4 if rates else 6.4, 3.6), dpi=100)
    axes = fig.subplots(1, 2 if rates else 1, squeeze=False)[0]
    ax = axes[0]
    key, label = reward
    ax.plot(steps, [point[key] for point in curve], label="model", color="tab:blue")
    for name, value, style in references:
        ax.axhline(value, color="grey", linestyle=style, linewidth=1, label=f"{name} {value:.3f}")
    ax.set_ylabel(label)
    if rates:
        right = axes[1]
        for rate_key, rate_label in rates:  # matplotlib's colour cycle tells them apart
            right.plot(steps, [point[rate_key] for point in curve], label=rate_label)
        right.set_ylim(0, 1.05)
        right.set_ylabel(RATE_LABEL)
    # matplotlib writes every step in full, and at 150k steps "100000120000140000" runs
    # together on a panel half the figure wide: label them in thousands instead
    thousands = FuncFormatter(lambda x, _: f"{x / 1000:g}k" if x else "0")
    for each in axes:
        each.set_xlabel("timesteps")
        each.xaxis.set_major_formatter(thousands)
        each.legend(loc="best", fontsize=8)
        each.grid(alpha=0.3)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def llm_curve_rows(
    sft_log: Sequence[Mapping[str, Any]], grpo_log: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """One row per logged step of an LLM run: the phase, its step, and what was logged."""
    rows = [{"phase": "sft", "step": e["step"], "loss": e["loss"]} for e in sft_log]
    for e in grpo_log:
        if "reward" not in e:
            continue
        rows.append(
            {
                "phase": "grpo",
                "step": e["step"],
                "loss": e.get("loss"),
                "reward": e["reward"],
                "reward_std": e.get("reward_std"),
                "kl": e.get("kl"),
                "frac_reward_zero_std": e.get("frac_reward_zero_std"),
                "completion_length": e.get("completions/mean_length"),
            }
        )
    return rows


def llm_curve_figure(curve: Sequence[Mapping[str, Any]], title: str) -> Any:
    """SFT loss, GRPO reward (with the within-group std) and GRPO loss, each labelled.

    Every point is marked (a one-step run is points, not lines) and step axes are whole
    numbers. Returns the ``Figure``; an empty phase leaves its panel empty but labelled.
    """
    from matplotlib.figure import Figure

    sft = [r for r in curve if r["phase"] == "sft"]
    grpo = [r for r in curve if r["phase"] == "grpo"]
    fig = Figure(figsize=(12, 3.6), dpi=100)
    left, middle, right = fig.subplots(1, 3)
    # markers: a run of one or two logged steps draws points a line alone would not show
    marker = {"marker": "o", "markersize": 3}
    left.plot([r["step"] for r in sft], [r["loss"] for r in sft], color="tab:blue", **marker)
    left.set_xlabel("SFT step")
    left.set_ylabel("SFT loss (token cross-entropy)")
    steps = [r["step"] for r in grpo]
    middle.plot(
        steps, [r["reward"] for r in grpo], color="tab:green", label="mean reward", **marker
    )
    if grpo and grpo[0].get("reward_std") is not None:
        middle.plot(
            steps,
            [r["reward_std"] for r in grpo],
            color="tab:olive",
            linestyle="--",
            label="std within groups",
            **marker,
        )
    middle.set_xlabel("GRPO step")
    middle.set_ylabel("env reward of the sampled completions")
    middle.legend(loc="best", fontsize=8)
    key, label = (
        ("kl", "KL to the SFT model") if any(r.get("kl") for r in grpo) else ("loss", "GRPO loss")
    )
    right.plot(steps, [r[key] for r in grpo], color="tab:red", **marker)
    right.set_xlabel("GRPO step")
    right.set_ylabel(label)
    from matplotlib.ticker import MaxNLocator

    for ax, points in ((left, sft), (middle, grpo), (right, grpo)):
        ax.grid(alpha=0.3)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # steps are whole numbers
        if points:
            first, last = points[0]["step"], points[-1]["step"]
            if last - first < 2:  # room for whole-number ticks around one or two steps
                ax.set_xlim(first - 1, last + 1)
        else:  # a phase not run (yet): say so instead of drawing empty axes
            ax.set_xticks([])
            ax.set_yticks([])
            legend = ax.get_legend()
            if legend is not None:
                legend.remove()
            ax.text(0.5, 0.5, "no steps logged", ha="center", va="center", transform=ax.transAxes)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def write_curve_csv(path: Path, curve: Sequence[Mapping[str, Any]]) -> None:
    """``curve.csv``: phase and step first, then every logged column (blank where absent)."""
    keys = sorted({k for row in curve for k in row}, key=lambda k: (k != "phase", k != "step", k))
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=keys, restval="")
        writer.writeheader()
        writer.writerows(curve)


def pipeline_main(
    prog: str,
    parse_args: Callable[[list[str] | None], Any],
    run: Callable[[Any], int],
    argv: list[str] | None = None,
) -> int:
    """A training example's ``main``: its options parsed (a wrong one exits 2 with one line,
    argparse's way), then the run; a run that cannot go on (a ``ValueError``: a phase not yet
    run, eval items trained on) is one line and exit 1, never a traceback."""
    args = parse_args(argv)
    try:
        return run(args)
    except ValueError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 1
