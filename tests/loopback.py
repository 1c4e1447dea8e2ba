"""Run a command beside the scripted OpenAI server, offline (a namespace with loopback only).

``python tests/loopback.py --port 8000 -- vf-eval ...`` starts the scripted server of
``fake_openai_server.py`` on ``127.0.0.1:8000``, runs the command, stops the server and
exits with the command's status. :func:`run_offline` does it inside ``unshare -rn`` (a
user and network namespace of our own whose only interface is ``lo``), so the command
provably reaches nothing but this machine's loopback: no model provider, no package
index, no sandbox service. Where user namespaces are not allowed it runs without one
and says so (``namespaced`` is False).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

HERE = Path(__file__).resolve().parent
PORT = 8000


@cache
def can_isolate() -> bool:
    """Whether ``unshare -rn`` works here (a user namespace with its own network)."""
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return False
    done = subprocess.run(
        ["unshare", "-rn", "ip", "link", "set", "lo", "up"], capture_output=True, timeout=30
    )
    return done.returncode == 0


@dataclass(frozen=True)
class Result:
    returncode: int
    stdout: str
    stderr: str
    namespaced: bool


def run_offline(
    argv: list[str], *, env: dict[str, str], cwd: Path, timeout: float, port: int = PORT
) -> Result:
    """``argv`` beside the scripted server at ``127.0.0.1:port``, in a loopback-only namespace."""
    inner = [sys.executable, str(HERE / "loopback.py"), "--port", str(port), "--", *argv]
    namespaced = can_isolate()
    if namespaced:
        script = 'ip link set lo up && exec "$@"'
        inner = ["unshare", "-rn", "sh", "-c", script, "loopback", *inner]
    done = subprocess.run(
        inner, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )
    return Result(done.returncode, done.stdout, done.stderr, namespaced)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=PORT)
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give a command after --")
    sys.path.insert(0, str(HERE))
    from fake_openai_server import FakeOpenAIServer

    with FakeOpenAIServer(args.port):
        return subprocess.run(command, env=os.environ.copy(), check=False).returncode


if __name__ == "__main__":
    raise SystemExit(main())
