"""The ``meeting-gym`` commands other than ``eval``: ``envs``, ``export``, ``bench``,
``serve``, ``train`` and ``rows``. Each takes the parsed arguments and returns the exit
status; a user error is a ``ValueError`` (``UserError``) that ``main`` prints in one line."""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from typing import Any, NoReturn

from meeting_gym.cli.common import UserError, env_settings, items_of, open_out, policy_choices
from meeting_gym.core.registry import ENVS, task_class


def export(args: argparse.Namespace) -> int:
    from meeting_gym.core.registry import make_task
    from meeting_gym.core.splits import split_rows

    task = make_task(args.env, **env_settings(args))
    if args.episodes:
        return export_episodes(args, task)
    if args.format != "text":
        raise UserError(f"--format {args.format} writes tool calls: it is for --episodes")
    items = items_of(args, task)
    with open_out(args.out) as handle:
        for row in split_rows(args.split, items, task, args.seed, args.difficulty):
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"wrote {len(items)} rows to {args.out}")
    return 0


def export_episodes(args: argparse.Namespace, task: Any) -> int:
    """``export --episodes``: the reference policy's whole episodes, each replay-checked."""
    from meeting_gym.evaluation.episodes import MULTI_TURN_HINT, episode_rows

    if task.toolset is None:
        raise UserError(f"{args.env}: {MULTI_TURN_HINT}")
    if args.expert is not None and args.expert not in task.policies:
        raise UserError(f"unknown expert {args.expert!r}; choose one of {policy_choices(args.env)}")
    n = len(items_of(args, task))  # the split's own count and bounds, as for items
    try:
        rows = list(
            episode_rows(
                args.env,
                args.split,
                n,
                split_seed=args.seed,
                difficulty=args.difficulty,
                policy=args.expert,
                tool_format=args.format,
                **env_settings(args),
            )
        )
    except ValueError as exc:  # an episode that does not replay to the env's best
        raise UserError(str(exc)) from exc
    with open_out(args.out) as handle:  # written only once every episode has replayed
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"wrote {len(rows)} expert episodes to {args.out}")
    return 0


def bench(args: argparse.Namespace) -> int:
    from meeting_gym.bench import run_bench

    print(run_bench(env=args.env, quick=args.quick, as_json=args.json, only=args.only))
    return 0


def serve(args: argparse.Namespace) -> int:
    from meeting_gym.adapters.openenv import serve as serve_env  # names its extra if missing

    def banner(host: str, port: int) -> None:
        # printed once the socket listens: a port in use is an error line, not a banner
        print(
            f"serving {args.env} (OpenEnv) at http://{host}:{port} "
            f"(ws://{host}:{port}/ws); Ctrl-C stops it",
            file=sys.stderr,
            flush=True,
        )

    stopped = serve_env(
        args.env,
        args.host,
        args.port,
        max_sessions=args.max_sessions,
        idle_timeout_s=args.idle_timeout or None,
        on_listening=banner,
    )
    print(f"meeting-gym serve: {stopped.line()}", file=sys.stderr, flush=True)
    if any(
        t.is_alive() and not t.daemon
        for t in threading.enumerate()
        if t is not threading.main_thread()
    ):
        # a cancelled request's env work may still run in its session's worker thread
        # (an env step cannot be interrupted from outside), and the interpreter would
        # wait for it at exit (a long eval walk held a stop for 40 s): nothing is left
        # to write, so the process ends now
        sys.stdout.flush()
        os._exit(0)
    return 0


def envs(args: argparse.Namespace) -> int:
    from meeting_gym.core.registry import families

    named = families()
    width = max(len(name) for name in named)
    for name, ids in named.items():
        first = ENVS[ids[0]]
        versions = ", ".join(env_id.rsplit("-", 1)[1] for env_id in ids)
        notes = [f"{k}={v!r}" for k, v in first.kwargs.items()]
        note = f" ({'; '.join(notes)})" if notes else ""
        print(f"{name:<{width}}  {versions:<6}  {task_class(ids[0]).summary}{note}")
    print(
        "\nv1, the one to use: any eval item in constant time (items may repeat where the item\n"
        "    space is small: docs/versions.md counts them).\n"
        "v0: the eval items the published figures were measured on, none repeated; item k\n"
        "    walks k draws. Rewards, observations and train items are the same in both."
    )
    return 0


def rows_table(args: argparse.Namespace) -> int:
    from meeting_gym.evaluation.run_rows import run_table

    print(run_table(args.folder))
    return 0


def rows_paired(args: argparse.Namespace) -> int:
    from meeting_gym.evaluation.paired import compare

    print("\n".join(compare(args.after, args.before, args.rows)))
    return 0


def rows_groups(args: argparse.Namespace) -> int:
    from meeting_gym.training.groups import table

    times = frozenset(t.strip() for t in args.times.split(",") if t.strip())
    print("\n".join(table(args.rollouts, args.group, times, args.unasked, args.branches)))
    return 0


def rows_steps(args: argparse.Namespace) -> int:
    from meeting_gym.envs.meeting_slot.worked_report import marks_of, report
    from meeting_gym.evaluation.heldout import in_item_order, read_rows, row_slice

    rows = in_item_order(read_rows(args.file))[row_slice(args.rows)]
    if not rows:
        raise ValueError(f"no rows in {args.rows}")
    print("\n".join(report(marks_of(rows), rows)))
    return 0


def train(args: argparse.Namespace) -> int:
    from meeting_gym.training.tool_options import checked, phases_of
    from meeting_gym.training.tool_run import run

    def error(message: str) -> NoReturn:
        raise ValueError(message)

    args.phase_list = phases_of(args.phases, error)
    return run(checked(args, error))


def rows_environment(args: argparse.Namespace) -> int:
    from meeting_gym.evaluation.provenance import compare_to_record

    same, lines = compare_to_record(args.folder / "results.json")
    print("\n".join(lines))
    return 0 if same else 1
