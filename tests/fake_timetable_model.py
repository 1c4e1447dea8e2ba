"""The scripted ``timetable`` model of the test server: the solver's plan as tool calls.

It reads only the conversation: the first user message is TimetablePlanner's first
observation, from which the ``solver`` policy plans (the documented timetable for the 23
catalogue scenarios, a CP-SAT solve otherwise); the number of assistant messages so far
says which action comes next. Each reply is one native tool call (one tool per action
type), the last one ``submit_timetable``.
"""

from __future__ import annotations

import json
from typing import Any

from meeting_gym.envs.timetable_planner.policies import SolverPolicy


def timetable_reply(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The assistant message after ``messages``."""
    users = [m for m in messages if m["role"] == "user"]
    if not users:
        raise ValueError("no user message")
    turn = sum(1 for m in messages if m["role"] == "assistant")
    policy = SolverPolicy()
    policy.reset(users[0]["content"], {})
    for _ in range(turn):
        policy.act("")
    action = json.loads(policy.act(""))
    name = action.pop("action_type")
    call = {
        "id": f"call_{turn}_0",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(action)},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}
