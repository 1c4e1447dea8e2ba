"""meeting_gym's ``/ws`` handler over OpenEnv's session pool, and its replies."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import sys
import threading
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from meeting_gym.adapters.openenv import limits
from meeting_gym.adapters.openenv.budget import BUDGET, REFUSED_KEY, RESERVED_KEY, Budget
from meeting_gym.adapters.openenv.fair import FairShare
from meeting_gym.adapters.openenv.logs import CLIENT_LOG, peer
from meeting_gym.adapters.openenv.served import MCP_ACTIONS, jsonable, mcp_action, tool_list
from meeting_gym.adapters.openenv.typed import Models

T = TypeVar("T")


def shorten(text: str, limit: int = limits.MAX_ERROR_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def depth_over(value: Any, limit: int) -> bool:
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


def error_reply(message: str, code: str, **extra: Any) -> dict[str, Any]:
    return {"type": "error", "data": {"message": shorten(message), "code": code, **extra}}


def validation_errors(exc: Any) -> list[dict[str, Any]]:
    """pydantic's errors, each input quoted within MAX_ERROR_CHARS, at most 20."""
    out = []
    for error in exc.errors(include_url=False, include_context=False)[:20]:
        entry = {k: error[k] for k in ("type", "loc", "msg") if k in error}
        if "input" in error:
            shown = json.dumps(jsonable(error["input"]), ensure_ascii=True, default=repr)
            entry["input"] = shorten(shown, 200)
        out.append(entry)
    return out


def rpc_result(request_id: Any, result: Any) -> dict[str, Any]:
    """An ``mcp`` reply carrying a JSON-RPC result."""
    return {"type": "mcp", "data": {"jsonrpc": "2.0", "id": request_id, "result": result}}


def rpc_error(request_id: Any, code: int, message: str) -> dict[str, Any]:
    """An ``mcp`` reply carrying a JSON-RPC error."""
    error = {"code": code, "message": shorten(message)}
    return {"type": "mcp", "data": {"jsonrpc": "2.0", "id": request_id, "error": error}}


def encode(reply: dict[str, Any]) -> str:
    """The reply as JSON text that always encodes: non-ASCII (a lone surrogate too) escaped.

    OpenEnv's replies are UTF-8 text, which a lone surrogate (an answer holding
    ``"\ud800"``) cannot be: the step ran but its reply failed, and the client never
    saw its reward. An escape carries the same string to any JSON reader.
    """
    return json.dumps(reply, ensure_ascii=True, allow_nan=False, default=str)


def observation_reply(observation: Any) -> str:
    """An observation's reply, encoded (:func:`encode`)."""
    from openenv.core.env_server.serialization import serialize_observation

    return encode({"type": "observation", "data": jsonable(serialize_observation(observation))})


