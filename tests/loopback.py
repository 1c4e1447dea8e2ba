"""Run README blocks offline: in a network namespace whose only interface is loopback.

:func:`run_bash` runs a bash body in a scratch checkout (:func:`link_checkout`), with
``offline=True`` inside ``unshare -rn`` (a user and network namespace of our own with
``lo`` up and nothing else), so what it runs provably reaches nothing but this machine's
loopback: no model provider, no package index, no sandbox service. Where user namespaces
are not allowed it runs without one, and says so (``namespaced`` is False).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from paths import ROOT


@cache
def can_isolate() -> bool:
    """Whether ``unshare -rn`` works here (a user namespace with its own network)."""
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return False
    done = subprocess.run(
        ["unshare", "-rn", "ip", "link", "set", "lo", "up"], capture_output=True, timeout=30
    )
    return done.returncode == 0


def link_checkout(path: Path) -> Path:
    """``path`` with links to the checkout's folders, so a README block's relative paths work."""
    for name in ("meeting_gym", "examples", "tests", "benchmarks"):
        (path / name).symlink_to(ROOT / name, target_is_directory=True)
    return path


@dataclass(frozen=True)
class Ran:
    stdout: str
    stderr: str
    namespaced: bool


def run_bash(body: str, cwd: Path, *, offline: bool, timeout: float = 900) -> Ran:
    """``body`` under ``bash -euo pipefail`` in ``cwd``, with this venv first on ``PATH`` and
    ``HOME`` at ``cwd/home`` (fresh caches); ``offline``: in a loopback-only namespace."""
    argv = ["bash", "-euo", "pipefail", "-c", body]
    namespaced = offline and can_isolate()
    if namespaced:
        argv = ["unshare", "-rn", "bash", "-euo", "pipefail", "-c", f"ip link set lo up\n{body}"]
    home = cwd / "home"
    home.mkdir(exist_ok=True)
    env = {
        **os.environ,
        "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
        "PYTHONPATH": str(ROOT),
        "HOME": str(home),
    }
    done = subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, f"failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return Ran(done.stdout, done.stderr, namespaced)
