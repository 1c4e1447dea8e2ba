"""An ASGI app served by uvicorn in a thread on a free 127.0.0.1 port, for one block."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def served(app: Any, timeout: float, **options: Any) -> Iterator[int]:
    """Serve ``app`` (uvicorn ``options`` added) for the block; yields the port.

    Waits at most ``timeout`` seconds for the server to start and again for it to stop.
    """
    import uvicorn  # the test modules skip themselves without it

    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="error", **options)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the server did not start")
        time.sleep(0.02)
    try:
        yield server.servers[0].sockets[0].getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(timeout=timeout)
