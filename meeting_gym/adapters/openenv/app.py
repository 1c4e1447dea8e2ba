"""The ASGI app of one env id, the uvicorn settings that bound it, and :func:`serve`."""

from __future__ import annotations

import contextlib
import gc
import json
import logging
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

from meeting_gym.adapters.openenv import limits
from meeting_gym.adapters.openenv.budget import BUDGET, map_large_allocations
from meeting_gym.adapters.openenv.guards import HttpGuard, budgeted_websocket, guarded_h11
from meeting_gym.adapters.openenv.logs import ShutdownLines, Stopped, install_log_filter
from meeting_gym.adapters.openenv.served import INSTALL_HINT, NoEpisodeError, tool_list
from meeting_gym.adapters.openenv.sessions import Sessions, shorten
from meeting_gym.adapters.openenv.typed import models
from meeting_gym.core.registry import task_class


def require_serve_extra() -> None:
    """An ImportError naming the extra to install when the server's libraries are missing
    (it said ``No module named 'uvicorn'``)."""
    import importlib.util

    missing = [
        name
        for name in ("uvicorn", "fastapi", "websockets", "openenv")
        if importlib.util.find_spec(name) is None
    ]
    if missing:
        raise ImportError(f"{INSTALL_HINT} (missing: {', '.join(missing)})")


def create_server_app(
    env_id: str,
    *,
    max_sessions: int = limits.DEFAULT_MAX_SESSIONS,
    idle_timeout_s: float | None = limits.DEFAULT_IDLE_TIMEOUT_S,
    **env_kwargs: Any,
) -> Any:
    """The ASGI app serving ``env_id``: OpenEnv's routes, meeting_gym's ``/ws`` sessions.

    HTTP bodies are bounded (:class:`HttpGuard`); ``/ws`` is :class:`Sessions`; both
    count large messages against one budget (:data:`MAX_INFLIGHT_BYTES`);
    ``POST /mcp`` answers MCP's ``tools/list`` and sends ``tools/call`` to ``/ws``, and
    plain-HTTP session verbs (``openenv/session/*``) are refused; the ``/mcp`` WebSocket is
    not served (``/ws`` takes MCP's messages; see docs/guides/serving.md).
    """
    require_serve_extra()
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
    install_log_filter()
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
    app.state.env_server = server  # its session pool, for operators (and the tests) to inspect
    budget = BUDGET  # WebSocket messages and HTTP bodies share it, and the protocol
    sessions = Sessions(server, built, budget)
    kept = []
    for route in app.router.routes:
        path = getattr(route, "path", None)
        if path in ("/ws", "/mcp") and isinstance(route, WebSocketRoute | Route):
            continue  # /ws replaced; /mcp answered below, its WebSocket not served
        kept.append(route)
    app.router.routes[:] = kept
    app.router.routes.append(WebSocketRoute("/ws", sessions.endpoint))  # Starlette's: no DI
    tools = tool_list(task_class(env_id))

    async def mcp(request: Request) -> Any:
        # Plain HTTP has no episode: the tool list is answered (it needs none), a tool call
        # is sent to /ws. OpenEnv's HTTP session verbs are refused: such a session holds a
        # WebSocket slot that only the idle reaper frees (never, without an idle timeout),
        # and no plain-HTTP client opened one here, so none may close (or touch) one,
        # whatever id it knows. Nothing here builds an env: OpenEnv's own route made one
        # per request.
        try:
            body = json.loads(await request.body())
        except (ValueError, RecursionError):
            body = None
        if not isinstance(body, dict):
            return _rpc(None, error=(-32700, "the body is not a JSON-RPC object"))
        rid, method = body.get("id"), body.get("method")
        if isinstance(rid, dict | list):
            rid = None
        if method == "tools/list":
            return _rpc(rid, result={"tools": tools})
        if method == "tools/call":
            message = (
                "a tool call acts on a session's episode: send it over the WebSocket (/ws), "
                'as a step {"type": "call_tool", ...} or an mcp message'
            )
            return _rpc(rid, error=(-32601, message))
        if isinstance(method, str) and method.startswith("openenv/session/"):
            message = (
                f"{shorten(method)} is not served here: sessions are WebSocket connections (/ws)"
            )
            return _rpc(rid, error=(-32601, message))
        return _rpc(rid, error=(-32601, f"method not served here: {shorten(repr(method), 200)}"))

    app.router.routes.append(Route("/mcp", mcp, methods=["POST"]))

    async def bad_request(request: Request, exc: Exception) -> JSONResponse:
        # a reset option or a step the env refuses: the client's mistake, named, not a 500
        status = 409 if isinstance(exc, NoEpisodeError) else 422
        return JSONResponse(status_code=status, content={"detail": shorten(str(exc))})

    app.add_exception_handler(ValueError, bad_request)
    app.add_middleware(HttpGuard, limit=limits.MAX_HTTP_BODY_BYTES, budget=budget)
    return app


