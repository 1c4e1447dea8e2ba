"""Generic text-agent layer: typed tools and the text protocol for tool calls and answers.

Nothing here knows about any particular environment; environments build a
:class:`ToolSet` from their own tool functions and use :func:`parse_action` to read
model turns.
"""

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
    "Action",
    "AnswerAction",
    "InvalidAction",
    "Tool",
    "ToolCall",
    "ToolCallsAction",
    "ToolSet",
    "extract_answer",
    "format_answer",
    "format_tool_call",
    "is_error",
    "parse_action",
    "protocol_instructions",
]
