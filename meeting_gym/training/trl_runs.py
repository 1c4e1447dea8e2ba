"""TRL's trainers as the single-turn pipeline runs them: on the CPU, seeded, logged each step.

``examples/train_grpo.py`` wires these into SFT, GRPO and the held-out table; the loss check
(:mod:`meeting_gym.training.loss_check`) runs the same SFT phase for a few steps, so a library
release that changes training numerics shows in CI the day it is pinned.

* :func:`load` and :func:`save`: a model as the pipelines train it (float32, not marked
  quantized) and a checkpoint ``--policy local --model FOLDER`` reads back.
* :func:`sft_config`, :func:`grpo_config`: TRL's configs, built from one set of shared
  settings (:func:`trainer_settings`).
* :func:`sft_train`: one SFT phase over prompt/completion rows; its loss log.

torch, transformers, TRL and datasets are imported inside the functions that use them.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

__all__ = [
    "grpo_config",
    "load",
    "quiet_trl_deprecations",
    "save",
    "sft_config",
    "sft_train",
    "trainer_settings",
]


def load(name_or_folder: str) -> tuple[Any, Any]:
    """(tokenizer, float32 model) of a name ``resolve_model`` knows, or a saved folder."""
    from meeting_gym.agentkit.local import load_model, resolve_model
    from meeting_gym.training.finetune import trainable

    tokenizer, model = load_model(resolve_model(name_or_folder))
    return tokenizer, trainable(model)


def save(tokenizer: Any, model: Any, folder: Path) -> None:
    """A checkpoint ``--policy local --model FOLDER`` (and :func:`load`) reads."""
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)


def _checkpointing() -> dict[str, Any]:
    """TRL turns activation checkpointing on under its old name, ``gradient_checkpointing``,
    which transformers 5.25 deprecates with a FutureWarning on every config: the same
    setting under the new name where transformers has it."""
    from transformers import TrainingArguments

    fields = TrainingArguments.__dataclass_fields__
    return {"activation_checkpointing": True} if "activation_checkpointing" in fields else {}


def quiet_trl_deprecations() -> None:
    """Hide the FutureWarnings TRL 1.16 triggers by calling transformers' old method names
    (``gradient_checkpointing_enable`` ...): TRL's to fix, and they flood every run's output."""
    warnings.filterwarnings(
        "ignore", message=r"`(is_)?gradient_checkpointing\w*` is deprecated", category=FutureWarning
    )


def trainer_settings(*, bf16: bool, seed: int, progress: bool) -> dict[str, Any]:
    """What SFT and GRPO share: a CPU run, logged every step, nothing saved or reported."""
    return {
        **_checkpointing(),
        "logging_steps": 1,
        "save_strategy": "no",
        "report_to": [],
        "use_cpu": True,
        "bf16": bf16,
        "seed": seed,
        "disable_tqdm": not progress,
    }


def sft_config(
    out: Path,
    *,
    batch: int,
    epochs: float,
    lr: float,
    max_length: int,
    bf16: bool = True,
    seed: int = 0,
    progress: bool = False,
) -> Any:
    """TRL's ``SFTConfig`` for an SFT phase on the CPU: cosine decay, no warm-up."""
    from trl import SFTConfig

    return SFTConfig(
        output_dir=str(out / "sft"),
        per_device_train_batch_size=batch,
        num_train_epochs=epochs,
        learning_rate=lr,
        lr_scheduler_type="cosine",
        warmup_steps=0,  # a warm-up's first step has a learning rate of 0: one step lost
        **trainer_settings(bf16=bf16, seed=seed, progress=progress),
        max_length=max_length,
    )


def grpo_config(
    out: Path,
    *,
    prompts: int,
    group: int,
    max_completion: int,
    steps: int,
    lr: float,
    temperature: float,
    beta: float,
    bf16: bool = True,
    seed: int = 0,
    progress: bool = False,
    **extra: Any,
) -> Any:
    """TRL's ``GRPOConfig`` for a GRPO phase on the CPU; ``extra`` adds settings."""
    from trl import GRPOConfig

    return GRPOConfig(
        output_dir=str(out / "grpo"),
        per_device_train_batch_size=prompts * group,
        num_generations=group,
        max_completion_length=max_completion,
        max_steps=steps,
        learning_rate=lr,
        lr_scheduler_type="constant",
        temperature=temperature,
        beta=beta,
        **trainer_settings(bf16=bf16, seed=seed, progress=progress),
        shuffle_dataset=False,  # the rows are already one fresh item per prompt
        **extra,
    )


def sft_train(tokenizer: Any, model: Any, rows: list[dict[str, Any]], config: Any) -> list[dict]:
    """Fine-tune ``model`` in place on prompt/completion ``rows``; the log's loss entries."""
    from datasets import Dataset
    from trl import SFTTrainer

    trainer = SFTTrainer(
        model=model, args=config, train_dataset=Dataset.from_list(rows), processing_class=tokenizer
    )
    trainer.train()
    return [e for e in trainer.state.log_history if "loss" in e]
