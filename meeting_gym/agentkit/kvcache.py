"""Multi-turn generation that never re-reads a conversation: keys and values kept per prefix.

An episode's turn ``k`` sends the whole conversation again: the system prompt, the question,
every earlier reply and tool result. Without a cache the model re-reads all of it each turn
(MeetingSlot: 13,170 prompt tokens read for 395 generated over two five-turn episodes). Here
the keys and values of every sequence the model has read or written are kept
(:class:`PrefixCache`), and a new prompt reads only what follows the longest prefix some kept
sequence shares with it: the previous turn's reply and the new tool result, or, on a first
turn, what follows the system prompt another episode already read.

:func:`generate` runs one batch of prompts, each resuming its own cached prefix, in one
forward pass per token: rows are aligned on the right, and what a row does not own (the
left padding of a shorter cache, the padding of a shorter new chunk, the steps after a row
stopped) is masked out of attention, with each row's positions counted over its own tokens
only. A row therefore computes what it would compute alone, and its greedy reply is the one
the uncached path gives (``meeting_gym.bench_local`` checks the replies side by side).

Nothing here is imported unless a local model runs with its cache on; it needs torch, and
a model whose ``forward`` takes ``attention_mask``, ``position_ids`` and a transformers
``DynamicCache`` (every decoder-only model of transformers).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

DEFAULT_DRAFT = 8
"""Tokens drafted per row and step by prompt lookup (:class:`Drafter`), greedy decoding only."""
STEP_TOKENS = 24
"""Tokens one decoding step reads at most across rows, drafts included.

A step's cost is the weights' read while it reads few tokens, then grows with them. On the
2-core CPU of the benchmarks page, two greedy MeetingSlot episodes (2 rows of 1 + 8, 18
tokens a step) ran 2.40x faster with drafts than without, while sixteen (16 rows of 1 + 3,
64 tokens a step, at the old budget of 72) ran 1.25x slower, with the same replies
(``python -m meeting_gym.bench_local --modes nodraft,continuous``). So a row's draft is cut
to share 24 tokens: whole drafts for 2 rows, 2 tokens each for 8, none from 13 rows up
until rows end."""
DEFAULT_BUDGET_BYTES = 2 * 1024**3
"""Keys and values kept at most (2 GiB): SmolLM2-135M keeps 46 KB a token, so about 45,000
tokens, a batch of 16 MeetingSlot episodes of 2,800 tokens each."""


@dataclass
class Entry:
    """A sequence the model has read: its token ids and, per layer, its keys and values.

    ``layers[i]`` is ``(keys, values)``, each ``(heads, len(tokens), head_dim)``.
    """

    tokens: list[int]
    layers: list[tuple[Any, Any]]
    used: int = 0

    @property
    def nbytes(self) -> int:
        return sum(k.nelement() * k.element_size() * 2 for k, _ in self.layers)


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """The length of the longest common prefix of ``a`` and ``b``."""
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


@dataclass
class PrefixCache:
    """Kept sequences, found by the longest prefix they share with a prompt.

    Entries are never changed once stored: a prompt that resumes one takes a copy of the
    part it shares. A stored sequence replaces those that are prefixes of it (the previous
    turn of the same episode); past ``budget_bytes`` the least recently used go.
    """

    budget_bytes: int = DEFAULT_BUDGET_BYTES
    entries: list[Entry] = field(default_factory=list)
    clock: int = 0

    def match(self, tokens: Sequence[int]) -> tuple[Entry | None, int]:
        """The entry sharing the longest prefix with ``tokens`` and how many tokens it shares.

        At most ``len(tokens) - 1``: the last prompt token is always read, since its output
        is the first reply token's distribution.
        """
        best, length = None, 0
        for entry in self.entries:
            shared = common_prefix(entry.tokens, tokens)
            if shared > length:
                best, length = entry, shared
        length = min(length, len(tokens) - 1)
        if best is None or length <= 0:
            return None, 0
        self.clock += 1
        best.used = self.clock
        return best, length

    def store(self, entry: Entry) -> None:
        """Keep ``entry``; drop what it extends, then the least recently used past the budget."""
        self.entries = [
            e
            for e in self.entries
            if not (
                len(e.tokens) <= len(entry.tokens)
                and common_prefix(e.tokens, entry.tokens) == len(e.tokens)
            )
        ]
        self.clock += 1
        entry.used = self.clock
        self.entries.append(entry)
        total = sum(e.nbytes for e in self.entries)
        self.entries.sort(key=lambda e: e.used)
        while total > self.budget_bytes and len(self.entries) > 1:
            total -= self.entries.pop(0).nbytes

    @property
    def tokens(self) -> int:
        """Tokens kept, over every entry."""
        return sum(len(e.tokens) for e in self.entries)


@dataclass
class Output:
    """One row's reply: its tokens (without the stop token), why it ended, tokens read anew."""

    tokens: list[int]
    finish: str
    read: int
    reused: int


