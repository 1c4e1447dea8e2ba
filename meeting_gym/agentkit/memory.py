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
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018 - only glibc has it; musl's mallopt is a stub
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    chosen = THRESHOLDS if environ.get(OPT_OUT, "") == "thresholds" else SETTINGS
    _applied = all(mallopt(param, value) == 1 for param, value in chosen)
    return _applied
