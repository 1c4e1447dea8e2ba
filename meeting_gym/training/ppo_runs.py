"""What a MaskablePPO run needs to know about its env: defaults, network, held-out items, table.

``examples/train_ppo.py --env ID`` is one script for every env with a masked ``Discrete``
mode; a :class:`Recipe` holds what differs between them (the tuned hyperparameters, the
network, how the held-out items are chosen, what a curve point records, the table and
the curve's reference lines). Nothing here imports torch or stable-baselines3.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from statistics import fmean
from typing import Any

from meeting_gym.core.splits import load_split
from meeting_gym.training.runs import curve_figure

LEVELS = ("easy", "medium", "hard", "expert")


@dataclass(frozen=True)
class Recipe:
    """One env's MaskablePPO run; the example reads every choice from here."""

    env_id: str
    defaults: Mapping[str, Any]
    """The example's option defaults for this env (the values its results pages used)."""
    networks: Mapping[str, str]
    """``--policy`` choices: ``"module:Class"`` of an SB3 policy, or SB3's own name."""
    references: tuple[str, ...]
    """Reference policies evaluated on the same held-out items for the table."""
    skip_curated: bool
    """Held out = the eval split after its curated cases (MeetingSlot) or all of it."""
    point: Callable[[Mapping[str, Any]], dict[str, float]]
    line: Callable[[Mapping[str, Any]], str]
    table: Callable[[Mapping[str, Any], Sequence[Any], int], list[str]]
    plot: Callable[[Sequence[Mapping[str, float]], Mapping[str, Any], str], Any]
    """``(curve, table, env_id)`` -> the learning curve's figure."""

    def held_out(self, n: int, seed: int, difficulty: str | None = None) -> list[Any]:
        """The ``n`` held-out items of the eval split with split seed ``seed``.

        ``difficulty`` None: the env's default mix; a level: that level's items only.
        """
        if not self.skip_curated:
            return load_split("eval", n=n, seed=seed, difficulty=difficulty, env=self.env_id)
        curated = {item.id for item in load_split("curated", env=self.env_id)}
        items = load_split(
            "eval", n=len(curated) + n, seed=seed, difficulty=difficulty, env=self.env_id
        )
        return [item for item in items if item.id not in curated][:n]

    def network_kwargs(self, name: str, args: Any, venv: Any) -> dict[str, Any]:
        """The network's keyword arguments from the run's options (none for SB3's own)."""
        if name == "pointer":
            return {"answer_bias": args.answer_bias}
        if name == "spot":
            return {"bounds": dict(vars(venv.get_attr("bounds")[0])), "gain": args.gain}
        return {}


# ----------------------------------------------------------------------------- MeetingSlot


def _meeting_point(summary: Mapping[str, Any]) -> dict[str, float]:
    return {
        "reward": summary["reward"],
        "exact": summary["exact_match"],
        "partial": summary["partial_credit"] / 0.5,
        "mean_turns": summary["mean_turns"],
    }


def _meeting_line(point: Mapping[str, Any]) -> str:
    return (
        f"reward {point['reward']:.3f}  exact {point['exact']:.3f}"
        f"  partial {point['partial']:.3f}  turns {point['mean_turns']:.1f}"
    )


def mix(items: Sequence[Any]) -> str:
    """How a table names its items' difficulty: the one level they share, or the default mix."""
    levels = {getattr(item, "difficulty", None) for item in items}
    if len(levels) == 1 and None not in levels:
        return f"difficulty {levels.pop()}"
    return "default difficulty mix"


