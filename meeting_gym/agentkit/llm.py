"""An agent loop for any OpenAI-compatible chat endpoint (vLLM, Ollama, llama.cpp, hosted).

Works with any environment whose ``reset`` info carries ``system_prompt`` and
``tools`` and whose ``step`` takes the text protocol (see
:mod:`meeting_gym.agentkit.messages`). ``openai`` is imported only when a client is
made (:func:`make_client`) or an error is classified; install it with
``pip install "meeting-gym[llm]"``.

::

    client = make_client(base_url="http://localhost:8000/v1")
    env = gymnasium.make("MeetingSlot-v0", mode="text")
    result = run_episode(env, client, "Qwen/Qwen2.5-7B-Instruct", seed=0)
    print(result.reward, result.info, result.error)

Provider failures (429, 5xx, timeouts, connection errors) are retried with bounded
exponential backoff (:class:`RetryPolicy`); when the retries run out, or on any other
API error (400, 401, 404, ...), the episode stops with :attr:`LLMEpisode.error` set
and should be reported as an error, not scored. Everything the model does wrong
(malformed calls, no answer, running out of turns) is the env's business and scored.
"""

from __future__ import annotations

import os
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from meeting_gym.agentkit.messages import (
    assistant_turn,
    check_tool_protocol,
    initial_messages,
    observation_messages,
    tools_for,
)
from meeting_gym.core.loop import AgentError, Rollout, play
from meeting_gym.core.protocol import ToolCallsAction, parse_action

INSTALL_HINT = 'the LLM loop needs the openai client: pip install "meeting-gym[llm]"'
RETRYABLE_STATUS = frozenset({408, 409, 429})
# The finish reason of a reply an ``opening`` stood in for: no request was sent for it.
SCRIPTED = "scripted"


def _openai() -> Any:
    try:
        import openai
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(INSTALL_HINT) from exc
    return openai


def make_client(
    base_url: str | None = None,
    api_key: str | None = None,
    *,
    timeout: float = 120.0,
    max_retries: int = 0,
) -> Any:
    """An ``openai.OpenAI`` client. Retries are left to :class:`RetryPolicy` by default.

    ``api_key`` defaults to ``OPENAI_API_KEY``; local servers that need no key get
    the placeholder ``"EMPTY"``.
    """
    openai = _openai()
    key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY") or "EMPTY"
    return openai.OpenAI(base_url=base_url, api_key=key, timeout=timeout, max_retries=max_retries)


def _loaded_openai() -> Any:
    """The ``openai`` module if something imported it already (its errors can only come then)."""
    return sys.modules.get("openai")


def is_provider_error(exc: BaseException) -> bool:
    """True for errors of the model's provider: the ``openai`` client's, or a local model's."""
    from meeting_gym.agentkit.local import LocalModelError

    openai = _loaded_openai()
    return isinstance(exc, LocalModelError) or (
        openai is not None and isinstance(exc, openai.OpenAIError)
    )


def is_retryable(exc: BaseException) -> bool:
    """True for rate limits (429), 408/409, server errors (5xx), timeouts and lost connections."""
    openai = _loaded_openai()
    if openai is None:
        return False
    if isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError)):
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in RETRYABLE_STATUS or exc.status_code >= 500
    return False


def describe_error(exc: BaseException) -> str:
    """A one-line description of an API error: class, HTTP status and message."""
    status = getattr(exc, "status_code", None)
    head = type(exc).__name__ + (f" {status}" if status is not None else "")
    message = " ".join(str(exc).split())
    return f"{head}: {message[:300]}" if message else head


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded exponential backoff with full jitter for retryable API errors.

    Attempt ``k`` (from 0) that fails waits ``uniform(0, min(max_delay, base_delay *
    2**k))`` seconds before the next; after ``attempts`` failures the error is raised.
    """

    attempts: int = 5
    base_delay: float = 1.0
    max_delay: float = 30.0
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError("attempts must be at least 1")
        if self.base_delay < 0 or self.max_delay < 0:
            raise ValueError("delays must be non-negative")

    def delay(self, attempt: int, rng: random.Random) -> float:
        return rng.uniform(0.0, min(self.max_delay, self.base_delay * 2**attempt))


@dataclass
class Usage:
    """Token counts summed over an episode's requests (None when the server never said)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    reported: bool = False

    def add(self, usage: Any) -> None:
        if usage is None:
            return
        self.reported = True
        for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
            value = getattr(usage, key, None) if not isinstance(usage, dict) else usage.get(key)
            if isinstance(value, int):
                setattr(self, key, getattr(self, key) + value)

    def as_dict(self) -> dict[str, int] | None:
        if not self.reported:
            return None
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
        }


