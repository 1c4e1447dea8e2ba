"""A tiny randomly initialised chat model and TRL settings for a few CPU steps, built
offline, and the rule by which GRPOTrainer finds an environment's tools: shared by the
TRL adapter's tests in process and over OpenEnv."""

from __future__ import annotations

import inspect

from meeting_gym.adapters import trl as adapter


def trl_methods(instance) -> dict:
    """The tools GRPOTrainer finds on an environment instance (its own rule)."""
    return {
        name: getattr(instance, name)
        for name, _ in inspect.getmembers(type(instance), predicate=inspect.isfunction)
        if name not in ("reset", "get_reward") and not name.startswith("_")
    }


def tiny_qwen3(tmp_path):
    """A randomly initialised Qwen3-style causal LM and a byte-level tokenizer, built offline.

    The tokenizer carries TRL's own copy of the Qwen3 chat template, so TRL recognises it,
    renders the tools and parses tool calls as it does for the real model.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM
    from trl.chat_template_utils import qwen3_chat_template

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>"]
    specials += ["<tool_response>", "</tool_response>", "<think>", "</think>"]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    corpus = [row["prompt"][0]["content"] for row in adapter.rows("MeetingSlot-v0", "curated")]
    trainer = trainers.BpeTrainer(
        vocab_size=600,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(corpus, trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>"
    )
    tokenizer.chat_template = qwen3_chat_template
    tokenizer.padding_side = "left"
    config = Qwen3Config(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=16,
        max_position_embeddings=8192,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    return Qwen3ForCausalLM(config), tokenizer


def tiny_grpo_config(tmp_path, **settings):
    """A GRPOConfig for a few CPU steps of the tiny model: groups of two, nothing saved."""
    import trl

    return trl.GRPOConfig(
        output_dir=str(tmp_path / "grpo"),
        num_generations=2,
        learning_rate=1e-4,
        logging_steps=1,
        report_to="none",
        use_cpu=True,
        bf16=False,
        save_strategy="no",
        **settings,
    )


def tiny_tool_run(tmp_path):
    """(model, tokenizer, config) for two seeded GRPO steps of the tiny model with tool calls:
    groups of two, 24 tokens a completion, at most two tool rounds."""
    import torch

    torch.manual_seed(0)
    model, tokenizer = tiny_qwen3(tmp_path)
    config = tiny_grpo_config(
        tmp_path,
        per_device_train_batch_size=2,
        max_completion_length=24,
        max_steps=2,
        max_tool_calling_iterations=2,
    )
    return model, tokenizer, config
