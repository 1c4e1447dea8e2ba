"""The one evaluation runner: any registered env, any agent, items in order, one table.

:func:`evaluate` plays ``rollouts`` episodes per item (episode ``k`` is reset with
``seed + k``), one env per worker, ``max_concurrent`` workers at a time; results come
back in item order whatever order they finish in (``on_episode`` sees each as it ends).
Text policies, discrete agents and LLM agents all go through
:func:`~meeting_gym.core.loop.play`. :func:`summarize` and :func:`format_table` show
whichever rubric terms the env's task has.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from statistics import fmean
from typing import Any, TypeVar

import gymnasium as gym

from meeting_gym.core.loop import Rollout, play
from meeting_gym.core.registry import DEFAULT_ENV, load_object, task_class
from meeting_gym.core.rubric import Rubric

T = TypeVar("T")


@dataclass
class EpisodeResult:
    """One evaluated episode: its item, the gold and the answer, every rubric term."""

    item_id: str | None
    difficulty: str | None
    gold: str
    answer: str | None
    terms: dict[str, float]
    reward: float
    turns: int
    tool_calls: int
    truncated: bool
    error: str | None = None
    rollout: int = 0
    score: float | None = None
    groups: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)
    stats: dict[str, float] = field(default_factory=dict)

    def __getattr__(self, name: str) -> float:
        # rubric terms read like fields (result.exact_match); only reached for
        # names that are not attributes
        terms = self.__dict__.get("terms")
        if terms is not None and name in terms:
            return terms[name]
        raise AttributeError(name)

    def as_dict(self) -> dict[str, Any]:
        """A flat row: id, difficulty, gold, answer, every term, reward, counts, error."""
        row: dict[str, Any] = {
            "item_id": self.item_id,
            "difficulty": self.difficulty,
            "rollout": self.rollout,
            "gold": self.gold,
            "answer": self.answer,
            **self.terms,
            "reward": self.reward,
        }
        if self.score is not None:
            row["score"] = self.score
        row.update(self.stats)
        row.update(
            turns=self.turns, tool_calls=self.tool_calls, truncated=self.truncated, error=self.error
        )
        return row


def result_of(env: gym.Env, rollout: Rollout, rubric: Rubric, number: int = 0) -> EpisodeResult:
    """The result of a rollout just played on ``env`` (read from its infos and episode)."""
    base = env.unwrapped
    episode = base.episode
    task = base.task
    scored = rollout.error is None and rollout.done
    info = rollout.info
    return EpisodeResult(
        item_id=rollout.reset_info.get(task.id_key),
        difficulty=rollout.reset_info.get("difficulty"),
        gold=episode.gold,
        answer=info.get("answer") if scored else None,
        terms={name: float(info[name]) if scored else 0.0 for name in rubric.names},
        reward=rollout.total_reward if scored else 0.0,
        turns=rollout.turns,
        tool_calls=len(episode.calls),
        truncated=rollout.truncated,
        error=None if scored else (rollout.error or "the episode did not finish"),
        rollout=number,
        score=info.get("score") if scored else None,
        groups=tuple(task.groups(episode.item)),
        stats={n: float(info[n]) for n in task.episode_class.stats if n in info} if scored else {},
    )


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


def as_agent(made: Any, env: gym.Env, mode: str) -> Any:
    """An agent from what ``make_agent`` returned: every agent (a text policy is one) as it is.

    In a mode other than text, a text policy goes through the env's own adapter
    (``env.unwrapped.policy_adapters[mode]``), e.g. MeetingSlot's discrete one.
    """
    if mode == "text" or not _is_text_policy(made):
        return made
    adapters = getattr(env.unwrapped, "policy_adapters", {})
    if mode not in adapters:
        raise ValueError(f"this env cannot run a text policy in {mode} mode")
    return load_object(adapters[mode])(made)


def _is_text_policy(made: Any) -> bool:
    from meeting_gym.agents.policies import Policy

    return isinstance(made, Policy)


def evaluate(
    make_agent: Callable[[], Any],
    items: Sequence[Any],
    *,
    env: str = DEFAULT_ENV,
    mode: str = "text",
    seed: int = 0,
    rollouts: int = 1,
    max_turns: int | None = None,
    max_concurrent: int = 1,
    env_kwargs: dict[str, Any] | None = None,
    show_progress: bool | None = None,
    on_result: Callable[[EpisodeResult], None] | None = None,
    on_episode: Callable[[int, EpisodeResult], None] | None = None,
    seeds: Sequence[int] | None = None,
) -> list[EpisodeResult]:
    """Play ``rollouts`` episodes of each item of ``items`` on ``env`` in ``mode``.

    ``make_agent()`` gives an agent (or a text policy) per worker; it is reset before
    every episode. Episode ``k`` is reset with ``seed + k`` (or ``seeds[k]``, one seed an
    episode, so a run resumed on the items left resets each as the whole run would have)
    and ``options={"item": item}``. ``on_result`` sees each result in order as soon as it
    and those before it are done; ``on_episode(k, result)`` sees it as soon as its own
    episode ends, one call at a time, so one slow episode holds back no other's. On
    Ctrl-C, episodes not yet started are cancelled.
    """
    if rollouts < 1:
        raise ValueError(f"rollouts must be at least 1, got {rollouts}")
    if max_concurrent < 1:
        raise ValueError(f"max_concurrent must be at least 1, got {max_concurrent}")
    if seeds is not None and len(seeds) != len(items) * rollouts:
        raise ValueError(
            f"seeds must give one seed an episode ({len(items) * rollouts}), got {len(seeds)}"
        )
    kwargs = dict(env_kwargs or {})
    kwargs["mode"] = mode
    if max_turns is not None:
        kwargs["max_turns"] = max_turns
    rubric = task_class(env).rubric
    jobs = [(item, r) for item in items for r in range(rollouts)]
    local = threading.local()
    made: list[gym.Env] = []
    lock = threading.Lock()
    ended = threading.Lock()  # on_episode's calls, one at a time

    def worker() -> tuple[gym.Env, Any]:
        if not hasattr(local, "env"):
            local.env = gym.make(env, disable_env_checker=True, **kwargs)
            local.agent = as_agent(make_agent(), local.env, mode)
            with lock:
                made.append(local.env)
        return local.env, local.agent

    def run(k: int) -> EpisodeResult:
        item, number = jobs[k]
        episode_env, agent = worker()
        episode_seed = seed + k if seeds is None else seeds[k]
        rollout = play(episode_env, agent, seed=episode_seed, options={"item": item})
        result = result_of(episode_env, rollout, rubric, number)
        report = getattr(agent, "report", None)
        if report is not None:
            result.extra = report()
        if on_episode is not None:
            with ended:
                on_episode(k, result)
        return result

    results: list[EpisodeResult] = []
    try:
        if max_concurrent == 1:
            for k in progress(range(len(jobs)), "eval", show_progress):
                results.append(run(k))
                if on_result is not None:
                    on_result(results[-1])
        else:
            pool = ThreadPoolExecutor(max_workers=max_concurrent)
            try:
                futures = [pool.submit(run, k) for k in range(len(jobs))]
                for future in progress(futures, "eval", show_progress):
                    results.append(future.result())
                    if on_result is not None:
                        on_result(results[-1])
            except BaseException:
                pool.shutdown(wait=True, cancel_futures=True)
                raise
            pool.shutdown(wait=True)
    finally:
        for made_env in made:
            made_env.close()
    return results


def summarize(
    results: Iterable[EpisodeResult], terms: Sequence[str] | None = None
) -> dict[str, Any]:
    """Means over the scored episodes (errors are counted, never scored 0).

    Keys: ``n``, ``scored``, ``errors``, ``reward`` (the mean return), each rubric term
    by name (``terms`` defaults to the terms the results carry) and ``terms`` (their
    names, in order), ``score`` if the env reports one, ``mean_turns``,
    ``mean_tool_calls``, ``no_answer``, ``truncated`` (turn budget hit), ``first_error``,
    and the mean of each of the task's ``stats`` the results carry (``stats`` names them).
    """
    rows = list(results)
    scored = [r for r in rows if r.error is None]
    if terms is None:
        terms = list(rows[0].terms) if rows else []
    summary: dict[str, Any] = {
        "n": len(rows),
        "scored": len(scored),
        "errors": len(rows) - len(scored),
        "reward": fmean(r.reward for r in scored) if scored else 0.0,
    }
    for term in terms:
        summary[term] = fmean(r.terms[term] for r in scored) if scored else 0.0
    summary["terms"] = list(terms)
    scores = [r.score for r in scored if r.score is not None]
    if scores:
        summary["score"] = fmean(scores)
    stats = _stat_names(rows)
    if stats:
        summary["stats"] = stats
        summary.update(_stat_means(scored, stats))
    summary["mean_turns"] = fmean(r.turns for r in scored) if scored else 0.0
    summary["mean_tool_calls"] = fmean(r.tool_calls for r in scored) if scored else 0.0
    summary["no_answer"] = sum(1 for r in scored if r.answer is None)
    summary["truncated"] = sum(1 for r in scored if r.truncated)
    summary["first_error"] = next((r.error for r in rows if r.error), None)
    labels = sorted({label for r in rows for label in r.groups}, key=_group_order)
    if len(labels) > 1:
        summary["groups"] = {
            label: _group(
                [r for r in scored if label in r.groups],
                sum(1 for r in rows if label in r.groups),
                terms,
                stats,
            )
            for label in labels
        }
    return summary


def _stat_names(rows: Sequence[EpisodeResult]) -> list[str]:
    """The task stats the results carry, in order of first appearance."""
    return list(dict.fromkeys(name for r in rows for name in r.stats))


def _stat_means(scored: Sequence[EpisodeResult], stats: Sequence[str]) -> dict[str, float]:
    return {
        name: fmean(r.stats.get(name, 0.0) for r in scored) if scored else 0.0 for name in stats
    }


def _group(
    scored: list[EpisodeResult], n: int, terms: Sequence[str], stats: Sequence[str] = ()
) -> dict[str, Any]:
    """The means of one group of episodes (its scored ones)."""
    out: dict[str, Any] = {"n": n, "scored": len(scored)}
    out["reward"] = fmean(r.reward for r in scored) if scored else 0.0
    for term in terms:
        out[term] = fmean(r.terms[term] for r in scored) if scored else 0.0
    scores = [r.score for r in scored if r.score is not None]
    if scores:
        out["score"] = fmean(scores)
    out.update(_stat_means(scored, stats))
    return out


def _group_lines(summary: dict[str, Any], labels: dict[str, str]) -> list[str]:
    """One line per group: its size, mean reward, score if any, every term and stat."""
    groups = summary["groups"]
    names = [*summary["terms"], *summary.get("stats", ())]
    has_score = any("score" in g for g in groups.values())
    width = max(16, *(len(label) + 2 for label in groups))
    head = f"{'by group':<{width}}{'n':>6}{'reward':>9}" + (f"{'score':>9}" if has_score else "")
    head += "".join(
        f"{labels.get(name, name):>{max(9, len(labels.get(name, name)) + 2)}}" for name in names
    )
    out = ["", head]
    for label, group in groups.items():
        line = f"{label:<{width}}{group['n']:>6}{group['reward']:>9.3f}"
        if has_score:
            line += f"{group.get('score', 0.0):>9.3f}"
        for name in names:
            column = max(9, len(labels.get(name, name)) + 2)
            line += f"{group[name]:>{column}.3f}"
        out.append(line)
    return out


_LEVELS = ("easy", "medium", "hard", "expert")


def _group_order(label: str) -> tuple[str, int, str]:
    """Group rows by kind, the family's named difficulties easiest first, else by name."""
    kind, _, value = label.rpartition(" ")
    return (kind, _LEVELS.index(value) if value in _LEVELS else len(_LEVELS), value)


