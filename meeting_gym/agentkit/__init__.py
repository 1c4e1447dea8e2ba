"""Language-model agents for the text interface: chat messages, OpenAI-compatible and local models.

:mod:`~meeting_gym.agentkit.messages` converts chat messages to and from text-protocol
actions, :mod:`~meeting_gym.agentkit.llm` plays episodes against any OpenAI-compatible
endpoint (``openai`` is imported only when it is used), and
:mod:`~meeting_gym.agentkit.local` serves a local model with a prefix cache. The text
action grammar itself (tool calls, answers, typed tools) is part of the env contract and
lives in :mod:`meeting_gym.core.protocol` and :mod:`meeting_gym.core.tools`.

Names load on first use (PEP 562), so importing this package loads no client code.
"""

from __future__ import annotations

from typing import Any

from meeting_gym.core.moved import alias_getattr, lazy_getattr

_NAMES = {
    "LLMAgent": "meeting_gym.agentkit.llm",
    "LLMEpisode": "meeting_gym.agentkit.llm",
    "RetryPolicy": "meeting_gym.agentkit.llm",
    "create_completion": "meeting_gym.agentkit.llm",
    "is_retryable": "meeting_gym.agentkit.llm",
    "make_client": "meeting_gym.agentkit.llm",
    "run_episode": "meeting_gym.agentkit.llm",
    "TOOL_PROTOCOLS": "meeting_gym.agentkit.messages",
    "AssistantTurn": "meeting_gym.agentkit.messages",
    "assistant_turn": "meeting_gym.agentkit.messages",
    "initial_messages": "meeting_gym.agentkit.messages",
    "message_to_action": "meeting_gym.agentkit.messages",
    "observation_messages": "meeting_gym.agentkit.messages",
    "split_results": "meeting_gym.agentkit.messages",
    "tools_for": "meeting_gym.agentkit.messages",
}
# moved to core in 0.3.0 (the grammar is the env's, not the agent's)
_PROTOCOL = (
    "ACCEPTED_FORMS",
    "Action",
    "AnswerAction",
    "InvalidAction",
    "ToolCall",
    "ToolCallsAction",
    "extract_answer",
    "format_answer",
    "format_tool_call",
    "parse_action",
    "protocol_instructions",
)
_TOOLS = ("ERROR_PREFIX", "Tool", "ToolSet", "is_error")
_old_protocol = alias_getattr(__name__, "meeting_gym.core.protocol", _PROTOCOL, depth=2)
_old_tools = alias_getattr(__name__, "meeting_gym.core.tools", _TOOLS, depth=2)


def _moved(name: str) -> Any:
    if name in _TOOLS:
        return _old_tools(name)
    return _old_protocol(name)


__getattr__ = lazy_getattr(globals(), _NAMES, _moved)


def __dir__() -> list[str]:
    return sorted([*globals(), *_NAMES])


__all__ = sorted(_NAMES)