def meeting_table(table: Mapping[str, Any], held_out: Sequence[Any], seed: int) -> list[str]:
    """MeetingSlot's held-out table: mean reward, exact and partial rates, mean turns."""
    lines = [
        f"Held-out: the {len(held_out)} generated scenarios of the eval split "
        f"(split seed {seed}, {mix(held_out)}), discrete mode",
        "",
        "| policy | mean reward | exact | partial | mean turns |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for name, s in table.items():
        lines.append(
            f"| {name} | {s['reward']:.3f} | {s['exact_match']:.3f} | "
            f"{s['partial_credit'] / 0.5:.3f} | {s['mean_turns']:.1f} |"
        )
    return lines


def reward_curve(
    curve: Sequence[Mapping[str, float]], table: Mapping[str, Any], title: str, label: str
) -> Any:
    """MeetingSlot's curve: reward (with gold and naive) beside the exact and partial rates."""
    return curve_figure(
        curve,
        ("reward", label),
        [("gold", table["gold"]["reward"], ":"), ("naive", table["naive"]["reward"], "--")],
        [("exact", "exact rate"), ("partial", "partial rate")],
        title=title,
    )


def _meeting_plot(
    curve: Sequence[Mapping[str, float]], table: Mapping[str, Any], env_id: str
) -> Any:
    return reward_curve(
        curve,
        table,
        f"MaskablePPO on {env_id} (held-out, 200 scenarios)",
        "mean reward per episode (max 1.2)",
    )


# ----------------------------------------------------------------------------- TimetablePlanner


def _timetable_point(summary: Mapping[str, Any]) -> dict[str, float]:
    return {
        "score": summary["score"],
        "reward": summary["reward"],
        "submitted": summary["submitted"],
        "invalid": summary["invalid_actions"],
        "steps": summary["steps"],
    }


def _timetable_line(point: Mapping[str, Any]) -> str:
    return (
        f"score {point['score']:.4f}  return {point['reward']:.4f}"
        f"  submitted {point['submitted']:.2f}  steps {point['steps']:.1f}"
    )


def halfway(table: Mapping[str, Any]) -> float:
    """TimetablePlanner's target: halfway from random's mean final score to greedy's."""
    return (table["random"]["score"] + table["greedy"]["score"]) / 2


def _timetable_table(table: Mapping[str, Any], held_out: Sequence[Any], seed: int) -> list[str]:
    levels = sorted({s.task_name for s in held_out}, key=LEVELS.index)
    lines = [
        f"Held-out: the first {len(held_out)} scenarios of the eval split (generated, split seed "
        f"{seed}, {mix(held_out)}), discrete mode",
        "",
        "| policy | mean final score | "
        + " | ".join(levels)
        + " | mean return | submitted | invalid actions | steps |",
        "| --- | ---: | " + " | ".join("---:" for _ in levels) + " | ---: | ---: | ---: | ---: |",
    ]
    for name, s in table.items():
        per_level = [
            s["groups"].get(f"difficulty {level}", {}).get("score", 0.0) for level in levels
        ]
        lines.append(
            f"| {name} | {s['score']:.4f} | "
            + " | ".join(f"{v:.4f}" for v in per_level)
            + f" | {s['reward']:.4f} | {s['submitted']:.2f} | {s['invalid_actions']:.2f} | "
            f"{s['steps']:.1f} |"
        )
    target = halfway(table)
    final = table["ppo"]["score"]
    verdict = "reached" if final >= target else "NOT reached"
    return [*lines, "", f"halfway from random to greedy: {target:.4f} ({verdict}: PPO {final:.4f})"]


def _timetable_plot(
    curve: Sequence[Mapping[str, float]], table: Mapping[str, Any], env_id: str
) -> Any:
    greedy, random = table["greedy"]["score"], table["random"]["score"]
    return curve_figure(
        curve,
        ("score", "mean final overall_score"),
        [
            ("greedy", greedy, "--"),
            ("random", random, ":"),
            ("halfway", fmean([random, greedy]), "-."),
        ],
        title=f"MaskablePPO on {env_id} (held-out generated scenarios)",
    )


_COMMON = {"batch_size": 256, "lr": 1e-3, "gae_lambda": 0.95, "ent_coef": 0.0, "heldout_seed": 42}

RECIPES: dict[str, Recipe] = {
    "MeetingSlot-v0": Recipe(
        env_id="MeetingSlot-v0",
        defaults={
            **_COMMON,
            "timesteps": 20_000,
            "max_minutes": None,
            "out": "runs/maskable_ppo",
            "policy": "pointer",
            "n_envs": 8,
            "n_steps": 128,
            "epochs": 4,
            "gamma": 1.0,
            "eval_every": 10_000,
            "eval_n": 200,
            "threads": 1,
        },
        networks={
            "pointer": "meeting_gym.envs.meeting_slot.models.sb3_policy:PointerPolicy",
            "mlp": "MultiInputPolicy",
        },
        references=("gold", "naive", "random"),
        skip_curated=True,
        point=_meeting_point,
        line=_meeting_line,
        table=meeting_table,
        plot=_meeting_plot,
    ),
    "TimetablePlanner-v0": Recipe(
        env_id="TimetablePlanner-v0",
        defaults={
            **_COMMON,
            "timesteps": 1_000_000,
            "max_minutes": 15.0,
            "out": "runs/timetable_ppo",
            "policy": "spot",
            "n_envs": 16,
            "n_steps": 32,
            "epochs": 2,
            "gamma": 0.99,
            "eval_every": 25_000,
            "eval_n": 100,
            "threads": 2,
        },
        networks={
            "spot": "meeting_gym.envs.timetable_planner.models.sb3_policy:SpotPolicy",
            "mlp": "MultiInputPolicy",
        },
        references=("greedy", "random"),
        skip_curated=False,
        point=_timetable_point,
        line=_timetable_line,
        table=_timetable_table,
        plot=_timetable_plot,
    ),
}


# Each recipe under the -v1 id too: the same env and settings, its held-out items drawn the
# -v1 way (docs/versions.md). The published figures were measured on the -v0 ids.
RECIPES.update(
    {
        env_id.replace("-v0", "-v1"): replace(recipe, env_id=env_id.replace("-v0", "-v1"))
        for env_id, recipe in list(RECIPES.items())
    }
)


def save_curve(
    recipe: Recipe, curve: Sequence[Mapping[str, float]], table: Mapping[str, Any], path: Path
) -> Any:
    """Draw ``recipe``'s learning curve and save it as ``path`` (a PNG); returns the figure."""
    fig = recipe.plot(curve, table, recipe.env_id)
    fig.savefig(path)
    return fig
