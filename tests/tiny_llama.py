"""A small random Llama (transformers' own model code, weights made here) for the LLM tests.

Two layers, seeded: the same weights on every run, so a test of generation or of a training
update checks real forward and backward passes in milliseconds, without a model file.
"""

from __future__ import annotations

from typing import Any


def tiny_llama(vocab: int = 64, *, seed: int = 0, context: int = 256, **config: Any) -> Any:
    """A ``LlamaForCausalLM`` over ``vocab`` tokens: 2 layers of width 32, or as ``config`` says."""
    import torch
    import transformers

    torch.manual_seed(seed)
    settings = {
        "vocab_size": vocab,
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "max_position_embeddings": context,
        **config,
    }
    return transformers.LlamaForCausalLM(transformers.LlamaConfig(**settings))
