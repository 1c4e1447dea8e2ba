"""An OpenEnv server and client for every registered env (``pip install "meeting-gym[serve]"``).

``meeting-gym serve --env ID`` runs :func:`create_server_app` under uvicorn: OpenEnv's
routes (``/health /metadata /schema /reset /step /state /ws``), one env per WebSocket
session, many sessions at once, idle sessions expired. Each env gets typed models
derived from its task:

* the action: for a task with tools, exactly one of ``tool_call`` (``{"name",
  "arguments"}``, the name one of the task's tools), ``tool_calls`` (several, run in
  order in one turn), ``answer`` (the content of the final answer block) or ``text`` (a
  raw text-protocol action, as an LLM wrote it); for a single-turn task, ``answer`` or
  ``text``;
* the observation: ``text`` (what ``env.step`` returned) and ``info`` (its info), with
  OpenEnv's ``reward`` and ``done``;
* the state: ``env_id``, ``item_id``, ``turn``, ``max_turns``, ``done``.

``reset`` takes ``seed`` and the env's own reset options by name (``split`` and
``index``, ``split_seed``, ``difficulty``, ``item``, and the task's own, such as
MeetingSlot's ``scenario_id``). Everything runs through ``gymnasium.make(env_id,
mode="text")``: the reward a client sees is the env's own.

Plain HTTP ``/reset`` and ``/step`` are stateless in OpenEnv (each request builds a
fresh env), so an episode is played over the WebSocket with :func:`client` (async, or
``.sync()`` for blocking use). Bad payloads get an error that names the field: a 422
over HTTP, an error message over the WebSocket, whose session stays usable.

No client can hurt another: ``/ws`` is meeting_gym's own handler over OpenEnv's session
pool (:class:`_Sessions`: openenv-core 0.3's ended sessions on malformed frames and left
reaped sockets open), HTTP bodies, frames, nesting and connections are bounded, and
plain-HTTP sessions are refused. There is no authentication: docs/guides/serving.md has
the protocol, every bound and its value, and how to run the server behind a proxy.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import socket
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

import gymnasium as gym
import numpy as np

from meeting_gym.core.registry import task_class
from meeting_gym.core.splits import SPLIT_OPTIONS
from meeting_gym.core.text_env import MAX_CALLS_PER_TURN

INSTALL_HINT = 'the OpenEnv server needs openenv-core: pip install "meeting-gym[serve]"'
DEFAULT_MAX_SESSIONS = 64
DEFAULT_IDLE_TIMEOUT_S = 300.0


def _openenv() -> Any:
    try:
        from openenv.core.env_server import interfaces, types
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ImportError(INSTALL_HINT) from exc
    return interfaces, types


class NoEpisodeError(ValueError):
    """A step without an episode (plain HTTP ``/step`` is stateless: use the WebSocket)."""


def jsonable(value: Any) -> Any:
    """``value`` with numpy arrays and scalars turned into lists and numbers."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


@dataclass(frozen=True)
class Models:
    """The typed OpenEnv classes of one env id."""

    env_id: str
    action: type
    observation: type
    state: type
    environment: type
    reset_options: frozenset[str]
    object_fields: tuple[str, ...] = ()


