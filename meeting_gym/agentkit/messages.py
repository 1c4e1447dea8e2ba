"""Chat messages <-> text-protocol actions: the glue between a chat model and a text env.

These helpers are pure functions over plain dicts (or any object with the same
attributes, such as the ``openai`` client's ``ChatCompletionMessage``); they import no
client library, so a loop written against another client can reuse them. They work
for any environment whose ``reset`` info carries ``system_prompt`` and ``tools`` and
whose ``step`` takes the text protocol of :mod:`meeting_gym.core.protocol`.

A turn goes::

    messages = initial_messages(observation, info)
    # ... ask the model, get `reply` (an assistant message) ...
    turn = assistant_turn(reply, tool_protocol)      # normalised message + env action
    messages.append(turn.message)
    observation, reward, terminated, truncated, info = env.step(turn.action)
    messages.extend(observation_messages(observation, turn))

Two tool protocols:

* ``"native"``: the model is given ``info["tools"]`` and calls them through the chat
  API's ``tool_calls``. All calls of one assistant message become ONE env turn, a
  JSON array ``[{"name": ..., "arguments": ...}, ...]`` in order (arguments are passed
  on as the model wrote them, so malformed JSON is reported by the env, per call).
  The env answers one call with the plain result and several with a JSON array of
  results; :func:`observation_messages` splits that back into one ``tool`` message
  per ``tool_call_id``.
* ``"text"``: no tools are sent; the assistant's ``content`` is the action, and the
  observation comes back as a ``user`` message.

Edge cases in ``"native"``:

* a message whose content holds an ``<answer>...</answer>`` block is an answer, even
  if it also has ``tool_calls``; those calls are not run (the same rule as the text
  protocol: an answer is final);
* a message with no ``tool_calls`` passes its content through the text protocol, so
  text-protocol tool calls in the content still run, and a message with neither calls
  nor an answer costs a turn: the env's ``error:`` observation comes back as a
  ``user`` message, which tells the model which forms are accepted;
* if the env's observation for several calls is not a JSON array of exactly one
  result per call (for instance the whole turn was rejected), every ``tool`` message
  carries the whole observation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from meeting_gym.core.protocol import extract_answer

TOOL_PROTOCOLS = ("native", "text")


def _get(obj: Any, key: str) -> Any:
    if isinstance(obj, dict):
        return obj.get(key)
    return getattr(obj, key, None)


def check_tool_protocol(tool_protocol: str) -> None:
    """Raise ``ValueError`` unless ``tool_protocol`` is ``"native"`` or ``"text"``."""
    if tool_protocol not in TOOL_PROTOCOLS:
        raise ValueError(
            f"unknown tool_protocol {tool_protocol!r}; choose one of {', '.join(TOOL_PROTOCOLS)}"
        )


def initial_messages(
    observation: str, info: dict[str, Any], system_prompt: str | None = None
) -> list[dict[str, Any]]:
    """``[system, user]``: the env's system prompt (or ``system_prompt``) and first observation."""
    prompt = info.get("system_prompt") if system_prompt is None else system_prompt
    messages: list[dict[str, Any]] = []
    if prompt:
        messages.append({"role": "system", "content": prompt})
    messages.append({"role": "user", "content": observation})
    return messages


def tools_for(info: dict[str, Any], tool_protocol: str) -> list[dict[str, Any]] | None:
    """The ``tools`` to send with each request: ``info["tools"]`` in native mode, else None."""
    check_tool_protocol(tool_protocol)
    if tool_protocol == "text":
        return None
    return list(info.get("tools") or []) or None


def _arguments_text(arguments: Any) -> str:
    if arguments is None:
        return "{}"
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, ensure_ascii=False)


