"""The ``meeting-gym`` command line: ``envs``, ``eval``, ``export``, ``bench`` and ``serve``.

Every subcommand that plays items takes ``--env ID`` (default ``MeetingSlot-v0``),
``--split``, ``-n``, ``--seed`` and ``--difficulty``, plus the chosen env's own
settings as flags (``meeting-gym eval --env ID --help`` lists them). A user error is
one line on stderr and exit status 2; never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import threading
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from meeting_gym import __version__
from meeting_gym.agents.policies import policy_names
from meeting_gym.core.registry import ENVS, task_class
from meeting_gym.core.splits import DEFAULT_ENV, DEFAULT_SEED, SPLITS, split_names
from meeting_gym.evaluation.provenance import run_environment

EXIT_USER_ERROR = 2
EXIT_NOTHING_SCORED = 1


class UserError(ValueError):
    """A mistake in the command line or its inputs: reported in one line."""


def _nonnegative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be non-negative, got {value}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a non-negative number of seconds, got {text}")
    return value


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 1:  # -3 and 0 alike (-n 0 passed, then selected nothing)
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


# ----------------------------------------------------------------------------- commands


def _settings(args: argparse.Namespace) -> dict[str, Any]:
    """The chosen env's own settings given on the command line (as gym.make kwargs)."""
    return {
        s.name: getattr(args, s.name)
        for s in task_class(args.env).settings
        if getattr(args, s.name, None) is not None
    }