@cache
def models(env_id: str) -> Models:
    """The action, observation, state and server environment classes of ``env_id``."""
    from pydantic import BaseModel, ConfigDict, Field, model_validator
    from pydantic_core import PydanticCustomError

    interfaces, types = _openenv()
    cls = task_class(env_id)
    stem = re.sub(r"[^0-9A-Za-z]", "", env_id.rsplit("-v", 1)[0])  # MeetingSlot-v0: MeetingSlot
    toolset = cls.toolset
    answer_tag = cls.answer_tag
    options = frozenset(SPLIT_OPTIONS | {"item"} | cls.reset_options)

    fields: dict[str, Any] = {}
    if cls.answers:
        fields["answer"] = (
            str | None,
            Field(None, description=f"the final answer: the content of <{answer_tag}>...</..>"),
        )
    fields["text"] = (
        str | None,
        Field(None, description="a raw text-protocol action, as an LLM wrote it"),
    )
    if toolset is not None:
        names = tuple(tool.name for tool in toolset)

        class ToolCall(BaseModel):
            model_config = ConfigDict(extra="forbid")
            name: Literal[names]  # type: ignore[valid-type]
            arguments: dict[str, Any] = Field(default_factory=dict)

        ToolCall.__name__ = f"{stem}ToolCall"
        fields["tool_call"] = (ToolCall | None, Field(None, description="one tool call"))
        fields["tool_calls"] = (
            list[ToolCall] | None,
            Field(None, min_length=1, max_length=MAX_CALLS_PER_TURN, description="calls, in order"),
        )
    choices = tuple(fields)
    # the task's own action object, field by field (TimetablePlanner: its predecessor's
    # TimetablePlannerAction, so old payloads work unchanged); any JSON value, as there:
    # the env's parser coerces and names what is wrong. OpenEnv's base has ``metadata``.
    object_fields = tuple(name for name in cls.action_fields if name != "metadata")
    for name in object_fields:
        fields[name] = (Any, Field(None, description=f"the action object's {name}"))
    if object_fields:
        choices = (*choices, "an action object (" + ", ".join(object_fields) + ")")

    def given_choices(self: Any) -> list[str]:
        given = [name for name in fields if name not in object_fields]
        given = [name for name in given if getattr(self, name) is not None]
        if any(getattr(self, name) is not None for name in object_fields):
            given.append("action object")
        return given

    def exactly_one(self: Any) -> Any:
        given = given_choices(self)
        if len(given) != 1:
            # a custom error keeps the error's context JSON-serialisable: OpenEnv 0.3 drops
            # the WebSocket session when a ValueError object sits in it
            raise PydanticCustomError(
                "one_action",
                "give exactly one of {choices} (got {count})",
                {"choices": ", ".join(choices), "count": len(given)},
            )
        return self

    from pydantic import create_model

    action = create_model(
        f"{stem}Action",
        __base__=types.Action,
        __validators__={"exactly_one": model_validator(mode="after")(exactly_one)},
        **fields,
    )
    observation = create_model(
        f"{stem}Observation",
        __base__=types.Observation,
        text=(str, Field("", description="the env's observation")),
        info=(dict[str, Any], Field(default_factory=dict, description="the env's info")),
    )
    state = create_model(
        f"{stem}State",
        __base__=types.State,
        env_id=(str, env_id),
        item_id=(str | None, None),
        turn=(int, 0),
        max_turns=(int, 0),
        done=(bool, False),
    )
    environment = type(
        f"{stem}Environment",
        (_ServedEnv, interfaces.Environment),
        {
            "SUPPORTS_CONCURRENT_SESSIONS": True,
            "env_id": env_id,
            "models": None,
            "__doc__": f"The OpenEnv server environment of {env_id}.",
        },
    )
    built = Models(env_id, action, observation, state, environment, options, object_fields)
    environment.models = built
    return built


def to_text(action: Any, answer_tag: str, object_fields: tuple[str, ...] = ()) -> str:
    """The text-protocol action an OpenEnv action stands for."""
    given = {name: getattr(action, name) for name in object_fields}
    given = {name: value for name, value in given.items() if value is not None}
    if given:  # the action object, as JSON (null fields left out: "missing", as before)
        return json.dumps(given, ensure_ascii=False).replace("<", "\\u003c")
    if getattr(action, "text", None) is not None:
        return action.text
    if getattr(action, "answer", None) is not None:
        return f"<{answer_tag}>{action.answer}</{answer_tag}>"
    calls = action.tool_calls if getattr(action, "tool_calls", None) else [action.tool_call]
    payload = [{"name": call.name, "arguments": call.arguments} for call in calls]
    # the text protocol reads a JSON array of calls; "<" escaped as format_tool_call does
    return json.dumps(payload, ensure_ascii=False).replace("<", "\\u003c")


