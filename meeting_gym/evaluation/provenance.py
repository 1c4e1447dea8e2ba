"""The environment a run ran in, written beside its results.

A training figure reproduces to the digit only on the same libraries and the same CPU: the
same seeds on another CPU (other vector kernels) or another transformers or torch release
give other floating-point sums, and after a few hundred optimiser steps other greedy replies.
:func:`run_environment` records what decides that: the versions of the numeric packages, the
package itself and its commit, Python, torch's thread count and kernel level, and the CPU
model with its vector extensions. :func:`differences` says which of those two records do not
share, so a reader can tell whether a figure should reproduce to the digit or only within its
interval.

Nothing here imports torch: a run that loaded it gets its thread count, one that did not
(``meeting-gym eval --policy gold``) records ``None`` rather than paying for the import.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import platform
import subprocess
import sys
from collections.abc import Iterable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = [
    "NUMERIC_PACKAGES",
    "TRAINING_ROOTS",
    "closure",
    "compare_to_record",
    "constraints_text",
    "cpu",
    "differences",
    "package_versions",
    "read_constraints",
    "record_phase",
    "run_environment",
]

NUMERIC_PACKAGES = (
    "torch",
    "transformers",
    "trl",
    "accelerate",
    "datasets",
    "tokenizers",
    "safetensors",
    "gguf",
    "numpy",
    "gymnasium",
    "stable-baselines3",
    "sb3-contrib",
    "llama-cpp-python",
)
"""The distributions whose release can change a run's numbers (or its items: gymnasium)."""

# The CPU flags that choose which vector kernels torch, numpy and llama.cpp run (x86 and Arm
# spellings as Linux's /proc/cpuinfo writes them); the rest of the flags decide nothing here.
# (Not "sme": on x86 it is AMD's memory encryption, and "smep" a protection bit.)
_VECTOR_PREFIXES = ("sse", "ssse", "avx", "amx", "fma", "f16c", "asimd", "sve", "fphp")


def package_versions(names: Iterable[str] = NUMERIC_PACKAGES) -> dict[str, str | None]:
    """Each distribution's installed version, ``None`` where it is not installed."""
    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def _cpuinfo(text: str) -> tuple[str | None, list[str]]:
    """(model name, sorted vector extensions) from the text of ``/proc/cpuinfo``."""
    model = None
    flags: set[str] = set()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip().lower()
        if key in ("model name", "cpu model") and model is None:
            model = value.strip() or None
        elif key in ("flags", "features") and not flags:
            flags = {f for f in value.split() if f.startswith(_VECTOR_PREFIXES)}
    return model, sorted(flags)


def cpu(cpuinfo: str | None = None) -> dict[str, Any]:
    """The CPU: its model name, architecture, vector extensions and logical core count.

    ``cpuinfo`` is the text of ``/proc/cpuinfo`` (read from there when ``None``); where it
    cannot be read (not Linux) the model is ``platform.processor()`` and the extensions are
    ``None``: unknown, not absent.
    """
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            cpuinfo = None
    model, flags = _cpuinfo(cpuinfo) if cpuinfo is not None else (None, None)
    return {
        "model": model or platform.processor() or None,
        "machine": platform.machine(),
        "vector_extensions": flags,
        "logical_cores": os.cpu_count(),
    }


def _commit() -> dict[str, Any]:
    """The commit of the checkout the package runs from, and whether it has local changes;
    both ``None`` for an installed (not editable) copy or where git is missing."""
    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists():
        return {"commit": None, "dirty": None}
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        status = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}
    return {"commit": head or None, "dirty": bool(status.strip())}


def _torch() -> dict[str, Any]:
    """torch's thread count and CPU kernel level, where torch is already imported."""
    torch = sys.modules.get("torch")
    if torch is None:
        return {"threads": None, "cpu_capability": None}
    capability = None
    with contextlib.suppress(AttributeError, RuntimeError):  # older torch has no such call
        capability = torch.backends.cpu.get_cpu_capability()
    return {"threads": torch.get_num_threads(), "cpu_capability": capability}


def run_environment() -> dict[str, Any]:
    """The record a results file carries: Python, the numeric packages' versions, this
    package's version and commit, torch's threads and kernel level, and the CPU."""
    from meeting_gym import __version__

    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "os": f"{platform.system()} {platform.release()}",
        "meeting_gym": {"version": __version__, **_commit()},
        "packages": package_versions(),
        "torch": _torch(),
        "cpu": cpu(),
    }


