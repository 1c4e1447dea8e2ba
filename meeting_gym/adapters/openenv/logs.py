"""The server's log lines about clients: at most a few per window, one per client."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from meeting_gym.adapters.openenv import limits


class ClientLog:
    """One log line per misbehaving client, at most ``limit`` lines per ``window`` seconds.

    Lines past the limit are counted; the first line of a later window is preceded by
    one line saying how many were left out. So 1,000 bad clients in a window write at
    most ``limit + 1`` lines, whatever they send.
    """

    def __init__(
        self,
        logger: logging.Logger,
        limit: int = limits.LOG_LINES_PER_WINDOW,
        window: float = limits.LOG_WINDOW_S,
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


CLIENT_LOG = ClientLog(logging.getLogger(limits.LOG_NAME))
"""The one limiter of the process: the lines of every server in it share its bound."""


class UvicornClientLines(logging.Filter):
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
            CLIENT_LOG.warning("a client sent a bad HTTP request: %s", message)
            return False
        return True


def install_log_filter() -> None:
    logger = logging.getLogger(limits.LOG_NAME)
    if not any(isinstance(f, UvicornClientLines) for f in logger.filters):
        logger.addFilter(UvicornClientLines())


def peer(scope_client: Any) -> str:
    """``host:port`` of a client (uvicorn gives a tuple, Starlette an Address)."""
    if not scope_client:
        return "a client"
    host, port = scope_client[0], scope_client[1]
    return f"{host}:{port}"


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


class ShutdownLines(logging.Filter):
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
