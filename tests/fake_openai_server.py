"""A scripted OpenAI-compatible chat server on 127.0.0.1, for tests and demos.

It implements ``POST /v1/chat/completions`` (and ``/chat/completions``) and
``GET /v1/models`` with OpenAI-shaped JSON, including ``usage``. The ``model`` of
each request picks a scripted behaviour:

``gold-native``
    Plays the gold strategy with native ``tool_calls``. It knows nothing but the
    conversation: it reads the duration and window from the question and the tool
    results from the ``tool`` messages, rebuilds the world and solves it with the
    package's solver (by replaying MeetingSlot's ``GoldPolicy``). Asked a
    CalendarMath question, it reads the inputs from the question and answers gold.
``gold-text``
    The same through the text protocol: calls in ``content``, results read from
    ``user`` messages; no ``tool_calls``.
``cron``
    Answers a CronSchedule question from its text alone (write: reads the English
    schedule back, read: computes the run times), in a ``<cron>`` or ``<times>``
    block. Where a ``next_runs`` tool is on offer (sent as ``tools``: native; named
    in the system prompt: text protocol) it first calls it on its expression, then
    answers.
``answer-now``
    Answers ``2024-03-11T09:00:00Z`` at once, without tools.
``malformed``
    Turn 1: two native calls, one with arguments that are not JSON and one to an
    unknown tool; turn 2: prose with neither a call nor an answer; turn 3:
    ``<answer>NONE</answer>``.
``never-answers``
    Calls ``list_attendees`` forever (the env truncates).
``flaky``
    The first two requests get HTTP 500, later ones play ``gold-native``.
``rate-limited``
    The first request gets HTTP 429, later ones play ``gold-native``.
``always-500``
    Every request gets HTTP 500.
``hang``
    Never answers until the server stops (for client timeouts).
``timetable``
    Plays TimetablePlanner's solver, one native tool call per turn
    (``fake_timetable_model.py``).

Any other model gets HTTP 404. A request with ``"stream": true`` gets the same reply as
server-sent events (``chat.completion.chunk`` deltas: the role, the content and each
tool call's arguments in pieces, the finish reason, a usage chunk when
``stream_options.include_usage`` asks for it, then ``[DONE]``), as vLLM and OpenAI
stream. Run it by hand with::

    PYTHONPATH=. python tests/fake_openai_server.py --port 8000
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from meeting_gym.core.protocol import AnswerAction, ToolCallsAction, format_tool_call, parse_action
from meeting_gym.envs.calendar_math import dates
from meeting_gym.envs.cron_schedule.policies import gold_answer, read_question
from meeting_gym.envs.meeting_slot.policies import GoldPolicy

MODELS = (
    "gold-native",
    "gold-text",
    "cron",
    "answer-now",
    "malformed",
    "never-answers",
    "flaky",
    "rate-limited",
    "always-500",
    "hang",
    "timetable",
)
FAILURES = {"flaky": (500, 500), "rate-limited": (429,)}
CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")

_DURATION = re.compile(r"for a (\d+)-minute meeting")
_DATE = r"(\d{4}-\d{2}-\d{2})"
_ADD = re.compile(rf"What date is (\d+) days? (after|before) {_DATE}\?")
_BETWEEN = re.compile(rf"How many days after {_DATE} is {_DATE}\?")
_WEEKDAY = re.compile(rf"What day of the week is {_DATE}\?")
_WINDOW = re.compile(r"Search window: (\d{4}-\d{2}-\d{2}) 00:00Z .*?\((\d+) UTC day")


class ScriptError(Exception):
    """The conversation is not one the scripted model can read (HTTP 400)."""


# ------------------------------------------------------------------ scripted models


def _request_from_question(text: str) -> dict[str, Any]:
    duration, window = _DURATION.search(text), _WINDOW.search(text)
    if duration is None or window is None:
        raise ScriptError("the first user message is not a MeetingSlot question")
    return {
        "duration_minutes": int(duration.group(1)),
        "window_start": window.group(1),
        "window_days": int(window.group(2)),
    }


def _observations(messages: list[dict[str, Any]]) -> list[str]:
    """What the env said after each assistant message, rebuilt from the conversation.

    Consecutive ``tool`` messages after an assistant message are one turn's results
    (one result as is, several as a JSON array, as the env renders them); a ``user``
    message after an assistant message is that turn's observation.
    """
    observations: list[str] = []
    index = 0
    while index < len(messages):
        if messages[index]["role"] != "assistant":
            index += 1
            continue
        index += 1
        results: list[str] = []
        while index < len(messages) and messages[index]["role"] == "tool":
            results.append(messages[index]["content"])
            index += 1
        if results:
            observations.append(results[0] if len(results) == 1 else json.dumps(results))
        elif index < len(messages) and messages[index]["role"] == "user":
            observations.append(messages[index]["content"])
            index += 1
    return observations


def _calendar_math_gold(question: str) -> str | None:
    """The gold answer of a CalendarMath question read from its text (None: not one)."""
    if match := _ADD.search(question):
        n = int(match.group(1)) * (1 if match.group(2) == "after" else -1)
        return dates.gold("add_days", {"start": match.group(3), "n": n})
    if match := _BETWEEN.search(question):
        return dates.gold("days_between", {"start": match.group(1), "end": match.group(2)})
    if match := _WEEKDAY.search(question):
        return dates.gold("weekday", {"start": match.group(1)})
    return None


def _gold_output(messages: list[dict[str, Any]]) -> str:
    """Replay GoldPolicy over the conversation; its next text-protocol output."""
    users = [m for m in messages if m["role"] == "user"]
    if not users:
        raise ScriptError("no user message")
    question = users[0]["content"]
    calendar_math = _calendar_math_gold(question)
    if calendar_math is not None:
        return f"<answer>{calendar_math}</answer>"
    policy = GoldPolicy()
    policy.reset(question, {"request": _request_from_question(question)})
    output = policy.act(question)
    for observation in _observations(messages):
        output = policy.act(observation)
    return output


def _cron_reply(messages: list[dict[str, Any]], tools: Any) -> dict[str, Any]:
    """The ``cron`` model: the gold answer from the question, after one next_runs call."""
    users = [m for m in messages if m["role"] == "user"]
    try:
        question = read_question(users[0]["content"] if users else "")
    except ValueError as exc:
        raise ScriptError(str(exc)) from None
    answer = gold_answer(question)
    system = " ".join(m["content"] for m in messages if m["role"] == "system")
    offered = bool(tools) or "next_runs(" in system
    if offered and not any(m["role"] == "assistant" for m in messages):
        arguments = {"expression": answer, "after": "2024-01-01 00:00", "count": 3}
        if tools:
            call = _call(0, 0, "next_runs", json.dumps(arguments))
            return {"role": "assistant", "content": None, "tool_calls": [call]}
        return {"role": "assistant", "content": format_tool_call("next_runs", arguments)}
    tag = "cron" if question.kind == "write" else "times"
    return {"role": "assistant", "content": f"Here it is.\n<{tag}>{answer}</{tag}>"}


def _native(output: str, turn: int) -> dict[str, Any]:
    """A text-protocol output as a chat message with native ``tool_calls``."""
    parsed = parse_action(output)
    if isinstance(parsed, ToolCallsAction):
        calls = [
            {
                "id": f"call_{turn}_{i}",
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
            }
            for i, call in enumerate(parsed.calls)
        ]
        return {"role": "assistant", "content": None, "tool_calls": calls}
    if isinstance(parsed, AnswerAction):
        return {"role": "assistant", "content": output}
    raise ScriptError(f"the gold replay produced an invalid action: {parsed.reason}")


def _call(turn: int, index: int, name: str, arguments: str) -> dict[str, Any]:
    return {
        "id": f"call_{turn}_{index}",
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


def scripted_reply(model: str, messages: list[dict[str, Any]], tools: Any = None) -> dict[str, Any]:
    """The assistant message ``model`` sends after ``messages`` (``tools``: the request's)."""
    turn = sum(1 for m in messages if m["role"] == "assistant")
    if model == "cron":
        return _cron_reply(messages, tools)
    if model in ("gold-native", "flaky", "rate-limited"):
        return _native(_gold_output(messages), turn)
    if model == "gold-text":
        return {"role": "assistant", "content": _gold_output(messages)}
    if model == "answer-now":
        return {"role": "assistant", "content": "<answer>2024-03-11T09:00:00Z</answer>"}
    if model == "malformed":
        if turn == 0:
            calls = [_call(0, 0, "get_timezone", "{not json"), _call(0, 1, "teleport", "{}")]
            return {"role": "assistant", "content": None, "tool_calls": calls}
        if turn == 1:
            return {"role": "assistant", "content": "Let me think about the time zones."}
        return {"role": "assistant", "content": "<answer>NONE</answer>"}
    if model == "timetable":
        from fake_timetable_model import timetable_reply

        try:
            return timetable_reply(messages)
        except (ValueError, KeyError) as exc:
            raise ScriptError(f"not a TimetablePlanner conversation: {exc}") from exc
    if model == "never-answers":
        call = _call(turn, 0, "list_attendees", "{}")
        return {"role": "assistant", "content": None, "tool_calls": [call]}
    raise ScriptError(f"no script for model {model!r}")


# ------------------------------------------------------------------ streaming


def _halves(text: str) -> list[str]:
    """``text`` in two pieces (one if it is too short), so clients must join deltas."""
    middle = len(text) // 2
    return [text] if middle == 0 else [text[:middle], text[middle:]]


def stream_chunks(completion: dict[str, Any], include_usage: bool) -> list[dict[str, Any]]:
    """A chat completion as the ``chat.completion.chunk`` objects a streaming server sends."""
    (choice,) = completion["choices"]
    message = choice["message"]
    head = {key: completion[key] for key in ("id", "created", "model")}
    head["object"] = "chat.completion.chunk"

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [chunk({"content": piece}) for piece in _halves(message.get("content") or "")]
    for index, call in enumerate(message.get("tool_calls") or []):
        function = call["function"]
        opening = {"index": index, "id": call["id"], "type": "function"}
        opening["function"] = {"name": function["name"], "arguments": ""}
        chunks.append(chunk({"tool_calls": [opening]}))
        for piece in _halves(function["arguments"]):
            delta = {"index": index, "function": {"arguments": piece}}
            chunks.append(chunk({"tool_calls": [delta]}))
    chunks.append(chunk({}, choice["finish_reason"]))
    if include_usage:
        chunks.append({**head, "choices": [], "usage": completion["usage"]})
    return chunks


def sse_body(chunks: list[dict[str, Any]]) -> bytes:
    """Server-sent events: one ``data:`` event per chunk, then ``data: [DONE]``."""
    events = [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks]
    return ("".join(events) + "data: [DONE]\n\n").encode()


# ------------------------------------------------------------------ HTTP server


def _tokens(value: Any) -> int:
    return len(json.dumps(value)) // 4 + 1


class _Handler(BaseHTTPRequestHandler):
    server: FakeOpenAIServer.HTTPServer
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in two writes

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        self._send_body(status, json.dumps(payload).encode(), "application/json")

    def _send_body(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(body)  # fails when the client gave up (timeout test)

    def _error(self, status: int, message: str, kind: str) -> None:
        self._send(status, {"error": {"message": message, "type": kind, "code": None}})

    def do_GET(self) -> None:
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "tests"} for m in MODELS]
            self._send(200, {"object": "list", "data": data})
        else:
            self._error(404, f"no route {self.path}", "invalid_request_error")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.path not in CHAT_PATHS:
            self._error(404, f"no route {self.path}", "invalid_request_error")
            return
        try:
            request = json.loads(raw)
        except ValueError:
            self._error(400, "the body is not JSON", "invalid_request_error")
            return
        owner = self.server.owner
        model = request.get("model")
        count = owner.record(model, request, self.headers.get("Authorization"))
        if model == "hang":
            owner.release.wait()
            self._error(503, "the server is stopping", "server_error")
            return
        if model == "always-500":
            self._error(500, "scripted failure", "server_error")
            return
        failures = FAILURES.get(model, ())
        if count <= len(failures):
            status = failures[count - 1]
            self._error(status, f"scripted {status} number {count}", "server_error")
            return
        if model not in MODELS:
            self._error(404, f"the model {model!r} does not exist", "invalid_request_error")
            return
        try:
            message = scripted_reply(model, request.get("messages") or [], request.get("tools"))
        except ScriptError as exc:
            self._error(400, str(exc), "invalid_request_error")
            return
        prompt, completion = _tokens(request.get("messages")), _tokens(message)
        payload = {
            "id": f"chatcmpl-{count}",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                    "logprobs": None,
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }
        if request.get("stream"):
            usage = bool((request.get("stream_options") or {}).get("include_usage"))
            self._send_body(200, sse_body(stream_chunks(payload, usage)), "text/event-stream")
        else:
            self._send(200, payload)