def format_table(
    summary: dict[str, Any],
    title: str,
    rows: Sequence[EpisodeResult] = (),
    *,
    rubric: Rubric | None = None,
    extra: Sequence[str] = (),
    truncation_note: str = "scored 0, counted in no answer",
) -> str:
    """The summary as aligned lines: reward, each rubric term, counts.

    Terms are shown under their rubric labels when ``rubric`` is given (``exact``), by
    name otherwise, then the task's stats. ``extra`` lines go after the counts, then the
    per-group means (when the items fall in more than one group, see ``Task.groups``);
    per-episode ``rows`` go last, after a blank line. ``truncation_note`` says how a
    truncated episode was scored (the task's ``truncation_note``).
    """
    labels = {t.name: t.column for t in rubric.terms} if rubric is not None else {}
    lines = [title, "-" * len(title)]
    lines.append(f"{'avg reward':<16}{summary['reward']:.3f}")
    if "score" in summary:
        lines.append(f"{'score':<16}{summary['score']:.3f}")
    for name in summary["terms"]:
        lines.append(f"{labels.get(name, name):<16}{summary[name]:.3f}")
    for name in summary.get("stats", ()):
        lines.append(f"{name.replace('_', ' '):<16}{summary[name]:.3f}")
    lines.append(f"{'episodes':<16}{summary['n']}")
    if summary["errors"]:
        lines.append(f"{'errors':<16}{summary['errors']} (excluded from the means)")
        lines.append(
            f"{'scored':<16}{summary['scored']} of {summary['n']} (the means are over these)"
        )
    lines.append(f"{'mean turns':<16}{summary['mean_turns']:.2f}")
    lines.append(f"{'mean tool calls':<16}{summary['mean_tool_calls']:.2f}")
    lines.append(f"{'no answer':<16}{summary['no_answer']}")
    lines.append(f"{'turn budget hit':<16}{summary['truncated']} ({truncation_note})")
    lines.extend(extra)
    if summary.get("first_error"):
        lines.append(f"{'first error':<16}{summary['first_error'][:200]}")
    if summary.get("groups"):
        lines.extend(_group_lines(summary, labels))
    if rows:
        lines.append("")
        lines.append(f"{'id':<24}{'gold':<22}{'answer':<22}{'reward':>7}")
        for r in rows:
            answer = r.answer if r.answer is not None else "-"
            if r.error is not None:
                answer = f"error: {r.error}"
            gold, answer = _one_line(r.gold), _one_line(str(answer))  # multi-line answers
            lines.append(
                f"{(r.item_id or '-')[:23]:<24}{gold[:21]:<22}{answer[:21]:<22}{r.reward:>7.3f}"
            )
    return "\n".join(lines)


def _one_line(text: str) -> str:
    """A cell's text on one line: line breaks shown as ``|``."""
    return " | ".join(text.splitlines()) if "\n" in text or "\r" in text else text