def _items(args: argparse.Namespace, task: Any) -> list[Any]:
    from meeting_gym.core.splits import DEFAULT_SIZES, MAX_EVAL_ITEMS, load_split, split_item

    start = getattr(args, "skip", 0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if not start:
            items = load_split(
                args.split, n=args.n, seed=args.seed, difficulty=args.difficulty, env=task
            )
        elif args.split in DEFAULT_SIZES:  # drawn: each item by its index
            size = args.n or DEFAULT_SIZES[args.split]
            walked = args.split == "eval" and task.eval_draws != "independent"
            if walked and start + size > MAX_EVAL_ITEMS:  # said before any walk
                raise UserError(
                    f"--skip {start} with {size} items passes the eval split's bound of "
                    f"{MAX_EVAL_ITEMS} items on {args.env} (a -v1 id has no bound)"
                )
            items = [
                split_item(task, args.split, index, args.seed, args.difficulty)[0]
                for index in range(start, start + size)
            ]
        else:  # a fixed list
            listed = load_split(args.split, seed=args.seed, difficulty=args.difficulty, env=task)
            items = listed[start : start + args.n if args.n else None]
    for warning in caught:  # one plain line, not Python's warning format
        print(f"meeting-gym: note: {warning.message}", file=sys.stderr)
    if not items:
        what = f"split {args.split!r}"
        if args.difficulty is not None:
            what += f" with difficulty {args.difficulty!r}"
        if start:
            what += f" from index {start}"
        raise UserError(f"{what} of {args.env} has no items: nothing to evaluate")
    return items


def _modes(env_id: str) -> tuple[str, ...]:
    """The interfaces ``env_id`` offers (``mode=`` of ``gym.make``), e.g. ``("text",)``."""
    return tuple(_env_class(env_id).modes)


def _policy_names(env_id: str) -> str:
    names = list(policy_names(env_id))
    if "discrete" in _modes(env_id):  # a saved MaskablePPO acts through the discrete mode
        names.append("ppo:PATH")
    return ", ".join([*names, "openai", "local"])


def _check_mode(env_id: str, mode: str, policy: str) -> None:
    """A one-line error when ``env_id`` has no ``mode`` (the mode ``policy`` needs)."""
    modes = _modes(env_id)
    if mode in modes:
        return
    offered = (
        f"its only mode is {modes[0]}" if len(modes) == 1 else f"its modes: {', '.join(modes)}"
    )
    if policy.startswith("ppo:") and mode == "discrete":
        raise UserError(
            f"{env_id} has no discrete mode ({offered}), and a ppo:PATH policy needs one; "
            f"choose one of {_policy_names(env_id)}"
        )
    raise UserError(f"{env_id} has no {mode} mode ({offered})")


def _eval(args: argparse.Namespace) -> int:
    from meeting_gym.core.registry import make_task
    from meeting_gym.evaluation.chat import LLM_POLICIES
    from meeting_gym.evaluation.evaluate import evaluate, format_table, summarize

    settings = _settings(args)
    task = make_task(args.env, **settings)
    policy = args.policy or task.reference_policy
    is_ppo = policy.startswith("ppo:")
    is_llm = policy in LLM_POLICIES
    known = policy in task.policies or is_ppo or is_llm
    if not known:
        raise UserError(f"unknown policy {policy!r}; choose one of {_policy_names(args.env)}")
    if is_ppo:  # before --mode: on a text-only env, the missing mode is the whole story
        _check_mode(args.env, "discrete", policy)
    mode = args.mode or ("discrete" if is_ppo else "text")
    _check_mode(args.env, mode, policy)
    if is_llm and mode != "text":
        raise UserError(f"the {policy} policy plays text mode; drop --mode discrete")
    if is_ppo and mode != "discrete":
        raise UserError("a ppo:PATH policy acts in discrete mode; drop --mode text")
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
    items = _items(args, task)
    env_kwargs: dict[str, Any] = dict(settings)
    with contextlib.ExitStack() as stack:
        local_progress = None
        if policy == "local" and (sys.stderr.isatty() if args.progress is None else args.progress):
            from meeting_gym.evaluation.chat import LocalProgress

            local_progress = LocalProgress(len(items) * args.rollouts)
            stack.callback(local_progress.close)
        make_agent, max_concurrent, protocol = _agent_maker(
            args, policy, env_kwargs, stack, local_progress
        )
        handle = stack.enter_context(_open_out(args.out)) if args.out else None
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
                    options=_split_options(args, written // args.rollouts),
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


def _agent_maker(
    args: argparse.Namespace,
    policy: str,
    env_kwargs: dict[str, Any],
    stack: contextlib.ExitStack,
    local_progress: Any = None,
) -> tuple[Any, int, str | None]:
    """A maker of agents for ``policy``, the episodes to run at once, and the tool protocol.

    What must be released after the run (a local model's generation thread) goes on ``stack``;
    ``local_progress`` (a local model's status line) is told what loads and what it generates.
    """
    if policy == "openai":
        from meeting_gym.evaluation.chat import DEFAULT_CONCURRENCY, agent_factory

        make: Any = agent_factory(args)
        return make, args.max_concurrent or DEFAULT_CONCURRENCY, make.keywords["tool_protocol"]
    if policy == "local":
        from meeting_gym.evaluation.chat import local_agent_factory

        make, client = local_agent_factory(args, local_progress)
        stack.callback(client.close)
        return make, client.batch_size, make.keywords["tool_protocol"]
    if policy.startswith("ppo:"):
        from meeting_gym.agents.ppo import load_ppo

        agent = load_ppo(policy[len("ppo:") :])
        # the encoding the model was trained on, where the env has several
        made_for = getattr(_env_class(args.env), "make_kwargs_for", None)
        if made_for is not None:
            env_kwargs.update(made_for(agent.model.observation_space))
        return (lambda: agent), args.max_concurrent or 1, None
    from meeting_gym.agents.policies import make_policy

    return (
        lambda: make_policy(policy, seed=args.seed, env=args.env),
        args.max_concurrent or 1,
        None,
    )


def _split_options(args: argparse.Namespace, index: int) -> dict[str, Any]:
    """The reset options that address item ``index`` of the evaluated items (past the
    ``--skip`` ones: item ``skip + index`` of the split)."""
    index += getattr(args, "skip", 0)
    options: dict[str, Any] = {"split": args.split, "index": index, "split_seed": args.seed}
    if args.difficulty is not None:
        options["difficulty"] = args.difficulty
    return options


def _env_class(env_id: str) -> Any:
    """The env class registered for ``env_id`` (imports its module)."""
    import gymnasium

    from meeting_gym.core.registry import load_object

    entry_point = gymnasium.spec(env_id).entry_point
    return load_object(entry_point) if isinstance(entry_point, str) else entry_point


def _open_out(path: str) -> Any:
    """``open(path, "w")`` with a one-line error for a directory or a missing folder."""
    target = Path(path)
    if target.is_dir():
        raise UserError(f"--out {path!r} is a directory; give a file name")
    if not target.parent.is_dir():
        raise UserError(f"--out {path!r}: folder {str(target.parent)!r} does not exist")
    try:
        return open(target, "w", encoding="utf-8")
    except OSError as exc:
        raise UserError(f"--out {path!r}: {exc.strerror or exc}") from exc


def _export(args: argparse.Namespace) -> int:
    from meeting_gym.core.registry import make_task
    from meeting_gym.core.splits import split_rows

    task = make_task(args.env, **_settings(args))
    if args.episodes:
        return _export_episodes(args, task)
    if args.format != "text":
        raise UserError(f"--format {args.format} writes tool calls: it is for --episodes")
    items = _items(args, task)
    with _open_out(args.out) as handle:
        for row in split_rows(args.split, items, task, args.seed, args.difficulty):
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"wrote {len(items)} rows to {args.out}")
    return 0


def _export_episodes(args: argparse.Namespace, task: Any) -> int:
    """``export --episodes``: the reference policy's whole episodes, each replay-checked."""
    from meeting_gym.evaluation.episodes import MULTI_TURN_HINT, episode_rows

    if task.toolset is None:
        raise UserError(f"{args.env}: {MULTI_TURN_HINT}")
    if args.expert is not None and args.expert not in task.policies:
        raise UserError(f"unknown expert {args.expert!r}; choose one of {_policy_names(args.env)}")
    n = len(_items(args, task))  # the split's own count and bounds, as for items
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
                **_settings(args),
            )
        )
    except ValueError as exc:  # an episode that does not replay to the env's best
        raise UserError(str(exc)) from exc
    with _open_out(args.out) as handle:  # written only once every episode has replayed
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"wrote {len(rows)} expert episodes to {args.out}")
    return 0


