"""The ``meeting-gym`` parser: one subcommand each, the chosen env's settings as flags."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from meeting_gym import __version__
from meeting_gym.cli import commands
from meeting_gym.cli.common import modes_of, nonnegative, policy_choices, positive, seconds
from meeting_gym.cli.eval_command import run_eval
from meeting_gym.core.registry import ENVS, task_class
from meeting_gym.core.splits import DEFAULT_ENV, DEFAULT_SEED, SPLITS, split_names

DESCRIPTION = """The meeting_gym command line: envs, eval, export, bench, serve, train and rows.

Every subcommand that plays items takes --env ID (default MeetingSlot-v0), --split, -n,
--seed and --difficulty, plus the chosen env's own settings as flags (meeting-gym eval
--env ID --help lists them). A user error is one line on stderr and exit status 2; never a
traceback."""


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error on one line (the brief: one line, non-zero exit)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def chosen_env(argv: Sequence[str]) -> str:
    """The ``--env`` value in ``argv`` (before the full parser exists, to add its flags)."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--env", default=DEFAULT_ENV)
    known, _ = pre.parse_known_args(argv)
    return known.env


def build_parser(env_id: str = DEFAULT_ENV) -> argparse.ArgumentParser:
    """The parser, with ``env_id``'s difficulties and settings as flags."""
    task = task_class(env_id) if env_id in ENVS else None
    parser = _Parser(prog="meeting-gym", description=DESCRIPTION)
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
        p.add_argument("-n", type=positive, default=None, help="number of items (split default)")
        p.add_argument(
            "--skip",
            type=nonnegative,
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

    sub.add_parser("envs", help="list the registered environments").set_defaults(run=commands.envs)

    ev = sub.add_parser("eval", help="evaluate a policy and print the rubric table")
    # only what the chosen env offers: a text-only env has no discrete mode, hence no ppo:PATH
    modes = modes_of(env_id) if task is not None else ("text", "discrete")
    discrete = "discrete" in modes
    ev.add_argument(
        "--policy",
        default=None,
        help=f"one of {policy_choices(env_id) if task else 'gold, ppo:PATH, openai, local'} "
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
    ev.add_argument("--rollouts", type=positive, default=1, help="episodes per item")
    ev.add_argument(
        "--samples",
        type=positive,
        default=None,
        metavar="K",
        help="K sampled episodes per item (as --rollouts K), reported as pass@k and pass^k for "
        "k = 1..K beside the mean; an LLM policy samples at --temperature",
    )
    ev.add_argument(
        "--max-turns", type=positive, default=None, help="turns before truncation (env default)"
    )
    ev.add_argument(
        "--max-concurrent",
        type=positive,
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
    ev.set_defaults(run=run_eval)

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
    bench.set_defaults(run=commands.bench)

    serve = sub.add_parser("serve", help="serve an env over HTTP/WebSocket (OpenEnv)")
    env_option(serve)
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=nonnegative, default=8000)
    serve.add_argument(
        "--max-sessions", type=positive, default=64, help="concurrent WebSocket sessions (64)"
    )
    serve.add_argument(
        "--idle-timeout",
        type=seconds,
        default=300.0,
        help="seconds before an idle session is closed (default 300; 0 = never)",
    )
    serve.set_defaults(run=commands.serve)

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
    export.set_defaults(run=commands.export)

    from meeting_gym.training.tool_options import PHASES, DefaultsShown, add_options

    train = sub.add_parser(
        "train",
        help="teach a local model a tool env: export expert episodes, SFT, GRPO, held-out "
        "eval (each phase resumes where the last run stopped)",
        formatter_class=DefaultsShown,
    )
    train.add_argument("phases", help=f"comma-separated, in order: {','.join(PHASES)}")
    add_options(train)
    train.set_defaults(run=commands.train)

    rows = sub.add_parser("rows", help="a run's table from its rows, and its recorded environment")
    rows_sub = rows.add_subparsers(dest="rows_command", required=True)
    for name, text, run in (
        (
            "table",
            "a single-turn SFT/GRPO run's table (base, sft, grpo and the paired lines) from its "
            "eval_<model>.jsonl[.gz] rows and results.json",
            commands.rows_table,
        ),
        (
            "environment",
            "whether this machine is the environment a run's results.json records: the same "
            "(its table should reproduce to the digit) or what differs",
            commands.rows_environment,
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
        commands.rows_paired,
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
        "--group", type=positive, default=8, help="episodes per item (the run's --group)"
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
    groups.set_defaults(run=commands.rows_groups)
    _sliced(
        rows_sub,
        "steps",
        "a worked-solutions MeetingSlot model's last turns marked step by step against the "
        "reference's worked solution (a diagnosis, not a grade)",
        commands.rows_steps,
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
