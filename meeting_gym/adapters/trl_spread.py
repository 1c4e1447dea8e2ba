"""Dynamic sampling for TRL's GRPOTrainer: train on groups whose rewards spread.

GRPO learns nothing from a group whose completions all earn the same reward: every
advantage is 0. With a binary reward (CronSchedule: right or wrong), about half of the
groups can be like that. DAPO's remedy is dynamic sampling: generate more groups and keep
the ones with spread. :func:`keep_spread` does that on a ``GRPOTrainer``: after each
generation batch, the groups without spread are replaced by groups of fresh items (from
``more_rows``, e.g. the next draws of a curriculum), generated and scored by the trainer
itself, up to ``extra_groups`` more groups per batch. If that budget runs out, the batch
is filled up with the flat groups it dropped, so its size never changes (they train as
they would have: at zero advantage).

Each generated group is also scored by the trainer's reward functions, so a curriculum's
reward wrapper hears about every group, kept or not. :class:`SpreadCounts` keeps the
counts: groups generated and trained, and how many of each had no spread.

One process only (the trainer's batch is the process's batch). Written against the keys
of TRL 1.x's generation output; an unknown per-token key stops with an error naming it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["SpreadCounts", "keep_spread"]

# what a generation output holds per completion, by how it is padded
LEFT_PADDED = ("prompt_ids", "prompt_mask")
RIGHT_PADDED = (
    "completion_ids",
    "completion_mask",
    "old_per_token_logps",
    "ref_per_token_logps",
    "sampling_per_token_logps",
    "importance_sampling_ratio",
    "tool_mask",
)


@dataclass
class SpreadCounts:
    """Groups generated and trained by a :func:`keep_spread` trainer, and the flat ones."""

    generated: int = 0
    generated_flat: int = 0
    trained: int = 0
    trained_flat: int = 0
    extra_generations: int = 0

    def as_dict(self) -> dict[str, Any]:
        """The counts, with the flat shares of generated and trained groups."""
        out: dict[str, Any] = asdict(self)
        generated, trained = self.generated or None, self.trained or None
        out["generated_flat_share"] = generated and self.generated_flat / generated
        out["trained_flat_share"] = trained and self.trained_flat / trained
        return out


def keep_spread(
    trainer: Any, more_rows: Callable[[int], list[dict[str, Any]]], extra_groups: int
) -> SpreadCounts:
    """Make ``trainer`` (a ``GRPOTrainer``) replace its flat groups with fresh ones.

    ``more_rows(n)`` returns ``n`` new dataset rows (one per new group); at most
    ``extra_groups`` of them are generated per generation batch. Returns the counts, kept
    up to date as the trainer runs.
    """
    import torch

    if extra_groups < 0:
        raise ValueError(f"extra_groups must be 0 or more, got {extra_groups!r}")
    if getattr(trainer.accelerator, "num_processes", 1) != 1:
        raise ValueError("keep_spread works in one process only")
    size = trainer.num_generations
    pad = trainer.processing_class.pad_token_id
    generate = trainer._generate_and_score_completions
    counts = SpreadCounts()

    def spread(out: dict[str, Any]) -> torch.Tensor:
        # a group spreads when its advantages are not all 0 (its rewards are not all equal)
        return out["advantages"].view(-1, size).abs().sum(dim=1) > 0

    def generate_with_spread(inputs: list[dict[str, Any]]) -> dict[str, Any]:
        if not trainer.model.training:  # evaluation batches are left as they are
            return generate(inputs)
        out = generate(inputs)
        wanted = len(inputs) // size
        kept_mask = spread(out)
        counts.generated += wanted
        counts.generated_flat += int((~kept_mask).sum())
        parts = [_groups(out, kept_mask, size)]
        have, extra = int(kept_mask.sum()), 0
        while have < wanted and extra < extra_groups:
            n = min(wanted - have, extra_groups - extra)
            fresh = [row for row in more_rows(n) for _ in range(size)]
            more = generate(fresh)
            more_mask = spread(more)
            counts.generated += n
            counts.generated_flat += int((~more_mask).sum())
            counts.extra_generations += 1
            take = more_mask & (torch.cumsum(more_mask.long(), 0) <= wanted - have)
            parts.append(_groups(more, take, size))
            have += int(take.sum())
            extra += n
        if have < wanted:  # the budget ran out: fill up with the flat groups, as before
            flat = (~kept_mask).nonzero().flatten()[: wanted - have]
            fill = torch.zeros_like(kept_mask)
            fill[flat] = True
            parts.append(_groups(out, fill, size))
            counts.trained_flat += len(flat)
        counts.trained += wanted
        return _concat(parts, pad)

    trainer._generate_and_score_completions = generate_with_spread
    return counts


def _groups(out: dict[str, Any], groups: Any, size: int) -> dict[str, Any]:
    """The completions of the chosen groups (a boolean mask over groups) of one output."""
    rows = groups.repeat_interleave(size)
    picked: dict[str, Any] = {}
    for key, value in out.items():
        if key == "num_items_in_batch" or value is None:
            picked[key] = value
        elif hasattr(value, "shape") and value.ndim >= 1 and value.shape[0] == rows.shape[0]:
            picked[key] = value[rows]
        elif isinstance(value, list) and len(value) == rows.shape[0]:
            picked[key] = [v for v, keep in zip(value, rows.tolist(), strict=True) if keep]
        else:
            picked[key] = value
    return picked


def _concat(parts: list[dict[str, Any]], pad: int) -> dict[str, Any]:
    """One generation output from several, each tensor padded to the longest."""
    import torch

    out: dict[str, Any] = {}
    for key, first in parts[0].items():
        values = [part[key] for part in parts]
        if key == "num_items_in_batch" or first is None:
            out[key] = first
        elif isinstance(first, torch.Tensor) and first.ndim == 1:
            out[key] = torch.cat(values)
        elif isinstance(first, torch.Tensor) and first.ndim >= 2:
            if key not in LEFT_PADDED + RIGHT_PADDED:
                raise ValueError(f"keep_spread does not know how to pad {key!r}")
            width = max(v.shape[1] for v in values)
            fill = pad if key.endswith("_ids") else 0
            padded = []
            for v in values:
                extra = v.new_full((v.shape[0], width - v.shape[1], *v.shape[2:]), fill)
                padded.append(torch.cat([extra, v] if key in LEFT_PADDED else [v, extra], dim=1))
            out[key] = torch.cat(padded)
        elif isinstance(first, list):
            out[key] = [v for value in values for v in value]
        else:
            out[key] = first
    # the loss is normalised by the completion tokens of the batch actually trained
    given = out.get("num_items_in_batch")
    if given is not None:
        total = out["completion_mask"].sum()
        out["num_items_in_batch"] = total.to(given.dtype) if hasattr(given, "dtype") else int(total)
    return out
