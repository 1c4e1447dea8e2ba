"""The SFT loss check: a short seeded SFT whose losses the pinned library set must reproduce.

A training table reproduces to the digit only while the libraries and the CPU stay the same
(:mod:`meeting_gym.evaluation.provenance`). This check notices the day a pinned version changes
training numerics: it runs the pipelines' SFT phase (:func:`~meeting_gym.training.trl_runs.
sft_train`, the bundled SmolLM2-135M, CalendarMath ``add_days`` rows, bfloat16 autocast as
the published runs) for a few steps on one thread and compares each step's loss and
gradient norm with a recorded reference (``constraints/sft-loss-reference.json``).

* On a CPU with a reference of its own (same model, vector extensions and torch kernel
  level) the values must be equal to the last digit.
* On another CPU they must agree within :data:`OTHER_CPU_TOLERANCE` (relative): other vector
  kernels sum in another order, and bfloat16 rounds the difference up. The verdict says which
  comparison was made; ``--record`` adds this CPU's reference.

    python -m meeting_gym.training.loss_check            # compare, exit 1 on a difference
    python -m meeting_gym.training.loss_check --record   # add (or replace) this CPU's reference
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from meeting_gym.evaluation.provenance import differences, run_environment

__all__ = [
    "OTHER_CPU_TOLERANCE",
    "REFERENCE",
    "SETTINGS",
    "Verdict",
    "compare",
    "cpu_key",
    "record",
    "sft_losses",
]

REFERENCE = Path(__file__).resolve().parents[2] / "constraints" / "sft-loss-reference.json"
"""The recorded references, beside the pins they were measured under."""

SETTINGS: dict[str, Any] = {
    "env": "CalendarMath-v0",
    "task": "add_days",
    "difficulty": "easy",
    "items": 16,
    "batch": 4,
    "lr": 1e-4,
    "bf16": True,
    "seed": 0,
    "threads": 1,
}
"""Four steps of the published CalendarMath SFT's settings, on 16 train items."""

OTHER_CPU_TOLERANCE = 0.02
"""The relative difference allowed on a CPU without a reference of its own."""


def cpu_key(environment: dict[str, Any]) -> dict[str, Any]:
    """What must match for two runs to be compared to the digit: the CPU and torch's kernels."""
    cpu = environment.get("cpu", {})
    return {
        "model": cpu.get("model"),
        "machine": cpu.get("machine"),
        "vector_extensions": cpu.get("vector_extensions"),
        "cpu_capability": environment.get("torch", {}).get("cpu_capability"),
    }


def sft_losses(settings: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run the short SFT; its per-step ``loss`` and ``grad_norm`` and the environment.

    torch's thread count is set for the run and restored after: the sums' order, and so the
    last digits, depend on it.
    """
    import torch

    from meeting_gym.agentkit.prompts import SHORT_PROMPTS
    from meeting_gym.core.splits import export_split
    from meeting_gym.training import trl_runs
    from meeting_gym.training.finetune import sft_rows

    s = {**SETTINGS, **(settings or {})}
    threads = torch.get_num_threads()
    torch.set_num_threads(s["threads"])
    try:
        trl_runs.quiet_trl_deprecations()
        torch.manual_seed(s["seed"])
        tokenizer, model = trl_runs.load("smollm2")
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp)
            export_split(
                "train",
                out / "rows.jsonl",
                s["items"],
                difficulty=s["difficulty"],
                env=s["env"],
                task=s["task"],
            )
            rows = sft_rows(out / "rows.jsonl", SHORT_PROMPTS[s["env"]])
            config = trl_runs.sft_config(
                out,
                batch=s["batch"],
                epochs=1.0,
                lr=s["lr"],
                max_length=512,
                bf16=s["bf16"],
                seed=s["seed"],
            )
            log = trl_runs.sft_train(tokenizer, model, rows, config)
        environment = run_environment()
    finally:
        torch.set_num_threads(threads)
    return {
        "settings": s,
        "loss": [e["loss"] for e in log],
        "grad_norm": [float(e["grad_norm"]) for e in log],
        "environment": environment,
    }


@dataclass
class Verdict:
    """The outcome of :func:`compare`: ``ok``, how it compared, and what differed."""

    ok: bool
    how: str
    mismatches: list[str] = field(default_factory=list)
    environment_differences: list[str] = field(default_factory=list)

    def text(self) -> str:
        """A report a person reads: the verdict, the values that differ, and why they might."""
        lines = [f"{'ok' if self.ok else 'FAILED'}: {self.how}"]
        lines += [f"  {m}" for m in self.mismatches]
        if self.environment_differences and not self.ok:
            lines.append("the environment differs from the reference's in:")
            lines += [f"  {d}" for d in self.environment_differences]
        return "\n".join(lines)


def _close(a: float, b: float, tolerance: float) -> bool:
    return a == b if tolerance == 0 else math.isclose(a, b, rel_tol=tolerance, abs_tol=1e-9)


def compare(measured: dict[str, Any], references: list[dict[str, Any]]) -> Verdict:
    """Measured losses against the reference of the same CPU (exactly) or, without one,
    against the first reference within :data:`OTHER_CPU_TOLERANCE`."""
    if not references:
        return Verdict(False, "no reference recorded (run with --record)")
    key = cpu_key(measured["environment"])
    same = [r for r in references if cpu_key(r["environment"]) == key]
    reference = same[0] if same else references[0]
    tolerance = 0.0 if same else OTHER_CPU_TOLERANCE
    if same:
        how = "equal to the digit to this CPU's reference"
    else:
        how = (
            f"within {tolerance:.0%} of the reference of {cpu_key(reference['environment'])} "
            f"(no reference for this CPU, {key}: --record adds one)"
        )
    mismatches = []
    if measured["settings"] != reference["settings"]:
        mismatches.append(f"settings: {measured['settings']} != {reference['settings']}")
    for name in ("loss", "grad_norm"):
        got, want = measured[name], reference[name]
        if len(got) != len(want):
            mismatches.append(f"{name}: {len(got)} steps != {len(want)}")
            continue
        for step, (a, b) in enumerate(zip(got, want, strict=True), start=1):
            if not _close(a, b, tolerance):
                mismatches.append(f"step {step} {name}: {a!r} != reference {b!r}")
    return Verdict(
        not mismatches,
        how,
        mismatches,
        differences(reference["environment"], measured["environment"]),
    )


def record(measured: dict[str, Any], path: Path = REFERENCE) -> None:
    """Write ``measured`` as its CPU's reference (replacing that CPU's earlier one)."""
    references = json.loads(path.read_text()) if path.is_file() else []
    key = cpu_key(measured["environment"])
    references = [r for r in references if cpu_key(r["environment"]) != key] + [measured]
    path.write_text(json.dumps(references, indent=1) + "\n")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--record", action="store_true", help="record this CPU's reference")
    p.add_argument("--reference", type=Path, default=REFERENCE, help="the references file")
    args = p.parse_args(argv)
    measured = sft_losses()
    if args.record:
        record(measured, args.reference)
        print(f"recorded {len(measured['loss'])} steps for {cpu_key(measured['environment'])}")
        return 0
    if not args.reference.is_file():
        print(f"no references file {args.reference}", file=sys.stderr)
        return 2
    verdict = compare(measured, json.loads(args.reference.read_text()))
    print(verdict.text())
    return 0 if verdict.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