def create_completion(
    client: Any,
    retry: RetryPolicy | None = None,
    *,
    rng: random.Random | None = None,
    on_retry: Callable[[BaseException, float], None] | None = None,
    **request: Any,
) -> Any:
    """``client.chat.completions.create(**request)`` with retries on retryable errors.

    Non-retryable errors, and the last retryable one, are raised.
    """
    policy = retry or RetryPolicy()
    generator = rng or random.Random()
    for attempt in range(policy.attempts):
        try:
            return client.chat.completions.create(**request)
        except Exception as exc:
            if attempt + 1 >= policy.attempts or not is_retryable(exc):
                raise
            wait = policy.delay(attempt, generator)
            if on_retry is not None:
                on_retry(exc, wait)
            policy.sleep(wait)
    raise AssertionError("unreachable")  # pragma: no cover


@dataclass
class LLMEpisode(Rollout):
    """What one episode of :func:`run_episode` produced: a :class:`~meeting_gym.core.loop.Rollout`
    with the conversation and the provider's counts.

    ``messages`` is the whole conversation (system, user, assistant, tool, ...);
    ``info`` the env's last info (on the final step it holds the env's grading);
    ``turns`` env steps; ``tool_calls`` calls requested in those steps; ``requests``
    chat completions asked for and ``retries`` the extra attempts after retryable
    failures; ``usage`` summed token counts (None if the server never reported
    them); ``error`` is set, and the episode must not be scored, when the provider
    failed.
    """

    messages: list[dict[str, Any]] = field(default_factory=list)
    tool_calls: int = 0
    requests: int = 0
    retries: int = 0
    usage: dict[str, int] | None = None
    finish_reasons: list[str | None] = field(default_factory=list)


