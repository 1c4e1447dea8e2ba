"""Measure how long ``import meeting_gym`` takes in a fresh interpreter, and what it loads.

    python benchmarks/import_time.py                    # this checkout
    python benchmarks/import_time.py --against 3c785d6  # and an older commit, side by side

Each probe is a new interpreter that imports ``gymnasium`` (the floor: registration needs
it) and then ``meeting_gym``, run from outside any checkout so that only ``PYTHONPATH``
decides which ``meeting_gym`` is imported. Probes of the two checkouts alternate, so load
from other jobs hits both alike. Prints medians and the package modules each import loads.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBE = """
import json, sys, time
start = time.perf_counter()
import gymnasium
middle = time.perf_counter()
import meeting_gym
end = time.perf_counter()
names = sorted(m for m in sys.modules if m.startswith("meeting_gym"))
heavy = sorted(
    m for m in ("torch", "stable_baselines3", "sb3_contrib", "openai", "PIL", "pygame")
    if m in sys.modules
)
print(json.dumps({"gymnasium": middle - start, "meeting_gym": end - middle,
                  "modules": names, "heavy": heavy}))
"""


def probe(path: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        check=True,
        cwd=tempfile.gettempdir(),
        env={"PYTHONPATH": str(path), "PATH": "/usr/bin:/bin"},
    )
    return json.loads(done.stdout)


def report(label: str, runs: list[dict]) -> None:
    gym = statistics.median(r["gymnasium"] for r in runs) * 1e3
    own = statistics.median(r["meeting_gym"] for r in runs) * 1e3
    last = runs[-1]
    print(f"{label}: import gymnasium {gym:.1f} ms, then import meeting_gym {own:.1f} ms more")
    print(f"  meeting_gym modules loaded ({len(last['modules'])}): {', '.join(last['modules'])}")
    print(f"  heavy optional libraries loaded: {', '.join(last['heavy']) or 'none'}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21, help="fresh processes per checkout")
    parser.add_argument("--against", metavar="REV", help="also measure this git revision")
    args = parser.parse_args()
    checkouts = {"this checkout": ROOT}
    with tempfile.TemporaryDirectory() as scratch:
        if args.against:
            other = Path(scratch) / "other"
            subprocess.run(
                [
                    "git",
                    "-C",
                    str(ROOT),
                    "worktree",
                    "add",
                    "--detach",
                    "-q",
                    str(other),
                    args.against,
                ],
                check=True,
            )
            checkouts[args.against] = other
        try:
            runs: dict[str, list[dict]] = {label: [] for label in checkouts}
            for _ in range(args.runs):
                for label, path in checkouts.items():
                    runs[label].append(probe(path))
            for label in checkouts:
                report(label, runs[label])
        finally:
            if args.against:
                subprocess.run(
                    ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(other)],
                    check=True,
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
