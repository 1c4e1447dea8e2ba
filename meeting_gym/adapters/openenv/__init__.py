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
MeetingSlot's ``scenario_id``), or ``curriculum``: true or an object of
:meth:`~meeting_gym.core.curriculum.Curriculum.from_option`'s fields, which draws the
item from the session's own curriculum, moved by the session's episodes (its level and
recent success are in the reset ``info``). Everything runs through ``gymnasium.make(env_id,
mode="text")``: the reward a client sees is the env's own.

Plain HTTP ``/reset`` and ``/step`` are stateless in OpenEnv (each request builds a
fresh env), so an episode is played over the WebSocket with :func:`client` (async, or
``.sync()`` for blocking use). Bad payloads get an error that names the field: a 422
over HTTP, an error message over the WebSocket, whose session stays usable.

No client can hurt another: ``/ws`` is meeting_gym's own handler over OpenEnv's session
pool (:class:`~meeting_gym.adapters.openenv.sessions.Sessions`: OpenEnv's own ended
sessions on malformed frames and left reaped sockets open), HTTP bodies, frames, nesting
and connections are bounded, and plain-HTTP sessions are refused. There is no
authentication: docs/guides/serving.md has the protocol, every bound and its value, and
how to run the server behind a proxy.

The package, by role: :mod:`.typed` (the typed classes of an env id), :mod:`.served` (one
session's env), :mod:`.sessions` (``/ws``), :mod:`.guards` (HTTP bodies, request heads,
connections, large WebSocket messages), :mod:`.budget`, :mod:`.logs`, :mod:`.limits` (every
bound), :mod:`.app` (the app and :func:`serve`) and :mod:`.remote` (the clients).
"""

from meeting_gym.adapters.openenv.limits import (
    DEFAULT_IDLE_TIMEOUT_S,
    DEFAULT_MAX_SESSIONS,
    MAX_FRAME_BYTES,
    MAX_HTTP_BODY_BYTES,
    MAX_INFLIGHT_BYTES,
    MAX_MESSAGE_DEPTH,
    SMALL_MESSAGE_BYTES,
)
from meeting_gym.adapters.openenv.served import INSTALL_HINT, NoEpisodeError, jsonable, to_text

__all__ = [
    "DEFAULT_IDLE_TIMEOUT_S",
    "DEFAULT_MAX_SESSIONS",
    "INSTALL_HINT",
    "MAX_FRAME_BYTES",
    "MAX_HTTP_BODY_BYTES",
    "MAX_INFLIGHT_BYTES",
    "MAX_MESSAGE_DEPTH",
    "SMALL_MESSAGE_BYTES",
    "Models",
    "NoEpisodeError",
    "RemoteEnv",
    "Stopped",
    "client",
    "client_class",
    "create_server_app",
    "jsonable",
    "listen",
    "models",
    "serve",
    "to_text",
    "uvicorn_options",
    "wait_healthy",
]

_LAZY = {
    "Models": "typed",
    "models": "typed",
    "create_server_app": "app",
    "serve": "app",
    "listen": "app",
    "uvicorn_options": "app",
    "Stopped": "logs",
    "client": "remote",
    "client_class": "remote",
    "RemoteEnv": "remote",
    "wait_healthy": "remote",
}


def __getattr__(name: str) -> object:
    # the app and clients import pydantic and OpenEnv's modules: loaded when first named
    if name in _LAZY:
        import importlib

        module = importlib.import_module(f"meeting_gym.adapters.openenv.{_LAZY[name]}")
        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