class LLMAgent:
    """A chat model behind an OpenAI-compatible client, acting as an agent of any text env.

    Each :meth:`act` sends the conversation so far and turns the reply into one env
    action (:func:`~meeting_gym.agentkit.messages.assistant_turn`); the observation that
    comes back is added to the conversation on the next :meth:`act`. When the provider
    fails for good (retries exhausted, or a non-retryable API error) :meth:`act` raises
    :class:`~meeting_gym.core.loop.AgentError`: the episode is an error, not a
    score. Per-episode counts (requests, retries, usage, finish reasons) and the whole
    conversation are in :meth:`report`.

    ``opening``, given the reset's info, returns replies (assistant message texts) that
    stand in for the model's first turns of that episode, in order; no request is sent for
    them and their finish reason is :data:`SCRIPTED`. GRPO uses it to branch a group's
    episodes at one point of an episode the model played itself.
    """

    def __init__(
        self,
        client: Any,
        model: str,
        *,
        tool_protocol: str = "native",
        temperature: float | None = None,
        max_tokens: int | None = None,
        retry: RetryPolicy | None = None,
        system_prompt: str | None = None,
        extra_request: dict[str, Any] | None = None,
        opening: Callable[[dict[str, Any]], list[str] | None] | None = None,
    ) -> None:
        check_tool_protocol(tool_protocol)
        self.client, self.model = client, model
        self.name = "openai"
        self.tool_protocol = tool_protocol
        self.temperature, self.max_tokens = temperature, max_tokens
        self.retry = retry
        self.system_prompt = system_prompt
        self.extra_request = dict(extra_request or {})
        self.opening = opening

    def reset(self, observation: Any, info: dict[str, Any], *, env: Any, seed: int | None) -> None:
        self.messages = initial_messages(observation, info, self.system_prompt)
        self.tools = tools_for(info, self.tool_protocol)
        self.answer_tag = info.get("answer_tag", "answer")
        self.rng = random.Random(seed)
        self.usage = Usage()
        self.requests = self.retries = self.tool_calls = 0
        self.finish_reasons: list[str | None] = []
        self.turn: Any = None
        self.script = list((self.opening(info) if self.opening else None) or [])

    def _count_retry(self, _exc: BaseException, _wait: float) -> None:
        self.retries += 1

    def act(self, observation: Any, info: dict[str, Any]) -> str:
        if self.turn is not None:  # the observation answers the previous turn
            self.messages.extend(observation_messages(observation, self.turn))
        if len(self.finish_reasons) < len(self.script):
            reply = SimpleNamespace(content=self.script[len(self.finish_reasons)], tool_calls=None)
            return self._take(reply, SCRIPTED)
        request: dict[str, Any] = {"model": self.model, "messages": self.messages}
        if self.tools:
            request["tools"] = self.tools
        if self.temperature is not None:
            request["temperature"] = self.temperature
        if self.max_tokens is not None:
            request["max_tokens"] = self.max_tokens
        request.update(self.extra_request)
        self.requests += 1
        try:
            response = create_completion(
                self.client, self.retry, rng=self.rng, on_retry=self._count_retry, **request
            )
        except Exception as exc:
            if not is_provider_error(exc):
                raise
            raise AgentError(describe_error(exc)) from exc
        self.usage.add(getattr(response, "usage", None))
        choices = getattr(response, "choices", None) or []
        if not choices:
            raise AgentError("the response has no choices")
        choice = choices[0]
        return self._take(choice.message, getattr(choice, "finish_reason", None))

    def _take(self, message: Any, finish_reason: str | None) -> str:
        """Add a reply to the conversation; the env action it makes."""
        self.finish_reasons.append(finish_reason)
        self.turn = assistant_turn(
            message,
            self.tool_protocol,
            id_prefix=f"call_{len(self.finish_reasons) - 1}",
            answer_tag=self.answer_tag,
        )
        self.messages.append(self.turn.message)
        parsed = parse_action(self.turn.action, answer_tag=self.answer_tag)
        if isinstance(parsed, ToolCallsAction):
            self.tool_calls += len(parsed.calls)
        return self.turn.action

    def report(self) -> dict[str, Any]:
        """This episode's requests, retries, token usage, finish reasons and conversation."""
        return {
            "requests": self.requests,
            "retries": self.retries,
            "usage": self.usage.as_dict(),
            "finish_reasons": list(self.finish_reasons),
            "transcript": self.messages,
        }


def run_episode(
    env: Any,
    client: Any,
    model: str,
    *,
    seed: int | None = None,
    options: dict[str, Any] | None = None,
    **settings: Any,
) -> LLMEpisode:
    """Play one episode of ``env`` with ``model`` through ``client`` until it ends.

    The env is reset with ``seed`` and ``options``; each assistant message becomes one
    env step of an :class:`LLMAgent` made with the ``settings`` keywords (``tool_protocol``,
    ``temperature``, ``max_tokens``, ``retry``, ``system_prompt``, ``extra_request``, which
    is merged into every request, e.g. ``{"seed": 0}``), and the loop
    (:func:`~meeting_gym.core.loop.play`) stops when the env terminates or truncates, or
    when the provider fails (``error``).
    """
    agent = LLMAgent(client, model, **settings)
    rollout = play(env, agent, seed=seed, options=options)
    return LLMEpisode(
        **{**vars(rollout), "info": rollout.info if rollout.turns else dict(rollout.reset_info)},
        messages=agent.messages,
        tool_calls=agent.tool_calls,
        requests=agent.requests,
        retries=agent.retries,
        usage=agent.usage.as_dict(),
        finish_reasons=agent.finish_reasons,
    )
