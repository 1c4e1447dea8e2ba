"""What bounds a connection before the app sees it: HTTP bodies and requests in flight
(ASGI middleware), request heads and open connections (uvicorn's h11 protocol), and
large WebSocket messages within the budget (uvicorn's WebSocket protocol)."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import math
import time
from typing import Any

from meeting_gym.adapters.openenv import limits
from meeting_gym.adapters.openenv.budget import (
    BUDGET,
    REFUSED_KEY,
    RESERVED_KEY,
    Budget,
    priority,
)
from meeting_gym.adapters.openenv.frames import FrameCursor
from meeting_gym.adapters.openenv.logs import CLIENT_LOG, peer


class HttpGuard:
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
        limit: int = limits.MAX_HTTP_BODY_BYTES,
        budget: Budget | None = None,
        max_requests: int = limits.EXTRA_CONNECTIONS,
    ) -> None:
        self.app, self.limit = app, limit
        self.budget = budget if budget is not None else BUDGET
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
        deadline = time.monotonic() + limits.BODY_TIMEOUT_S
        try:
            more = True
            while more:
                try:
                    message = await asyncio.wait_for(receive(), deadline - time.monotonic())
                except asyncio.TimeoutError:  # TimeoutError itself from 3.11
                    CLIENT_LOG.warning(
                        "%s sent no complete body in %.0f s: closed",
                        peer(scope.get("client")),
                        limits.BODY_TIMEOUT_S,
                    )
                    await self._refuse(
                        send, 408, f"request body not sent within {limits.BODY_TIMEOUT_S} s"
                    )
                    return
                if message["type"] != "http.request":
                    return  # the client left
                body += message.get("body", b"")
                more = message.get("more_body", False)
                if len(body) > self.limit:
                    await self._refuse(send, 413, f"request body over {self.limit} bytes")
                    return
                if len(body) > limits.SMALL_MESSAGE_BYTES:
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


def head_problem(buffered: bytes, data: bytes) -> str | None:
    """What is wrong with the request head in ``buffered + data`` (the bytes of a head not
    yet parsed), or None: over MAX_HEAD_BYTES, or more than MAX_HEADERS header lines,
    whether it is complete or not and however it was split into reads.

    Bounded C-level scans only (``find`` and ``count`` within MAX_HEAD_BYTES): a regex
    over a 64 KiB read took 0.5 ms, ten times what h11 spent refusing it, and a flood of
    such heads is what this bounds.
    """
    pending = buffered + data if buffered else data
    limit = limits.MAX_HEAD_BYTES
    # the head ends at its blank line (h11 reads "\n" or "\r\n" line ends)
    ends = [
        i
        for i in (pending.find(b"\n\r\n", 0, limit + 3), pending.find(b"\n\n", 0, limit + 2))
        if i >= 0
    ]
    end = min(ends) if ends else len(pending)
    if end > limit:
        return f"a request head over {limit:,} bytes"
    # the request line is the first line; every other line is a header (or part of one)
    if pending.count(b"\n", 0, end) > limits.MAX_HEADERS:
        return f"a request head of more than {limits.MAX_HEADERS} header lines"
    return None


def head_refusal(problem: str) -> bytes:
    """The 431 response to a head refused unread (the connection closes after it)."""
    body = json.dumps({"detail": f"{problem} (431: Request Header Fields Too Large)"}).encode()
    head = (
        "HTTP/1.1 431 Request Header Fields Too Large\r\n"
        "content-type: application/json\r\n"
        "connection: close\r\n"
        f"content-length: {len(body)}\r\n\r\n"
    )
    return head.encode("ascii") + body


def guarded_h11(max_connections: int) -> type:
    """uvicorn's h11 protocol with a deadline on request heads and a bound on connections.

    uvicorn times out only idle keep-alive connections: 200 connections that sent part
    of a head and then nothing held their sockets for good, and with ``limit_concurrency``
    counting them, ``/health`` answered 503. Here a head must be complete within
    HEAD_TIMEOUT_S of the connection opening (or of the previous response's end), and
    past ``max_connections`` open connections the oldest one still waiting for its head
    (for HEAD_GRACE_S at least) is closed to make room, so a new request, a health probe
    say, is read. A head over MAX_HEAD_BYTES or MAX_HEADERS lines gets 431 and the
    connection closes, before h11 parses it, however it arrives (:func:`head_problem`).
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

        def data_received(self, data: bytes) -> None:
            # h11 bounds a head only while it is incomplete (16 KiB): one that arrives in
            # a single read was parsed whole, 12,000 headers and all, on the event loop
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                problem = head_problem(self.conn.trailing_data[0], data)
                if problem is not None:
                    self._refuse_head(problem)
                    return
            super().data_received(data)

        def _refuse_head(self, problem: str) -> None:
            CLIENT_LOG.warning("%s sent %s: 431, closed", peer(self.client), problem)
            self._head_arrived()
            # answered after a pause, unread meanwhile: refusing at once let 8 clients
            # loop 4,700 heads a second, and accepting that many connections alone took
            # other sessions' step p99 to 4.9x; no well-behaved client waits for it
            self.transport.pause_reading()
            self.loop.call_later(limits.REFUSAL_PAUSE_S, self._send_refusal, problem)

        def _send_refusal(self, problem: str) -> None:
            if not self.transport.is_closing():
                self.transport.write(head_refusal(problem))
                self.transport.close()

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
            self.head_timer = self.loop.call_later(limits.HEAD_TIMEOUT_S, self._head_timed_out)

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
                CLIENT_LOG.warning(
                    "%s sent no complete request head in %.0f s: closed",
                    peer(self.client),
                    limits.HEAD_TIMEOUT_S,
                )
            self._close()

        def _make_room(self) -> None:
            oldest = time.monotonic() - limits.HEAD_GRACE_S
            waiting = [
                c
                for c in self.connections
                if isinstance(c, GuardedH11Protocol) and c.head_timer and c.waiting_since <= oldest
            ]
            victim = min(waiting, key=lambda c: c.waiting_since) if waiting else self
            if victim._partial():
                CLIENT_LOG.warning(
                    "%s closed while waiting for its request head: %d connections open",
                    peer(victim.client),
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


def budgeted_websocket(budget: Budget) -> type:
    """uvicorn's sans-I/O WebSocket protocol, reading large messages only within ``budget``.

    The frames of each connection are followed as they arrive (:class:`FrameCursor`). A
    message whose first frame is past SMALL_MESSAGE_BYTES reserves its size of the budget
    (MAX_FRAME_BYTES if more frames follow); with no room for it, the message is left
    unread, its bytes skipped as they come, and the app gets a refusal in its place (the
    session answers ``SERVER_BUSY`` and goes on). Held instead, 48 sessions x 5 actions of
    4 MiB waited minutes for their turn. The last PRIORITY_ROOM_BYTES are kept for a
    moderate message from a connection that sent no large one lately (:func:`priority`),
    which is also read unpaced. The reservation is held until the app has answered. The
    bytes of large messages are read at no more than the budget's rate
    (:data:`LARGE_BYTES_PER_S`, for the whole server): past it a connection pauses. A
    message of several frames whose first is small is counted once it grows past
    SMALL_MESSAGE_BYTES, and waits for room. Small messages never wait, so well-behaved
    sessions are not slowed by a burst.
    """
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

    class BudgetedWebSocketProtocol(WebSocketsSansIOProtocol):
        reading = 0  # bytes received of the message being read
        reserved = 0  # the budget it holds (0, or MAX_FRAME_BYTES once it is large)
        held: collections.deque[int] | None = None  # the budget of each queued message
        waiting = False  # reading stopped until the budget has room
        paced = False  # reading stopped until large bytes are back under the rate
        released_at = 0.0  # when the server last gave reading back (loop time)
        closed_with: int | None = None  # the code the server failed the connection with
        gone = False

        cursor: FrameCursor | None = None
        large_at = -math.inf  # when this connection last began a large message (loop time)
        urgent = False  # the message being read has priority (read unpaced)
        refused_size = 0  # the size of the message being left unread

        def data_received(self, data: bytes) -> None:
            if not self.handshake_complete:  # the HTTP upgrade request
                self._read(data)
                return
            if self.cursor is None:
                self.cursor = FrameCursor(self._skip)
            for piece in self.cursor.split(data):
                if self.gone:
                    return
                if piece is None:
                    self._refused_unread()
                else:
                    self._read(piece)

        def _skip(self, length: int, fin: bool) -> bool:
            """Whether to leave the message whose first frame has ``length`` bytes unread:
            it is large and the budget has no room for it (one of several frames counts as
            MAX_FRAME_BYTES). A frame over MAX_FRAME_BYTES is read on, for uvicorn to close
            the connection (1009)."""
            if length <= limits.SMALL_MESSAGE_BYTES or length > limits.MAX_FRAME_BYTES:
                return False
            now = self.loop.time()
            size = length if fin else limits.MAX_FRAME_BYTES
            urgent = priority(size, now - self.large_at)
            self.large_at = now
            if not self.reserved and budget.reserve(size, priority=urgent):
                self.reserved, self.urgent = size, urgent
                return False
            budget.refused += 1
            self.refused_size = length
            return True

        def _refused_unread(self) -> None:
            """The message left unread has ended: the app gets it as a refusal."""
            if self.close_sent:
                return
            self.queue.put_nowait({"type": "websocket.receive", REFUSED_KEY: self.refused_size})
            if not self.read_paused:  # as uvicorn does for each message: until the app has it
                self.read_paused = True
                self.transport.pause_reading()

        def _read(self, data: bytes) -> None:
            self.reading += len(data)
            large = self.reading > limits.SMALL_MESSAGE_BYTES
            if large and not self.reserved and not self.waiting:
                # a message of several frames, its first one small: held until there is room
                if budget.reserve(limits.MAX_FRAME_BYTES):
                    self.reserved = limits.MAX_FRAME_BYTES
                else:
                    self.waiting = True
                    self.transport.pause_reading()
                    budget.wait(self._admit)
            delay = budget.pace(len(data)) if large else 0.0
            if self.urgent:
                delay = 0.0
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
                self._released()

        def _held(self) -> bool:
            """Whether the server, not the client, stops this connection being read: the
            budget, the rate, or a message of it the app has not taken yet (uvicorn)."""
            return self.waiting or self.paced or self.read_paused

        def keepalive_timeout(self) -> None:
            # The client's pong waits in the bytes the server has not read: while the
            # server holds the reads (and for a whole timeout after it gives them back)
            # the deadline waits too. It ran on, and 11 of 48 sessions pacing large
            # actions were closed with 1011 ("keepalive ping timeout") at 40 s.
            since = self.loop.time() - self.released_at
            if not self.gone and (self._held() or since < self.ping_timeout):
                wait = self.ping_timeout if self._held() else self.ping_timeout - since
                self.pong_timer = self.loop.call_later(wait, self.keepalive_timeout)
                return
            self.closed_with = 1011
            super().keepalive_timeout()

        def _released(self) -> None:
            self.released_at = self.loop.time()

        def _unpace(self) -> None:
            self.paced = False
            self._resume()

        def _admit(self) -> bool:
            if self.gone:
                return True  # nothing to admit: off the waiting list
            if not budget.reserve(limits.MAX_FRAME_BYTES):
                return False
            self.reserved, self.waiting = limits.MAX_FRAME_BYTES, False
            self._resume()
            return True

        def send_receive_event_to_app(self) -> None:
            if self.held is None:
                self.held = collections.deque()
            self.held.append(self.reserved)
            self.reading = self.reserved = 0
            self.urgent = False
            super().send_receive_event_to_app()

        async def receive(self) -> Any:
            paused = self.read_paused
            message = await super().receive()
            if paused and not self.read_paused:  # uvicorn gave reading back
                self._released()
            if message["type"] == "websocket.disconnect" and self.closed_with is not None:
                message["code"] = self.closed_with  # uvicorn says 1005 whoever closed
            if message["type"] == "websocket.receive" and REFUSED_KEY not in message and self.held:
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
