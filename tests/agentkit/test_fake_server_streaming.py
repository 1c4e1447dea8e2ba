"""The scripted server streams: the same reply as server-sent events, read by the openai client.

verifiers' chat harness always asks for ``stream=True`` (with ``stream_options``
``include_usage``); the reply must assemble, through the official client's own stream
reader, into exactly the message the server sends unstreamed.
"""

from __future__ import annotations

import gymnasium as gym
import pytest

import meeting_gym  # noqa: F401

openai = pytest.importorskip("openai")

from fake_openai_server import FakeOpenAIServer  # noqa: E402

from meeting_gym.agentkit import initial_messages  # noqa: E402


def conversation() -> list[dict]:
    """A MeetingSlot question, as the LLM loop sends it."""
    env = gym.make("MeetingSlot-v0", mode="text")
    return initial_messages(*env.reset(options={"split": "curated", "index": 0}))


def assembled(stream) -> tuple[dict, dict | None, str | None]:
    """A stream's chunks joined: the message, the usage chunk and the finish reason."""
    content, calls, usage, finish = "", {}, None, None
    for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage.model_dump()
        for choice in chunk.choices:
            delta = choice.delta
            content += delta.content or ""
            for call in delta.tool_calls or []:
                entry = calls.setdefault(call.index, {"id": None, "name": "", "arguments": ""})
                entry["id"] = call.id or entry["id"]
                entry["name"] += (call.function.name or "") if call.function else ""
                entry["arguments"] += (call.function.arguments or "") if call.function else ""
            finish = choice.finish_reason or finish
    return {"content": content, "calls": [calls[i] for i in sorted(calls)]}, usage, finish


@pytest.mark.parametrize("model", ["gold-native", "gold-text", "malformed"])
def test_a_streamed_reply_assembles_into_the_unstreamed_one(model):
    with FakeOpenAIServer() as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="EMPTY", max_retries=0)
        plain = client.chat.completions.create(model=model, messages=conversation())
        stream = client.chat.completions.create(
            model=model,
            messages=conversation(),
            stream=True,
            stream_options={"include_usage": True},
        )
        message, usage, finish = assembled(stream)
    expected = plain.choices[0].message
    assert message["content"] == (expected.content or "")
    assert message["calls"] == [
        {"id": c.id, "name": c.function.name, "arguments": c.function.arguments}
        for c in expected.tool_calls or []
    ]
    assert finish == plain.choices[0].finish_reason
    assert usage == plain.usage.model_dump()


def test_the_usage_chunk_comes_only_when_asked():
    with FakeOpenAIServer() as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="EMPTY", max_retries=0)
        stream = client.chat.completions.create(
            model="answer-now", messages=conversation(), stream=True
        )
        _, usage, finish = assembled(stream)
    assert usage is None and finish == "stop"
