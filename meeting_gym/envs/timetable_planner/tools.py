"""The five actions as tools (one per action type, with schemas), and reading a text action.

Each action is written once, as a typed function over the episode (the ``world``): its
signature and docstring give the OpenAI tool schema (:data:`TOOLSET`), and its body plays
the JSON action object of the original, ``ajay-sreeram/timetable_planner`` (the env this
one succeeds), ``{"action_type": <tool name>, **arguments}`` through the episode engine,
so a tool call and the action object are one thing.

:func:`read_actions` turns whatever a text agent sent into the action objects to play,
never raising:

* the original's action object ``{"action_type": "assign_session", "session_id": ...}``;
* a tool call ``{"name": "assign_session", "arguments": {...}}`` (arguments may be a
  JSON-encoded string), optionally inside ``<tool_call>...</tool_call>``, as the family's
  text protocol writes it;
* a JSON array of either (at most :data:`MAX_ACTIONS` of them; native tool calls of one
  chat message arrive this way), played in order;
* a dict or list given directly instead of its JSON text.

Anything else is one unreadable action: a :class:`~.actions.Rejected` whose message is its
``action_error``, which costs the invalid-action penalty and a unit of budget, as a
malformed action did in the original. Tool-call arguments are not type-checked here:
the action's own parser coerces them with the original's rules and messages.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from meeting_gym.core.bounded import show
from meeting_gym.core.protocol import AnswerAction, InvalidAction, parse_action
from meeting_gym.core.tools import ToolSet
from meeting_gym.envs.timetable_planner.domain.actions import ACTION_TYPES, Rejected

__all__ = ["MAX_ACTIONS", "TOOLSET", "read_actions"]

MAX_ACTIONS = 32
"""Actions one text step may carry (each uses a unit of the step budget)."""

_DAY = (
    "0-based index into the grid's days (0 is the first day); a day name such as "
    '"Mon" is accepted too'
)


def assign_session(world: Any, session_id: str, day: int, start_slot: int, room_id: str) -> str:
    """Place an unassigned session on a day, from a start slot on, in a room.

    Args:
        session_id: The session to place (it must not be placed yet).
        day: 0-based index into the grid's days (0 is the first day); a day name such as "Mon" is accepted too.
        start_slot: The first slot it occupies (0-based); a session of duration L occupies L consecutive slots of that day.
        room_id: The room to hold it.
    """  # noqa: E501  (one line per argument: the schema's descriptions)
    return world.act_text(_object("assign_session", locals()))


def move_session(world: Any, session_id: str, day: int, start_slot: int, room_id: str) -> str:
    """Move a placed session to another day, start slot or room.

    Args:
        session_id: The session to move (it must be placed).
        day: 0-based index into the grid's days (0 is the first day); a day name such as "Mon" is accepted too.
        start_slot: The first slot it will occupy (0-based).
        room_id: The room to hold it.
    """  # noqa: E501
    return world.act_text(_object("move_session", locals()))


def swap_sessions(world: Any, session_id: str, target_session_id: str) -> str:
    """Exchange the (day, start slot, room) of two placed sessions; durations stay with them.

    Args:
        session_id: One placed session.
        target_session_id: The other placed session.
    """
    return world.act_text(_object("swap_sessions", locals()))


def unassign_session(world: Any, session_id: str) -> str:
    """Remove a placed session from the timetable.

    Args:
        session_id: The session to remove.
    """
    return world.act_text(_object("unassign_session", locals()))


def submit_timetable(world: Any) -> str:
    """Submit the timetable as it stands: ends the episode (+0.05 if the score is at least 0.90)."""
    return world.act_text({"action_type": "submit_timetable"})


def _object(action_type: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"action_type": action_type, **{k: v for k, v in arguments.items() if k != "world"}}


TOOLSET = ToolSet([assign_session, move_session, swap_sessions, unassign_session, submit_timetable])
assert TOOLSET.names == ACTION_TYPES


# ----------------------------------------------------------------------------- reading


def read_actions(action: Any) -> list[Mapping[str, Any] | Rejected]:
    """The action objects a text action stands for, in order (see the module docstring).

    Always at least one element; an element that cannot be an action is a
    :class:`Rejected` with the reason.
    """
    if isinstance(action, str):
        decoded = _json(action)
        if decoded is _NOT_JSON:
            return _protocol(action)
        action = decoded
    if isinstance(action, Mapping):
        return [_one(action)]
    if isinstance(action, Sequence) and not isinstance(action, str | bytes | bytearray):
        if not action:
            return [Rejected("an empty list holds no action")]
        if len(action) > MAX_ACTIONS:
            return [Rejected(f"at most {MAX_ACTIONS} actions per step, got {len(action)}")]
        return [_one(item) for item in action]
    return [Rejected(_unreadable(action))]


_NOT_JSON = object()


def _json(text: str) -> Any:
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return _NOT_JSON
    try:
        return json.loads(stripped)
    except (ValueError, RecursionError):
        return _NOT_JSON


def _protocol(text: str) -> list[Mapping[str, Any] | Rejected]:
    """``<tool_call>`` blocks (the family's text protocol), else one unreadable action."""
    parsed = parse_action(text, max_calls=MAX_ACTIONS)
    if isinstance(parsed, AnswerAction):
        return [Rejected("this env takes no answer: submit with submit_timetable")]
    if isinstance(parsed, InvalidAction):
        return [Rejected(_unreadable(text))]
    return [_tool_call(call.name, call.arguments) for call in parsed.calls]


def _one(item: Any) -> Mapping[str, Any] | Rejected:
    if isinstance(item, Mapping) and "name" in item and "action_type" not in item:
        extra = set(item) - {"name", "arguments"}
        if extra:
            return Rejected(
                f"a tool call has a name and arguments only, got {', '.join(map(str, extra))}"
            )
        return _tool_call(item["name"], item.get("arguments"))
    if isinstance(item, Mapping):
        return item
    return Rejected(_unreadable(item))


def _tool_call(name: Any, arguments: Any) -> Mapping[str, Any] | Rejected:
    if arguments is None:
        arguments = {}
    elif isinstance(arguments, str):
        decoded = _json(arguments) if arguments.strip() else {}
        if not isinstance(decoded, Mapping):
            return Rejected(f"the arguments of tool {_short(name)} are not a JSON object")
        arguments = decoded
    if not isinstance(arguments, Mapping):
        return Rejected(f"the arguments of tool {_short(name)} are not a JSON object")
    if "action_type" in arguments:
        return Rejected("a tool call's arguments carry no action_type: the tool name is it")
    return {"action_type": name, **arguments}


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else show(value, 60)
    return repr(text[:60] + "..." if len(text) > 60 else text)


def _unreadable(value: Any) -> str:
    if isinstance(value, str):
        return (
            f"could not read an action from {_short(value)}: send a JSON action object "
            '{"action_type": ...} or a tool call {"name": ..., "arguments": {...}}'
        )
    return f"an action must be a JSON object with an action_type, got a {type(value).__name__}"
