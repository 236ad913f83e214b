"""glibc's heap kept during a fit on a Dask worker.

Dask's nanny starts its workers with MALLOC_TRIM_THRESHOLD_=65536
(`distributed.nanny.pre-spawn-environ`), so that freed memory goes back to the system.
Setting that variable also turns off glibc's dynamic mmap threshold: every array of
128 KiB or more (a Newton driver's n-vectors, its NumPy temporaries) is then mmap'ed on
allocation and unmapped on free, and each new one is page-faulted in again. A one-vs-rest
-s 0 fit of 35 classes (48,949 x 297,063) took 12.3 s in a process started so, 9.0-10.3 s
without (BENCHMARKS.md, "Multi-class Newton on a cluster"). `heap_kept()` raises both
thresholds for the duration of a fit and, at its end, puts back the values the
environment asked for and trims the heap, so that between tasks the worker holds no more
than Dask meant it to.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading
import weakref
from contextlib import contextmanager

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
# glibc's own bounds for its dynamic thresholds on 64-bit systems (malloc.c)
KEPT_MMAP_THRESHOLD = 32 << 20
KEPT_TRIM_THRESHOLD = 1 << 30
GLIBC_MMAP_THRESHOLD = 128 << 10      # glibc's defaults
GLIBC_TRIM_THRESHOLD = 128 << 10

_lock = threading.Lock()
_depth = 0


def _glibc():
    """libc as a ctypes library if it is glibc (has mallopt and malloc_trim), else None."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.mallopt, libc.malloc_trim        # noqa: B018 (AttributeError if absent)
        return libc
    except (OSError, AttributeError):
        return None


def _environment_thresholds():
    """(trim, mmap) thresholds the environment set (None: not set, glibc's dynamic
    default)."""
    def read(name):
        try:
            return int(os.environ[name])
        except (KeyError, ValueError):
            return None
    return read("MALLOC_TRIM_THRESHOLD_"), read("MALLOC_MMAP_THRESHOLD_")


def hold_heap() -> bool:
    """The entering half of heap_kept, for state that outlives one call (the Newton and
    partitioned-CD actors hold the heap from their creation until they are released):
    True if the thresholds were raised, and release_heap() must then be called once."""
    global _depth
    trim, mmap = _environment_thresholds()
    libc = _glibc() if (trim is not None or mmap is not None) else None
    if libc is None:
        return False
    with _lock:
        _depth += 1
        if _depth == 1:
            libc.mallopt(M_MMAP_THRESHOLD, KEPT_MMAP_THRESHOLD)
            libc.mallopt(M_TRIM_THRESHOLD, KEPT_TRIM_THRESHOLD)
    return True


def release_heap() -> None:
    """The leaving half of heap_kept (after a hold_heap() that returned True): the last
    holder to leave restores the environment's thresholds and trims the heap."""
    global _depth
    trim, mmap = _environment_thresholds()
    libc = _glibc()
    with _lock:
        _depth -= 1
        if _depth == 0:
            libc.mallopt(M_MMAP_THRESHOLD, mmap if mmap is not None
                         else GLIBC_MMAP_THRESHOLD)
            libc.mallopt(M_TRIM_THRESHOLD, trim if trim is not None
                         else GLIBC_TRIM_THRESHOLD)
            libc.malloc_trim(0)


@contextmanager
def heap_kept():
    """Within: glibc keeps freed memory (thresholds at glibc's dynamic maxima) if the
    environment had fixed them (a Dask worker); elsewhere, or off glibc, nothing
    changes. Nested and concurrent uses (tasks on a worker's threads, actors) are
    counted: the last to leave restores the environment's values and trims."""
    held = hold_heap()
    try:
        yield
    finally:
        if held:
            release_heap()


def hold_heap_while_alive(owner) -> None:
    """hold_heap() until `owner` (a Dask actor) is garbage collected."""
    if hold_heap():
        weakref.finalize(owner, release_heap)