def _bench(args: argparse.Namespace) -> int:
    from meeting_gym.bench import run_bench

    print(run_bench(env=args.env, quick=args.quick, as_json=args.json, only=args.only))
    return 0


def _serve(args: argparse.Namespace) -> int:
    from meeting_gym.adapters.openenv import serve

    def banner(host: str, port: int) -> None:
        # printed once the socket listens: a port in use is an error line, not a banner
        print(
            f"serving {args.env} (OpenEnv) at http://{host}:{port} "
            f"(ws://{host}:{port}/ws); Ctrl-C stops it",
            file=sys.stderr,
            flush=True,
        )

    stopped = serve(
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


def _envs(args: argparse.Namespace) -> int:
    width = max(len(env_id) for env_id in ENVS)
    for env_id, entry in ENVS.items():
        summary = task_class(env_id).summary
        notes = [f"{k}={v!r}" for k, v in entry.kwargs.items()]
        if entry.eval_draws == "independent":
            notes.append("eval items in constant time, may repeat: docs/versions.md")
        note = f" ({'; '.join(notes)})" if notes else ""
        print(f"{env_id:<{width}}  {summary}{note}")
    return 0


# ----------------------------------------------------------------------------- parser


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error on one line (the brief: one line, non-zero exit)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _rows_table(args: argparse.Namespace) -> int:
    from meeting_gym.evaluation.run_rows import run_table

    print(run_table(args.folder))
    return 0


def _rows_paired(args: argparse.Namespace) -> int:
    from meeting_gym.evaluation.paired import compare

    print("\n".join(compare(args.after, args.before, args.rows)))
    return 0


def _rows_groups(args: argparse.Namespace) -> int:
    from meeting_gym.training.groups import table

    times = frozenset(t.strip() for t in args.times.split(",") if t.strip())
    print("\n".join(table(args.rollouts, args.group, times, args.unasked, args.branches)))
    return 0


def _rows_steps(args: argparse.Namespace) -> int:
    from meeting_gym.envs.meeting_slot.worked_report import marks_of, report
    from meeting_gym.evaluation.heldout import in_item_order, read_rows, row_slice

    rows = in_item_order(read_rows(args.file))[row_slice(args.rows)]
    if not rows:
        raise ValueError(f"no rows in {args.rows}")
    print("\n".join(report(marks_of(rows), rows)))
    return 0


def _train(args: argparse.Namespace) -> int:
    from meeting_gym.training.tool_options import checked, phases_of
    from meeting_gym.training.tool_run import run

    def error(message: str) -> NoReturn:
        raise ValueError(message)

    args.phase_list = phases_of(args.phases, error)
    return run(checked(args, error))


def _rows_environment(args: argparse.Namespace) -> int:
    from meeting_gym.evaluation.provenance import compare_to_record

    same, lines = compare_to_record(args.folder / "results.json")
    print("\n".join(lines))
    return 0 if same else 1


def _chosen_env(argv: Sequence[str]) -> str:
    """The ``--env`` value in ``argv`` (before the full parser exists, to add its flags)."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--env", default=DEFAULT_ENV)
    known, _ = pre.parse_known_args(argv)
    return known.env


def build_parser(env_id: str = DEFAULT_ENV) -> argparse.ArgumentParser:
    """The parser, with ``env_id``'s difficulties and settings as flags."""
    task = task_class(env_id) if env_id in ENVS else None
    parser = _Parser(prog="meeting-gym", description=__doc__)
    parser.add_argument("--version", action="version", version=f"meeting-gym {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    def env_option(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--env",
            choices=list(ENVS),
            default=DEFAULT_ENV,
            metavar="ID",
            help=f"environment id (default {DEFAULT_ENV}; `meeting-gym envs` lists them)",
        )

    def split_options(p: argparse.ArgumentParser) -> None:
        env_option(p)
        p.add_argument(
            "--split", choices=split_names(task) if task is not None else SPLITS, default="curated"
        )
        p.add_argument("-n", type=_positive, default=None, help="number of items (split default)")
        p.add_argument(
            "--skip",
            type=_nonnegative,
            default=0,
            help="items of the split to pass over first (0); e.g. --split eval --skip 15 "
            "passes over MeetingSlot's 15 curated items, which open its eval split",
        )
        p.add_argument("--seed", type=int, default=DEFAULT_SEED)
        levels = task.difficulties if task is not None else None
        p.add_argument("--difficulty", choices=levels, default=None)
        if task is None:
            return
        group = p.add_argument_group(f"{env_id} settings")
        for setting in task.settings:
            group.add_argument(
                f"--{setting.name.replace('_', '-')}",
                dest=setting.name,
                type=setting.kind,
                choices=[c for c in setting.choices if c is not None] if setting.choices else None,
                default=None,
                help=setting.help,
            )

    sub.add_parser("envs", help="list the registered environments").set_defaults(run=_envs)

    ev = sub.add_parser("eval", help="evaluate a policy and print the rubric table")
    # only what the chosen env offers: a text-only env has no discrete mode, hence no ppo:PATH
    modes = _modes(env_id) if task is not None else ("text", "discrete")
    discrete = "discrete" in modes
    ev.add_argument(
        "--policy",
        default=None,
        help=f"one of {_policy_names(env_id) if task else 'gold, ppo:PATH, openai, local'} "
        f"({'ppo:PATH = a saved MaskablePPO; ' if discrete else ''}openai = an LLM endpoint; "
        "local = a model run in-process; "
        f"default: the env's reference policy{f', {task.reference_policy}' if task else ''})",
    )

    def mode_of_env(text: str) -> str:
        if text not in modes:  # argparse's "invalid choice" would not say whose modes
            whose = f"{env_id} has" if task is not None else "there is"
            raise argparse.ArgumentTypeError(f"{whose} no {text} mode (modes: {', '.join(modes)})")
        return text

    ev.add_argument(
        "--mode",
        type=mode_of_env,
        metavar="{" + ",".join(modes) + "}",
        default=None,
        help="interface to act through "
        + ("(default: text; discrete for ppo:PATH)" if discrete else "(text only for this env)"),
    )
    split_options(ev)
    ev.add_argument("--rollouts", type=_positive, default=1, help="episodes per item")
    ev.add_argument(
        "--samples",
        type=_positive,
        default=None,
        metavar="K",
        help="K sampled episodes per item (as --rollouts K), reported as pass@k and pass^k for "
        "k = 1..K beside the mean; an LLM policy samples at --temperature",
    )
    ev.add_argument(
        "--max-turns", type=_positive, default=None, help="turns before truncation (env default)"
    )
    ev.add_argument(
        "--max-concurrent",
        type=_positive,
        default=None,
        help="episodes in flight at once (default 1; 4 for openai; local: the batch, 8)",
    )
    ev.add_argument(
        "--out",
        default=None,
        help="write one JSONL row per episode here (with transcripts for openai)",
    )
    ev.add_argument("--verbose", action="store_true", help="one row per episode")
    ev.add_argument("--json", action="store_true", help="machine-readable output")
    ev.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress on stderr (default: on a tty; a bar for 50+ episodes, and for "
        "--policy local a status line of episodes, turns and tokens from the first second)",
    )
    from meeting_gym.evaluation.chat import add_cli_options  # no openai import here

    add_cli_options(ev)
    ev.set_defaults(run=_eval)

    bench = sub.add_parser("bench", help="measure speed against CartPole-v1 in the same run")
    env_option(bench)
    bench.add_argument(
        "--quick", action="store_true", help="fewer repeats, for smoke tests (judges no target)"
    )
    bench.add_argument("--json", action="store_true", help="machine-readable output")
    bench.add_argument(
        "--only",
        metavar="KEY",
        help="only the rows whose key starts with KEY (e.g. 'eval': the eval item resets)",
    )
    bench.set_defaults(run=_bench)

    serve = sub.add_parser("serve", help="serve an env over HTTP/WebSocket (OpenEnv)")
    env_option(serve)
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=_nonnegative, default=8000)
    serve.add_argument(
        "--max-sessions", type=_positive, default=64, help="concurrent WebSocket sessions (64)"
    )
    serve.add_argument(
        "--idle-timeout",
        type=_seconds,
        default=300.0,
        help="seconds before an idle session is closed (default 300; 0 = never)",
    )
    serve.set_defaults(run=_serve)

    export = sub.add_parser("export", help="write a split as JSONL rows for LLM trainers")
    split_options(export)
    export.add_argument("--out", required=True, help="the JSONL file to write")
    export.add_argument(
        "--episodes",
        action="store_true",
        help="write the reference policy's whole episodes as chat messages (tool envs), "
        "each replayed to the env's best before it is written",
    )
    export.add_argument(
        "--expert",
        default=None,
        help="with --episodes: the expert policy (default: the env's reference; "
        "MeetingSlot-v0's gold-worked writes a worked solution before its answer)",
    )
    export.add_argument(
        "--format",
        choices=("text", "openai"),
        default="text",
        help="with --episodes: how tool calls are written: text (calls as JSON in the "
        "assistant's text, results as user turns: the protocol of a template without tools, "
        "SmolLM2's) or openai (tool_calls, tool messages and the tools' schemas, which "
        "tools-aware chat templates and TRL's SFTTrainer take)",
    )
    export.set_defaults(run=_export)

    from meeting_gym.training.tool_options import PHASES, DefaultsShown, add_options

    train = sub.add_parser(
        "train",
        help="teach a local model a tool env: export expert episodes, SFT, GRPO, held-out "
        "eval (each phase resumes where the last run stopped)",
        formatter_class=DefaultsShown,
    )
    train.add_argument("phases", help=f"comma-separated, in order: {','.join(PHASES)}")
    add_options(train)
    train.set_defaults(run=_train)

    rows = sub.add_parser("rows", help="a run's table from its rows, and its recorded environment")
    rows_sub = rows.add_subparsers(dest="rows_command", required=True)
    for name, text, run in (
        (
            "table",
            "a single-turn SFT/GRPO run's table (base, sft, grpo and the paired lines) from its "
            "eval_<model>.jsonl[.gz] rows and results.json",
            _rows_table,
        ),
        (
            "environment",
            "whether this machine is the environment a run's results.json records: the same "
            "(its table should reproduce to the digit) or what differs",
            _rows_environment,
        ),
    ):
        command = rows_sub.add_parser(name, help=text)
        command.add_argument("folder", type=Path, help="a run's folder, e.g. runs/grpo_calendar")
        command.set_defaults(run=run)
    _sliced(
        rows_sub,
        "paired",
        "two evaluations of the same items compared pair by pair: each mean and the "
        "paired difference AFTER - BEFORE with its 95%% interval",
        _rows_paired,
        ("after", "an eval_<model>.jsonl[.gz] of held-out rows"),
        ("before", "another of the same items, or a reference policy (naive, gold)"),
    )
    groups = rows_sub.add_parser(
        "groups",
        help="per GRPO step of a run: its groups, their distinct final answers and exact "
        "rollouts (from its grpo/rollouts.jsonl; held-out rows with --group 1)",
    )
    groups.add_argument("rollouts", help="a run's grpo/rollouts.jsonl, or an eval_<model>.jsonl")
    groups.add_argument(
        "--group", type=_positive, default=8, help="episodes per item (the run's --group)"
    )
    groups.add_argument(
        "--times", default="", help="comma-separated times of day, e.g. 09:00:00Z,10:00:00Z"
    )
    groups.add_argument(
        "--unasked",
        action="store_true",
        help="count the episodes that never asked about one of the attendees",
    )
    groups.add_argument(
        "--branches",
        action="store_true",
        help="count the branches that answered in their first sampled turn, and those that "
        "did not, with each kind's mean advantage (a --rollout last-turn run)",
    )
    groups.set_defaults(run=_rows_groups)
    _sliced(
        rows_sub,
        "steps",
        "a worked-solutions MeetingSlot model's last turns marked step by step against the "
        "reference's worked solution (a diagnosis, not a grade)",
        _rows_steps,
        ("file", "the evaluation rows (eval_<model>.jsonl)"),
    )
    return parser


def _sliced(
    sub: Any, name: str, text: str, run: Callable[..., int], *files: tuple[str, str]
) -> None:
    """A ``rows`` command reading row files (``files``: name, help) and ``--rows START:STOP``."""
    command = sub.add_parser(name, help=text)
    for file, about in files:
        command.add_argument(file, help=about)
    command.add_argument(
        "--rows", default=":", metavar="START:STOP", help="the items to read (default all)"
    )
    command.set_defaults(run=run)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_chosen_env(argv))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse printed the usage line and the error (or --help)
        return exc.code if isinstance(exc.code, int) else EXIT_USER_ERROR
    try:
        return args.run(args)
    except (ValueError, ImportError) as exc:
        print(f"meeting-gym: error: {exc}", file=sys.stderr)
        return EXIT_USER_ERROR
    except BrokenPipeError:  # e.g. `meeting-gym eval | head`: the reader left, not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:  # a missing or unreadable file is the user's to fix: one line
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"meeting-gym: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return EXIT_USER_ERROR


if __name__ == "__main__":
    raise SystemExit(main())
