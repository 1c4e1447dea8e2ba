"""Evaluate an OpenAI-compatible model on MeetingSlot-v0: concurrent episodes, JSONL rows.

The loop itself is generic (:mod:`meeting_gym.agentkit.llm`); this module runs it on
lists of scenarios, turns each episode into an :class:`EpisodeResult` for the usual
table, and backs ``meeting-gym eval --policy openai``. ``openai`` is imported lazily.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import gymnasium as gym

from meeting_gym.agentkit.llm import LLMEpisode, RetryPolicy, make_client, run_episode
from meeting_gym.agentkit.messages import TOOL_PROTOCOLS, check_tool_protocol
from meeting_gym.agents.evaluate import METRICS, EpisodeResult, format_table, progress, summarize
from meeting_gym.envs.meeting_slot.domain.scenario import Scenario

POLICY_NAME = "openai"


@dataclass
class LLMRollout:
    """One rollout: its table row (:class:`EpisodeResult`) and the episode behind it."""

    result: EpisodeResult
    rollout: int
    episode: LLMEpisode

    def row(self) -> dict[str, Any]:
        """The ``--out`` JSONL row: ids, transcript, answer, gold, breakdown, usage, error."""
        r = self.result
        return {
            "scenario_id": r.scenario_id,
            "difficulty": r.difficulty,
            "rollout": self.rollout,
            "answer": r.answer,
            "gold": r.gold,
            "breakdown": None if r.error else {m: getattr(r, m) for m in METRICS},
            "turns": r.turns,
            "tool_calls": r.tool_calls,
            "truncated": r.truncated,
            "requests": self.episode.requests,
            "retries": self.episode.retries,
            "usage": self.episode.usage,
            "finish_reasons": self.episode.finish_reasons,
            "error": r.error,
            "transcript": self.episode.messages,
        }


def run_scenario(
    client: Any,
    model: str,
    scenario: Scenario,
    *,
    rollout: int = 0,
    seed: int | None = None,
    tool_protocol: str = "native",
    temperature: float | None = None,
    max_tokens: int | None = None,
    max_turns: int = 40,
    retry: RetryPolicy | None = None,
    extra_request: dict[str, Any] | None = None,
) -> LLMRollout:
    """One episode of ``model`` on ``scenario`` in a fresh env."""
    env = gym.make("MeetingSlot-v0", mode="text", max_turns=max_turns)
    try:
        episode = run_episode(
            env,
            client,
            model,
            tool_protocol=tool_protocol,
            seed=seed,
            options={"scenario": scenario},
            temperature=temperature,
            max_tokens=max_tokens,
            retry=retry,
            extra_request=extra_request,
        )
        gold = env.unwrapped.episode.gold
    finally:
        env.close()
    info = episode.info
    scored = episode.error is None and episode.done
    result = EpisodeResult(
        scenario_id=scenario.id,
        difficulty=scenario.difficulty,
        gold=gold,
        answer=info.get("answer") if scored else None,
        exact_match=info["exact_match"] if scored else 0.0,
        format=info["format"] if scored else 0.0,
        partial_credit=info["partial_credit"] if scored else 0.0,
        reward=info["reward"] if scored else 0.0,
        turns=episode.turns,
        tool_calls=episode.tool_calls,
        truncated=episode.truncated,
        error=None if scored else (episode.error or "the episode did not finish"),
    )
    return LLMRollout(result, rollout, episode)


def evaluate_llm(
    client: Any,
    model: str,
    scenarios: Sequence[Scenario],
    *,
    rollouts: int = 1,
    seed: int = 0,
    tool_protocol: str = "native",
    temperature: float | None = None,
    max_tokens: int | None = None,
    max_turns: int = 40,
    max_concurrent: int = 4,
    retry: RetryPolicy | None = None,
    show_progress: bool | None = None,
    on_result: Callable[[LLMRollout], None] | None = None,
    extra_request: dict[str, Any] | None = None,
) -> list[LLMRollout]:
    """``rollouts`` episodes per scenario, ``max_concurrent`` at a time (threads).

    Results come back in scenario order, rollouts of a scenario together, whatever
    order the episodes finish in; ``on_result`` sees each one in that order as soon
    as it and those before it are done (to write rows as the run goes). Episode
    ``k`` resets its env with ``seed + k``. On Ctrl-C, episodes not yet started are
    cancelled. ``extra_request`` is merged into every chat request.
    """
    check_tool_protocol(tool_protocol)
    if rollouts < 1:
        raise ValueError(f"rollouts must be at least 1, got {rollouts}")
    if max_concurrent < 1:
        raise ValueError(f"max_concurrent must be at least 1, got {max_concurrent}")
    jobs = [(scenario, r) for scenario in scenarios for r in range(rollouts)]
    pool = ThreadPoolExecutor(max_workers=max_concurrent)
    try:
        futures = [
            pool.submit(
                run_scenario,
                client,
                model,
                scenario,
                rollout=r,
                seed=seed + k,
                tool_protocol=tool_protocol,
                temperature=temperature,
                max_tokens=max_tokens,
                max_turns=max_turns,
                retry=retry,
                extra_request=extra_request,
            )
            for k, (scenario, r) in enumerate(jobs)
        ]
        results = []
        for future in progress(futures, "eval", show_progress):
            results.append(future.result())
            if on_result is not None:
                on_result(results[-1])
    except BaseException:
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return results


def llm_summary(rollouts: Sequence[LLMRollout]) -> dict[str, Any]:
    """:func:`summarize` plus truncations, requests, retries and summed token usage."""
    summary = summarize(r.result for r in rollouts)
    summary["truncated"] = sum(1 for r in rollouts if r.result.error is None and r.result.truncated)
    summary["requests"] = sum(r.episode.requests for r in rollouts)
    summary["retries"] = sum(r.episode.retries for r in rollouts)
    usages = [r.episode.usage for r in rollouts if r.episode.usage is not None]
    summary["usage"] = {key: sum(u[key] for u in usages) for key in usages[0]} if usages else None
    first_error = next((r.result.error for r in rollouts if r.result.error), None)
    summary["first_error"] = first_error
    return summary


def format_llm_table(
    summary: dict[str, Any], title: str, rows: Sequence[EpisodeResult] = ()
) -> str:
    """The usual table with truncations, requests, tokens and the first error added."""
    extra = []
    if summary["errors"]:
        extra.append(
            f"{'scored':<16}{summary['scored']} of {summary['n']} (the means are over these)"
        )
    extra += [
        f"{'turn budget hit':<16}{summary['truncated']} (scored 0, counted in no answer)",
        f"{'requests':<16}{summary['requests']} "
        f"({summary['retries']} retries after 429/5xx/timeouts)",
    ]
    usage = summary["usage"]
    if usage is not None:
        extra.append(
            f"{'tokens':<16}{usage['prompt_tokens']} prompt, "
            f"{usage['completion_tokens']} completion"
        )
    if summary["first_error"]:
        extra.append(f"{'first error':<16}{summary['first_error'][:200]}")
    # format_table puts the per-episode rows after a blank line: the extras go before it
    head, blank, episodes = format_table(summary, title, rows).partition("\n\n")
    return "\n".join([head, *extra]) + blank + episodes


# ------------------------------------------------------------------------------- CLI


def add_cli_options(parser: argparse.ArgumentParser) -> None:
    """The ``eval`` options used by ``--policy openai``."""
    group = parser.add_argument_group(
        "LLM policy (--policy openai)",
        "evaluate a model behind any OpenAI-compatible endpoint (vLLM, Ollama, hosted APIs)",
    )
    group.add_argument("--model", help="model name sent to the server")
    group.add_argument(
        "--base-url", default=None, help="e.g. http://localhost:8000/v1 (default: OpenAI)"
    )
    group.add_argument(
        "--api-key-env",
        default="OPENAI_API_KEY",
        help="environment variable holding the API key (default: OPENAI_API_KEY)",
    )
    group.add_argument("--rollouts", type=int, default=1, help="episodes per scenario")
    group.add_argument("--temperature", type=float, default=None)
    group.add_argument("--max-tokens", type=int, default=None, help="per model reply")
    group.add_argument(
        "--max-concurrent", type=int, default=4, help="episodes in flight at once (default 4)"
    )
    group.add_argument("--tool-protocol", choices=TOOL_PROTOCOLS, default="native")
    group.add_argument("--max-turns", type=int, default=40, help="env turns before truncation")
    group.add_argument("--timeout", type=float, default=120.0, help="seconds per request")
    group.add_argument(
        "--retries", type=int, default=5, help="attempts per request on 429/5xx/timeouts"
    )
    group.add_argument(
        "--retry-base-delay", type=float, default=1.0, help="backoff base in seconds"
    )
    group.add_argument(
        "--extra-body",
        default=None,
        help="JSON object merged into each request body, e.g. "
        '\'{"chat_template_kwargs": {"enable_thinking": false}}\' for vLLM',
    )
    group.add_argument("--out", default=None, help="write one JSONL row per rollout here")


def run_cli(args: argparse.Namespace, scenarios: Sequence[Scenario]) -> int:
    """``meeting-gym eval --policy openai``: run, print the table, write ``--out``."""
    if not args.model:
        raise ValueError("--policy openai needs --model NAME")
    if getattr(args, "mode", "text") != "text":
        raise ValueError("--policy openai plays text mode only (--mode text)")
    for flag, value in (
        ("--rollouts", args.rollouts),
        ("--max-concurrent", args.max_concurrent),
        ("--max-turns", args.max_turns),
        ("--retries", args.retries),
    ):
        if value < 1:
            raise ValueError(f"{flag} must be at least 1, got {value}")
    extra_request = None
    if args.extra_body:
        try:
            extra_body = json.loads(args.extra_body)
        except ValueError as exc:
            raise ValueError(f"--extra-body is not JSON: {exc}") from exc
        if not isinstance(extra_body, dict):
            raise ValueError("--extra-body must be a JSON object")
        extra_request = {"extra_body": extra_body}
    api_key = os.environ.get(args.api_key_env)
    if not api_key:
        print(
            f"meeting-gym: {args.api_key_env} is not set; sending the placeholder key EMPTY",
            file=sys.stderr,
        )
        api_key = "EMPTY"
    client = make_client(args.base_url, api_key, timeout=args.timeout)
    retry = RetryPolicy(attempts=args.retries, base_delay=args.retry_base_delay)
    with contextlib.ExitStack() as stack:
        handle = stack.enter_context(open(args.out, "w", encoding="utf-8")) if args.out else None

        def write_row(rollout: LLMRollout) -> None:
            if handle is not None:  # rows go out as the run goes, in order
                handle.write(json.dumps(rollout.row(), ensure_ascii=False) + "\n")
                handle.flush()

        rollouts = evaluate_llm(
            client,
            args.model,
            scenarios,
            rollouts=args.rollouts,
            seed=args.seed,
            tool_protocol=args.tool_protocol,
            temperature=args.temperature,
            max_tokens=args.max_tokens,
            max_turns=args.max_turns,
            max_concurrent=args.max_concurrent,
            retry=retry,
            show_progress=args.progress,
            on_result=write_row,
            extra_request=extra_request,
        )
    summary = llm_summary(rollouts)
    if args.json:
        payload = {
            "policy": POLICY_NAME,
            "model": args.model,
            "split": args.split,
            "mode": "text",
            "tool_protocol": args.tool_protocol,
            "rollouts": args.rollouts,
            **summary,
        }
        if args.verbose:
            payload["episodes"] = [r.result.as_dict() for r in rollouts]
        print(json.dumps(payload, indent=2))
    else:
        title = (
            f"meeting-gym eval  policy=openai  model={args.model}  split={args.split}  "
            f"mode=text  protocol={args.tool_protocol}  n={len(scenarios)}  "
            f"rollouts={args.rollouts}"
        )
        rows = [r.result for r in rollouts] if args.verbose else ()
        print(format_llm_table(summary, title, rows))
    if args.out:
        print(f"wrote {len(rollouts)} rows to {args.out}", file=sys.stderr)
    return 0
