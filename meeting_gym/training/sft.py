"""Supervised fine-tuning on whole episodes, the loss on the assistant's tokens only.

:func:`episode_tokens` renders an episode's messages through the model's chat template
(:func:`~meeting_gym.agentkit.local.chat_ids`, the rendering the local model's prompts use)
and labels only what the assistant wrote: each assistant turn from just after its
``<|im_start|>assistant`` header through the token that stops it (the template's end of
turn). The system prompt, the question and every tool result are read, never learnt
(label ``-100``): the model is not taught to predict what the env says.

:func:`train` is a small loop over such rows (AdamW, cosine schedule, gradient
accumulation, bfloat16 autocast where asked) that saves a checkpoint every ``save_every``
steps and resumes from the last one: a run too long for one sitting goes on where it
stopped, drawing the same batches. torch is imported only by :func:`train`.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

IGNORE = -100
"""The label of a token that carries no loss (PyTorch's cross-entropy ``ignore_index``)."""

__all__ = ["IGNORE", "assistant_spans", "episode_tokens", "finished", "train"]


def assistant_spans(
    tokenizer: Any, messages: list[dict[str, Any]], stop_ids: Sequence[int]
) -> tuple[list[int], list[tuple[int, int]]]:
    """The conversation's token ids and the ``[start, end)`` span of each assistant turn.

    A turn's span starts where the generation prompt before it ends and runs through its
    first stop token. Raises ``ValueError`` when the template does not render the
    conversation as the concatenation of its prompts (a prefix that re-tokenizes
    differently): the labels would then not be what the model generates at evaluation.
    """
    from meeting_gym.agentkit.local import chat_ids

    ids = chat_ids(tokenizer, messages, generation_prompt=False)
    spans: list[tuple[int, int]] = []
    stops = set(stop_ids)
    for k, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        prompt = chat_ids(tokenizer, messages[:k], generation_prompt=True)
        through = chat_ids(tokenizer, messages[: k + 1], generation_prompt=False)
        if ids[: len(prompt)] != prompt or ids[: len(through)] != through:
            raise ValueError(
                f"assistant turn {k}: the chat template does not render the conversation as "
                "its prompts in sequence; its tokens cannot be labelled as generated"
            )
        end = next((i + 1 for i in range(len(prompt), len(through)) if ids[i] in stops), None)
        spans.append((len(prompt), len(through) if end is None else end))
    return ids, spans


def episode_tokens(
    tokenizer: Any,
    messages: list[dict[str, Any]],
    stop_ids: Sequence[int],
    max_length: int | None = None,
) -> dict[str, list[int]]:
    """``input_ids`` and ``labels`` of one episode: labels on the assistant's tokens only.

    Raises ``ValueError`` if the episode is longer than ``max_length`` (a cut episode
    would teach turns without their endings).
    """
    ids, spans = assistant_spans(tokenizer, messages, stop_ids)
    if max_length is not None and len(ids) > max_length:
        raise ValueError(f"the episode is {len(ids)} tokens, over max_length {max_length}")
    labels = [IGNORE] * len(ids)
    for start, end in spans:
        labels[start:end] = ids[start:end]
    return {"input_ids": ids, "labels": labels}


def _batches(n: int, batch: int, epochs: float, seed: int) -> list[list[int]]:
    """Row indices per step: each epoch a fresh seeded shuffle, cut into batches."""
    rng = random.Random(seed)
    steps = max(1, math.ceil(n * epochs / batch))
    order: list[int] = []
    while len(order) < steps * batch:
        epoch = list(range(n))
        rng.shuffle(epoch)
        order.extend(epoch)
    return [order[s * batch : (s + 1) * batch] for s in range(steps)]


def train(
    model: Any,
    rows: Sequence[dict[str, list[int]]],
    out: str | Path,
    *,
    batch: int = 4,
    micro_batch: int = 1,
    epochs: float = 1.0,
    lr: float = 1e-4,
    seed: int = 0,
    bf16: bool = False,
    save_every: int = 0,
    save: Callable[[Any, Path], None] | None = None,
    deadline_s: float | None = None,
    log: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Fine-tune ``model`` in place on token rows (:func:`episode_tokens`); the loss log.

    Each step averages the loss over the labelled tokens of ``batch`` rows, taken
    ``micro_batch`` at a time. Every ``save_every`` steps (and at the end, and when
    ``deadline_s`` seconds have passed) the model (by ``save(model, folder)``), the
    optimizer, the step and the log go to ``out/checkpoint``; a later call with the same
    rows and settings resumes from there and draws the same batches. Returns the log of
    every step, resumed ones included; ``log`` sees each new entry.
    """
    import torch

    out = Path(out)
    checkpoint = out / "checkpoint"
    plan = _batches(len(rows), batch, epochs, seed)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: 0.5 * (1 + math.cos(math.pi * min(s, len(plan)) / len(plan)))
    )
    history: list[dict[str, Any]] = []
    first = 0
    state_file = checkpoint / "trainer_state.pt"
    if state_file.is_file():
        state = torch.load(state_file, weights_only=False)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        history, first = state["history"], state["step"]
    started = time.monotonic()

    def checkpoint_now(step: int) -> None:
        checkpoint.mkdir(parents=True, exist_ok=True)
        torch.save(
            {
                "model": model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(),
                "history": history,
                "step": step,
            },
            state_file,
        )
        if save is not None:
            save(model, checkpoint)

    for step in range(first, len(plan)):
        optimizer.zero_grad(set_to_none=True)
        chosen = [rows[i] for i in plan[step]]
        labelled = sum(sum(1 for t in r["labels"] if t != IGNORE) for r in chosen)
        total = 0.0
        for k in range(0, len(chosen), micro_batch):
            part = chosen[k : k + micro_batch]
            ids, labels, mask = _pad(part, torch)
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                logits, targets = _labelled_logits(model, ids, labels, mask)
            # the summed token loss over the whole step's labelled tokens: every token
            # weighs the same whichever micro-batch it is in
            loss = torch.nn.functional.cross_entropy(
                logits.float(), targets, ignore_index=IGNORE, reduction="sum"
            ) / max(labelled, 1)
            loss.backward()
            total += float(loss.detach())
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        entry = {
            "step": step + 1,
            "loss": round(total, 6),
            "lr": scheduler.get_last_lr()[0],
            "tokens": labelled,
            "seconds": round(time.monotonic() - started, 1),
        }
        history.append(entry)
        if log is not None:
            log(entry)
        last = step + 1 == len(plan)
        late = deadline_s is not None and time.monotonic() - started > deadline_s
        if last or late or (save_every and (step + 1) % save_every == 0):
            checkpoint_now(step + 1)
        if late and not last:
            break
    model.eval()
    (out / "sft_log.json").write_text(json.dumps(history, indent=1))
    return history


def finished(out: str | Path, rows: int, batch: int, epochs: float) -> bool:
    """Whether a :func:`train` run in ``out`` has taken all its steps."""
    log = Path(out) / "sft_log.json"
    if not log.is_file():
        return False
    return len(json.loads(log.read_text())) >= max(1, math.ceil(rows * epochs / batch))


def _labelled_logits(model: Any, ids: Any, labels: Any, mask: Any) -> tuple[Any, Any]:
    """The logits of the positions whose next token is labelled, and those labels.

    For a plain causal LM (a body and an output projection, no logit post-processing) the
    projection runs on the labelled positions only: over a 49,152-token vocabulary the
    logits of every position are most of a step's memory, and a third of its time, on a
    CPU. Any other model runs whole.
    """
    logits, targets, _ = labelled_pass(model, ids, labels, mask=mask)
    return logits, targets


def labelled_pass(
    model: Any, ids: Any, labels: Any, *, mask: Any = None, past: Any = None, cache: bool = False
) -> tuple[Any, Any, Any]:
    """:func:`_labelled_logits` of ``ids`` read after ``past`` (a transformers cache of the
    tokens before them, or None), and the cache of everything read if ``cache``.

    ``labels`` align with ``ids``: the hidden state at position ``t`` is scored on
    ``labels[t + 1]``, so a sequence split in two is scored the same as whole when the
    second part begins with the first part's last token and ``past`` holds the tokens
    before it.
    """
    from meeting_gym.agentkit.kvcache import _cache_keyword

    keep = labels[:, 1:] != IGNORE
    body = getattr(model, getattr(model, "base_model_prefix", "") or "", None)
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    plain = body is not None and head is not None and body is not model
    plain = plain and not getattr(model.config, "final_logit_softcapping", None)
    plain = plain and type(model).__name__.endswith("ForCausalLM")
    extra: dict[str, Any] = {"attention_mask": mask} if mask is not None else {}
    keyword = _cache_keyword(body if plain else model)
    if past is not None or cache:
        extra.update({keyword: past, "use_cache": True})
    if plain:
        out = body(input_ids=ids, **extra)
        logits, targets = head(out.last_hidden_state[:, :-1][keep]), labels[:, 1:][keep]
    else:
        out = model(input_ids=ids, **extra)
        logits = out.logits[:, :-1].reshape(-1, out.logits.shape[-1])
        targets = labels[:, 1:].reshape(-1)
    return logits, targets, (getattr(out, keyword) if cache else None)


def _pad(part: Sequence[dict[str, list[int]]], torch: Any) -> tuple[Any, Any, Any]:
    """Right-padded ``input_ids``, ``labels`` and ``attention_mask`` tensors of a micro-batch."""
    width = max(len(r["input_ids"]) for r in part)
    ids = torch.zeros((len(part), width), dtype=torch.long)
    labels = torch.full((len(part), width), IGNORE, dtype=torch.long)
    mask = torch.zeros((len(part), width), dtype=torch.long)
    for i, r in enumerate(part):
        n = len(r["input_ids"])
        ids[i, :n] = torch.tensor(r["input_ids"])
        labels[i, :n] = torch.tensor(r["labels"])
        mask[i, :n] = 1
    return ids, labels, mask
