"""The generic LLM loop on a toy env that is not MeetingSlot, with an in-process client.

The real-client tests over HTTP are in test_llm.py; these check that the loop needs
nothing but ``system_prompt`` + ``tools`` in reset info and a text-protocol ``step``.
"""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import gymnasium as gym
import pytest

from meeting_gym.agentkit import RetryPolicy, ToolSet, extract_answer, run_episode
from meeting_gym.core.text_env import TextInterface

pytest.importorskip("openai")  # the loop classifies errors with the openai exceptions


def add(world: dict[str, int], a: int, b: int) -> str:
    """Add two integers.

    Args:
        a: The first integer.
        b: The second integer.
    """
    return str(a + b)


def secret(world: dict[str, int]) -> str:
    """Return the secret number."""
    return str(world["secret"])


class SumEnv(gym.Env):
    """Answer secret + 1, using the tools; reward 1 for the right answer."""

    TOOLS = ToolSet([add, secret])

    def __init__(self, max_turns: int = 5) -> None:
        self.interface = TextInterface()
        self.action_space = self.interface.action_space
        self.observation_space = self.interface.observation_space
        self.max_turns = max_turns

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.world = {"secret": 41}
        self.turns, self.answer = 0, None
        info = {"system_prompt": "Use the tools.", "tools": self.TOOLS.schemas()}
        return "What is the secret plus one?", info

    # the ToolEpisode protocol of TextInterface
    def call(self, name: str, arguments: Any) -> str:
        return self.TOOLS.call(self.world, name, arguments)

    def submit(self, text: str) -> None:
        self.answer = extract_answer(text)

    def step(self, action):
        observation, terminated = self.interface.apply(self, action)
        self.turns += 1
        truncated = not terminated and self.turns >= self.max_turns
        reward = float(self.answer == "42") if terminated else 0.0
        return observation, reward, terminated, truncated, {"answer": self.answer}


def completion(message: dict[str, Any], usage: dict[str, int] | None = None) -> Any:
    calls = [
        SimpleNamespace(
            id=c.get("id"), function=SimpleNamespace(name=c["name"], arguments=c["arguments"])
        )
        for c in message.get("tool_calls", [])
    ]
    reply = SimpleNamespace(content=message.get("content"), tool_calls=calls or None)
    choice = SimpleNamespace(message=reply, finish_reason="stop")
    return SimpleNamespace(choices=[choice], usage=usage)


class ScriptedClient:
    """``client.chat.completions.create`` returning scripted replies; keeps the requests."""

    def __init__(self, replies: list[Any]) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self.create))

    def create(self, **request: Any) -> Any:
        self.requests.append(json.loads(json.dumps(request)))  # a snapshot
        return self.replies.pop(0)


def test_native_calls_on_a_toy_env():
    client = ScriptedClient(
        [
            completion(
                {"tool_calls": [{"id": "s", "name": "secret", "arguments": "{}"}]},
                {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
            ),
            completion(
                {
                    "tool_calls": [
                        {"id": "x", "name": "add", "arguments": '{"a": 41, "b": 1}'},
                        {"id": "y", "name": "add", "arguments": '{"a": "41"}'},
                    ]
                },
                {"prompt_tokens": 20, "completion_tokens": 3, "total_tokens": 23},
            ),
            completion({"content": "<answer>42</answer>"}),
        ]
    )
    result = run_episode(SumEnv(), client, "toy")
    assert (result.reward, result.terminated, result.turns, result.tool_calls) == (1.0, True, 3, 3)
    assert result.usage == {"prompt_tokens": 30, "completion_tokens": 5, "total_tokens": 35}
    assert [m["role"] for m in result.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "tool",
        "assistant",
    ]
    assert result.messages[3] == {"role": "tool", "tool_call_id": "s", "content": "41"}
    assert result.messages[5]["content"] == "42"
    assert result.messages[6]["content"].startswith("error:")
    assert all(r["tools"] == SumEnv.TOOLS.schemas() for r in client.requests)
    assert client.requests[-1]["messages"] == result.messages[:-1]


def test_text_protocol_on_a_toy_env_and_truncation():
    call = '<tool_call>{"name": "secret", "arguments": {}}</tool_call>'
    client = ScriptedClient([completion({"content": call})] * 2 + [completion({"content": "hm"})])
    result = run_episode(SumEnv(max_turns=3), client, "toy", tool_protocol="text")
    assert (result.truncated, result.terminated, result.reward, result.turns) == (
        True,
        False,
        0.0,
        3,
    )
    assert result.tool_calls == 2 and result.usage is None and result.error is None
    assert [m["content"] for m in result.messages if m["role"] == "user"][1:] == ["41", "41"]
    assert all("tools" not in r for r in client.requests)


def test_a_reply_without_choices_is_an_error():
    client = ScriptedClient([SimpleNamespace(choices=[], usage=None)])
    result = run_episode(SumEnv(), client, "toy", retry=RetryPolicy(attempts=1))
    assert result.error == "the response has no choices" and result.turns == 0


def test_bugs_in_the_client_are_not_swallowed():
    class Broken(ScriptedClient):
        def create(self, **request: Any) -> Any:
            raise ZeroDivisionError("a bug, not a provider error")

    with pytest.raises(ZeroDivisionError):
        run_episode(SumEnv(), Broken([]), "toy", retry=RetryPolicy(attempts=3))