class Sessions:
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
    * a client gone without a close handshake logged a 4.4 KB traceback; here one line,
      as for an invalid UTF-8 text frame, a malformed frame or one over the size bound
      (each under the bound on client lines: :class:`ClientLog`);
    * messages over SMALL_MESSAGE_BYTES count against the server's budget of bytes in
      flight (:class:`Budget`): past it, a ``SERVER_BUSY`` error and the session goes on.
    """

    CLOSE_REASONS: ClassVar[dict[int, str]] = {
        1002: "sent a malformed WebSocket frame",
        1007: "sent a text frame that is not UTF-8",
        1009: f"sent a frame over MAX_FRAME_BYTES ({limits.MAX_FRAME_BYTES:,} bytes)",
        1011: "did not answer the keepalive ping in time: closed by the server",
    }
    """Close codes uvicorn's protocol ends a connection with for the client's fault."""

    def __init__(self, server: Any, built: Models, budget: Budget | None = None) -> None:
        self.server = server
        self.built = built
        self.budget = budget if budget is not None else BUDGET
        self.sockets: dict[str, Any] = {}
        self.pending: dict[str, Any] = {}  # a message read while a reset ran, per session
        self.fair = FairShare()
        destroy = server._destroy_session

        async def destroy_and_close(session_id: str) -> None:
            # the reaper (and our own clean-up) destroys through here: close the socket too
            websocket = self.sockets.pop(session_id, None)
            self.fair.forget(session_id)
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
            reply = error_reply(str(exc), "CAPACITY_REACHED", active_sessions=exc.active_sessions)
            reply["data"]["max_sessions"] = exc.max_sessions
            await self._send_and_close(websocket, reply, 1013)
            return
        except EnvironmentFactoryError as exc:
            reply = error_reply(str(exc), "FACTORY_ERROR", factory_name=exc.factory_name)
            await self._send_and_close(websocket, reply, 1011)
            return
        self.sockets[session_id] = websocket
        try:
            await self._serve(websocket, session_id, env)
        except asyncio.CancelledError:
            # the server is stopping and its grace is over: the session's worker may be
            # deep in a reset (an eval walk) that cannot be interrupted, so its env is
            # not closed through it (that waited for the walk, and logged a traceback);
            # the process is ending, and takes the env with it
            self.sockets.pop(session_id, None)
            self.pending.pop(session_id, None)
            return
        self.sockets.pop(session_id, None)
        self.pending.pop(session_id, None)
        await self.server._destroy_session(session_id)
        await self._close(websocket, 1000)

    async def _send_and_close(self, websocket: Any, reply: dict[str, Any], code: int) -> None:
        from starlette.websockets import WebSocketDisconnect

        with contextlib.suppress(RuntimeError, OSError, WebSocketDisconnect):
            await websocket.send_text(encode(reply))
        await self._close(websocket, code)

    async def _serve(self, websocket: Any, session_id: str, env: Any) -> None:
        from starlette.websockets import WebSocketDisconnect

        while True:
            try:
                # a message read while a reset was running comes first (_watched)
                message = self.pending.pop(session_id, None) or await websocket.receive()
            except (RuntimeError, OSError, WebSocketDisconnect):
                return
            if message["type"] == "websocket.disconnect":
                self._log_close(websocket, session_id, message.get("code", 1000))
                return
            if session_id not in self.server._sessions:
                return  # reaped between two messages: the socket is being closed
            text = message.get("text")
            # the budget this message holds: its reading's reservation, or its own size
            held = message.get(RESERVED_KEY, 0)
            unread = message.get(REFUSED_KEY, 0)  # left unread: no room for it
            del message
            size = unread or (0 if text is None else sys.getsizeof(text))
            if not held and not unread and size > limits.SMALL_MESSAGE_BYTES:
                held = size if self.budget.take(size) else -1
            if held < 0 or unread:
                del text  # refused unread: its memory goes at once
                reply: dict[str, Any] | str | None = error_reply(
                    self.budget.refusal(size), "SERVER_BUSY"
                )
            elif text is None:
                if held:
                    self.budget.give(held)
                reply = error_reply(
                    "binary frames are not read: send each message as JSON text", "INVALID_JSON"
                )
            else:
                try:
                    reply = await self._answer(websocket, session_id, env, text)
                finally:
                    del text
                    if held:
                        self.budget.give(held)
            if reply is None:  # "close"
                return
            try:
                await websocket.send_text(reply if isinstance(reply, str) else encode(reply))
            except (RuntimeError, OSError, WebSocketDisconnect):
                return

    async def _work(self, session_id: str, kind: str, work: Callable[[], T]) -> T:
        """``work()`` in the session's worker thread, through its lane (:mod:`fair`)."""
        submit = functools.partial(self.server._run_in_session_executor, session_id)
        return await self.fair.run(session_id, kind, submit, work)

    def _log_close(self, websocket: Any, session_id: str, code: int) -> None:
        """One line for a client that ended its connection wrongly (none for a clean close,
        a reaped session or the server's own shutdown, 1012)."""
        if code in (1000, 1001, 1012) or session_id not in self.server._sessions:
            return
        reason = self.CLOSE_REASONS.get(code, "left without a close handshake")
        CLIENT_LOG.warning("%s %s (code %s)", peer(websocket.client), reason, code)

    async def _watched(self, websocket: Any, session_id: str, env: Any, data: dict) -> Any:
        """``env.reset(**data)`` in the session's worker, ended early if the client leaves.

        A reset can walk the ``eval`` stream for seconds (a far item of a new split seed);
        its client is read meanwhile, and if it leaves, the walk is abandoned
        (:func:`~meeting_gym.core.splits.abandon_when`). A message the client sends in the
        meantime is kept, and read after this reply.
        """
        from meeting_gym.core.splits import abandon_when

        left = threading.Event()

        def reset() -> str:
            with abandon_when(left):
                return observation_reply(env.reset(**data))

        work = asyncio.ensure_future(self._work(session_id, "reset", reset))
        watch = asyncio.ensure_future(websocket.receive())
        try:
            await asyncio.wait({work, watch}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not watch.done():
                watch.cancel()  # a queue read: cancelling it loses no message
        if watch.done() and not watch.cancelled():
            if watch.exception() is not None:
                left.set()
            else:
                message = watch.result()
                self.pending[session_id] = message
                if message["type"] == "websocket.disconnect":
                    left.set()  # the client left: its walk stops at the next item
        return await work

    async def _answer(
        self, websocket: Any, session_id: str, env: Any, text: str
    ) -> dict[str, Any] | str | None:
        from pydantic import ValidationError

        server = self.server
        # a large message is read in its session's worker, not on the event loop: parsing
        # and validating 4 MiB took the loop ~20 ms a message, and every session waited
        large = len(text) > limits.SMALL_MESSAGE_BYTES
        try:
            if large:
                message = await self._work(session_id, "decode", lambda: json.loads(text))
            else:
                message = json.loads(text)
        except RecursionError:
            return error_reply("invalid JSON: nested too deeply", "INVALID_JSON")
        except ValueError as exc:  # JSONDecodeError, or an integer of too many digits
            return error_reply(f"invalid JSON: {exc}", "INVALID_JSON")
        if not isinstance(message, dict):
            kind = type(message).__name__
            return error_reply(
                'a message is a JSON object with a "type" (reset, step, state, mcp, close), '
                f"got {kind}",
                "VALIDATION_ERROR",
            )
        if depth_over(message, limits.MAX_MESSAGE_DEPTH):
            return error_reply(
                f"message nested deeper than {limits.MAX_MESSAGE_DEPTH} levels", "INVALID_JSON"
            )
        kind = message.get("type")
        data = message.get("data", {})
        del message
        try:
            if kind == "close":
                return None
            if kind == "state":
                server._update_session_activity(session_id)
                state = await self._work(session_id, "state", lambda: env.state)
                return {"type": "state", "data": state.model_dump()}
            if kind == "mcp":
                return await self._mcp(session_id, env, data)
            if kind not in ("reset", "step"):
                return error_reply(
                    f"Unknown message type: {shorten(repr(kind), 200)}", "UNKNOWN_TYPE"
                )
            if not isinstance(data, dict):
                return error_reply(
                    f'"data" must be a JSON object, got {type(data).__name__}', "VALIDATION_ERROR"
                )
            # the reply is built and encoded in the session's worker too: its CPU is the
            # session's (fair.py), not the event loop's that every session waits on
            if kind == "reset":
                reply = await self._watched(websocket, session_id, env, data)
                server._update_session_activity(session_id)
            else:
                validate = self._action
                reply = await self._work(
                    session_id, "step", lambda: observation_reply(env.step(validate(data)))
                )
                server._update_session_activity(session_id, increment_step=True)
        except ValidationError as exc:
            reply = error_reply("Invalid message", "VALIDATION_ERROR")
            reply["data"]["errors"] = validation_errors(exc)
            return reply
        except Exception as exc:  # any failure of one request is its reply, never the session's
            return error_reply(str(exc) or type(exc).__name__, "EXECUTION_ERROR")
        return reply

    def _action(self, data: dict[str, Any]) -> Any:
        """A step's ``data`` as an action: OpenEnv's MCP ones by their ``type``, else the
        env's own."""
        if data.get("type") in MCP_ACTIONS:
            return mcp_action(data)
        return self.built.action.model_validate(data)

    async def _mcp(self, session_id: str, env: Any, request: Any) -> dict[str, Any]:
        """OpenEnv's ``mcp`` message: a JSON-RPC ``tools/list`` or ``tools/call`` on this
        session (a call is the session's turn, as a ``CallToolAction`` step is)."""
        if not isinstance(request, dict):
            return rpc_error(
                None, -32600, f"data must be a JSON-RPC object, got {type(request).__name__}"
            )
        rid, method = request.get("id"), request.get("method")
        params = request.get("params") or {}
        if not isinstance(params, dict):
            return rpc_error(rid, -32602, "params must be an object")
        if method == "tools/list":
            return rpc_result(rid, {"tools": tool_list(env.env.unwrapped.task)})
        if method != "tools/call":
            return rpc_error(rid, -32601, f"method not served here: {shorten(repr(method), 200)}")
        name, arguments = params.get("name"), params.get("arguments") or {}
        if not isinstance(name, str) or not isinstance(arguments, dict):
            return rpc_error(rid, -32602, 'tools/call takes params {"name": str, "arguments": {}}')
        action = mcp_action({"type": "call_tool", "tool_name": name, "arguments": arguments})
        try:
            observation = await self._work(session_id, "step", lambda: env.step(action))
        except Exception as exc:  # the env refused (no episode, no tools): named, not raised
            return rpc_error(rid, -32000, str(exc) or type(exc).__name__)
        self.server._update_session_activity(session_id, increment_step=True)
        return rpc_result(rid, jsonable(observation.model_dump()))
