"""What the ``meeting-gym`` commands share: argument types, the env's settings and items,
its modes and policies, reset options of an item, and ``--out`` files."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from meeting_gym.agents.policies import policy_names
from meeting_gym.core.registry import task_class

EXIT_USER_ERROR = 2
EXIT_NOTHING_SCORED = 1


class UserError(ValueError):
    """A mistake in the command line or its inputs: reported in one line."""


def _integer(text: str, least: int, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"must be {what}, got {value}")
    return value


def nonnegative(text: str) -> int:
    """An argparse type: an integer at least 0."""
    return _integer(text, 0, "non-negative")


def positive(text: str) -> int:
    """An argparse type: an integer at least 1 (-3 and 0 alike: -n 0 passed, then selected
    nothing)."""
    return _integer(text, 1, "at least 1")


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a non-negative number of seconds, got {text}")
    return value


def env_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The chosen env's own settings given on the command line (as gym.make kwargs)."""
    return {
        s.name: getattr(args, s.name)
        for s in task_class(args.env).settings
        if getattr(args, s.name, None) is not None
    }


def items_of(args: argparse.Namespace, task: Any) -> list[Any]:
    from meeting_gym.core.splits import DEFAULT_SIZES, MAX_EVAL_ITEMS, load_split, split_item

    start = getattr(args, "skip", 0)

    def note(text: str) -> None:  # one plain line, not Python's warning format
        print(f"meeting-gym: note: {text}", file=sys.stderr)

    if not start:
        items = load_split(
            args.split, n=args.n, seed=args.seed, difficulty=args.difficulty, env=task, note=note
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
    if not items:
        what = f"split {args.split!r}"
        if args.difficulty is not None:
            what += f" with difficulty {args.difficulty!r}"
        if start:
            what += f" from index {start}"
        raise UserError(f"{what} of {args.env} has no items: nothing to evaluate")
    return items


def modes_of(env_id: str) -> tuple[str, ...]:
    """The interfaces ``env_id`` offers (``mode=`` of ``gym.make``), e.g. ``("text",)``."""
    return tuple(env_class(env_id).modes)


def policy_choices(env_id: str) -> str:
    names = list(policy_names(env_id))
    if "discrete" in modes_of(env_id):  # a saved MaskablePPO acts through the discrete mode
        names.append("ppo:PATH")
    return ", ".join([*names, "openai", "local"])


def check_mode(env_id: str, mode: str, policy: str) -> None:
    """A one-line error when ``env_id`` has no ``mode`` (the mode ``policy`` needs)."""
    modes = modes_of(env_id)
    if mode in modes:
        return
    offered = (
        f"its only mode is {modes[0]}" if len(modes) == 1 else f"its modes: {', '.join(modes)}"
    )
    if policy.startswith("ppo:") and mode == "discrete":
        raise UserError(
            f"{env_id} has no discrete mode ({offered}), and a ppo:PATH policy needs one; "
            f"choose one of {policy_choices(env_id)}"
        )
    raise UserError(f"{env_id} has no {mode} mode ({offered})")


def split_options(args: argparse.Namespace, index: int) -> dict[str, Any]:
    """The reset options that address item ``index`` of the evaluated items (past the
    ``--skip`` ones: item ``skip + index`` of the split)."""
    index += getattr(args, "skip", 0)
    options: dict[str, Any] = {"split": args.split, "index": index, "split_seed": args.seed}
    if args.difficulty is not None:
        options["difficulty"] = args.difficulty
    return options


def env_class(env_id: str) -> Any:
    """The env class registered for ``env_id`` (imports its module)."""
    import gymnasium

    from meeting_gym.core.registry import load_object

    entry_point = gymnasium.spec(env_id).entry_point
    return load_object(entry_point) if isinstance(entry_point, str) else entry_point


def open_out(path: str) -> Any:
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
