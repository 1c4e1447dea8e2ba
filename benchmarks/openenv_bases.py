"""The attack table on two OpenEnv bases, side by side on one machine: the installed one
(this Python) and another Python's (an old base's venv), one after the other.

    python benchmarks/openenv_bases.py --old /tmp/openenv03/bin/python
    python benchmarks/openenv_bases.py --old /tmp/openenv03/bin/python --seconds 15 --out rows.json
    python benchmarks/openenv_bases.py --rows docs/results/rows/openenv_bases/attacks.json

The old base's venv holds this checkout and OpenEnv 0.3 (``openenv-core``), e.g.
``python3 -m venv /tmp/openenv03 && /tmp/openenv03/bin/pip install -e . "openenv-core==0.3.0"
uvicorn websockets httpx``. Each base runs ``benchmarks/openenv_attacks.py --json`` (every
attack, a fresh server each); the table puts each figure of the two runs side by side with
new/old, and says whether the new base is within 1.5x of the old on the victims' p99 ratio,
the RSS above start and the SIGINT stop time (issue 48's bar). ``--rows`` prints the table
of a saved run (``--out``) without running anything. A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
BAR = 1.5
FIGURES = (
    ("victim_p99_ratio", "victims' p99 ratio (attacked / quiet)"),
    ("rss_max_above_start_mb", "RSS above start, MB"),
    ("stop_s", "SIGINT stop, s"),
)


def base_version(python: str) -> str:
    """The OpenEnv distribution and version ``python`` has."""
    code = (
        "from importlib import metadata\n"
        "for name in ('openenv', 'openenv-core'):\n"
        "    try:\n"
        "        print(name, metadata.version(name)); break\n"
        "    except metadata.PackageNotFoundError:\n"
        "        pass\n"
    )
    done = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60)
    return done.stdout.strip() or "no OpenEnv"


def run_base(python: str, seconds: float, label: str) -> list[dict[str, Any]]:
    command = [python, str(HERE / "openenv_attacks.py"), "--seconds", str(seconds), "--json"]
    print(f"base {label}: {' '.join(command)}", file=sys.stderr, flush=True)
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True, timeout=1800)
    if done.returncode != 0:
        raise SystemExit(f"openenv_bases: the {label} base's run failed (exit {done.returncode})")
    return json.loads(done.stdout)


def ratio(new: float, old: float) -> float:
    return new / old if old else float("inf") if new else 1.0


def table(old: list[dict[str, Any]], new: list[dict[str, Any]], names: tuple[str, str]) -> str:
    """Markdown: each attack's figures on both bases, new/old, and the 1.5x bar."""
    head = f"| attack | figure | {names[0]} | {names[1]} | new / old | within {BAR}x |"
    lines = [head, "| --- | --- | ---: | ---: | ---: | --- |"]
    for a, b in zip(old, new, strict=True):
        for key, label in FIGURES:
            r = ratio(b[key], a[key])
            # a figure below 1 (a p99 ratio under 1, a stop under a second) moves by noise:
            # it is within the bar when the new one is at most 1.5x the old or at most 1
            small = b[key] <= 1.0 if key != "rss_max_above_start_mb" else b[key] <= 10.0
            ok = "yes" if r <= BAR or small else "**no**"
            lines.append(f"| {a['attack']} | {label} | {a[key]} | {b[key]} | {r:.2f} | {ok} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", help="the old base's python")
    parser.add_argument("--rows", type=Path, help="print the table of a saved run and stop")
    parser.add_argument("--seconds", type=float, default=15.0, help="length of each attack")
    parser.add_argument("--out", type=Path, help="write both runs' rows here (JSON)")
    args = parser.parse_args()
    if args.rows is not None:
        try:
            saved = json.loads(args.rows.read_text())
            print(table(saved["old"], saved["new"], tuple(saved["bases"])))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            parser.error(f"--rows {args.rows}: not a saved run ({exc})")
        return 0
    if args.old is None:
        parser.error("give --old (the old base's python) or --rows")
    if not Path(args.old).exists():
        parser.error(f"--old: no such file: {args.old}")
    names = (base_version(args.old), base_version(sys.executable))
    started = time.monotonic()
    old = run_base(args.old, args.seconds, f"1/2 ({names[0]})")
    new = run_base(sys.executable, args.seconds, f"2/2 ({names[1]})")
    print(f"both bases in {time.monotonic() - started:.0f} s", file=sys.stderr)
    if args.out is not None:
        record = {
            "bases": names,
            "command": " ".join(["python", *sys.argv]),
            "old": old,
            "new": new,
        }
        args.out.write_text(json.dumps(record, indent=1) + "\n")
    print(table(old, new, names))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