def _layer_kv(cache: Any) -> list[tuple[Any, Any]]:
    """Per layer ``(keys, values)`` of a transformers ``DynamicCache``."""
    layers = getattr(cache, "layers", None)
    if layers is not None:
        return [(layer.keys, layer.values) for layer in layers]
    return list(zip(cache.key_cache, cache.value_cache, strict=True))  # older transformers


def _growing_cache(model: Any, capacity: int) -> Any:
    """A transformers cache whose layers write into buffers of ``capacity`` positions.

    transformers' ``DynamicCache`` concatenates each step's keys and values onto the
    whole cache: a batch of eight 1,500-token episodes copies 550 MB a token. These layers
    allocate once (growing by doubling if ever asked for more) and write in place.
    """
    from transformers.cache_utils import Cache, DynamicLayer

    class GrowingLayer(DynamicLayer):
        def lazy_initialization(self, key_states: Any, value_states: Any) -> None:
            super().lazy_initialization(key_states, value_states)
            self.length = 0
            self.buffers: tuple[Any, Any] | None = None

        def update(self, key_states: Any, value_states: Any, *args: Any, **kwargs: Any) -> Any:
            if not self.is_initialized:
                self.lazy_initialization(key_states, value_states)
            end = self.length + key_states.shape[-2]
            if self.buffers is None or end > self.buffers[0].shape[-2]:
                size = max(end, capacity, 2 * self.length)
                grown = []
                for old, new in zip(
                    self.buffers or (None, None), (key_states, value_states), strict=True
                ):
                    shape = (*new.shape[:2], size, new.shape[-1])
                    buffer = new.new_empty(shape)
                    if old is not None:
                        buffer[:, :, : self.length] = old[:, :, : self.length]
                    grown.append(buffer)
                self.buffers = (grown[0], grown[1])
            keys, values = self.buffers
            keys[:, :, self.length : end] = key_states
            values[:, :, self.length : end] = value_states
            self.length = end
            self.keys, self.values = keys[:, :, :end], values[:, :, :end]
            return self.keys, self.values

        def get_seq_length(self) -> int:
            return self.length if self.is_initialized else 0

        def keep_rows(self, index: Any) -> None:
            """Only the batch rows ``index`` stay (copied into buffers of the same size)."""
            if self.buffers is None:
                return
            kept = []
            for buffer in self.buffers:
                new = buffer.new_empty((len(index), *buffer.shape[1:]))
                new[:, :, : self.length] = buffer[:, :, : self.length].index_select(0, index)
                kept.append(new)
            self.buffers = (kept[0], kept[1])
            self.keys = kept[0][:, :, : self.length]
            self.values = kept[1][:, :, : self.length]

    return Cache(layer_class_to_replicate=GrowingLayer)


def _cache_keyword(model: Any) -> str:
    """``cache`` (transformers 5.24 on), else ``past_key_values``: the forward's cache keyword."""
    import inspect

    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


@dataclass
class _Row:
    """One prompt in a running batch: what it has generated and what the cache holds of it."""

    index: int  # its place among the prompts (and the outputs)
    prompt: list[int]
    shared: int  # prompt tokens resumed from the prefix cache
    budget: int
    drafter: Drafter | None
    generated: list[int] = field(default_factory=list)
    fed: list[int] = field(default_factory=list)  # generated tokens the cache holds
    finish: str = "length"
    active: bool = True
    width: int = 1  # tokens it feeds in the current step (0: none)

    @property
    def output(self) -> Output:
        return Output(self.generated, self.finish, len(self.prompt) - self.shared, self.shared)


