"""GRPO over whole episodes: the env's rubric the only reward, tool results never learnt.

One step: every prompt item is played ``group`` times by the model itself, sampled, through
the package's own batched episode loop (:func:`~meeting_gym.evaluation.evaluate.evaluate` with
an :class:`~meeting_gym.agentkit.llm.LLMAgent` over a local client: every episode of the step
is generated together, each turn resuming its own cached prefix). Each episode's return is
the env's grade. Within a group, an episode's advantage is its return's distance from the
group's mean in the group's standard deviations (:func:`advantages`); a group whose returns
do not spread teaches nothing and is counted and dropped (:func:`informative`). The loss is
the policy gradient of those advantages over the assistant's tokens only, the tokens
:func:`~meeting_gym.training.sft.episode_tokens` labels (system prompt, question and tool
results are read, never learnt), averaged over every labelled token of the step (one update
per batch of rollouts, so the importance ratio is 1 and needs no clipping). The rows of one
group are read with their common prefix once (:func:`policy_step`).

The episode is re-rendered from its transcript through the one chat rendering: where the
model's sampled tokens and the re-encoding of their text differ, the re-encoding is learnt
(as TRL does for multi-turn rollouts). torch is imported by :func:`policy_step` only.

An optional KL term (``beta`` > 0) holds the policy near a frozen reference model (the SFT
model): each labelled token adds ``beta * k3``, where ``k3 = exp(d) - d - 1`` and ``d`` is the
reference's log probability of the token less the policy's (the estimator TRL's GRPO uses;
0 where the two agree, and always at least 0). The reference's log probabilities are read
once per step by :func:`reference_logps`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean, pstdev
from typing import Any

from meeting_gym.training.sft import IGNORE, episode_tokens

__all__ = [
    "advantages",
    "branch_groups",
    "informative",
    "policy_rows",
    "policy_step",
    "reference_logps",
    "rollout_groups",
    "shared_length",
]


def advantages(returns: Sequence[float]) -> list[float] | None:
    """Each return's distance from the group mean in group standard deviations.

    None when the returns do not spread (every advantage would be 0).
    """
    spread = pstdev(returns) if len(returns) > 1 else 0.0
    if spread < 1e-9:
        return None
    mean = fmean(returns)
    return [(r - mean) / spread for r in returns]


def informative(groups: Sequence[Sequence[float]]) -> tuple[list[int], int]:
    """The indices of the groups whose returns spread, and how many do not."""
    kept = [k for k, group in enumerate(groups) if advantages(group) is not None]
    return kept, len(groups) - len(kept)


def policy_rows(
    tokenizer: Any,
    transcripts: Sequence[list[dict[str, Any]]],
    weights: Sequence[float],
    stop_ids: Sequence[int],
    groups: Sequence[int] | None = None,
) -> list[dict[str, Any]]:
    """Token rows of episodes with their advantages: ``input_ids``, ``labels``, ``advantage``,
    and ``group`` (the item each was played on) if ``groups`` is given.

    Episodes whose assistant wrote nothing the template labels are left out.
    """
    rows = []
    for k, (messages, weight) in enumerate(zip(transcripts, weights, strict=True)):
        row = episode_tokens(tokenizer, messages, stop_ids)
        if any(label != IGNORE for label in row["labels"]):
            rows.append({**row, "advantage": float(weight)})
            if groups is not None:
                rows[-1]["group"] = groups[k]
    return rows


def shared_length(rows: Sequence[dict[str, Any]]) -> int:
    """How many leading tokens every row has alike, ids and labels both."""
    from meeting_gym.agentkit.kvcache import common_prefix

    first = rows[0]
    n = len(first["input_ids"])
    for r in rows[1:]:
        n = min(
            n,
            common_prefix(r["input_ids"], first["input_ids"]),
            common_prefix(r["labels"], first["labels"]),
        )
    return n


def policy_step(
    model: Any,
    optimizer: Any,
    rows: Sequence[dict[str, Any]],
    *,
    bf16: bool = False,
    share_prefix: bool = True,
    beta: float = 0.0,
    stats: dict[str, float] | None = None,
) -> float:
    """One policy-gradient update on ``rows``; the loss (mean over labelled tokens).

    The loss is ``-sum(advantage * log p(token)) / labelled tokens`` over every labelled
    token of every row: an episode above its group's mean is made more likely, one below
    less, each token weighing the same. Rows are taken one at a time (no padding).

    Rows of one ``group`` share a prefix (the system prompt and question at least; for an
    SFT model whose tool turns match, all but the final answer). With ``share_prefix`` that
    prefix is read once per group, with its gradient, and each row reads only the rest
    after it: the same loss and gradient (the prefix's labelled tokens weigh the sum of
    the group's advantages), for one long forward and backward pass per group instead of
    one per row.

    With ``beta`` > 0 every row needs its ``ref_logp`` (:func:`reference_logps`), and each
    labelled token's loss gains ``beta * k3`` (the module's docstring). ``stats``, if given,
    receives ``kl``: the mean ``k3`` over the labelled tokens, before the update.
    """
    import torch

    if beta > 0 and any("ref_logp" not in r for r in rows):
        raise ValueError("beta > 0 needs every row's ref_logp: call reference_logps first")
    labelled = sum(sum(1 for t in r["labels"] if t != IGNORE) for r in rows)
    if not rows or labelled == 0:
        return 0.0
    model.train()
    optimizer.zero_grad(set_to_none=True)
    by_group = _groups(rows)
    total, kl = 0.0, [0.0]
    for members in by_group.values():
        n = shared_length(members) if share_prefix and len(members) > 1 else 0
        if n >= 2:
            total += _shared_backward(model, members, n, labelled, bf16, beta, kl)
            continue
        for row in members:  # one row's graph at a time
            loss = _row_loss(model, row, None, 0, labelled, bf16, beta, kl)
            loss.backward()
            total += float(loss.detach())
    if stats is not None and all("ref_logp" in r for r in rows):
        stats["kl"] = kl[0] / labelled
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    model.eval()
    return total if math.isfinite(total) else float("nan")


def reference_logps(
    model: Any, rows: Sequence[dict[str, Any]], *, bf16: bool = False, share_prefix: bool = True
) -> None:
    """Give each row its ``ref_logp``: the log probability ``model`` (the frozen reference)
    gives the token at each position, 0.0 where the token carries no label.

    Rows of one ``group`` have their common prefix read once, as :func:`policy_step` does.
    """
    import torch
    from transformers.cache_utils import DynamicCache

    from meeting_gym.agentkit.kvcache import _layer_kv

    by_group = _groups(rows)
    was_training = model.training
    model.eval()
    with torch.no_grad():
        for members in by_group.values():
            n = shared_length(members) if share_prefix and len(members) > 1 else 0
            head: list[float] = []
            past_kv: list[Any] = []
            if n >= 2:
                head, cache = _scored(model, members[0], 0, n, None, bf16, keep=True)
                past_kv = [t[:, :, : n - 1] for pair in _layer_kv(cache) for t in pair]
            for row in members:
                if n >= 2:
                    past = DynamicCache(list(zip(past_kv[::2], past_kv[1::2], strict=True)))
                    end = len(row["input_ids"])
                    rest = _scored(model, row, n - 1, end, past, bf16)[0] if end > n else []
                    row["ref_logp"] = [0.0, *head, *rest]
                else:
                    scored = _scored(model, row, 0, len(row["input_ids"]), None, bf16)[0]
                    row["ref_logp"] = [0.0, *scored]
    model.train(was_training)


def _groups(rows: Sequence[dict[str, Any]]) -> dict[Any, list[dict[str, Any]]]:
    """The rows by their ``group``; a row without one is a group of its own."""
    by_group: dict[Any, list[dict[str, Any]]] = {}
    for k, row in enumerate(rows):
        by_group.setdefault(row.get("group", ("alone", k)), []).append(row)
    return by_group


def _token_logp(
    model: Any, row: dict[str, Any], start: int, end: int, past: Any, bf16: bool, keep=False
) -> tuple[Any, Any]:
    """The log probabilities of the labelled tokens among positions ``start + 1`` to
    ``end - 1`` of ``row``, read after ``past`` (a cache of the tokens before ``start``);
    and the cache of everything read if ``keep``."""
    import torch

    from meeting_gym.training.sft import labelled_pass

    ids = torch.tensor([row["input_ids"][start:end]])
    labels = torch.tensor([row["labels"][start:end]])
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        logits, targets, cache = labelled_pass(model, ids, labels, past=past, cache=keep)
    logp = torch.log_softmax(logits.float(), dim=-1).gather(1, targets[:, None]).squeeze(1)
    return logp, cache


def _scored(
    model: Any, row: dict[str, Any], start: int, end: int, past: Any, bf16: bool, keep=False
) -> tuple[list[float], Any]:
    """:func:`_token_logp` as a list over positions ``start + 1`` to ``end - 1``, 0.0 for
    the unlabelled; and the cache if ``keep``."""
    logp, cache = _token_logp(model, row, start, end, past, bf16, keep)
    picked = iter(logp.tolist())
    out = [next(picked) if row["labels"][t] != IGNORE else 0.0 for t in range(start + 1, end)]
    return out, cache


def _row_loss(
    model: Any,
    row: dict[str, Any],
    past: Any,
    start: int,
    labelled: int,
    bf16: bool,
    beta: float = 0.0,
    kl: list[float] | None = None,
):
    """``-advantage * log p`` (plus ``beta * k3``) of a row's labelled tokens from ``start``
    on, over ``labelled``; ``past`` caches the tokens before ``start``."""
    logp, _ = _token_logp(model, row, start, len(row["input_ids"]), past, bf16)
    loss = -(row["advantage"] * logp.sum()) / labelled
    return loss + _kl_term(row, start, len(row["input_ids"]), logp, 1, labelled, beta, kl)


def _kl_term(
    row: dict[str, Any],
    start: int,
    end: int,
    logp: Any,
    copies: int,
    labelled: int,
    beta: float,
    kl: list[float] | None,
):
    """``beta * copies * sum(k3) / labelled`` over the labelled tokens of positions
    ``start + 1`` to ``end - 1`` (those ``logp`` scores); ``kl[0]`` gains ``copies * sum(k3)``.
    0 when the row has no reference log probabilities."""
    import torch

    if "ref_logp" not in row:
        return 0.0
    labels = row["labels"]
    ref = [row["ref_logp"][t] for t in range(start + 1, end) if labels[t] != IGNORE]
    d = torch.tensor(ref, dtype=logp.dtype) - logp
    k3 = (torch.exp(d) - d - 1).sum()
    if kl is not None:
        kl[0] += copies * float(k3.detach())
    return beta * copies * k3 / labelled if beta > 0 else 0.0


def _shared_backward(
    model: Any,
    members: list[dict[str, Any]],
    n: int,
    labelled: int,
    bf16: bool,
    beta: float = 0.0,
    kl: list[float] | None = None,
) -> float:
    """Back-propagate a group's loss with its first ``n`` tokens (alike in every row) read
    once; the loss.

    The prefix pass scores the labelled tokens among the first ``n`` once, weighted by the
    sum of the advantages. Each row then reads from token ``n - 1`` on after the keys and
    values of the prefix's first ``n - 1`` tokens, taken as leaves: its backward pass stops
    there, adding to their gradients, and frees its graph before the next row's. One
    backward pass through the prefix then carries those gradients on, so the parameters'
    gradient is the one the rows read whole would give, while memory holds the prefix and
    one row at a time.
    """
    import torch
    from transformers.cache_utils import DynamicCache

    from meeting_gym.agentkit.kvcache import _layer_kv

    logp, cache = _token_logp(model, members[0], 0, n, None, bf16, keep=True)
    weight = sum(row["advantage"] for row in members)
    prefix_loss = -(weight * logp.sum()) / labelled
    # every row holds the prefix's tokens: their KL counts once for each
    prefix_loss = prefix_loss + _kl_term(members[0], 0, n, logp, len(members), labelled, beta, kl)
    kept = [t[:, :, : n - 1] for pair in _layer_kv(cache) for t in pair]
    leaves = [t.detach().requires_grad_() for t in kept]
    total = float(prefix_loss.detach())
    for row in members:
        if len(row["input_ids"]) > n:  # a row no longer than the prefix has nothing left
            # a fresh cache per row over the same leaves: each pass appends its own tokens
            past = DynamicCache(list(zip(leaves[::2], leaves[1::2], strict=True)))
            loss = _row_loss(model, row, past, n - 1, labelled, bf16, beta, kl)
            loss.backward()
            total += float(loss.detach())
    reached = [
        (t, leaf.grad) for t, leaf in zip(kept, leaves, strict=True) if leaf.grad is not None
    ]
    torch.autograd.backward(
        [prefix_loss, *(t for t, _ in reached)],
        [torch.ones_like(prefix_loss), *(g for _, g in reached)],
    )
    return total


@dataclass(frozen=True)
class Sampling:
    """How a GRPO step plays its episodes: what the model is told, the env's and the
    reply's caps, and the sampler (``seed`` seeds a step's local client once)."""

    system_prompt: str | None
    max_turns: int
    max_tokens: int
    temperature: float = 1.0
    seed: int = 0


def rollout_groups(
    pair: tuple[Any, Any],
    env_id: str,
    items: Sequence[Any],
    group: int,
    sampling: Sampling,
    *,
    batch: int | None = None,
    progress: Any = None,
) -> list[list[Any]]:
    """Play each item ``group`` times with the model of ``pair`` (tokenizer, model), sampled.

    Every episode of the call is generated together (at most ``batch`` at once, default
    all) through a fresh local client: a client's cache holds keys and values of the
    weights it was made with, so one made before an update must not serve after it.
    ``progress`` (a :class:`~meeting_gym.evaluation.chat.LocalProgress`) is kept up to date with
    the episodes, turns and tokens as they are played.
    Returns the results (with transcripts) grouped by item, in item order.
    """
    from meeting_gym.evaluation.chat import evaluate_local

    results = evaluate_local(
        pair,
        "policy",
        items,
        env=env_id,
        batch=batch or len(items) * group,
        max_tokens=sampling.max_tokens,
        system_prompt=sampling.system_prompt,
        temperature=sampling.temperature,
        seed=sampling.seed,
        rollouts=group,
        max_turns=sampling.max_turns,
        progress=progress,
    )
    return [results[k * group : (k + 1) * group] for k in range(len(items))]


def branch_groups(
    pair: tuple[Any, Any],
    env_id: str,
    items: Sequence[Any],
    group: int,
    sampling: Sampling,
    *,
    progress: Any = None,
) -> tuple[list[Any], list[list[Any]]]:
    """Each item played once greedily, then ``group`` times from that episode's last turn on.

    The group's episodes open with the greedy episode's turns but its last (the tool turns,
    for a model that answers in its last turn), as scripted replies, and are sampled from
    there to their end: a group's returns then differ by what the model does with the same
    tool results, and its episodes share everything before the branch, which the update
    reads once (:func:`policy_step`). Both passes run in one local client, whose cache
    holds the greedy episodes' keys and values, so the branches do not read their prefix
    again. ``progress`` (a :class:`~meeting_gym.evaluation.chat.LocalProgress` of
    ``len(items) * (group + 1)`` episodes) is kept up to date as both passes play.
    Returns (the greedy results, the sampled results grouped by item).
    """
    from meeting_gym.agentkit.llm import RetryPolicy
    from meeting_gym.agentkit.local import LocalChatClient
    from meeting_gym.core.splits import make_task
    from meeting_gym.evaluation.chat import evaluate_llm

    id_key = make_task(env_id).id_key
    common: dict[str, Any] = {
        "env": env_id,
        "tool_protocol": "text",
        "max_tokens": sampling.max_tokens,
        "retry": RetryPolicy(attempts=1),
        "system_prompt": sampling.system_prompt,
        "max_turns": sampling.max_turns,
        "seed": sampling.seed,
    }
    if progress is not None:
        common["on_episode"] = lambda *_: progress.episode_done()
    on_progress = progress.update if progress is not None else None
    with LocalChatClient(
        pair, batch_size=len(items) * group, seed=sampling.seed, on_progress=on_progress
    ) as client:
        greedy = evaluate_llm(
            client, "policy", items, temperature=0.0, max_concurrent=len(items), **common
        )
        openings: dict[Any, list[str]] = {}
        for result in greedy:
            transcript = result.extra.get("transcript") or []
            replies = [str(m.get("content") or "") for m in transcript if m["role"] == "assistant"]
            openings[result.item_id] = replies[:-1]
        sampled = evaluate_llm(
            client,
            "policy",
            items,
            temperature=sampling.temperature,
            max_concurrent=len(items) * group,
            rollouts=group,
            opening=lambda info: openings.get(info.get(id_key)),
            **common,
        )
    if progress is not None:
        progress.close()
    return greedy, [sampled[k * group : (k + 1) * group] for k in range(len(items))]
