"""``meeting-gym eval``: any policy on any registered env, one table.

A policy is one of a few kinds (:data:`KINDS`): the env's reference policies by name, a
saved MaskablePPO (``ppo:PATH``), or a chat model (``openai``, ``local``). Each kind says
the mode it acts through and how its agents are made; the command looks the kind up once
and follows it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from meeting_gym.cli.common import (
    EXIT_NOTHING_SCORED,
    UserError,
    check_mode,
    env_class,
    env_settings,
    items_of,
    open_out,
    policy_choices,
    split_options,
)
from meeting_gym.evaluation.provenance import run_environment


def run_eval(args: argparse.Namespace) -> int:
    """``meeting-gym eval``: play the items with the policy and print the rubric table."""
    from meeting_gym.core.registry import make_task
    from meeting_gym.evaluation.evaluate import evaluate, format_table, summarize

    settings = env_settings(args)
    task = make_task(args.env, **settings)
    policy = args.policy or task.reference_policy
    kind = kind_of(policy, task, args.env)
    is_llm = kind.llm
    if kind.mode is not None:  # before --mode: on a text-only env, that is the whole story
        check_mode(args.env, kind.mode, policy)
    mode = args.mode or kind.mode or "text"
    check_mode(args.env, mode, policy)
    if kind.mode is not None and mode != kind.mode:
        raise UserError(kind.wrong_mode.format(policy=policy))
    if args.samples is not None:
        if args.rollouts != 1:
            raise UserError("--samples K plays K episodes per item: give it or --rollouts")
        args.rollouts = args.samples
        if is_llm and args.samples > 1 and not args.temperature:
            print(
                "meeting-gym: note: greedy decoding gives every sample the same reply: "
                "give --temperature (e.g. 0.7) for pass@k and pass^k to differ",
                file=sys.stderr,
            )
    items = items_of(args, task)
    env_kwargs: dict[str, Any] = dict(settings)
    with contextlib.ExitStack() as stack:
        local_progress = None
        if kind.name == "local" and (
            sys.stderr.isatty() if args.progress is None else args.progress
        ):
            from meeting_gym.evaluation.chat import LocalProgress

            local_progress = LocalProgress(len(items) * args.rollouts)
            stack.callback(local_progress.close)
        make_agent, max_concurrent, protocol = kind.agents(
            args, policy, env_kwargs, stack, local_progress
        )
        handle = stack.enter_context(open_out(args.out)) if args.out else None
        written = 0

        def write_row(result: Any) -> None:
            nonlocal written
            if handle is None:
                return
            if is_llm:
                from meeting_gym.evaluation.chat import replayable_row

                line = replayable_row(
                    result,
                    env=args.env,
                    env_kwargs=env_kwargs,
                    seed=args.seed + written,  # the runner seeds episode k with seed + k
                    options=split_options(args, written // args.rollouts),
                    tool_protocol=protocol,
                    max_turns=args.max_turns,
                )
            else:
                line = result.as_dict()
            written += 1
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")
            handle.flush()

        results = evaluate(
            make_agent,
            items,
            env=args.env,
            mode=mode,
            seed=args.seed,
            rollouts=args.rollouts,
            max_turns=args.max_turns,
            max_concurrent=max_concurrent,
            env_kwargs=env_kwargs,
            # a local model's own line says more (turns, tokens) from the first second
            show_progress=False if local_progress is not None else args.progress,
            on_result=write_row,  # the file keeps the items' order
            # the count, as each episode ends: a long one holds back no other's
            on_episode=None if local_progress is None else local_progress.episode_done,
        )
    summary = summarize(results, task.rubric.names)
    extra_lines: list[str] = []
    if is_llm:
        from meeting_gym.evaluation.chat import table_lines, totals

        summary.update(totals(results))
        extra_lines = table_lines(summary)
    if args.samples is not None:
        from meeting_gym.evaluation.passk import pass_lines, pass_summary, solved_counts

        def best(item: Any) -> float:
            known = task.max_reward_for(item)
            return task.max_reward if known is None else known

        summary["pass"] = pass_summary(
            solved_counts(results, items, args.samples, best), args.samples
        )
        extra_lines = [*extra_lines, *pass_lines(summary["pass"])]
    if args.json:
        payload = {
            "env": args.env,
            "policy": policy,
            "split": args.split,
            "mode": mode,
            **({"model": args.model, "tool_protocol": protocol} if is_llm else {}),
            "rollouts": args.rollouts,
            **summary,
            "environment": run_environment(),
        }
        if args.verbose:
            payload["episodes"] = [r.as_dict() for r in results]
        print(json.dumps(payload, indent=2))
    else:
        title = f"meeting-gym eval  env={args.env}  policy={policy}"
        if is_llm:
            title += f"  model={args.model}"
        title += f"  split={args.split}  mode={mode}"
        if is_llm:
            title += f"  protocol={protocol}"
        title += f"  n={len(items)}"
        if args.rollouts != 1 or is_llm:
            title += f"  rollouts={args.rollouts}"
        rows = results if args.verbose else ()
        table = format_table(
            summary,
            title,
            rows,
            rubric=task.rubric,
            extra=extra_lines,
            truncation_note=task.episode_class.truncation_note,
        )
        print(table)
    if args.out:
        print(f"wrote {len(results)} rows to {args.out}", file=sys.stderr)
    if summary["scored"] == 0:
        print(
            f"meeting-gym: error: no episode was scored ({summary['errors']} errors; "
            f"first: {summary['first_error']})",
            file=sys.stderr,
        )
        return EXIT_NOTHING_SCORED
    return 0


Agents = tuple[Any, int, "str | None"]
"""A maker of agents, the episodes to run at once, and the tool protocol (LLM kinds)."""


def _openai_agents(
    args: argparse.Namespace, policy: str, env_kwargs: dict[str, Any], stack: Any, progress: Any
) -> Agents:
    from meeting_gym.evaluation.chat import DEFAULT_CONCURRENCY, agent_factory

    make: Any = agent_factory(args)
    return make, args.max_concurrent or DEFAULT_CONCURRENCY, make.keywords["tool_protocol"]


def _local_agents(
    args: argparse.Namespace, policy: str, env_kwargs: dict[str, Any], stack: Any, progress: Any
) -> Agents:
    from meeting_gym.evaluation.chat import local_agent_factory

    # the generation thread is released after the run; ``progress`` is told what loads
    make, client = local_agent_factory(args, progress)
    stack.callback(client.close)
    return make, client.batch_size, make.keywords["tool_protocol"]


def _ppo_agents(
    args: argparse.Namespace, policy: str, env_kwargs: dict[str, Any], stack: Any, progress: Any
) -> Agents:
    from meeting_gym.agents.ppo import load_ppo

    agent = load_ppo(policy[len("ppo:") :])
    # the encoding the model was trained on, where the env has several
    made_for = getattr(env_class(args.env), "make_kwargs_for", None)
    if made_for is not None:
        env_kwargs.update(made_for(agent.model.observation_space))
    return (lambda: agent), args.max_concurrent or 1, None


def _reference_agents(
    args: argparse.Namespace, policy: str, env_kwargs: dict[str, Any], stack: Any, progress: Any
) -> Agents:
    from meeting_gym.agents.policies import make_policy

    return (
        lambda: make_policy(policy, seed=args.seed, env=args.env),
        args.max_concurrent or 1,
        None,
    )


@dataclass(frozen=True)
class PolicyKind:
    """What ``eval`` needs to know about one kind of ``--policy``."""

    name: str
    mode: str | None
    """The one mode it acts through (None: any the env has, text by default)."""
    wrong_mode: str
    """The one-line error for another ``--mode`` (``{policy}`` is filled in)."""
    llm: bool
    """A chat model: its rows carry what replays them, its table counts tokens."""
    agents: Callable[..., Agents]
    """``(args, policy, env_kwargs, stack, progress)`` -> :data:`Agents`; what must be
    released after the run goes on ``stack``."""


_TEXT_ONLY = "the {policy} policy plays text mode; drop --mode discrete"
KINDS = {
    "openai": PolicyKind("openai", "text", _TEXT_ONLY, True, _openai_agents),
    "local": PolicyKind("local", "text", _TEXT_ONLY, True, _local_agents),
    "ppo": PolicyKind(
        "ppo", "discrete", "a ppo:PATH policy acts in discrete mode; drop --mode text",
        False, _ppo_agents,
    ),
    "reference": PolicyKind("reference", None, "", False, _reference_agents),
}  # fmt: skip


def kind_of(policy: str, task: Any, env_id: str) -> PolicyKind:
    """The kind of ``policy`` (``ppo:PATH``, ``openai``, ``local`` or one of the env's
    reference policies); a one-line error naming the choices for any other."""
    if policy.startswith("ppo:"):
        return KINDS["ppo"]
    if policy in KINDS and KINDS[policy].llm:  # a chat model is named by its kind
        return KINDS[policy]
    if policy in task.policies:
        return KINDS["reference"]
    raise UserError(f"unknown policy {policy!r}; choose one of {policy_choices(env_id)}")
