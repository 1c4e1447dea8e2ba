"""What glibc's allocator settings change for local-model episodes, side by side.

    PYTHONPATH=. python benchmarks/local_allocator.py --model runs/tool_env/sft_model \\
        --system-prompt short --split eval -n 8 --batch 8 --max-tokens 320

The allocator's settings are a process's, so each run is its own process:
``python -m meeting_gym.bench_local --modes continuous`` with the package's settings (freed
memory kept for reuse, one arena: :mod:`meeting_gym.agentkit.memory`), with the thresholds
alone (``MEETING_GYM_MALLOC=thresholds``: the generation thread has an arena of its own)
and with glibc's defaults (``MEETING_GYM_MALLOC=default``), alternating ``--repeats`` times.
Each run's wall time per episode, its CPU time in user and kernel mode, its minor page
faults and a digest of its replies are printed; exit 1 if the replies differ (an allocator
must not change a token).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
from typing import Any

SETTINGS = {"kept": None, "thresholds": "thresholds", "default": "default"}


def run_once(bench_args: list[str], setting: str) -> dict[str, Any]:
    """One bench_local process under ``setting``: its measurements and its CPU and faults."""
    env = {k: v for k, v in os.environ.items() if k != "MEETING_GYM_MALLOC"}
    if SETTINGS[setting] is not None:
        env["MEETING_GYM_MALLOC"] = SETTINGS[setting]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, "-m", "meeting_gym.bench_local", *bench_args, "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"bench_local failed under {setting}: {done.stderr.strip()[-400:]}")
    summary = json.loads(done.stdout)
    return {
        "setting": setting,
        "s_per_episode": summary["continuous_s_per_episode"],
        "user_s": round(after.ru_utime - before.ru_utime, 1),
        "sys_s": round(after.ru_stime - before.ru_stime, 1),
        "minor_faults": after.ru_minflt - before.ru_minflt,
        "replies": summary["replies_sha256"]["continuous"],
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeats", type=int, default=1, help="runs of each setting, alternating")
    p.add_argument("--json", action="store_true")
    args, bench_args = p.parse_known_args(argv)
    if args.repeats < 1:
        p.error("--repeats must be at least 1")
    bench_args = [*bench_args, "--modes", "continuous", "--repeats", "1"]
    runs = [run_once(bench_args, s) for _ in range(args.repeats) for s in SETTINGS]
    best = {s: min(r["s_per_episode"] for r in runs if r["setting"] == s) for s in SETTINGS}
    same = len({r["replies"] for r in runs}) == 1
    result = {
        "runs": runs,
        "speedup_kept_over_default": round(best["default"] / max(best["kept"], 1e-9), 2),
        "speedup_kept_over_thresholds": round(best["thresholds"] / max(best["kept"], 1e-9), 2),
        "identical_replies": same,
    }
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print(f"{'setting':<11}{'s/episode':>10}{'user s':>8}{'sys s':>8}{'minor faults':>14}")
        for r in runs:
            print(
                f"{r['setting']:<11}{r['s_per_episode']:>10.2f}{r['user_s']:>8.1f}"
                f"{r['sys_s']:>8.1f}{r['minor_faults']:>14,}"
            )
        print(
            f"speed-up kept over default {result['speedup_kept_over_default']:.2f}x, "
            f"over thresholds alone {result['speedup_kept_over_thresholds']:.2f}x; "
            + ("identical replies" if same else "REPLIES DIFFER")
        )
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