def _rpc(request_id: Any, *, result: Any = None, error: tuple[int, str] | None = None) -> Any:
    """A JSON-RPC 2.0 reply over HTTP (always 200, as JSON-RPC over HTTP answers)."""
    from fastapi.responses import JSONResponse

    payload: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
    if error is None:
        payload["result"] = result
    else:
        payload["error"] = {"code": error[0], "message": error[1]}
    return JSONResponse(payload)


def uvicorn_options(max_sessions: int = limits.DEFAULT_MAX_SESSIONS) -> dict[str, Any]:
    """The uvicorn settings that bound a server's frames, connections and shutdown.

    No ``limit_concurrency``: it counts open connections, idle and slow ones too, so
    slow clients could make every request a 503; the h11 protocol of
    :func:`guarded_h11` bounds connections instead, and :class:`HttpGuard` requests.
    The WebSocket protocol is uvicorn's sans-I/O one (it stops reading a connection
    while one of its messages waits in the queue), reading large messages within the
    budget (:func:`budgeted_websocket`).
    """
    return {
        "ws_max_size": limits.MAX_FRAME_BYTES,
        "http": guarded_h11(max_sessions + limits.EXTRA_CONNECTIONS + limits.WAITING_CONNECTIONS),
        "ws": budgeted_websocket(BUDGET),
        # no permessage-deflate: a compressed frame of a few hundred bytes grew into a
        # 4 MiB message, so what a client sends would not bound what the server holds
        "ws_per_message_deflate": False,
        "timeout_graceful_shutdown": limits.SHUTDOWN_GRACE_S,
    }


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
    max_sessions: int = limits.DEFAULT_MAX_SESSIONS,
    idle_timeout_s: float | None = limits.DEFAULT_IDLE_TIMEOUT_S,
    log_level: str = "warning",
    on_listening: Callable[[str, int], None] | None = None,
) -> Stopped:
    """Run the server until SIGINT or SIGTERM (uvicorn); ``on_listening(host, port)`` once
    it listens. Returns how it stopped.

    A port that cannot be bound (in use, say) is a ``ValueError``, before anything prints.
    A signal stops the server within SHUTDOWN_GRACE_S plus uvicorn's tick: requests still
    running then are cancelled. The signal is not raised again after the stop (uvicorn
    does, which printed a ``KeyboardInterrupt`` traceback and exited -2): the caller
    decides how the process ends (``meeting-gym serve``: one line, exit 0).
    """
    require_serve_extra()
    import uvicorn

    app = create_server_app(env_id, max_sessions=max_sessions, idle_timeout_s=idle_timeout_s)
    sock = listen(host, port)
    config = uvicorn.Config(app, log_level=log_level, **uvicorn_options(max_sessions))
    map_large_allocations()  # large messages' memory returns to the system once freed
    stopped = Stopped()

    class Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            if on_listening is not None and not self.should_exit:
                on_listening(host, sock.getsockname()[1])

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            if threading.current_thread() is not threading.main_thread():
                yield
                return

            def stop(sig: int, frame: Any) -> None:
                stopped.signal = signal.Signals(sig).name
                if self.should_exit:  # a second signal: no more waiting
                    self.force_exit = True
                self.should_exit = True

            handled = (signal.SIGINT, signal.SIGTERM)
            originals = {sig: signal.signal(sig, stop) for sig in handled}
            try:
                yield
            finally:
                for sig, handler in originals.items():
                    signal.signal(sig, handler)

    lines = ShutdownLines(stopped)
    logger = logging.getLogger(limits.LOG_NAME)
    logger.addFilter(lines)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(limits.SWITCH_INTERVAL_S)
    # What start-up built (modules, tasks, the typed classes) lives as long as the server:
    # frozen, the collector's full passes skip it. They walked it all, holding the
    # interpreter: under 32 sessions looping eval resets, /health's p99 was 58-102 ms
    # with it walked and 6-11 ms frozen (benchmarks/openenv_attacks.py --attack eval_resets).
    gc.collect()
    gc.freeze()
    try:
        Server(config).run(sockets=[sock])
    finally:
        gc.unfreeze()
        sys.setswitchinterval(interval)  # the process's own, for whatever runs after
        logger.removeFilter(lines)
        sock.close()
    return stopped