class _ServedEnv:
    """One session's env: OpenEnv's Environment interface over ``gym.make(env_id, mode="text")``.

    Mixed into a per-env subclass of OpenEnv's ``Environment`` by :func:`models`.
    """

    env_id: str
    models: Models

    def __init__(self, **env_kwargs: Any) -> None:
        super().__init__()
        self.env = gym.make(self.env_id, mode="text", disable_env_checker=True, **env_kwargs)
        self.episode_id: str | None = None
        self.steps = 0
        self.last_info: dict[str, Any] = {}
        self.done = False
        self.started = False

    def reset(self, seed: int | None = None, episode_id: str | None = None, **options: Any) -> Any:
        unknown = sorted(set(options) - self.models.reset_options)
        if unknown:
            known = ", ".join(sorted(self.models.reset_options))
            raise ValueError(f"unknown reset field(s) {', '.join(unknown)}; known: seed, {known}")
        observation, info = self.env.reset(seed=seed, options=options or None)
        self.episode_id, self.steps, self.done, self.started = episode_id, 0, False, True
        self.last_info = jsonable(info)
        return self.models.observation(text=observation, info=self.last_info, reward=None)

    def step(self, action: Any, timeout_s: float | None = None, **kwargs: Any) -> Any:
        if not self.started:
            raise NoEpisodeError(
                "no episode: call reset first (plain HTTP /step is stateless; "
                "play episodes over /ws, e.g. with meeting_gym.adapters.openenv.client)"
            )
        if self.done:
            raise NoEpisodeError("the episode is over: call reset")
        text = to_text(action, self.env.unwrapped.task.answer_tag, self.models.object_fields)
        observation, reward, terminated, truncated, info = self.env.step(text)
        self.steps += 1
        self.done = bool(terminated or truncated)
        self.last_info = jsonable(info)
        return self.models.observation(
            text=observation, info=self.last_info, reward=float(reward), done=self.done
        )

    @property
    def state(self) -> Any:
        base = self.env.unwrapped
        item = None if base.episode is None else base.episode.item_id
        return self.models.state(
            episode_id=self.episode_id,
            step_count=self.steps,
            item_id=item,
            turn=base.turns,
            max_turns=base.max_turns,
            done=self.done,
        )

    def get_metadata(self) -> Any:
        from meeting_gym import __version__

        _, types = _openenv()
        task = self.env.unwrapped.task
        return types.EnvironmentMetadata(
            name=self.env_id,
            description=f"{self.env_id}: {task.summary} (meeting_gym {__version__})",
            version=__version__,
            documentation_url="the meeting_gym README, section OpenEnv",
        )

    def close(self) -> None:
        self.env.close()


MAX_FRAME_BYTES = 1 << 23
"""The largest WebSocket frame read (8 MiB): room for an action of MAX_ACTION_CHARS
characters even if every one is a JSON escape. A larger frame closes the connection
(code 1009, the WebSocket protocol's "message too big")."""
MAX_HTTP_BODY_BYTES = 1 << 23
"""The largest HTTP request body read (8 MiB); a larger one gets 413, unread."""
MAX_MESSAGE_DEPTH = 64
"""The deepest nesting of lists and objects in one WebSocket message."""
MAX_ERROR_CHARS = 2000
"""What an error reply quotes of a message, an exception or an input, at most."""
EXTRA_CONNECTIONS = 64
"""Connections (HTTP requests and refused WebSockets) served beside ``max_sessions``
sessions; past them uvicorn answers 503 (it bounds the bodies held at once)."""
_LOG = "uvicorn.error"


class _BodyLimit:
    """ASGI middleware: an HTTP body over ``limit`` bytes gets 413 before anything parses it.

    OpenEnv's routes read bodies whole, without a bound (a 50 MB ``/step`` was parsed).
    """

    def __init__(self, app: Any, limit: int = MAX_HTTP_BODY_BYTES) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or ()).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            await self._refuse(send)
            return
        body = bytearray()
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client left
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.limit:
                await self._refuse(send)
                return
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": bytes(body), "more_body": False}

        await self.app(scope, replay, send)

    async def _refuse(self, send: Any) -> None:
        detail = json.dumps({"detail": f"request body over {self.limit} bytes"}).encode()
        headers = [(b"content-type", b"application/json"), (b"connection", b"close")]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": detail})


