"""glibc's allocator set to keep freed memory (:mod:`meeting_gym.agentkit.memory`).

The settings are process-wide, so their effect is measured in child processes: a loop that
makes and frees 64 MB tensors faults in every page of each under glibc's defaults, and none
once freed memory is kept. (Below 32 MB glibc raises its mmap threshold by itself once a
mapped chunk is freed, so whether smaller tensors fault again depends on the heap's layout;
the model's steps showed it does.) The side-by-side timing on the real model is
``benchmarks/local_allocator.py`` (tests/integration/test_real_model.py runs it).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from meeting_gym.agentkit import memory

GLIBC_LINUX = sys.platform.startswith("linux") and os.confstr("CS_GNU_LIBC_VERSION") is not None

LOOP = """
import resource, sys, threading
import torch
from meeting_gym.agentkit.memory import keep_freed_memory
torch.ones(1 << 20).sum()  # torch has run before the settings, as before a model loads
print(keep_freed_memory())
counted = []
def loop():
    x = torch.ones(1 << 24)  # 64 MB
    for _ in range(3):  # warm up: the heap grows once
        y = x * 2 + 1
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(30):
        y = x * 2 + 1
        del y
    counted.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
if sys.argv[1] == "thread":  # as the local client generates: on a thread of its own
    worker = threading.Thread(target=loop)
    worker.start()
    worker.join()
else:
    loop()
print(counted[0])
"""


def faults(setting: str | None, where: str = "main") -> tuple[bool, int]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MALLOC_", "GLIBC_TUN"))}
    env.pop(memory.OPT_OUT, None)
    if setting is not None:
        env[memory.OPT_OUT] = setting
    env["OMP_NUM_THREADS"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", LOOP, where], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    applied, count = done.stdout.split()
    return applied == "True", int(count)


@pytest.mark.skipif(not GLIBC_LINUX, reason="glibc's mallopt")
@pytest.mark.parametrize("where", ["main", "thread"])
def test_kept_memory_stops_a_tensor_loop_from_faulting_in_its_pages_again(where):
    pytest.importorskip("torch")
    applied_default, default = faults("default", where)
    applied_kept, kept = faults(None, where)
    assert (applied_default, applied_kept) == (False, True)
    # glibc's defaults: each 64 MB temporary is mapped fresh (16,384 pages), every iteration
    # (above 32 MB glibc never raises its threshold by itself; a thread's own arena maps
    # anything above its 64 MB heaps fresh whatever the thresholds: hence one arena)
    assert default > 30 * 10_000
    assert kept < default // 10  # at most the heap growing once (2 x 16,384 pages)


@pytest.mark.parametrize(
    "environ",
    [
        {"MEETING_GYM_MALLOC": "default"},
        {"MALLOC_TRIM_THRESHOLD_": "131072"},
        {"MALLOC_MMAP_THRESHOLD_": "131072"},
        {"MALLOC_ARENA_MAX": "4"},
        {"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=131072"},
    ],
)
def test_a_user_who_chose_the_allocators_settings_keeps_them(environ):
    assert memory.keep_freed_memory(environ) is False


@pytest.mark.skipif(not GLIBC_LINUX, reason="glibc's mallopt")
def test_thresholds_alone_leave_a_thread_its_own_arena():
    pytest.importorskip("torch")
    applied, on_main = faults("thresholds", "main")
    _, on_thread = faults("thresholds", "thread")
    assert applied is True
    # on the main arena, at most the heap growing for two 64 MB chunks (2 x 16,384 pages,
    # seen exactly on one fresh machine); on a thread's own arena, every iteration's pages
    assert on_main <= 2 * 16_384 < 30 * 10_000 < on_thread  # the arena cap is what mends it


TRIM = """
from meeting_gym.agentkit.memory import keep_freed_memory, resident_gb, return_freed_memory
print(keep_freed_memory())
start = resident_gb()
chunks = [bytearray(1 << 20) for _ in range(400)]  # 400 MB from the heap, every page touched
held = resident_gb()
del chunks
kept = resident_gb()  # the settings keep the freed heap
print(return_freed_memory(), start, held, kept, resident_gb())
"""


@pytest.mark.skipif(not GLIBC_LINUX, reason="glibc's malloc_trim")
def test_memory_kept_for_reuse_goes_back_to_the_kernel_when_asked():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MALLOC_", "GLIBC_TUN"))}
    env.pop(memory.OPT_OUT, None)
    done = subprocess.run(
        [sys.executable, "-c", TRIM], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    applied, rest = done.stdout.split("\n", 1)
    returned, start, held, kept, after = rest.split()
    assert (applied, returned) == ("True", "True")
    start, held, kept, after = float(start), float(held), float(kept), float(after)
    assert held - start > 0.35  # the 400 MB resident
    assert kept - start > 0.35  # freed, still the process's under the settings
    assert after - start < 0.05  # given back


def test_resident_memory_is_read_from_proc():
    if not sys.platform.startswith("linux"):
        assert memory.resident_gb() is None
        return
    now, peak = memory.resident_gb(), memory.peak_resident_gb()
    assert now is not None and peak is not None
    assert 0 < now <= peak
