"""Run policies over lists of scenarios and summarise them in the predecessor's table."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from statistics import fmean
from typing import Any, TypeVar

import gymnasium as gym

from meeting_gym.agents.policies import Policy
from meeting_gym.envs.meeting_slot.domain.scenario import Scenario

T = TypeVar("T")
METRICS = ("reward", "exact_match", "format", "partial_credit")


@dataclass
class EpisodeResult:
    scenario_id: str | None
    difficulty: str | None
    gold: str
    answer: str | None
    exact_match: float
    format: float
    partial_credit: float
    reward: float
    turns: int
    tool_calls: int
    truncated: bool
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_end(
        cls, env: gym.Env, scenario: Scenario, info: dict[str, Any], truncated: bool
    ) -> EpisodeResult:
        """The result of an episode that just ended, from its last ``info``."""
        return cls(
            scenario_id=scenario.id,
            difficulty=scenario.difficulty,
            gold=info["gold"],
            answer=info["answer"],
            exact_match=info["exact_match"],
            format=info["format"],
            partial_credit=info["partial_credit"],
            reward=info["reward"],
            turns=info["turn"],
            tool_calls=len(env.unwrapped.episode.calls),
            truncated=bool(truncated),
        )


def run_episode(
    env: gym.Env, policy: Policy, scenario: Scenario, seed: int | None = None
) -> EpisodeResult:
    """One text-mode episode of ``policy`` on ``scenario``."""
    observation, info = env.reset(seed=seed, options={"scenario": scenario})
    policy.reset(observation, info, seed=seed)
    while True:
        observation, _, terminated, truncated, info = env.step(policy.act(observation))
        if terminated or truncated:
            break
    return EpisodeResult.from_end(env, scenario, info, truncated)


def progress(items: Sequence[T], label: str, enabled: bool | None = None) -> Iterator[T]:
    """Yield ``items``, drawing a one-line progress bar on stderr for long runs on a tty."""
    total = len(items)
    show = (total >= 50 and sys.stderr.isatty()) if enabled is None else enabled
    for index, item in enumerate(items):
        if show:
            done = int(30 * index / max(total, 1))
            sys.stderr.write(f"\r{label} [{'#' * done}{'.' * (30 - done)}] {index}/{total}")
            sys.stderr.flush()
        yield item
    if show:
        sys.stderr.write(f"\r{label} [{'#' * 30}] {total}/{total}\n")


def evaluate(
    make_policy: Callable[[], Policy],
    scenarios: Sequence[Scenario],
    *,
    seed: int = 0,
    show_progress: bool | None = None,
    max_turns: int = 40,
) -> list[EpisodeResult]:
    env = gym.make("MeetingSlot-v0", mode="text", max_turns=max_turns)
    policy = make_policy()
    try:
        return [
            run_episode(env, policy, scenario, seed=seed + i)
            for i, scenario in enumerate(progress(scenarios, "eval", show_progress))
        ]
    finally:
        env.close()


def summarize(results: Iterable[EpisodeResult]) -> dict[str, Any]:
    rows = list(results)
    scored = [r for r in rows if r.error is None]
    summary: dict[str, Any] = {
        "n": len(rows),
        "scored": len(scored),
        "errors": len(rows) - len(scored),
    }
    for metric in METRICS:
        summary[metric] = fmean(getattr(r, metric) for r in scored) if scored else 0.0
    summary["mean_turns"] = fmean(r.turns for r in scored) if scored else 0.0
    summary["mean_tool_calls"] = fmean(r.tool_calls for r in scored) if scored else 0.0
    summary["no_answer"] = sum(1 for r in scored if r.answer is None)
    return summary


def format_table(summary: dict[str, Any], title: str, rows: Sequence[EpisodeResult] = ()) -> str:
    lines = [title, "-" * len(title)]
    lines.append(f"{'avg reward':<16}{summary['reward']:.3f}")
    lines.append(f"{'exact':<16}{summary['exact_match']:.3f}")
    lines.append(f"{'format':<16}{summary['format']:.3f}")
    lines.append(f"{'partial':<16}{summary['partial_credit']:.3f}")
    lines.append(f"{'episodes':<16}{summary['n']}")
    lines.append(f"{'mean turns':<16}{summary['mean_turns']:.2f}")
    lines.append(f"{'mean tool calls':<16}{summary['mean_tool_calls']:.2f}")
    lines.append(f"{'no answer':<16}{summary['no_answer']}")
    if summary["errors"]:
        lines.append(f"{'errors':<16}{summary['errors']} (excluded from the means)")
    if rows:
        lines.append("")
        lines.append(f"{'id':<24}{'gold':<22}{'answer':<22}{'reward':>7}")
        for r in rows:
            answer = r.answer if r.answer is not None else "-"
            if r.error is not None:
                answer = f"error: {r.error}"
            lines.append(
                f"{(r.scenario_id or '-')[:23]:<24}{r.gold:<22}{str(answer)[:21]:<22}"
                f"{r.reward:>7.3f}"
            )
    return "\n".join(lines)