def _short(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def _depth_over(value: Any, limit: int) -> bool:
    """Whether ``value`` nests lists and objects deeper than ``limit`` (iterative)."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            if depth > limit:
                return True
            children = node.values() if isinstance(node, dict) else node
            stack.extend((child, depth + 1) for child in children)
    return False


def _error(message: str, code: str, **extra: Any) -> dict[str, Any]:
    return {"type": "error", "data": {"message": _short(message), "code": code, **extra}}


def _validation_errors(exc: Any) -> list[dict[str, Any]]:
    """pydantic's errors, each input quoted within MAX_ERROR_CHARS, at most 20."""
    out = []
    for error in exc.errors(include_url=False, include_context=False)[:20]:
        entry = {k: error[k] for k in ("type", "loc", "msg") if k in error}
        if "input" in error:
            shown = json.dumps(jsonable(error["input"]), ensure_ascii=True, default=repr)
            entry["input"] = _short(shown, 200)
        out.append(entry)
    return out


def _encode(reply: dict[str, Any]) -> str:
    """The reply as JSON text that always encodes: non-ASCII (a lone surrogate too) escaped.

    OpenEnv's replies are UTF-8 text, which a lone surrogate (an answer holding
    ``"\ud800"``) cannot be: the step ran but its reply failed, and the client never
    saw its reward. An escape carries the same string to any JSON reader.
    """
    return json.dumps(reply, ensure_ascii=True, allow_nan=False, default=str)


class _Sessions:
    """meeting_gym's ``/ws``: OpenEnv's session pool and message protocol, hardened.

    OpenEnv 0.3's own ``/ws`` handler (``HTTPEnvServer.register_routes``) is the cause of
    these, so this replaces it, keeping its pool (``_create_session``, the idle reaper,
    the capacity) and its messages (``reset``, ``step``, ``state``, ``close``, the same
    replies and error codes):

    * a message that is not a JSON object (``[1,2]``, ``"reset"``, ``null``), a binary
      frame, nesting past :data:`MAX_MESSAGE_DEPTH` or an integer JSON cannot read ended
      the session; here each gets an error reply and the session stays usable;
    * a reply holding a lone surrogate failed to serialise after the step ran;
    * the reaper freed an idle session's slot but left its socket open and playable
      (so the cap could be passed without limit); here the socket is closed (1001);
    * ``state`` did not count as activity; here it does;
    * a client gone without a close handshake logged a 4.4 KB traceback; here one line.
    """

    def __init__(self, server: Any, built: Models) -> None:
        self.server = server
        self.built = built
        self.sockets: dict[str, Any] = {}
        self.log = logging.getLogger(_LOG)
        destroy = server._destroy_session

        async def destroy_and_close(session_id: str) -> None:
            # the reaper (and our own clean-up) destroys through here: close the socket too
            websocket = self.sockets.pop(session_id, None)
            await destroy(session_id)
            if websocket is not None:
                await self._close(websocket, 1001, "session expired (idle timeout)")

        server._destroy_session = destroy_and_close

    @staticmethod
    async def _close(websocket: Any, code: int, reason: str = "") -> None:
        from starlette.websockets import WebSocketDisconnect, WebSocketState

        if websocket.application_state == WebSocketState.DISCONNECTED:
            return
        # closing already, or gone: nothing left to tell
        with contextlib.suppress(RuntimeError, OSError, WebSocketDisconnect):
            await websocket.close(code=code, reason=reason)

    async def endpoint(self, websocket: Any) -> None:
        from openenv.core.env_server.exceptions import (
            EnvironmentFactoryError,
            SessionCapacityError,
        )

        await websocket.accept()
        try:
            session_id, env = await self.server._create_session()
        except SessionCapacityError as exc:
            reply = _error(str(exc), "CAPACITY_REACHED", active_sessions=exc.active_sessions)
            reply["data"]["max_sessions"] = exc.max_sessions
            await self._send_and_close(websocket, reply, 1013)
            return
        except EnvironmentFactoryError as exc:
            reply = _error(str(exc), "FACTORY_ERROR", factory_name=exc.factory_name)
            await self._send_and_close(websocket, reply, 1011)
            return
        self.sockets[session_id] = websocket
        try:
            await self._serve(websocket, session_id, env)
        finally:
            self.sockets.pop(session_id, None)
            await self.server._destroy_session(session_id)
            await self._close(websocket, 1000)

    async def _send_and_close(self, websocket: Any, reply: dict[str, Any], code: int) -> None:
        from starlette.websockets import WebSocketDisconnect

        with contextlib.suppress(RuntimeError, OSError, WebSocketDisconnect):
            await websocket.send_text(_encode(reply))
        await self._close(websocket, code)

    async def _serve(self, websocket: Any, session_id: str, env: Any) -> None:
        from starlette.websockets import WebSocketDisconnect

        while True:
            try:
                message = await websocket.receive()
            except (RuntimeError, OSError, WebSocketDisconnect):
                return
            if message["type"] == "websocket.disconnect":
                code = message.get("code", 1000)
                if code not in (1000, 1001) and session_id in self.server._sessions:
                    peer = websocket.client
                    where = f"{peer.host}:{peer.port}" if peer else "a client"
                    self.log.warning("%s left without a close handshake (code %s)", where, code)
                return
            if session_id not in self.server._sessions:
                return  # reaped between two messages: the socket is being closed
            text = message.get("text")
            if text is None:
                reply: dict[str, Any] | None = _error(
                    "binary frames are not read: send each message as JSON text", "INVALID_JSON"
                )
            else:
                reply = await self._answer(session_id, env, text)
            if reply is None:  # "close"
                return
            try:
                await websocket.send_text(_encode(reply))
            except (RuntimeError, OSError, WebSocketDisconnect):
                return

    async def _answer(self, session_id: str, env: Any, text: str) -> dict[str, Any] | None:
        from pydantic import ValidationError

        try:
            message = json.loads(text)
        except RecursionError:
            return _error("invalid JSON: nested too deeply", "INVALID_JSON")
        except ValueError as exc:  # JSONDecodeError, or an integer of too many digits
            return _error(f"invalid JSON: {exc}", "INVALID_JSON")
        if not isinstance(message, dict):
            kind = type(message).__name__
            return _error(
                f'a message is a JSON object with a "type" (reset, step, state, close), got {kind}',
                "VALIDATION_ERROR",
            )
        if _depth_over(message, MAX_MESSAGE_DEPTH):
            return _error(f"message nested deeper than {MAX_MESSAGE_DEPTH} levels", "INVALID_JSON")
        kind = message.get("type")
        data = message.get("data", {})
        server = self.server
        try:
            if kind == "close":
                return None
            if kind == "state":
                server._update_session_activity(session_id)
                state = await server._run_in_session_executor(session_id, lambda: env.state)
                return {"type": "state", "data": state.model_dump()}
            if kind not in ("reset", "step"):
                return _error(f"Unknown message type: {_short(repr(kind), 200)}", "UNKNOWN_TYPE")
            if not isinstance(data, dict):
                return _error(
                    f'"data" must be a JSON object, got {type(data).__name__}', "VALIDATION_ERROR"
                )
            if kind == "reset":
                observation = await server._run_in_session_executor(session_id, env.reset, **data)
                server._update_session_activity(session_id)
            else:
                action = self.built.action.model_validate(data)
                observation = await server._run_in_session_executor(session_id, env.step, action)
                server._update_session_activity(session_id, increment_step=True)
        except ValidationError as exc:
            reply = _error("Invalid message", "VALIDATION_ERROR")
            reply["data"]["errors"] = _validation_errors(exc)
            return reply
        except Exception as exc:  # any failure of one request is its reply, never the session's
            return _error(str(exc) or type(exc).__name__, "EXECUTION_ERROR")
        from openenv.core.env_server.serialization import serialize_observation

        return {"type": "observation", "data": jsonable(serialize_observation(observation))}


def create_server_app(
    env_id: str,
    *,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    idle_timeout_s: float | None = DEFAULT_IDLE_TIMEOUT_S,
    **env_kwargs: Any,
) -> Any:
    """The ASGI app serving ``env_id``: OpenEnv's routes, meeting_gym's ``/ws`` sessions.

    HTTP bodies are bounded (:data:`MAX_HTTP_BODY_BYTES`); ``/ws`` is :class:`_Sessions`;
    plain-HTTP sessions (``POST /mcp`` ``openenv/session/create``) are refused and the
    ``/mcp`` WebSocket is not served (see docs/guides/serving.md).
    """
    from fastapi import FastAPI, Request
    from fastapi.responses import JSONResponse
    from openenv.core.env_server.http_server import HTTPEnvServer
    from openenv.core.env_server.types import ConcurrencyConfig
    from starlette.routing import Route, WebSocketRoute

    if isinstance(max_sessions, bool) or not isinstance(max_sessions, int) or max_sessions < 1:
        raise ValueError(f"max_sessions must be at least 1, got {max_sessions!r}")
    if idle_timeout_s is not None and not (0 < idle_timeout_s < float("inf")):
        raise ValueError(
            f"idle_timeout_s must be a positive number of seconds (or None), got {idle_timeout_s!r}"
        )
    built = models(env_id)
    # a class with the session flag (OpenEnv checks it on the factory), made with env_kwargs
    factory = built.environment
    if env_kwargs:
        served = factory

        def init(self: Any) -> None:
            served.__init__(self, **env_kwargs)

        factory = type(served.__name__, (served,), {"__init__": init})
    app = FastAPI(title=f"meeting_gym {env_id} (OpenEnv)")
    server = HTTPEnvServer(
        factory,
        built.action,
        built.observation,
        concurrency_config=ConcurrencyConfig(
            max_concurrent_envs=max_sessions, session_timeout=idle_timeout_s
        ),
    )
    server.register_routes(app)
    sessions = _Sessions(server, built)
    mcp_post = None
    kept = []
    for route in app.router.routes:
        path = getattr(route, "path", None)
        if isinstance(route, WebSocketRoute) and path in ("/ws", "/mcp"):
            continue  # replaced (/ws) or not served (/mcp: no MCP tools here)
        if isinstance(route, Route) and path == "/mcp":
            mcp_post = route.endpoint
            continue
        kept.append(route)
    app.router.routes[:] = kept
    app.router.routes.append(WebSocketRoute("/ws", sessions.endpoint))  # Starlette's: no DI

    async def mcp(request: Request) -> Any:
        # OpenEnv's HTTP session holds a WebSocket slot that only the idle reaper frees
        # (never, without an idle timeout) and has no connection to close: refused here
        try:
            method = json.loads(await request.body()).get("method")
        except (ValueError, AttributeError, RecursionError):
            method = None
        if method == "openenv/session/create":
            return JSONResponse(
                {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {
                        "code": -32601,
                        "message": "openenv/session/create is not served here: "
                        "sessions are WebSocket connections (/ws)",
                    },
                }
            )
        assert mcp_post is not None
        return JSONResponse(await mcp_post(request))

    if mcp_post is not None:  # Starlette's route: the endpoint gets the request as is
        app.router.routes.append(Route("/mcp", mcp, methods=["POST"]))

    async def bad_request(request: Request, exc: Exception) -> JSONResponse:
        # a reset option or a step the env refuses: the client's mistake, named, not a 500
        status = 409 if isinstance(exc, NoEpisodeError) else 422
        return JSONResponse(status_code=status, content={"detail": _short(str(exc))})

    app.add_exception_handler(ValueError, bad_request)
    app.add_middleware(_BodyLimit, limit=MAX_HTTP_BODY_BYTES)
    return app


def uvicorn_options(max_sessions: int = DEFAULT_MAX_SESSIONS) -> dict[str, Any]:
    """The uvicorn settings that bound a server's frames and connections."""
    return {"ws_max_size": MAX_FRAME_BYTES, "limit_concurrency": max_sessions + EXTRA_CONNECTIONS}


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port``; a ``ValueError`` in one line if it cannot be."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family, kind, proto, _, address = infos[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise ValueError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise ValueError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock


def serve(
    env_id: str,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    idle_timeout_s: float | None = DEFAULT_IDLE_TIMEOUT_S,
    log_level: str = "warning",
    on_listening: Callable[[str, int], None] | None = None,
) -> None:
    """Run the server until interrupted (uvicorn); ``on_listening(host, port)`` once it listens.

    A port that cannot be bound (in use, say) is a ``ValueError``, before anything prints.
    """
    import uvicorn

    app = create_server_app(env_id, max_sessions=max_sessions, idle_timeout_s=idle_timeout_s)
    sock = listen(host, port)
    config = uvicorn.Config(app, log_level=log_level, **uvicorn_options(max_sessions))

    class Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            if on_listening is not None and not self.should_exit:
                on_listening(host, sock.getsockname()[1])

    try:
        Server(config).run(sockets=[sock])
    finally:
        sock.close()


@cache
def client_class(env_id: str) -> type:
    """The async OpenEnv client class of ``env_id`` (``.sync()`` on an instance blocks)."""
    from openenv.core.client_types import StepResult
    from openenv.core.env_client import EnvClient

    built = models(env_id)

    def step_payload(self: Any, action: Any) -> dict[str, Any]:
        if isinstance(action, dict):
            action = built.action(**action)
        return action.model_dump(exclude_none=True, exclude={"metadata"})

    def parse_result(self: Any, payload: dict[str, Any]) -> Any:
        return StepResult(
            observation=built.observation(**payload.get("observation", {})),
            reward=payload.get("reward"),
            done=bool(payload.get("done", False)),
        )

    def parse_state(self: Any, payload: dict[str, Any]) -> Any:
        return built.state(**payload)

    stem = built.action.__name__.removesuffix("Action")
    return type(
        f"{stem}Client",
        (EnvClient,),
        {
            "_step_payload": step_payload,
            "_parse_result": parse_result,
            "_parse_state": parse_state,
            "__doc__": f"Async OpenEnv client of {env_id}; ``.sync()`` gives a blocking one.",
        },
    )


def client(env_id: str, base_url: str, **kwargs: Any) -> Any:
    """An async client of ``env_id`` at ``base_url`` (``await c.reset(...)``; ``c.sync()``)."""
    return client_class(env_id)(base_url=base_url, **kwargs)