def differences(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    """What two :func:`run_environment` records do not share that can change a run's
    numbers: package versions, Python, torch's threads and kernel level, the CPU's model and
    vector extensions. Each entry reads ``"what: A != B"``; an empty list means a run should
    reproduce to the digit. A package installed on one side only is left out (an LLM run
    without stable-baselines3 is no less comparable), and so is the commit: code changes show
    in the results.
    """
    out: list[str] = []

    def compare(label: str, x: Any, y: Any) -> None:
        if x != y:
            out.append(f"{label}: {x} != {y}")

    compare("python", a.get("python"), b.get("python"))
    pa, pb = a.get("packages", {}), b.get("packages", {})
    for name in sorted(set(pa) & set(pb)):
        if pa[name] is not None and pb[name] is not None:  # one run's missing extra is no cause
            compare(name, pa[name], pb[name])
    ta, tb = a.get("torch", {}), b.get("torch", {})
    for key in ("threads", "cpu_capability"):
        compare(f"torch {key}", ta.get(key), tb.get(key))
    ca, cb = a.get("cpu", {}), b.get("cpu", {})
    for key in ("model", "machine", "vector_extensions"):
        compare(f"cpu {key}", ca.get(key), cb.get(key))
    return out


def record_phase(path: Path, phase: str) -> list[dict[str, Any]]:
    """Append this sitting's environment under ``phase`` to the JSON list at ``path`` and
    return the list. A run split into phases (each resumable, perhaps on another machine)
    keeps one record per sitting, so a table built across machines says so."""
    records: list[dict[str, Any]] = []
    if path.is_file():
        records = json.loads(path.read_text(encoding="utf-8"))
    records.append({"phase": phase, "environment": run_environment()})
    path.write_text(json.dumps(records, indent=1), encoding="utf-8")
    return records


def compare_to_record(results: Path) -> tuple[bool, list[str]]:
    """Whether this machine is the environment ``results`` (a run's ``results.json``)
    records, and the lines that say so: the differences, or that there are none. torch's
    thread count is the run's choice, not the machine's: it is named, not compared.
    ``ValueError`` names a file that is missing or records no environment."""
    try:
        record = json.loads(results.read_text(encoding="utf-8"))["environment"]
    except FileNotFoundError:
        raise ValueError(f"{results}: no such file") from None
    except (json.JSONDecodeError, KeyError, TypeError):
        raise ValueError(f"{results}: records no environment") from None
    if package_versions(["torch"])["torch"] is not None:
        importlib.import_module("torch")  # loaded, so its kernel level is compared too
    here = run_environment()
    threads = record.get("torch", {}).get("threads")
    record = {**record, "torch": {**record.get("torch", {}), "threads": None}}
    here["torch"]["threads"] = None
    found = differences(record, here)
    lines = [f"the run used {threads} torch thread(s): give --threads {threads}"] if threads else []
    if found:
        return False, [*lines, "this machine differs from the recorded environment in:"] + [
            f"  {d} (recorded != here)" for d in found
        ]
    return True, [*lines, "same environment: the run's table should reproduce to the digit"]


TRAINING_ROOTS = ("meeting-gym[trl,local]",)
"""What the constraints file pins: the training and local-model extras, with all they need."""


def closure(roots: Iterable[str] = TRAINING_ROOTS) -> dict[str, str]:
    """Every installed distribution ``roots`` need, directly or not, with its version (its
    public part: ``2.13.0`` for ``2.13.0+cpu``); the roots' own distributions left out.

    Reads the installed metadata, so it describes this environment: the constraints file is
    this mapping for the environment the published runs used. Needs ``packaging`` (every
    training install has it).
    """
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name
    from packaging.version import Version

    def requires(name: str, extras: set[str]) -> list[Requirement]:
        out = []
        for line in metadata.requires(name) or []:
            req = Requirement(line)
            if req.marker is None or any(
                req.marker.evaluate({"extra": e}) for e in (extras or {""})
            ):
                out.append(req)
        return out

    found: dict[str, str] = {}
    skip = {canonicalize_name(Requirement(r).name) for r in roots}
    queue = [Requirement(r) for r in roots]
    seen: set[tuple[str, frozenset[str]]] = set()
    while queue:
        req = queue.pop()
        name = canonicalize_name(req.name)
        key = (name, frozenset(req.extras))
        if key in seen:
            continue
        seen.add(key)
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue  # an optional dependency this environment does not have
        if name not in skip:
            found[name] = Version(version).public
        queue.extend(requires(name, set(req.extras)))
    return dict(sorted(found.items()))


def constraints_text(pins: Mapping[str, str]) -> str:
    """A pip constraints file of ``pins``, with how it was made."""
    head = [
        "# The versions the published training tables were measured with: the trl and local",
        "# extras and everything they need (meeting_gym.evaluation.provenance.closure).",
        "# Install with: pip install -c constraints/train.txt -e '.[...]'",
        "# Remake after an upgrade (then re-measure the tables and the loss reference):",
        "#   python -m meeting_gym.evaluation.provenance > constraints/train.txt",
    ]
    return "\n".join([*head, *(f"{n}=={v}" for n, v in pins.items())]) + "\n"


def read_constraints(text: str) -> dict[str, str]:
    """``name -> version`` of a constraints file's ``name==version`` lines."""
    pins = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            pins[name.strip()] = version.strip()
    return pins


if __name__ == "__main__":
    print(constraints_text(closure()), end="")