def generate(
    model: Any,
    prompts: Sequence[Sequence[int]],
    *,
    cache: PrefixCache,
    max_tokens: Sequence[int],
    stop_ids: Sequence[int],
    pad_id: int,
    temperature: float = 0.0,
    draft_tokens: int = DEFAULT_DRAFT,
    step_tokens: int = STEP_TOKENS,
    on_step: Callable[[int], None] | None = None,
    on_finish: Callable[[int, Output], None] | None = None,
    pause: Callable[[int, int], bool] | None = None,
    retire: bool = True,
) -> list[Output]:
    """Continue each prompt, resuming its cached prefix; keep every row's sequence after.

    Greedy where ``temperature`` is 0, else sampled from the softmax at that temperature
    (torch's global generator: seed it for a repeatable draw). ``on_step(tokens)`` is called
    after each decoding step with the tokens generated so far in the batch. Drafts are cut
    so that a step reads at most ``step_tokens`` tokens across its active rows.

    A batch does not wait for its longest reply (continuous batching, in two parts):

    * a row that ends (a stop token or its budget) is handed to ``on_finish(i, output)``
      at once, so its caller can go on (an episode steps its env and asks its next turn)
      while the others generate; once half the rows have ended, their sequences are kept
      and they leave the batch, so the rows still running no longer pay for them
      (``retire=False`` keeps every row to the end, as a static batch does);
    * ``pause(active, steps)``, asked after each step with the rows still running and the
      steps taken, ends the batch early when it returns True: each running row comes back
      with finish ``"paused"`` and the tokens so far, and its sequence is kept, so a call
      with the prompt extended by those tokens (and the budget less them) goes on where it
      stopped, reading one token anew, together with requests that arrived meanwhile.
    """
    import torch

    matches = [cache.match(p) for p in prompts]
    rows = [
        _Row(index, list(p), n, budget, Drafter(p, draft_tokens) if temperature == 0 else None)
        for index, (p, (_, n), budget) in enumerate(zip(prompts, matches, max_tokens, strict=True))
    ]
    fresh = [row.prompt[row.shared :] for row in rows]
    width_cached, width_new = max(row.shared for row in rows), max(len(f) for f in fresh)
    batch = len(rows)

    capacity = width_cached + width_new + max(max_tokens)
    past = _growing_cache(model, capacity)
    if width_cached:
        reference = next(e for e, n in matches if e is not None and n == width_cached)
        for layer, (k0, v0) in enumerate(reference.layers):
            heads, _, dim = k0.shape
            keys = k0.new_zeros((batch, heads, width_cached, dim))
            values = v0.new_zeros((batch, heads, width_cached, dim))
            for r, (entry, n) in enumerate(matches):
                if entry is not None and n:
                    keys[r, :, width_cached - n :] = entry.layers[layer][0][:, :n]
                    values[r, :, width_cached - n :] = entry.layers[layer][1][:, :n]
            past.update(keys, values, layer)

    ids = torch.full((batch, width_new), pad_id, dtype=torch.long)
    mask = torch.zeros((batch, width_cached + width_new), dtype=torch.long)
    positions = torch.zeros((batch, width_new), dtype=torch.long)
    for r, (row, new) in enumerate(zip(rows, fresh, strict=True)):
        start = width_new - len(new)
        ids[r, start:] = torch.tensor(new, dtype=torch.long)
        mask[r, width_cached - row.shared : width_cached] = 1
        mask[r, width_cached + start :] = 1
        positions[r, start:] = torch.arange(row.shared, row.shared + len(new))

    def end(row: _Row, finish: str) -> None:
        row.active, row.finish = False, finish
        if on_finish is not None:
            on_finish(row.index, row.output)

    def emit(row: _Row, tokens: list[int]) -> None:
        for token in tokens:
            if token in stop_ids:
                return end(row, "stop")
            row.generated.append(token)
            if row.drafter is not None:
                row.drafter.append(token)
            if len(row.generated) >= row.budget:
                return end(row, "length")  # its last token is kept unread: nothing follows

    for row in rows:
        if row.budget <= 0:
            end(row, "length")
    cache_name = _cache_keyword(model)
    live = list(rows)  # the rows in the batch's tensors: live[slot]
    fed_mask = mask  # the attention mask of what the cache holds
    step_ids, step_positions = ids, positions
    with torch.inference_mode():
        first, steps = True, 0
        while True:
            out = model(
                input_ids=step_ids,
                attention_mask=fed_mask,
                position_ids=step_positions,
                use_cache=True,
                # a prompt's last position only; a draft step's every position
                logits_to_keep=1 if first else step_ids.shape[1],
                **{cache_name: past},
            )
            past = getattr(out, cache_name)
            logits = out.logits.float()
            width = step_ids.shape[1]
            column = fed_mask.shape[1] - width  # where this step's tokens start in the cache
            if temperature > 0:
                probs = torch.softmax(logits[:, -1, :] / temperature, dim=-1)
                picks = [[t] for t in torch.multinomial(probs, 1).squeeze(1).tolist()]
            else:
                picks = logits.argmax(dim=-1).tolist()
            for slot, row in enumerate(live):
                if not row.active or row.width == 0:
                    continue
                if first:
                    emit(row, [picks[slot][-1]])
                    continue
                # the row fed its last token and a draft: keep the draft's longest prefix
                # that greedy decoding would have written, then the model's next token
                draft = step_ids[slot, 1 : row.width].tolist()
                accepted = 0
                while accepted < len(draft) and draft[accepted] == picks[slot][accepted]:
                    accepted += 1
                row.fed.extend(step_ids[slot, : 1 + accepted].tolist())
                fed_mask[slot, column + 1 + accepted : column + width] = 0
                emit(row, [*draft[:accepted], picks[slot][accepted]])
            first, steps = False, steps + 1
            if on_step is not None:
                on_step(sum(len(row.generated) for row in rows))
            running = [row for row in live if row.active]
            if not running:
                break
            if pause is not None and pause(len(running), steps):
                for row in running:
                    row.active, row.finish = False, "paused"
                break
            if retire and len(running) <= len(live) // 2:
                # half the batch has ended: keep their sequences and free their slots
                keep = [slot for slot, row in enumerate(live) if row.active]
                for slot, row in enumerate(live):
                    if not row.active:
                        _keep_sequence(cache, row, slot, past, fed_mask)
                index = torch.tensor(keep, dtype=torch.long)
                _keep_rows(past, index)
                fed_mask = fed_mask.index_select(0, index)
                live = running
            chunks = []
            for row in live:
                if not row.active:
                    chunks.append([])
                    continue
                proposal = row.drafter.propose() if row.drafter is not None else []
                proposal = proposal[: max(step_tokens // len(running) - 1, 0)]
                room = row.budget - len(row.generated)  # never draft past the budget
                chunks.append([row.generated[-1], *proposal[: max(room - 1, 0)]])
            width = max(len(c) for c in chunks)
            step_ids = torch.full((len(live), width), pad_id, dtype=torch.long)
            step_positions = torch.zeros((len(live), width), dtype=torch.long)
            step_mask = torch.zeros((len(live), width), dtype=torch.long)
            for slot, (row, chunk) in enumerate(zip(live, chunks, strict=True)):
                row.width = len(chunk)
                if chunk:
                    base = len(row.prompt) + len(row.fed)
                    step_ids[slot, : len(chunk)] = torch.tensor(chunk, dtype=torch.long)
                    step_positions[slot, : len(chunk)] = torch.arange(base, base + len(chunk))
                    step_mask[slot, : len(chunk)] = 1
            fed_mask = torch.cat([fed_mask, step_mask], dim=1)

    for slot, row in enumerate(live):
        _keep_sequence(cache, row, slot, past, fed_mask)
    return [row.output for row in rows]


def _keep_sequence(cache: PrefixCache, row: _Row, slot: int, past: Any, fed_mask: Any) -> None:
    """Store ``row``'s sequence: the keys and values of the positions it owns, in order."""
    owned = fed_mask[slot].nonzero().squeeze(1)
    tokens = row.prompt + row.fed
    if len(tokens) != len(owned):  # pragma: no cover - a bookkeeping bug, never data
        raise AssertionError(f"row {row.index}: {len(tokens)} tokens for {len(owned)} positions")
    kept = [
        (k[slot].index_select(1, owned), v[slot].index_select(1, owned)) for k, v in _layer_kv(past)
    ]
    cache.store(Entry(tokens, kept))


def _keep_rows(past: Any, index: Any) -> None:
    """Keep only the batch rows ``index`` of a :func:`_growing_cache`, in place."""
    for layer in past.layers:
        layer.keep_rows(index)


class Drafter:
    """Prompt-lookup drafts: what followed the last time the sequence's ending occurred.

    A tool-calling model copies much of its context (names, dates, the call syntax of its
    earlier turns), so the tokens that followed the latest earlier occurrence of the last
    ``ngram`` tokens are a good guess of what comes next. A draft is only a proposal: the
    model reads it in one forward pass and keeps the prefix it would have generated itself.
    """

    def __init__(self, tokens: Sequence[int], size: int, ngram: int = 3) -> None:
        self.tokens: list[int] = []
        self.size, self.ngram = size, ngram
        self.seen: list[dict[tuple[int, ...], int]] = [{} for _ in range(ngram)]
        for token in tokens:
            self.append(token)

    def append(self, token: int) -> None:
        """Add a token; the n-grams ending just before it become findable."""
        end = len(self.tokens) - 1  # index the n-grams that end at the previous token
        for n in range(1, self.ngram + 1):
            if end - n + 1 >= 0:
                self.seen[n - 1][tuple(self.tokens[end - n + 1 : end + 1])] = end
        self.tokens.append(token)

    def propose(self) -> list[int]:
        """Up to ``size`` tokens that followed the longest matching earlier n-gram."""
        if self.size <= 0:
            return []
        for n in range(self.ngram, 0, -1):
            if len(self.tokens) < n:
                continue
            at = self.seen[n - 1].get(tuple(self.tokens[-n:]))
            if at is not None:
                return self.tokens[at + 1 : at + 1 + self.size]
        return []


class Heartbeat:
    """Calls ``report()`` at most once every ``every_s`` seconds (and when forced)."""

    def __init__(self, report: Callable[[], None], every_s: float = 1.0) -> None:
        self.report, self.every_s = report, every_s
        self.last = 0.0

    def __call__(self, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self.last >= self.every_s:
            self.last = now
            self.report()
