"""The generic LLM loop on a toy env that is not MeetingSlot, with an in-process client.

The real-client tests over HTTP are in test_llm.py; these check that the loop needs
nothing but ``system_prompt`` + ``tools`` in reset info and a text-protocol ``step``:
the toy is a task of its own, played by the family's generic text shell.
"""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest

from meeting_gym.agentkit import RetryPolicy, run_episode
from meeting_gym.core.protocol import extract_answer
from meeting_gym.core.rubric import Rubric, Term
from meeting_gym.core.task import Task
from meeting_gym.core.text_env import TextEnv
from meeting_gym.core.tools import ToolSet

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


class SumTask(Task):
    """A toy task that is not MeetingSlot: answer secret + 1, using the tools."""

    toolset = ToolSet([add, secret])
    rubric = Rubric(Term("correct", 1.0))
    max_reward = 1.0
    max_turns = 5

    def generate(self, rng, difficulty):
        return {"secret": 41, "draw": rng.random()}

    def key(self, item):
        return f"toy-{item['draw']}"

    def truth(self, item):
        return str(item["secret"] + 1)

    def gold(self, item, truth):
        return truth

    def grade(self, item, truth, text):
        answer = extract_answer(text)
        return self.rubric.grade(correct=float(answer == truth)), answer

    def question(self, item):
        return "What is the secret plus one?"

    def system_prompt(self):
        return "Use the tools."


def SumEnv(max_turns: int = 5) -> TextEnv:
    return TextEnv(SumTask, max_turns=max_turns)


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
    assert all(r["tools"] == SumTask.toolset.schemas() for r in client.requests)
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


def test_an_opening_stands_in_for_the_first_turns_without_a_request():
    from meeting_gym.agentkit.llm import LLMAgent
    from meeting_gym.core.loop import play

    call = '<tool_call>{"name": "secret", "arguments": {}}</tool_call>'
    client = ScriptedClient([completion({"content": "<answer>42</answer>"})])
    seen: list[dict[str, Any]] = []

    def opening(info: dict[str, Any]) -> list[str]:
        seen.append(info)
        return [call]

    agent = LLMAgent(client, "toy", tool_protocol="text", opening=opening)
    rollout = play(SumEnv(), agent, seed=0)
    report = agent.report()
    assert rollout.reward == 1.0 and rollout.turns == 2
    assert report["requests"] == 1 and report["finish_reasons"] == ["scripted", "stop"]
    assert agent.tool_calls == 1 and "system_prompt" in seen[0]
    # the one request carries the scripted turn and the env's reply to it
    sent = client.requests[0]["messages"]
    assert [m["role"] for m in sent][-2:] == ["assistant", "user"]
    assert sent[-2]["content"] == call and sent[-1]["content"] == "41"
    assert [m["content"] for m in report["transcript"] if m["role"] == "assistant"] == [
        call,
        "<answer>42</answer>",
    ]
    # no opening for this episode: every turn is the model's
    client = ScriptedClient([completion({"content": "<answer>42</answer>"})])
    agent = LLMAgent(client, "toy", tool_protocol="text", opening=lambda info: None)
    assert play(SumEnv(), agent, seed=0).reward == 1.0 and agent.report()["requests"] == 1