class FakeOpenAIServer:
    """The scripted server on ``127.0.0.1:port`` (0 = any free port), in a thread.

    ``requests`` keeps every chat request body by model, ``authorizations`` the
    ``Authorization`` header of each; use as a context manager.
    """

    class HTTPServer(ThreadingHTTPServer):
        daemon_threads = True
        owner: FakeOpenAIServer

    def __init__(self, port: int = 0) -> None:
        self.httpd = self.HTTPServer(("127.0.0.1", port), _Handler)
        self.httpd.owner = self
        self.lock = threading.Lock()
        self.release = threading.Event()
        self.requests: dict[str, list[dict[str, Any]]] = {}
        self.authorizations: list[str | None] = []
        self.thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def record(self, model: Any, request: dict[str, Any], authorization: str | None) -> int:
        """Keep a request; returns how many requests this model has had, this one included."""
        with self.lock:
            self.authorizations.append(authorization)
            seen = self.requests.setdefault(str(model), [])
            seen.append(request)
            return len(seen)

    def count(self, model: str) -> int:
        with self.lock:
            return len(self.requests.get(model, []))

    def start(self) -> FakeOpenAIServer:
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()
        return self

    def stop(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        if self.thread is not None:
            self.thread.join()

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (0 = any)")
    args = parser.parse_args(argv)
    server = FakeOpenAIServer(args.port)
    print(f"scripted OpenAI-compatible server at {server.base_url} (Ctrl-C stops it)", flush=True)
    print(f"models: {', '.join(MODELS)}", flush=True)
    try:
        server.httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.release.set()
        server.httpd.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
