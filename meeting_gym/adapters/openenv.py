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
pool (:class:`_Sessions`: openenv-core 0.3's ended sessions on malformed frames and left
reaped sockets open), HTTP bodies, frames, nesting and connections are bounded, and
plain-HTTP sessions are refused. There is no authentication: docs/guides/serving.md has
the protocol, every bound and its value, and how to run the server behind a proxy.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import ctypes
import ctypes.util
import json
import logging
import re
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any, ClassVar, Literal

import gymnasium as gym
import numpy as np

from meeting_gym.core.curriculum import Curriculum
from meeting_gym.core.curriculum_wrapper import CurriculumWrapper
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
    options = frozenset(SPLIT_OPTIONS | {"item", "curriculum"} | cls.reset_options)

    fields: dict[str, Any] = {}
    if cls.episode_class.answers:
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
    object_fields = tuple(name for name in cls.episode_class.action_fields if name != "metadata")
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
        truncated=(
            bool,
            Field(False, description="the episode ended on its turn budget, not by itself"),
        ),
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
        # A curriculum session plays through the same CurriculumWrapper that classic RL
        # uses (so draws and reports follow one rule); other resets go to the env itself.
        self.curriculum: CurriculumWrapper | None = None
        self.curriculum_option: Any = None
        self.playing: gym.Env = self.env

    def reset(self, seed: int | None = None, episode_id: str | None = None, **options: Any) -> Any:
        unknown = sorted(set(options) - self.models.reset_options)
        if unknown:
            known = ", ".join(sorted(self.models.reset_options))
            raise ValueError(f"unknown reset field(s) {', '.join(unknown)}; known: seed, {known}")
        self.playing = self._player(options.pop("curriculum", None), options)
        # the wrapper draws only when it is given no options of the caller's
        observation, info = self.playing.reset(seed=seed, options=options or None)
        self.episode_id, self.steps, self.done, self.started = episode_id, 0, False, True
        if self.playing is not self.env:
            info = {**info, "curriculum": self._curriculum_info()}
        self.last_info = jsonable(info)
        return self.models.observation(text=observation, info=self.last_info, reward=None)

    def _player(self, option: Any, options: dict[str, Any]) -> gym.Env:
        """The env this episode plays: the session's curriculum wrapper (made or remade as
        ``option`` asks), or the env itself when there is no curriculum option."""
        if option is None or option is False:
            return self.env
        if options:
            raise ValueError(
                "curriculum draws the item itself: give no other reset option with it "
                f"(got {', '.join(sorted(options))})"
            )
        if self.curriculum is None or option != self.curriculum_option:
            self.curriculum = CurriculumWrapper(
                self.env, Curriculum.from_option(self.env_id, option)
            )
            self.curriculum_option = option
        return self.curriculum

    def _curriculum_info(self) -> dict[str, Any]:
        assert self.curriculum is not None
        cur = self.curriculum.curriculum
        rate = cur.success_rate()
        return {
            "level": cur.current,
            "recent_success": None if rate is None else round(rate, 4),
            "drawn": sum(cur.drawn.values()),
            "moves": len(cur.moves),
        }

    def step(self, action: Any, timeout_s: float | None = None, **kwargs: Any) -> Any:
        if not self.started:
            raise NoEpisodeError(
                "no episode: call reset first (plain HTTP /step is stateless; "
                "play episodes over /ws, e.g. with meeting_gym.adapters.openenv.client)"
            )
        if self.done:
            raise NoEpisodeError("the episode is over: call reset")
        text = to_text(action, self.env.unwrapped.task.answer_tag, self.models.object_fields)
        observation, reward, terminated, truncated, info = self.playing.step(text)
        self.steps += 1
        self.done = bool(terminated or truncated)
        self.last_info = jsonable(info)
        return self.models.observation(
            text=observation,
            info=self.last_info,
            reward=float(reward),
            done=self.done,
            truncated=bool(truncated and not terminated),
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
"""HTTP requests served at once beside the sessions (``/health`` aside): 503 past it."""
WAITING_CONNECTIONS = 512
"""Connections that may wait for their request head (or sit idle between keep-alive
requests) beside ``max_sessions + EXTRA_CONNECTIONS`` busy ones. Past that many open
connections, the oldest one that has waited HEAD_GRACE_S for its head is closed to make
room (a new one, if none has), so slow clients cannot hold every socket."""
HEAD_GRACE_S = 0.5
"""A connection younger than this is not closed to make room: a client that sends its
request at once (a health probe) is read, however fast slow ones reconnect."""
HEAD_TIMEOUT_S = 5.0
"""Seconds a connection has to send a complete request head, from its opening or from
the end of its previous response: a slow or incomplete request is closed after it."""
BODY_TIMEOUT_S = 20.0
"""Seconds an HTTP request has to send its whole body: past it, 408 and the connection
is closed."""
MAX_INFLIGHT_BYTES = 1 << 25
"""The server-wide budget on message bytes in flight (32 MiB): WebSocket messages and
HTTP bodies over SMALL_MESSAGE_BYTES are counted from their arrival until their reply;
one that would pass the budget is refused at once (``SERVER_BUSY`` over the WebSocket,
the session going on; 503 over HTTP)."""
LARGE_BYTES_PER_S = 1 << 22
"""The server-wide rate (4 MiB/s) at which bytes of large messages (over
SMALL_MESSAGE_BYTES) are read; faster, a connection stops being read for a while.
The budget bounds the memory large messages take; this bounds the time. Reading,
decoding and parsing a 4 MiB message holds the interpreter for ~15 ms in a few
uninterruptible pieces, and every session waits behind them: at 40 such messages a
second (48 sessions sending at once) other sessions' step p99 rose 39x."""
LARGE_BURST_BYTES = 1 << 20
"""Bytes of large messages read at once before the rate applies (1 MiB)."""
SMALL_MESSAGE_BYTES = 1 << 16
"""Messages up to this size (64 KiB) are not counted: every ordinary reset and step is
smaller, so a burst of large actions never refuses a well-behaved session."""
LOG_LINES_PER_WINDOW = 20
"""At most this many lines about misbehaving clients per LOG_WINDOW_S (one line per
client); past it the lines are counted, and the count is logged once the window ends."""
LOG_WINDOW_S = 10.0
SWITCH_INTERVAL_S = 0.0001
"""How long a thread of :func:`serve` may hold the interpreter while another waits for it
(Python's default is 5 ms). A long reset (a ``-v0`` eval walk) runs in its session's
worker thread; every other session's step needs the interpreter a few times (the event
loop, its own worker), and waited up to 5 ms each time: during a TimetablePlanner-v0 walk
two sessions made 18 steps in 15 s (p99 2.3 s); at 0.5 ms their p99 was 5.3x the quiet
one, at 0.1 ms 2.5x (``benchmarks/openenv_attacks.py --attack walk``). The walk itself
gets a fairer share, not less work."""
SHUTDOWN_GRACE_S = 1.0
"""Seconds a stop (SIGINT, SIGTERM) waits for requests in progress before it cancels them."""
_LOG = "uvicorn.error"


class _ClientLog:
    """One log line per misbehaving client, at most ``limit`` lines per ``window`` seconds.

    Lines past the limit are counted; the first line of a later window is preceded by
    one line saying how many were left out. So 1,000 bad clients in a window write at
    most ``limit + 1`` lines, whatever they send.
    """

    def __init__(
        self,
        logger: logging.Logger,
        limit: int = LOG_LINES_PER_WINDOW,
        window: float = LOG_WINDOW_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.logger, self.limit, self.window, self.clock = logger, limit, window, clock
        self.started = clock()
        self.written = 0
        self.dropped = 0
        self.lock = threading.Lock()  # uvicorn's log calls may come from other threads

    def warning(self, message: str, *args: Any) -> None:
        """Log ``message % args`` if this window has room, else count it."""
        with self.lock:
            now = self.clock()
            if now - self.started >= self.window:
                if self.dropped:
                    self.logger.warning(
                        "%d more misbehaving-client lines left out in the last %.0f s",
                        self.dropped,
                        now - self.started,
                    )
                self.started, self.written, self.dropped = now, 0, 0
            if self.written >= self.limit:
                self.dropped += 1
                return
            self.written += 1
        self.logger.warning(message, *args)


_CLIENT_LOG = _ClientLog(logging.getLogger(_LOG))
"""The one limiter of the process: the lines of every server in it share its bound."""


class _UvicornClientLines(logging.Filter):
    """uvicorn's own lines about a client's mistake, brought under the client-line bound.

    uvicorn logs an invalid UTF-8 text frame as an ERROR with a traceback (the WebSocket
    handler logs that client's one line itself, from the close code 1007), and a
    malformed HTTP request as a WARNING each: 400 such clients wrote 4,001 lines.
    """

    DROPPED = ("Invalid UTF-8 sequence received from client.",)
    LIMITED = ("Invalid HTTP request received.", "Unsupported upgrade request.")

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.msg if isinstance(record.msg, str) else ""
        if message in self.DROPPED:
            return False
        if message in self.LIMITED:
            _CLIENT_LOG.warning("a client sent a bad HTTP request: %s", message)
            return False
        return True


def _install_log_filter() -> None:
    logger = logging.getLogger(_LOG)
    if not any(isinstance(f, _UvicornClientLines) for f in logger.filters):
        logger.addFilter(_UvicornClientLines())


def _peer(scope_client: Any) -> str:
    """``host:port`` of a client (uvicorn gives a tuple, Starlette an Address)."""
    if not scope_client:
        return "a client"
    host, port = scope_client[0], scope_client[1]
    return f"{host}:{port}"


@cache
def _libc() -> Any:
    """glibc, for ``malloc_trim`` and ``mallopt`` (None elsewhere: nothing to tune)."""
    if not sys.platform.startswith("linux"):
        return None
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    return libc if libc is not None and hasattr(libc, "malloc_trim") else None


def release_memory() -> None:
    """Give freed heap pages back to the system (glibc's ``malloc_trim``; a no-op elsewhere).

    After a burst of large messages the freed pages stay in the process (RSS stayed
    953 MB up after one): trimming returns them.
    """
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)


def map_large_allocations(threshold: int = 1 << 20) -> None:
    """Serve allocations of ``threshold`` bytes or more by ``mmap``, so each returns to the
    system when freed (glibc's ``mallopt(M_MMAP_THRESHOLD)``; a no-op elsewhere).

    glibc raises its threshold after the first large block is freed, and later blocks
    of that size then come from the heap and stay there: a fixed threshold keeps a
    burst of large messages from leaving the process that much larger.
    """
    libc = _libc()
    if libc is not None and hasattr(libc, "mallopt"):
        libc.mallopt(-3, threshold)  # M_MMAP_THRESHOLD


class _Budget:
    """The count of large-message bytes in flight in the process, against MAX_INFLIGHT_BYTES.

    Two stages share it. While a WebSocket message over SMALL_MESSAGE_BYTES is being
    read, its connection holds a reservation of MAX_FRAME_BYTES (the most a message can
    be); a connection that cannot get one stops being read (TCP holds the rest, in the
    client's buffers) until one is free, first come first served. Once the handler has
    the message, it counts the message's own size while it answers it, and a message
    that would pass the budget then is refused (``SERVER_BUSY``). HTTP bodies count as
    they arrive. So whatever the clients send, the large messages held at once come to
    about the budget, not to connections x frame size (48 sessions x 5 actions of
    4 MiB held 953 MB).

    It also paces them (:meth:`pace`): their bytes are read at ``rate`` for the whole
    server, so the time they take from other sessions is bounded too.

    Used from the event loop only (no lock). When the count falls back to 0 after a
    burst of at least ``trim_after`` bytes, the freed memory is given back.
    """

    def __init__(
        self,
        limit: int = MAX_INFLIGHT_BYTES,
        trim_after: int = 1 << 24,
        rate: float = LARGE_BYTES_PER_S,
        burst: int = LARGE_BURST_BYTES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit, self.trim_after = limit, trim_after
        self.rate, self.burst, self.clock = rate, burst, clock
        self.credit = float(burst)
        self.paced_at = clock()
        self.used = 0
        self.since_trim = 0
        self.refused = 0
        self.waiting: collections.deque[Callable[[], bool]] = collections.deque()

    def reserve(self, size: int) -> bool:
        """Count ``size`` bytes in if they fit (True), else nothing (False). With nothing
        in flight anything fits: a message larger than the budget is read alone, never
        left waiting for room that cannot come."""
        if self.used and self.used + size > self.limit:
            return False
        self.used += size
        self.since_trim += size
        return True

    def take(self, size: int) -> bool:
        """:meth:`reserve`, a refusal counted (callers count only messages over
        SMALL_MESSAGE_BYTES)."""
        if self.reserve(size):
            return True
        self.refused += 1
        return False

    def pace(self, size: int) -> float:
        """Count ``size`` bytes of large messages read; the seconds their reader should
        now wait so that such bytes come in at ``rate`` (a token bucket of ``burst``)."""
        now = self.clock()
        self.credit = min(self.burst, self.credit + (now - self.paced_at) * self.rate)
        self.paced_at = now
        self.credit -= size
        return 0.0 if self.credit >= 0 else -self.credit / self.rate

    def wait(self, admit: Callable[[], bool]) -> None:
        """Call ``admit`` once the budget has room (again, while it returns False)."""
        self.waiting.append(admit)

    def give(self, size: int) -> None:
        """Count ``size`` bytes (once taken) out, and let waiting readers in."""
        self.used -= size
        while self.waiting:
            if not self.waiting[0]():
                break
            self.waiting.popleft()
        if self.used == 0 and self.since_trim >= self.trim_after:
            self.since_trim = 0
            release_memory()

    def refusal(self, size: int) -> str:
        return (
            f"server busy: {self.used:,} bytes of messages are in flight and this one "
            f"({size:,} bytes) would pass the server's budget of {self.limit:,} "
            "(MAX_INFLIGHT_BYTES); it was not read: send it again later"
        )


RESERVED_KEY = "meeting_gym.reserved"
"""The key of a received ASGI message that carries the budget its reading reserved."""
_BUDGET = _Budget()
"""The budget of the process: its server's WebSocket protocol, sessions and HTTP bodies
share it (uvicorn builds the protocol from settings, apart from the app)."""


class _HttpGuard:
    """ASGI middleware over the HTTP routes: bodies bounded in size, time and memory, and
    requests in flight bounded.

    * a body over ``limit`` bytes gets 413 before anything parses it (OpenEnv's routes
      read bodies whole, without a bound: a 50 MB ``/step`` was parsed);
    * a body not complete within BODY_TIMEOUT_S gets 408 and the connection closes;
    * a body over SMALL_MESSAGE_BYTES that would pass the server's budget gets 503;
    * past EXTRA_CONNECTIONS requests at once, 503 (``/health`` is always answered: a
      probe must not restart a server because others keep it busy).
    """

    def __init__(
        self,
        app: Any,
        limit: int = MAX_HTTP_BODY_BYTES,
        budget: _Budget | None = None,
        max_requests: int = EXTRA_CONNECTIONS,
    ) -> None:
        self.app, self.limit = app, limit
        self.budget = budget if budget is not None else _BUDGET
        self.max_requests = max_requests
        self.requests = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope.get("path") == "/health":
            await self.app(scope, receive, send)
            return
        if self.requests >= self.max_requests:
            await self._refuse(send, 503, f"more than {self.max_requests} requests in flight")
            return
        self.requests += 1
        try:
            await self._guarded(scope, receive, send)
        finally:
            self.requests -= 1

    async def _guarded(self, scope: Any, receive: Any, send: Any) -> None:
        declared = dict(scope.get("headers") or ()).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            await self._refuse(send, 413, f"request body over {self.limit} bytes")
            return
        body = bytearray()
        counted = 0
        deadline = time.monotonic() + BODY_TIMEOUT_S
        try:
            more = True
            while more:
                try:
                    message = await asyncio.wait_for(receive(), deadline - time.monotonic())
                except asyncio.TimeoutError:  # TimeoutError itself from 3.11
                    _CLIENT_LOG.warning(
                        "%s sent no complete body in %.0f s: closed",
                        _peer(scope.get("client")),
                        BODY_TIMEOUT_S,
                    )
                    await self._refuse(
                        send, 408, f"request body not sent within {BODY_TIMEOUT_S} s"
                    )
                    return
                if message["type"] != "http.request":
                    return  # the client left
                body += message.get("body", b"")
                more = message.get("more_body", False)
                if len(body) > self.limit:
                    await self._refuse(send, 413, f"request body over {self.limit} bytes")
                    return
                if len(body) > SMALL_MESSAGE_BYTES:
                    # counted as it grows: a body is refused before it fills the budget
                    if not self.budget.take(len(body) - counted):
                        await self._refuse(send, 503, self.budget.refusal(len(body)))
                        return
                    delay = self.budget.pace(len(body) - counted)
                    counted = len(body)
                    if delay > 0:
                        # the server's own pause: not counted against the client's time
                        deadline += delay
                        await asyncio.sleep(delay)
            replayed = False

            async def replay() -> Any:
                nonlocal replayed
                if replayed:
                    return await receive()
                replayed = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}

            await self.app(scope, replay, send)
        finally:
            if counted:
                self.budget.give(counted)

    async def _refuse(self, send: Any, status: int, detail: str) -> None:
        payload = json.dumps({"detail": detail}).encode()
        headers = [(b"content-type", b"application/json"), (b"connection", b"close")]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": payload})


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
    * a client gone without a close handshake logged a 4.4 KB traceback; here one line,
      as for an invalid UTF-8 text frame, a malformed frame or one over the size bound
      (each under the bound on client lines: :class:`_ClientLog`);
    * messages over SMALL_MESSAGE_BYTES count against the server's budget of bytes in
      flight (:class:`_Budget`): past it, a ``SERVER_BUSY`` error and the session goes on.
    """

    CLOSE_REASONS: ClassVar[dict[int, str]] = {
        1002: "sent a malformed WebSocket frame",
        1007: "sent a text frame that is not UTF-8",
        1009: f"sent a frame over MAX_FRAME_BYTES ({MAX_FRAME_BYTES:,} bytes)",
    }
    """Close codes uvicorn's protocol ends a connection with for the client's fault."""

    def __init__(self, server: Any, built: Models, budget: _Budget | None = None) -> None:
        self.server = server
        self.built = built
        self.budget = budget if budget is not None else _BUDGET
        self.sockets: dict[str, Any] = {}
        self.pending: dict[str, Any] = {}  # a message read while a reset ran, per session
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
            await websocket.send_text(_encode(reply))
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
            del message
            size = 0 if text is None else sys.getsizeof(text)
            if not held and size > SMALL_MESSAGE_BYTES:
                held = size if self.budget.take(size) else -1
            if held < 0:
                del text  # refused unread: its memory goes at once
                reply: dict[str, Any] | None = _error(self.budget.refusal(size), "SERVER_BUSY")
            elif text is None:
                if held:
                    self.budget.give(held)
                reply = _error(
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
                await websocket.send_text(_encode(reply))
            except (RuntimeError, OSError, WebSocketDisconnect):
                return

    def _log_close(self, websocket: Any, session_id: str, code: int) -> None:
        """One line for a client that ended its connection wrongly (none for a clean close,
        a reaped session or the server's own shutdown, 1012)."""
        if code in (1000, 1001, 1012) or session_id not in self.server._sessions:
            return
        reason = self.CLOSE_REASONS.get(code, "left without a close handshake")
        _CLIENT_LOG.warning("%s %s (code %s)", _peer(websocket.client), reason, code)

    async def _watched(self, websocket: Any, session_id: str, env: Any, data: dict) -> Any:
        """``env.reset(**data)`` in the session's worker, ended early if the client leaves.

        A reset can walk the ``eval`` stream for seconds (a far item of a new split seed);
        its client is read meanwhile, and if it leaves, the walk is abandoned
        (:func:`~meeting_gym.core.splits.abandon_when`). A message the client sends in the
        meantime is kept, and read after this reply.
        """
        from meeting_gym.core.splits import abandon_when

        left = threading.Event()

        def reset() -> Any:
            with abandon_when(left):
                return env.reset(**data)

        work = asyncio.ensure_future(self.server._run_in_session_executor(session_id, reset))
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
    ) -> dict[str, Any] | None:
        from pydantic import ValidationError

        server = self.server
        # a large message is read in its session's worker, not on the event loop: parsing
        # and validating 4 MiB took the loop ~20 ms a message, and every session waited
        large = len(text) > SMALL_MESSAGE_BYTES
        try:
            if large:
                message = await server._run_in_session_executor(session_id, json.loads, text)
            else:
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
        del message
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
                observation = await self._watched(websocket, session_id, env, data)
                server._update_session_activity(session_id)
            elif large:
                validate = self.built.action.model_validate
                observation = await server._run_in_session_executor(
                    session_id, lambda: env.step(validate(data))
                )
                server._update_session_activity(session_id, increment_step=True)
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

    HTTP bodies are bounded (:class:`_HttpGuard`); ``/ws`` is :class:`_Sessions`; both
    count large messages against one budget (:data:`MAX_INFLIGHT_BYTES`);
    plain-HTTP session verbs (``POST /mcp`` ``openenv/session/*``) are refused and the
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
    _install_log_filter()
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
    budget = _BUDGET  # WebSocket messages and HTTP bodies share it, and the protocol
    sessions = _Sessions(server, built, budget)
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
        # (never, without an idle timeout) and has no connection to close: refused here.
        # Every other session verb is refused with it: no plain-HTTP client opened a session
        # here, so none may close (or touch) one, whatever id it knows.
        try:
            method = json.loads(await request.body()).get("method")
        except (ValueError, AttributeError, RecursionError):
            method = None
        if isinstance(method, str) and method.startswith("openenv/session/"):
            return JSONResponse(
                {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {
                        "code": -32601,
                        "message": f"{_short(method)} is not served here: "
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
    app.add_middleware(_HttpGuard, limit=MAX_HTTP_BODY_BYTES, budget=budget)
    return app


def _guarded_h11(max_connections: int) -> type:
    """uvicorn's h11 protocol with a deadline on request heads and a bound on connections.

    uvicorn times out only idle keep-alive connections: 200 connections that sent part
    of a head and then nothing held their sockets for good, and with ``limit_concurrency``
    counting them, ``/health`` answered 503. Here a head must be complete within
    HEAD_TIMEOUT_S of the connection opening (or of the previous response's end), and
    past ``max_connections`` open connections the oldest one still waiting for its head
    (for HEAD_GRACE_S at least) is closed to make room, so a new request, a health probe
    say, is read.
    """
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class GuardedH11Protocol(H11Protocol):
        head_timer: asyncio.TimerHandle | None = None
        waiting_since = 0.0
        requests_seen = 0

        def connection_made(self, transport: Any) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._await_head()
            if len(self.connections) > max_connections:
                self._make_room()

        def connection_lost(self, exc: Exception | None) -> None:
            self._head_arrived()
            super().connection_lost(exc)

        def handle_events(self) -> None:
            cycle = self.cycle
            super().handle_events()
            if self.cycle is not cycle:  # a request head was read: its app runs now
                self.requests_seen += 1
                self._head_arrived()

        def handle_websocket_upgrade(self, event: Any) -> None:
            self._head_arrived()  # the WebSocket protocol takes the connection over
            super().handle_websocket_upgrade(event)

        def on_response_complete(self) -> None:
            self._await_head()  # armed first: a pipelined request read below disarms it
            super().on_response_complete()

        def _await_head(self) -> None:
            self._head_arrived()
            self.waiting_since = time.monotonic()
            self.head_timer = self.loop.call_later(HEAD_TIMEOUT_S, self._head_timed_out)

        def _head_arrived(self) -> None:
            if self.head_timer is not None:
                self.head_timer.cancel()
                self.head_timer = None

        def _partial(self) -> bool:
            """Whether the client sent part of a request (or nothing yet, on a new connection)."""
            return self.requests_seen == 0 or bool(self.conn.trailing_data[0])

        def _head_timed_out(self) -> None:
            self.head_timer = None
            if self.transport.is_closing():
                return
            if self._partial():  # an idle keep-alive connection is uvicorn's, and no fault
                _CLIENT_LOG.warning(
                    "%s sent no complete request head in %.0f s: closed",
                    _peer(self.client),
                    HEAD_TIMEOUT_S,
                )
            self._close()

        def _make_room(self) -> None:
            oldest = time.monotonic() - HEAD_GRACE_S
            waiting = [
                c
                for c in self.connections
                if isinstance(c, GuardedH11Protocol) and c.head_timer and c.waiting_since <= oldest
            ]
            victim = min(waiting, key=lambda c: c.waiting_since) if waiting else self
            if victim._partial():
                _CLIENT_LOG.warning(
                    "%s closed while waiting for its request head: %d connections open",
                    _peer(victim.client),
                    len(self.connections),
                )
            victim._close()

        def _close(self) -> None:
            self._head_arrived()
            if self.conn.our_state not in (h11.ERROR, h11.CLOSED, h11.MUST_CLOSE):
                with contextlib.suppress(h11.LocalProtocolError):
                    self.conn.send(h11.ConnectionClosed())
            self.transport.close()

    return GuardedH11Protocol


def _budgeted_websocket(budget: _Budget) -> type:
    """uvicorn's sans-I/O WebSocket protocol, reading large messages only within ``budget``.

    A connection reading a message past SMALL_MESSAGE_BYTES reserves MAX_FRAME_BYTES of
    the budget (see :class:`_Budget`); without room it stops being read until there is.
    The reservation is held until the app takes the message from the queue. The bytes
    of large messages are also read at no more than the budget's rate
    (:data:`LARGE_BYTES_PER_S`, for the whole server): past it a connection pauses. Small
    messages never wait, so well-behaved sessions are not slowed by a burst.
    """
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

    class BudgetedWebSocketProtocol(WebSocketsSansIOProtocol):
        reading = 0  # bytes received of the message being read
        reserved = 0  # the budget it holds (0, or MAX_FRAME_BYTES once it is large)
        held: collections.deque[int] | None = None  # the budget of each queued message
        waiting = False  # reading stopped until the budget has room
        paced = False  # reading stopped until large bytes are back under the rate
        gone = False

        def data_received(self, data: bytes) -> None:
            self.reading += len(data)
            large = self.reading > SMALL_MESSAGE_BYTES
            if large and not self.reserved and not self.waiting:
                if budget.reserve(MAX_FRAME_BYTES):
                    self.reserved = MAX_FRAME_BYTES
                else:
                    self.waiting = True
                    self.transport.pause_reading()
                    budget.wait(self._admit)
            delay = budget.pace(len(data)) if large else 0.0
            super().data_received(data)
            if delay > 0 and not self.gone and not self.paced:
                self.paced = True
                self.transport.pause_reading()
                self.loop.call_later(delay, self._unpace)

        def _resume(self) -> None:
            # reading goes on only when no one holds it: uvicorn (a message queued), the
            # budget (no room) or the rate
            if not (self.gone or self.read_paused or self.waiting or self.paced):
                self.transport.resume_reading()

        def _unpace(self) -> None:
            self.paced = False
            self._resume()

        def _admit(self) -> bool:
            if self.gone:
                return True  # nothing to admit: off the waiting list
            if not budget.reserve(MAX_FRAME_BYTES):
                return False
            self.reserved, self.waiting = MAX_FRAME_BYTES, False
            self._resume()
            return True

        def send_receive_event_to_app(self) -> None:
            if self.held is None:
                self.held = collections.deque()
            self.held.append(self.reserved)
            self.reading = self.reserved = 0
            super().send_receive_event_to_app()

        async def receive(self) -> Any:
            message = await super().receive()
            if message["type"] == "websocket.receive" and self.held:
                reserved = self.held.popleft()
                if reserved:  # handed to the handler, which gives it back after its reply
                    message[RESERVED_KEY] = reserved
            if self.waiting or self.paced:  # uvicorn resumes reading once its queue is empty
                self.transport.pause_reading()
            return message

        def connection_lost(self, exc: Exception | None) -> None:
            self.gone = True
            held = self.reserved + sum(self.held or ())
            self.reserved = 0
            if self.held:
                self.held.clear()
            if held:
                budget.give(held)
            super().connection_lost(exc)

    return BudgetedWebSocketProtocol


def uvicorn_options(max_sessions: int = DEFAULT_MAX_SESSIONS) -> dict[str, Any]:
    """The uvicorn settings that bound a server's frames, connections and shutdown.

    No ``limit_concurrency``: it counts open connections, idle and slow ones too, so
    slow clients could make every request a 503; the h11 protocol of
    :func:`_guarded_h11` bounds connections instead, and :class:`_HttpGuard` requests.
    The WebSocket protocol is uvicorn's sans-I/O one (it stops reading a connection
    while one of its messages waits in the queue), reading large messages within the
    budget (:func:`_budgeted_websocket`).
    """
    return {
        "ws_max_size": MAX_FRAME_BYTES,
        "http": _guarded_h11(max_sessions + EXTRA_CONNECTIONS + WAITING_CONNECTIONS),
        "ws": _budgeted_websocket(_BUDGET),
        # no permessage-deflate: a compressed frame of a few hundred bytes grew into a
        # 4 MiB message, so what a client sends would not bound what the server holds
        "ws_per_message_deflate": False,
        "timeout_graceful_shutdown": SHUTDOWN_GRACE_S,
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


@dataclass
class Stopped:
    """How :func:`serve` ended: the signal that stopped it, and the requests it cut short."""

    signal: str | None = None
    cancelled: int = 0

    def line(self) -> str:
        """The one log line of a stop."""
        how = f"on {self.signal}" if self.signal else "(the server ended)"
        cut = f"; {self.cancelled} request(s) in progress cancelled" if self.cancelled else ""
        return f"stopped {how}{cut}"


class _ShutdownLines(logging.Filter):
    """uvicorn's error line for requests cut short at a stop, counted into :class:`Stopped`
    (the stop is logged as one line, not one per cause)."""

    def __init__(self, stopped: Stopped) -> None:
        super().__init__()
        self.stopped = stopped

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str) and record.msg.startswith("Cancel %s running task"):
            self.stopped.cancelled += int(record.args[0]) if record.args else 0  # type: ignore[index]
            return False
        return True


def serve(
    env_id: str,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    idle_timeout_s: float | None = DEFAULT_IDLE_TIMEOUT_S,
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

    lines = _ShutdownLines(stopped)
    logger = logging.getLogger(_LOG)
    logger.addFilter(lines)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    try:
        Server(config).run(sockets=[sock])
    finally:
        sys.setswitchinterval(interval)  # the process's own, for whatever runs after
        logger.removeFilter(lines)
        sock.close()
    return stopped


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


class RemoteEnv:
    """A served env in Gymnasium's ``reset``/``step`` shape, over a blocking client.

    So the one episode loop (:func:`~meeting_gym.core.loop.play`) plays a served env as it
    plays a local text env: ``reset(seed=, options=)`` gives ``(text, info)`` and
    ``step(text)`` the five values of a Gymnasium step, ``truncated`` as the server says
    it. Actions are text-protocol strings, what a text-mode env takes.
    ``RemoteEnv(client(env_id, url).sync())``, inside the client's ``with`` block.
    """

    def __init__(self, remote: Any) -> None:
        self.remote = remote

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        given = dict(options or {})
        if seed is not None:
            given["seed"] = seed
        observation = self.remote.reset(**given).observation
        return observation.text, dict(observation.info)

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        result = self.remote.step({"text": action})
        observation = result.observation
        truncated = bool(getattr(observation, "truncated", False))
        done = bool(result.done)
        reward = float(result.reward or 0.0)
        return observation.text, reward, done and not truncated, truncated, dict(observation.info)


def wait_healthy(
    base_url: str, timeout: float = 60.0, alive: Callable[[], bool] | None = None
) -> None:
    """Return once ``GET base_url/health`` answers 200; ``TimeoutError`` after ``timeout``
    seconds, or ``RuntimeError`` as soon as ``alive()`` says the server process has gone."""
    import urllib.request

    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"{base_url}/health", timeout=1) as reply:
                if reply.status == 200:
                    return
        except OSError:
            pass
        if alive is not None and not alive():
            raise RuntimeError(f"the server at {base_url} exited before it answered /health")
        if time.monotonic() >= deadline:
            raise TimeoutError(f"no /health answer from {base_url} in {timeout:g} s")
        time.sleep(0.1)
