"""glibc's allocator, set once for a model's large short-lived tensors.

A decoding step or a training step allocates and frees tensors of a few megabytes
(activations, attention masks, logits of a batch). By default glibc serves each with a
fresh ``mmap`` and unmaps it when freed, or trims the heap's top back to the kernel, so the
next step's tensor of the same size faults in every page again: on the 2-core CPU a batch of
MeetingSlot episodes spent about 15% of its time in the kernel doing that
(docs/results/benchmarks.md, "The allocator"). Raising the mmap and trim thresholds keeps
freed memory in the heap, where the next step reuses it.

The thresholds govern the main arena only. A thread gets an arena of its own, whose heaps
are at most 64 MB, so there every larger tensor is mapped fresh and unmapped when freed,
whatever the thresholds say. The local client generates on a thread, and in a 200-item
evaluation (16 places, episodes of different lengths in one batch) it made 73 MB tensors:
half the run's CPU time went to the kernel. So the process is also held to one arena:
threads created after the settings share the main one.

The settings are the process's, so they are applied only where a local model is loaded,
never when a user has set glibc's own variables, and not at all with
``MEETING_GYM_MALLOC=default``.

Memory kept this way is the process's until it exits. A long run that alternates two kinds of
work (a GRPO step's rollouts, then its update) can return it between them with
:func:`return_freed_memory`, and log :func:`resident_gb` to see what it holds.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Mapping

OPT_OUT = "MEETING_GYM_MALLOC"
"""``default`` leaves glibc's allocator as it is; ``thresholds`` keeps freed memory but lets
threads have arenas of their own (for a process whose many threads allocate at once)."""
USER_VARIABLES = (
    "MALLOC_MMAP_THRESHOLD_",
    "MALLOC_TRIM_THRESHOLD_",
    "MALLOC_TOP_PAD_",
    "MALLOC_ARENA_MAX",
    "GLIBC_TUNABLES",
)
"""glibc's own settings: a user who set any of them chose the allocator's behaviour."""
SETTINGS = (
    (-3, 256 << 20),  # M_MMAP_THRESHOLD: allocations below 256 MB come from the heap
    (-1, 1 << 30),  # M_TRIM_THRESHOLD: keep up to 1 GB free at the heap's top
    (-2, 256 << 20),  # M_TOP_PAD: grow the heap in steps of 256 MB
    (-8, 1),  # M_ARENA_MAX: new threads share the main arena, where the above apply
)
THRESHOLDS = SETTINGS[:3]
_applied: bool | None = None


def keep_freed_memory(environ: Mapping[str, str] | None = None) -> bool:
    """Ask glibc to keep freed memory for reuse; True where the settings took effect.

    A no-op (False) off Linux, on another C library (musl), with ``MEETING_GYM_MALLOC=default``
    or when one of glibc's ``MALLOC_*`` variables or ``GLIBC_TUNABLES`` is set. With
    ``MEETING_GYM_MALLOC=thresholds`` all but the one-arena setting. Applied at most once a
    process.
    """
    global _applied
    environ = os.environ if environ is None else environ
    if environ.get(OPT_OUT, "") == "default" or any(name in environ for name in USER_VARIABLES):
        return False
    if _applied is not None:
        return _applied
    _applied = False
    libc = _glibc()
    if libc is None:
        return False
    chosen = THRESHOLDS if environ.get(OPT_OUT, "") == "thresholds" else SETTINGS
    _applied = all(libc.mallopt(param, value) == 1 for param, value in chosen)
    return _applied


def _glibc() -> ctypes.CDLL | None:
    """The process's C library where it is glibc on Linux, else None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018 - only glibc has it; musl's mallopt is a stub
    except (OSError, AttributeError):
        return None
    return libc


def return_freed_memory() -> bool:
    """Give the heap's free pages back to the kernel (glibc's ``malloc_trim(0)``).

    True where some memory was returned; False where nothing was, off glibc, or off Linux.
    Freed chunks in the middle of the heap are returned too, page by page, so this undoes what
    :func:`keep_freed_memory` kept without changing its settings for the next step.
    """
    libc = _glibc()
    return libc is not None and bool(libc.malloc_trim(0))


def resident_gb() -> float | None:
    """The process's resident memory now, in GB (from ``/proc/self/statm``); None off Linux."""
    try:
        fields = open("/proc/self/statm").read().split()  # noqa: SIM115 - one short read
    except OSError:
        return None
    return round(int(fields[1]) * os.sysconf("SC_PAGE_SIZE") / 1e9, 2)


def peak_resident_gb() -> float | None:
    """The most resident memory the process has held, in GB (``VmHWM``); None off Linux."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) * 1024 / 1e9, 2)
    except OSError:
        return None
    return None
