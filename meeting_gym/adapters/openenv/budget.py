"""The process's budget of large-message bytes in flight, and the memory they leave."""

from __future__ import annotations

import collections
import ctypes
import ctypes.util
import sys
import time
from collections.abc import Callable
from functools import cache
from typing import Any

from meeting_gym.adapters.openenv import limits


@cache
def libc_or_none() -> Any:
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
    libc = libc_or_none()
    if libc is not None:
        libc.malloc_trim(0)


def map_large_allocations(threshold: int = 1 << 20) -> None:
    """Serve allocations of ``threshold`` bytes or more by ``mmap``, so each returns to the
    system when freed (glibc's ``mallopt(M_MMAP_THRESHOLD)``; a no-op elsewhere).

    glibc raises its threshold after the first large block is freed, and later blocks
    of that size then come from the heap and stay there: a fixed threshold keeps a
    burst of large messages from leaving the process that much larger.
    """
    libc = libc_or_none()
    if libc is not None and hasattr(libc, "mallopt"):
        libc.mallopt(-3, threshold)  # M_MMAP_THRESHOLD


class Budget:
    """The count of large-message bytes in flight in the process, against MAX_INFLIGHT_BYTES.

    Two stages share it. While a WebSocket message over SMALL_MESSAGE_BYTES is being
    read, its connection holds a reservation of its size (MAX_FRAME_BYTES, the most a
    message can be, when it comes in several frames); a message that cannot get one is
    left unread and refused (the protocol skips its bytes; see ``budgeted_websocket``),
    and the last PRIORITY_ROOM_BYTES are only for priority messages. Once the handler has
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
        limit: int = limits.MAX_INFLIGHT_BYTES,
        trim_after: int = 1 << 24,
        rate: float = limits.LARGE_BYTES_PER_S,
        burst: int = limits.LARGE_BURST_BYTES,
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

    def reserve(self, size: int, priority: bool = True) -> bool:
        """Count ``size`` bytes in if they fit (True), else nothing (False). With nothing
        in flight anything fits: a message larger than the budget is read alone, never
        left waiting for room that cannot come. Without ``priority`` the last
        PRIORITY_ROOM_BYTES are not there to take (they are kept for a fresh connection's
        moderate message: :func:`priority`)."""
        room = self.limit if priority else self.limit - limits.PRIORITY_ROOM_BYTES
        if self.used and self.used + size > room:
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
        now wait so that such bytes come in at ``rate`` (a token bucket of ``burst``). A
        priority message's reader does not wait, but its bytes are counted: the others
        wait for them."""
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


def priority(size: int, quiet_s: float) -> bool:
    """Whether a large message of ``size`` bytes, from a connection whose last large one
    was ``quiet_s`` seconds ago, may take the budget's last room and skip the pacing."""
    return size <= limits.MODERATE_MESSAGE_BYTES and quiet_s >= limits.FRESH_AFTER_S


REFUSED_KEY = "meeting_gym.refused"
"""The key of a received ASGI message that stands for a message left unread: its size."""
RESERVED_KEY = "meeting_gym.reserved"
"""The key of a received ASGI message that carries the budget its reading reserved."""
BUDGET = Budget()
"""The budget of the process: its server's WebSocket protocol, sessions and HTTP bodies
share it (uvicorn builds the protocol from settings, apart from the app)."""
