"""``--policy openai`` and ``--policy local``: evaluate a chat model on any text env.

``openai`` talks to any OpenAI-compatible endpoint; ``local`` runs a model in-process with
transformers (:class:`~meeting_gym.agentkit.local.LocalChatClient`, which answers the same
``chat.completions.create`` calls). Either way the agent is
:class:`~meeting_gym.agentkit.llm.LLMAgent` (generic) and the episodes run through the one
evaluation runner (:func:`~meeting_gym.evaluation.evaluate.evaluate`). This module holds the
command-line options, the client set-up, the ``--out`` JSONL row and the table lines that
only an LLM run has. ``openai`` and transformers are imported lazily.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from meeting_gym.agentkit.llm import LLMAgent, RetryPolicy, make_client
from meeting_gym.agentkit.local import DEFAULT_MAX_TOKENS
from meeting_gym.agentkit.messages import TOOL_PROTOCOLS
from meeting_gym.core.rubric import Rubric
from meeting_gym.evaluation.evaluate import (
    DEFAULT_ENV,
    EpisodeResult,
    evaluate,
    format_table,
    summarize,
)

POLICY_NAME = "openai"
LOCAL_POLICY = "local"
LLM_POLICIES = (POLICY_NAME, LOCAL_POLICY)
DEFAULT_CONCURRENCY = 4
DEFAULT_LOCAL_BATCH = 8


def add_cli_options(parser: argparse.ArgumentParser) -> None:
    """The ``eval`` options used by ``--policy openai``."""
    group = parser.add_argument_group(
        "LLM policies (--policy openai, --policy local)",
        "openai: a model behind any OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp, "
        "hosted APIs); local: a model run in-process with transformers (its own chat "
        "template; episodes in flight are generated in one batch)",
    )
    group.add_argument(
        "--model",
        help="openai: the model name sent to the server; local: a model folder, a .gguf "
        "file, or a bundled model's name (smollm2)",
    )
    group.add_argument(
        "--base-url", default=None, help="e.g. http://localhost:8000/v1 (default: OpenAI)"
    )
    group.add_argument(
        "--api-key-env",
        default="OPENAI_API_KEY",
        help="environment variable holding the API key (default: OPENAI_API_KEY)",
    )
    group.add_argument(
        "--temperature",
        type=float,
        default=None,
        help="sampling temperature (openai: the server's default; local: 0 = greedy, the "
        "default; sampling is seeded by --seed)",
    )
    group.add_argument(
        "--max-tokens",
        type=int,
        default=None,
        help=f"per model reply (openai: the server's default; local: {DEFAULT_MAX_TOKENS})",
    )
    group.add_argument(
        "--tool-protocol",
        choices=TOOL_PROTOCOLS,
        default=None,
        help="openai: default native; local: native where the model's chat template "
        "renders tools, else text (the default)",
    )
    group.add_argument(
        "--system-prompt",
        default=None,
        help="env (the env's own, the default; for a model folder trained here, the prompt "
        "it was trained with), short (the same rules in fewer tokens, as "
        "examples/train_tool_env.py trains with; MeetingSlot-v0, CalendarMath-v0, "
        "CronSchedule-v0), or the text itself; the rubric grades the reply either way",
    )
    group.add_argument("--timeout", type=float, default=120.0, help="seconds per request")
    group.add_argument(
        "--retries",
        type=int,
        default=5,
        help="retries of a request after its first attempt fails with 429, 408/409, 5xx, "
        "a timeout or a lost connection (default 5; 0 = no retry)",
    )
    group.add_argument(
        "--retry-base-delay", type=float, default=1.0, help="backoff base in seconds"
    )
    group.add_argument(
        "--extra-body",
        default=None,
        help="JSON object merged into each request body, e.g. "
        '\'{"chat_template_kwargs": {"enable_thinking": false}}\' for vLLM',
    )


def system_prompt_option(args: argparse.Namespace) -> str | None:
    """The ``--system-prompt`` choice as a text (None: the env's own); ``ValueError`` if none."""
    from meeting_gym.agentkit.prompts import system_prompt_for

    return system_prompt_for(args.env, getattr(args, "system_prompt", "env") or "env")


def local_system_prompt(args: argparse.Namespace) -> tuple[str | None, str | None]:
    """The system prompt for ``--policy local``, and a line saying where it came from: with
    no ``--system-prompt``, a model folder's own record (:func:`trained_prompt`), else
    :func:`system_prompt_option`. A model evaluated without the prompt it was trained with
    scored 0.000 instead of 0.200, silently."""
    from meeting_gym.agentkit.prompts import PROMPT_FILE, trained_prompt

    if getattr(args, "system_prompt", None) is None:
        found, prompt = trained_prompt(args.model)
        if found:
            what = "the env's own" if prompt is None else f"{len(prompt)} characters"
            return prompt, (
                f"system prompt: the one {args.model} was trained with ({what}; from its "
                f"{PROMPT_FILE}); --system-prompt overrides it"
            )
    return system_prompt_option(args), None


def agent_factory(args: argparse.Namespace) -> Callable[[], LLMAgent]:
    """Check the LLM options and return a maker of agents sharing one client.

    Raises ``ValueError`` with a one-line reason before any request is sent.
    """
    if not args.model:
        raise ValueError("--policy openai needs --model NAME")
    system_prompt = system_prompt_option(args)
    check_max_tokens(args.max_tokens)
    if args.retries < 0:
        raise ValueError(f"--retries must be at least 0, got {args.retries}")
    extra_request = None
    if args.extra_body:
        try:
            extra_body = json.loads(args.extra_body)
        except ValueError as exc:
            raise ValueError(f"--extra-body is not JSON: {exc}") from exc
        if not isinstance(extra_body, dict):
            raise ValueError("--extra-body must be a JSON object")
        extra_request = {"extra_body": extra_body}
    api_key = os.environ.get(args.api_key_env)
    if not api_key:
        print(
            f"meeting-gym: {args.api_key_env} is not set; sending the placeholder key EMPTY",
            file=sys.stderr,
        )
        api_key = "EMPTY"
    client = make_client(args.base_url, api_key, timeout=args.timeout)
    retry = RetryPolicy(attempts=args.retries + 1, base_delay=args.retry_base_delay)

    return partial(
        LLMAgent,
        client,
        args.model,
        tool_protocol=args.tool_protocol or "native",
        temperature=args.temperature,
        max_tokens=args.max_tokens,
        retry=retry,
        extra_request=extra_request,
        system_prompt=system_prompt,
    )


def check_max_tokens(value: int | None) -> None:
    """``ValueError`` unless ``value`` is None or a positive number of tokens."""
    if value is not None and value < 1:
        raise ValueError(f"--max-tokens must be at least 1, got {value}")


class LocalProgress:
    """One status line on stderr for a local model's run, from its first second.

    It says what is loading, then the episodes done, the turns generated, the prompt
    tokens (those read anew and those reused from the cache, which add up to them), the
    tokens generated and the seconds so far. On a terminal the line is redrawn every
    second; into a file (``--progress`` off a tty) a line is written every ``every_s``
    seconds and when an episode ends. :meth:`close` writes the last counts: the client
    adds a batch's tokens once the batch ends, after its episodes have, so the line drawn
    for the last episode can fall short of the table's prompt tokens.
    """

    def __init__(
        self,
        total: int,
        stream: Any = None,
        every_s: float | None = None,
        label: str = "local model",
    ) -> None:
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.every_s = every_s if every_s is not None else (1.0 if self.tty else 10.0)
        self.total, self.done = total, 0
        self.stats: dict[str, float] = {}
        self.last = float("-inf")
        self.written = ""  # the last line written
        self.closed = False
        self.lock = threading.Lock()

    def say(self, text: str) -> None:
        """A line of its own (loading, loaded)."""
        with self.lock:
            self.stream.write(("\r" if self.tty else "") + text + "\n")
            self.stream.flush()

    def update(self, stats: dict[str, float]) -> None:
        """The client's counts (its ``on_progress``)."""
        with self.lock:
            self.stats = dict(stats)
        self._draw(False)

    def episode_done(self, *_: Any) -> None:
        """One more episode finished (an ``on_episode`` hook)."""
        with self.lock:
            self.done += 1
        self._draw(True)

    def line(self) -> str:
        s = self.stats
        prompt, reused = int(s.get("prompt_tokens", 0)), int(s.get("reused_tokens", 0))
        return (
            f"{self.label}: {self.done}/{self.total} episodes, {int(s.get('requests', 0))} turns, "
            f"{prompt} prompt tokens ({prompt - reused} read, {reused} reused), "
            f"{int(s.get('generated', 0))} generated, {s.get('seconds', 0.0):.0f} s"
        )

    def _draw(self, force: bool) -> None:
        with self.lock:
            now = time.monotonic()
            if not force and now - self.last < self.every_s:
                return
            self.last = now
            self.written = self.line()
            self.stream.write(("\r" + self.written) if self.tty else self.written + "\n")
            self.stream.flush()

    def close(self) -> None:
        """After the run (its client closed): the last counts, once (on a terminal, the
        redrawn line ends; into a file, a line if the counts moved since the last one)."""
        with self.lock:
            if self.closed:
                return
            self.closed = True
            line = self.line()
            if self.tty:
                self.stream.write("\r" + line + "\n")
            elif line != self.written:
                self.stream.write(line + "\n")
            self.stream.flush()


def local_agent_factory(
    args: argparse.Namespace, progress: LocalProgress | None = None
) -> tuple[Callable[[], LLMAgent], Any]:
    """Load ``--model`` in-process; a maker of agents sharing it, and the client (to close).

    Raises ``ValueError`` (a one-line reason) for a model that cannot be found, before any
    weights load, and ``ImportError`` with the install line when transformers is missing.
    ``progress`` is told what loads and, then, the client's counts.
    """
    from meeting_gym.agentkit.local import LocalChatClient, resolve_model

    if not args.model:
        raise ValueError("--policy local needs --model (a folder, a .gguf file or smollm2)")
    check_max_tokens(args.max_tokens)
    system_prompt, note = local_system_prompt(args)
    if note and progress is not None:
        progress.say(note)
    if args.temperature is not None and args.temperature < 0:
        raise ValueError(f"--temperature must be at least 0, got {args.temperature}")
    resolve_model(args.model)  # a missing model is a one-line error before transformers loads
    batch = args.max_concurrent or DEFAULT_LOCAL_BATCH
    began = time.monotonic()
    if progress is not None:
        progress.say(f"local model: loading {args.model} ...")
    client = LocalChatClient(
        args.model,
        batch_size=batch,
        seed=args.seed,
        on_progress=progress.update if progress is not None else None,
    )
    if progress is not None:
        progress.say(
            f"local model: loaded in {time.monotonic() - began:.0f} s; generating "
            f"{progress.total} episodes, {batch} at a time"
        )
    protocol = args.tool_protocol or client.tool_protocol
    if protocol == "native" and not client.native_tools:
        client.close()
        raise ValueError(f"{args.model}'s chat template renders no tools: use --tool-protocol text")
    make = partial(
        LLMAgent,
        client,
        args.model,
        tool_protocol=protocol,
        temperature=args.temperature,
        max_tokens=args.max_tokens or DEFAULT_MAX_TOKENS,
        retry=RetryPolicy(attempts=1),  # a local model has no transient failures to retry
        system_prompt=system_prompt,
    )
    return make, client


def row(result: EpisodeResult) -> dict[str, Any]:
    """The ``--out`` JSONL row: ids, answer, gold, breakdown, counts, usage, error, transcript."""
    extra = result.extra
    return {
        "item_id": result.item_id,
        "difficulty": result.difficulty,
        "rollout": result.rollout,
        "answer": result.answer,
        "gold": result.gold,
        "breakdown": None if result.error else {**result.terms, "reward": result.reward},
        "turns": result.turns,
        "tool_calls": result.tool_calls,
        "truncated": result.truncated,
        "requests": extra.get("requests", 0),
        "retries": extra.get("retries", 0),
        "usage": extra.get("usage"),
        "finish_reasons": extra.get("finish_reasons", []),
        "error": result.error,
        "transcript": extra.get("transcript", []),
    }


def replayable_row(
    result: EpisodeResult,
    *,
    env: str,
    seed: int,
    options: dict[str, Any] | None,
    tool_protocol: str,
    max_turns: int | None = None,
    env_kwargs: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """:func:`row` plus what replays the episode (:func:`meeting_gym.evaluation.replay.replay_row`).

    ``seed`` and ``options`` are the episode's reset arguments (the runner's seed + k, the
    item's split options), ``tool_protocol`` and ``max_turns`` how it was played.
    """
    line = row(result)
    line.update(
        env=env,
        env_kwargs=dict(env_kwargs or {}),
        seed=seed,
        options=options,
        tool_protocol=tool_protocol,
        max_turns=max_turns,
    )
    return line


def totals(results: Sequence[EpisodeResult]) -> dict[str, Any]:
    """Requests, retries and summed token usage (None if the server never reported any)."""
    usages = [r.extra["usage"] for r in results if r.extra.get("usage") is not None]
    return {
        "requests": sum(r.extra.get("requests", 0) for r in results),
        "retries": sum(r.extra.get("retries", 0) for r in results),
        "usage": {key: sum(u[key] for u in usages) for key in usages[0]} if usages else None,
    }


def table_lines(summary: dict[str, Any]) -> list[str]:
    """The lines an LLM run adds to the table: requests, retries, tokens."""
    lines = [
        f"{'requests':<16}{summary['requests']} "
        f"({summary['retries']} retries after 429/5xx/timeouts)"
    ]
    usage = summary["usage"]
    if usage is not None:
        lines.append(
            f"{'tokens':<16}{usage['prompt_tokens']} prompt, "
            f"{usage['completion_tokens']} completion"
        )
    return lines


def evaluate_llm(
    client: Any,
    model: str,
    items: Sequence[Any],
    *,
    env: str = DEFAULT_ENV,
    tool_protocol: str = "native",
    temperature: float | None = None,
    max_tokens: int | None = None,
    retry: RetryPolicy | None = None,
    extra_request: dict[str, Any] | None = None,
    system_prompt: str | None = None,
    max_concurrent: int = DEFAULT_CONCURRENCY,
    opening: Any = None,
    **runner: Any,
) -> list[EpisodeResult]:
    """:func:`~meeting_gym.evaluation.evaluate.evaluate` with an :class:`LLMAgent` per worker.

    ``runner`` takes the runner's other keywords (``rollouts``, ``seed``, ``max_turns``,
    ``on_result``, ``on_episode``, ...). Each result's ``extra`` holds the agent's
    :meth:`~LLMAgent.report`.
    ``system_prompt`` None keeps the env's own; ``opening`` is the agent's
    (:class:`~meeting_gym.agentkit.llm.LLMAgent`: replies standing in for its first turns).
    """

    make = partial(
        LLMAgent,
        client,
        model,
        tool_protocol=tool_protocol,
        temperature=temperature,
        max_tokens=max_tokens,
        retry=retry,
        extra_request=extra_request,
        system_prompt=system_prompt,
        opening=opening,
    )
    return evaluate(make, items, env=env, max_concurrent=max_concurrent, **runner)


def evaluate_local(
    pair: tuple[Any, Any],
    label: str,
    items: Sequence[Any],
    *,
    env: str,
    batch: int,
    max_tokens: int,
    system_prompt: str | None = None,
    temperature: float = 0.0,
    seed: int = 0,
    progress: LocalProgress | None = None,
    tool_protocol: str = "text",
    **runner: Any,
) -> list[EpisodeResult]:
    """Episodes of a model already loaded (``pair``: tokenizer, model), in batches of ``batch``.

    The ``tool_protocol`` given (``text``; ``native`` for a template that renders tools), one
    attempt per request, greedy unless ``temperature`` > 0
    (seeded by ``seed``); a fresh client, so no cached keys of other weights serve these.
    ``progress`` (a :class:`LocalProgress`) is kept up to date with episodes, turns and
    tokens. ``runner`` takes the runner's keywords (``rollouts``, ``max_turns``,
    ``env_kwargs``, ...).
    """
    from meeting_gym.agentkit.local import LocalChatClient

    if progress is not None:
        given = runner.pop("on_episode", None)

        def on_episode(k: int, result: Any) -> None:  # as each ends: no episode holds it
            progress.episode_done()
            if given is not None:
                given(k, result)

        runner["on_episode"] = on_episode
    on_progress = progress.update if progress is not None else None
    try:
        with LocalChatClient(pair, batch_size=batch, seed=seed, on_progress=on_progress) as client:
            return evaluate_llm(
                client,
                label,
                items,
                env=env,
                tool_protocol=tool_protocol,
                temperature=temperature,
                max_tokens=max_tokens,
                retry=RetryPolicy(attempts=1),
                system_prompt=system_prompt,
                max_concurrent=batch,
                seed=seed,
                **runner,
            )
    finally:
        if progress is not None:
            progress.close()


def llm_summary(results: Sequence[EpisodeResult]) -> dict[str, Any]:
    """:func:`~meeting_gym.evaluation.evaluate.summarize` plus requests, retries and tokens."""
    summary = summarize(results)
    summary.update(totals(results))
    return summary


def format_llm_table(
    summary: dict[str, Any],
    title: str,
    rows: Sequence[EpisodeResult] = (),
    *,
    rubric: Rubric | None = None,
) -> str:
    """The evaluation table with the LLM lines (:func:`table_lines`) after the counts."""
    return format_table(summary, title, rows, rubric=rubric, extra=table_lines(summary))
