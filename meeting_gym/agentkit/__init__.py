"""Generic text-agent layer: typed tools and the text protocol for tool calls and answers.

Nothing here knows about any particular environment; environments build a
:class:`ToolSet` from their own tool functions and use :func:`parse_action` to read
model turns. :mod:`~meeting_gym.agentkit.messages` converts chat messages to and from
text-protocol actions, and :mod:`~meeting_gym.agentkit.llm` runs an episode against
any OpenAI-compatible endpoint (``openai`` is imported only when it is used).
"""

from meeting_gym.agentkit.llm import (
    LLMEpisode,
    RetryPolicy,
    create_completion,
    is_retryable,
    make_client,
    run_episode,
)
from meeting_gym.agentkit.messages import (
    TOOL_PROTOCOLS,
    AssistantTurn,
    assistant_turn,
    initial_messages,
    message_to_action,
    observation_messages,
    split_results,
    tools_for,
)
from meeting_gym.agentkit.protocol import (
    ACCEPTED_FORMS,
    Action,
    AnswerAction,
    InvalidAction,
    ToolCall,
    ToolCallsAction,
    extract_answer,
    format_answer,
    format_tool_call,
    parse_action,
    protocol_instructions,
)
from meeting_gym.agentkit.tools import ERROR_PREFIX, Tool, ToolSet, is_error

__all__ = [
    "ACCEPTED_FORMS",
    "ERROR_PREFIX",
    "TOOL_PROTOCOLS",
    "Action",
    "AnswerAction",
    "AssistantTurn",
    "InvalidAction",
    "LLMEpisode",
    "RetryPolicy",
    "Tool",
    "ToolCall",
    "ToolCallsAction",
    "ToolSet",
    "assistant_turn",
    "create_completion",
    "extract_answer",
    "format_answer",
    "format_tool_call",
    "initial_messages",
    "is_error",
    "is_retryable",
    "make_client",
    "message_to_action",
    "observation_messages",
    "parse_action",
    "protocol_instructions",
    "run_episode",
    "split_results",
    "tools_for",
]
