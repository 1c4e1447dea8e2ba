"""The OpenEnv app: ``uvicorn server.app:app`` or ``python -m server.app``.

``MEETING_GYM_ENV`` names the env id to serve (default ``MeetingSlot-v0``),
``MEETING_GYM_MAX_SESSIONS`` the concurrent WebSocket sessions (default 64) and
``MEETING_GYM_IDLE_TIMEOUT`` the seconds before an idle session closes (default 300).
The same server runs without this folder as ``meeting-gym serve --env ID``.
"""

from __future__ import annotations

import argparse
import os

from meeting_gym.adapters.openenv import create_server_app, uvicorn_options

ENV_ID = os.environ.get("MEETING_GYM_ENV", "MeetingSlot-v0")
MAX_SESSIONS = int(os.environ.get("MEETING_GYM_MAX_SESSIONS", "64"))
app = create_server_app(
    ENV_ID,
    max_sessions=MAX_SESSIONS,
    idle_timeout_s=float(os.environ.get("MEETING_GYM_IDLE_TIMEOUT", "300")) or None,
)


def main(host: str = "0.0.0.0", port: int = 8000) -> None:
    """Run the app under uvicorn (``uv run --project . server --port 8001``)."""
    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default=host)
    parser.add_argument("--port", type=int, default=port)
    args = parser.parse_args()
    # 0.0.0.0: a container's port is only reachable so; there is no authentication, so
    # publish it behind a proxy that adds TLS and auth (docs/guides/serving.md)
    uvicorn.run(app, host=args.host, port=args.port, **uvicorn_options(MAX_SESSIONS))


if __name__ == "__main__":
    main()