def normalize_tool_calls(message: Any, id_prefix: str = "call") -> list[dict[str, Any]]:
    """The message's tool calls as OpenAI-shaped dicts.

    ``arguments`` is kept as the model's string (a dict is JSON-encoded). A missing
    id, or one already used earlier in the message (some local servers send
    ``""`` or repeat ids), becomes ``{id_prefix}_{i}`` so that every result can be
    matched to its call.
    """
    calls: list[dict[str, Any]] = []
    seen: set[str] = set()
    for index, call in enumerate(_get(message, "tool_calls") or []):
        function = _get(call, "function")
        name = _get(function, "name") if function is not None else _get(call, "name")
        arguments = _get(function, "arguments") if function is not None else _get(call, "arguments")
        call_id = _get(call, "id")
        if not isinstance(call_id, str) or not call_id or call_id in seen:
            call_id = f"{id_prefix}_{index}"
        seen.add(call_id)
        calls.append(
            {
                "id": call_id,
                "type": "function",
                "function": {
                    "name": name if isinstance(name, str) else "",
                    "arguments": _arguments_text(arguments),
                },
            }
        )
    return calls


@dataclass(frozen=True)
class AssistantTurn:
    """One assistant message read as an env action.

    ``message``: the normalised assistant message to append to the conversation;
    ``action``: the text-protocol string to pass to ``env.step``; ``tool_call_ids``:
    the ids whose results :func:`observation_messages` must return as ``tool``
    messages (empty when the observation goes back as a ``user`` message).
    """

    message: dict[str, Any]
    action: str
    tool_call_ids: tuple[str, ...] = field(default=())


def assistant_turn(
    message: Any, tool_protocol: str = "native", id_prefix: str = "call", answer_tag: str = "answer"
) -> AssistantTurn:
    """Read an assistant message (dict or client object) as one env action (see module doc).

    ``answer_tag`` is the env's final-answer tag (reset info's ``answer_tag``; ``cron`` in
    CronSchedule-Tools): a message holding such a block is an answer even beside calls.
    """
    check_tool_protocol(tool_protocol)
    content = _get(message, "content")
    content = content if isinstance(content, str) else ""
    if tool_protocol == "text":
        return AssistantTurn({"role": "assistant", "content": content}, content)

    calls = normalize_tool_calls(message, id_prefix)
    # null content is only valid beside tool calls
    normalised: dict[str, Any] = {
        "role": "assistant",
        "content": content or ("" if not calls else None),
    }
    if calls:
        normalised["tool_calls"] = calls
    if not calls or extract_answer(content, answer_tag) is not None:
        return AssistantTurn(normalised, content)
    action = json.dumps(
        [{"name": c["function"]["name"], "arguments": c["function"]["arguments"]} for c in calls],
        ensure_ascii=False,
    )
    return AssistantTurn(normalised, action, tuple(c["id"] for c in calls))


def message_to_action(message: Any, tool_protocol: str = "native") -> str:
    """The text-protocol action for an assistant message (see :func:`assistant_turn`)."""
    return assistant_turn(message, tool_protocol).action


def split_results(observation: str, count: int) -> list[str]:
    """One result per call: ``[observation]`` for one call, the JSON array's items for more.

    If the observation is not a JSON array of ``count`` strings (the env rejected the
    whole turn, or clipped a long observation), every call gets the whole observation.
    """
    if count == 1:
        return [observation]
    try:
        items = json.loads(observation)
    except ValueError:
        items = None
    if isinstance(items, list) and len(items) == count and all(isinstance(i, str) for i in items):
        return items
    return [observation] * count


def observation_messages(observation: str, turn: AssistantTurn) -> list[dict[str, Any]]:
    """The messages that carry an env observation back to the model after ``turn``.

    One ``tool`` message per tool call when the turn was native tool calls, else one
    ``user`` message with the observation.
    """
    if not turn.tool_call_ids:
        return [{"role": "user", "content": observation}]
    results = split_results(observation, len(turn.tool_call_ids))
    return [
        {"role": "tool", "tool_call_id": call_id, "content": result}
        for call_id, result in zip(turn.tool_call_ids, results, strict=True)
    ]
