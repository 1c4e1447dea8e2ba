"""Measure how long ``import meeting_gym`` takes in a fresh interpreter, and what it loads.

    PYTHONPATH=. python scripts/import_time.py            # this checkout
    PYTHONPATH=/path/to/other/checkout python scripts/import_time.py

Prints the median of ``--runs`` fresh-process imports of ``meeting_gym``, the same for
``gymnasium`` alone (the floor: registration needs it), and the meeting_gym modules
the import loaded.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile

PROBE = """
import json, sys, time
start = time.perf_counter()
import {module}
elapsed = time.perf_counter() - start
names = sorted(m for m in sys.modules if m.startswith("meeting_gym"))
heavy = sorted(
    m for m in ("torch", "stable_baselines3", "sb3_contrib", "openai", "PIL", "pygame")
    if m in sys.modules
)
print(json.dumps({{"seconds": elapsed, "modules": names, "heavy": heavy}}))
"""


def probe(module: str) -> dict:
    # run outside any checkout, so that PYTHONPATH (not the current folder) decides
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(module=module)],
        capture_output=True,
        text=True,
        check=True,
        cwd=tempfile.gettempdir(),
    )
    return json.loads(done.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="fresh processes per module")
    args = parser.parse_args()
    results = {}
    for module in ("gymnasium", "meeting_gym"):
        runs = [probe(module) for _ in range(args.runs)]
        results[module] = statistics.median(r["seconds"] for r in runs)
        last = runs[-1]
    print(f"import gymnasium    {results['gymnasium'] * 1e3:7.1f} ms (median of {args.runs})")
    print(f"import meeting_gym  {results['meeting_gym'] * 1e3:7.1f} ms (median of {args.runs})")
    print(f"meeting_gym modules loaded ({len(last['modules'])}): {', '.join(last['modules'])}")
    print(f"heavy optional libraries loaded: {', '.join(last['heavy']) or 'none'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
