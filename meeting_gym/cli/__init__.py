"""The ``meeting-gym`` command line: ``envs``, ``eval``, ``export``, ``bench``, ``serve``,
``train`` and ``rows``.

Every subcommand that plays items takes ``--env ID`` (default ``MeetingSlot-v0``),
``--split``, ``-n``, ``--seed`` and ``--difficulty``, plus the chosen env's own
settings as flags (``meeting-gym eval --env ID --help`` lists them). A user error is
one line on stderr and exit status 2; never a traceback.

The package is split by job: :mod:`.parser` (the options), :mod:`.eval_command` (``eval``,
by a lookup of policy kinds), :mod:`.commands` (the others) and :mod:`.common` (what they
share).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from meeting_gym.cli.common import EXIT_NOTHING_SCORED, EXIT_USER_ERROR, UserError
from meeting_gym.cli.parser import build_parser, chosen_env

__all__ = ["EXIT_NOTHING_SCORED", "EXIT_USER_ERROR", "UserError", "build_parser", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``meeting-gym`` with ``argv`` (default: the process's); the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(chosen_env(argv))
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
