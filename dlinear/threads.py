"""The threads of a fit's passes in one process: the one home of the pools that split a
pass over the data into parts (row or feature ranges, groups of classes) and of the lock
that shares what the parts build once.

The kernels release the GIL (`nogil`), so parts run on as many cores. A part's result must
not depend on which thread ran it or on the number of threads: the callers split the
work into parts that each write their own outputs, and add partial results in a fixed
order. The solvers (dlinear.solvers) make no threads of their own (tests/unit/test_layers.py).
"""
from __future__ import annotations

import os
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor

import numpy as np


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system tells it)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def nonzero_ranges(pointers, n_parts: int) -> list:
    """[(a, b)] covering the rows (or columns) of a CSR (CSC) pointer array in at most
    n_parts ranges of about equal non-zeros, for the threads of a pass."""
    n = len(pointers) - 1
    cuts = np.searchsorted(pointers, np.linspace(0, pointers[-1], n_parts + 1)[1:-1])
    edges = [0, *sorted(set(int(c) for c in cuts) - {0, n}), n]
    return list(zip(edges[:-1], edges[1:]))


class PassPool:
    """n_threads threads for the parts of a pass: the calling thread and a pool of
    n_threads - 1, started on first use and shut down with the owner (or `close`)."""

    def __init__(self, n_threads: int, name: str):
        self.n_threads = max(1, int(n_threads))
        self._name = name
        self._pool = None

    def run(self, fn, parts) -> list:
        """[fn(*part) for part in parts], the parts taken in order by whichever of the
        threads is free (the calling thread is one of them)."""
        parts = list(parts)
        results = [None] * len(parts)
        if self.n_threads <= 1 or len(parts) <= 1:
            for q, part in enumerate(parts):
                results[q] = fn(*part)
            return results
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.n_threads - 1,
                                            thread_name_prefix=f"dlinear-{self._name}")
            weakref.finalize(self, self._pool.shutdown, wait=False)
        todo = iter(range(len(parts)))
        lock = threading.Lock()

        def work():
            while True:
                with lock:
                    q = next(todo, None)
                if q is None:
                    return
                results[q] = fn(*parts[q])

        helpers = [self._pool.submit(work)
                   for _ in range(min(self.n_threads, len(parts)) - 1)]
        try:
            work()
        finally:
            for f in helpers:
                f.result()
        return results

    def close(self):
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None


class SharedValues:
    """Values made once per key and shared by the threads that ask for them (the first
    caller of a key makes it while the others wait). Not sent to other processes: a copy
    starts empty."""

    def __init__(self):
        self._lock = threading.Lock()
        self._values = {}

    def get(self, key, make):
        with self._lock:
            if key not in self._values:
                self._values[key] = make()
            return self._values[key]

    def __getstate__(self):
        return {}

    def __setstate__(self, state):
        self.__init__()
