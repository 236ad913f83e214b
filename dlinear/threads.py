"""The threads of a fit's passes in one process: the one home of the pools that split a
pass over the data into parts (row or feature ranges, groups of classes) and of the lock
that shares what the parts build once.

The kernels release the GIL (`nogil`), so parts run on as many cores. A part's result must
not depend on which thread ran it or on the number of threads: the callers split the
work into parts that each write their own outputs, and add partial results in a fixed
order. The solvers (dlinear.solvers) make no threads of their own (tests/unit/test_layers.py).
"""
from __future__ import annotations

import functools
import math
import os
import sys
import threading
import time
import weakref
from concurrent.futures import ThreadPoolExecutor


def available_cores(proc: str = "/proc") -> int:
    """The cores this process may use: its CPU affinity, capped by the cgroup CPU quota of
    a container (v1 cpu.cfs_quota_us / cpu.cfs_period_us, v2 cpu.max) rounded up; at
    least 1. The one place dlinear asks for the core count (tests/unit/test_layers.py)."""
    if hasattr(os, "sched_getaffinity"):
        cores = len(os.sched_getaffinity(0))
    else:
        cores = os.cpu_count() or 1
    quota = cgroup_cpu_limit(proc)
    return max(1, min(cores, quota) if quota is not None else cores)


# Numba's threading layer (the prange of the parallel dual CD) sizes its pool by the
# machine's cores, not by the affinity or a container's quota, when imported
LIBRARY_THREAD_VARIABLES = ("NUMBA_NUM_THREADS",)

# OpenBLAS (loaded by NumPy and SciPy) gets one thread: no kernel calls it, and a NumPy
# BLAS call on more than 10,000 entries wakes a thread per core that spins on after it
# returns, taking a core from the kernel pass that follows (docs/guide/threads.rst has
# the figures)
BLAS_THREAD_VARIABLE = "OPENBLAS_NUM_THREADS"


def limit_library_threads(environ=os.environ) -> None:
    """Sets NUMBA_NUM_THREADS to available_cores() and OPENBLAS_NUM_THREADS to 1 where
    the user has not: run before NumPy and Numba are imported (dlinear/__init__.py), and
    inherited by the processes started from here."""
    missing = [name for name in LIBRARY_THREAD_VARIABLES if not environ.get(name)]
    if missing:
        cores = str(available_cores())
        for name in missing:
            environ[name] = cores
    if not environ.get(BLAS_THREAD_VARIABLE):
        environ[BLAS_THREAD_VARIABLE] = "1"


def cgroup_cpu_limit(proc: str = "/proc"):
    """The CPU quota of this process's cgroups in cores, rounded up (the smallest on its
    cgroup's path up to the hierarchy's root, as the kernel enforces every level), or
    None where none is set or the system has no cgroups. `proc` is /proc (a test's fake
    tree elsewhere); the cgroup file systems are found where /proc/self/mountinfo says."""
    try:
        with open(os.path.join(proc, "self", "cgroup")) as f:
            memberships = [line.rstrip("\n").split(":", 2) for line in f]
        with open(os.path.join(proc, "self", "mountinfo")) as f:
            mounts = [_cgroup_mount(line) for line in f]
    except OSError:
        return None
    limits = []
    for fields in memberships:
        if len(fields) != 3:
            continue
        _, controllers, path = fields
        version = 2 if controllers == "" else 1 if "cpu" in controllers.split(",") else 0
        for mount in mounts:
            if mount is not None and mount[0] == version and _under(path, mount[2]):
                limits.append(_quota_on_path(version, mount[1], path[len(mount[2]):]))
    limits = [q for q in limits if q is not None]
    return min(limits) if limits else None


def _under(path: str, root: str) -> bool:
    root = root.rstrip("/")
    return path == root or path.startswith(root + "/")


def _cgroup_mount(line: str):
    """(version, mount point, root in the hierarchy) of a mountinfo line of a cgroup v2
    or v1 cpu file system, else None."""
    fields = line.split()
    if "-" not in fields[:-1] or len(fields) < 5:
        return None
    after = fields[fields.index("-") + 1:]
    root, mount_point, kind = fields[3], fields[4], after[0]
    if kind == "cgroup2":
        return 2, mount_point, root
    if kind == "cgroup" and len(after) > 2 and "cpu" in after[2].split(","):
        return 1, mount_point, root
    return None


def _quota_on_path(version: int, mount_point: str, relative: str):
    """The smallest quota (cores, rounded up) of the cgroup mount_point/relative and its
    parents up to mount_point; None where none is set."""
    parts = [p for p in relative.split("/") if p]
    best = None
    for depth in range(len(parts), -1, -1):
        directory = os.path.join(mount_point, *parts[:depth])
        cores = _quota_in(version, directory)
        if cores is not None:
            best = cores if best is None else min(best, cores)
    return best


def _quota_in(version: int, directory: str):
    try:
        if version == 2:
            with open(os.path.join(directory, "cpu.max")) as f:
                quota, period = (f.read().split() + ["100000"])[:2]
        else:
            with open(os.path.join(directory, "cpu.cfs_quota_us")) as f:
                quota = f.read().strip()
            with open(os.path.join(directory, "cpu.cfs_period_us")) as f:
                period = f.read().strip()
        if quota == "max" or int(quota) <= 0 or int(period) <= 0:
            return None
        return max(1, math.ceil(int(quota) / int(period)))
    except (OSError, ValueError):
        return None


def nonzero_ranges(pointers, n_parts: int) -> list:
    """[(a, b)] covering the rows (or columns) of a CSR (CSC) pointer array in at most
    n_parts ranges of about equal non-zeros, for the threads of a pass."""
    import numpy as np
    n = len(pointers) - 1
    cuts = np.searchsorted(pointers, np.linspace(0, pointers[-1], n_parts + 1)[1:-1])
    edges = [0, *sorted(set(int(c) for c in cuts) - {0, n}), n]
    return list(zip(edges[:-1], edges[1:]))


_part = threading.local()


class PartStopped(Exception):
    """A helper thread's part ended early: the pass it belongs to has failed."""


def stop_point() -> None:
    """Called between the bounded steps of a long part (the reader's 4 MB chunks): on a
    PassPool's helper thread, ends the part once the calling thread has failed (Ctrl-C
    arrives there only), so that the pass ends within a step rather than a part."""
    if getattr(_part, "stopped", None):
        raise PartStopped


# Ctrl-C inside a kernel. Python runs a SIGINT's handler on the main thread between
# bytecodes only, so a main thread inside a kernel of many seconds (a library fit, a
# notebook cell) would answer when the kernel returns. The long kernels therefore read a
# flag between bounded steps (a few rows or columns of work) and return early once it is
# set; while a fit runs on the main thread, a watcher thread sets it as soon as the
# signal arrives (signal.set_wakeup_fd wakes it from C, whatever the main thread holds).
# The kernel returns, and Python's handler raises KeyboardInterrupt at the next bytecode.
_stop = []
_watching = threading.Lock()
_ctrl_c_seen_at = [None]


def stop_flag():
    """The one-element uint8 array the long kernels read between bounded steps: nonzero
    once a Ctrl-C has arrived during a fit (then they return early and their callers
    raise KeyboardInterrupt: see raise_if_stopped)."""
    if not _stop:
        import numpy as np
        _stop.append(np.zeros(1, dtype=np.uint8))
    return _stop[0]


def ctrl_c_seen_at():
    """time.monotonic() when the last watched Ctrl-C set stop_flag() (None before one):
    how long the flag took, for a report of a slow stop."""
    return _ctrl_c_seen_at[0]


def raise_if_stopped() -> None:
    """KeyboardInterrupt if a kernel returned early because of a Ctrl-C: what a caller of
    a long kernel runs after it, on any thread, so that a stopped kernel's partial result
    is never taken for a fit's."""
    if _stop and _stop[0][0]:
        raise KeyboardInterrupt


# A KeyboardInterrupt raised where Python can only report an exception, not propagate it
# (a gc callback such as distributed's GC diagnosis, a ctypes callback of the compiler, a
# __del__), is lost, but the watcher has set stop_flag(): the kernels return early, and
# the drivers' loops (solvers.requests.serve, the partitioned rounds) call
# raise_if_stopped() between their steps. While a fit is watched, such a swallowed
# KeyboardInterrupt is not printed either (a Ctrl-C is one line).
def _quiet_about_ctrl_c(previous_hook, unraisable) -> None:
    if not isinstance(unraisable.exc_value, KeyboardInterrupt):
        previous_hook(unraisable)


class kernels_stop_on_ctrl_c:
    """Context of a fit: on the main thread, with Python's default SIGINT handler, a Ctrl-C
    sets stop_flag() at once, so the kernels running (on this thread or a pool's) return
    within a step and the fit ends in a KeyboardInterrupt. Elsewhere (another thread, a
    handler of the caller's own, nested in another fit) it does nothing. The signals'
    wakeup file descriptor of the caller (asyncio's) is passed every byte while this
    one is installed, and restored after. `ctrl_c_arrived` says, after it, whether a
    Ctrl-C came while it watched."""

    ctrl_c_arrived = False

    def __enter__(self):
        import signal
        self._owner = (threading.current_thread() is threading.main_thread()
                       and signal.getsignal(signal.SIGINT) is signal.default_int_handler
                       and _watching.acquire(blocking=False))
        if not self._owner:
            return self
        stop_flag()[0] = 0
        read_end, write_end = os.pipe()
        os.set_blocking(write_end, False)
        try:
            previous = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
        except ValueError:          # no signals here (an embedded interpreter)
            os.close(read_end)
            os.close(write_end)
            _watching.release()
            self._owner = False
            return self
        self._ends, self._previous = (read_end, write_end), previous
        self._hook = sys.unraisablehook
        sys.unraisablehook = functools.partial(_quiet_about_ctrl_c, self._hook)
        self._watcher = threading.Thread(target=self._watch, args=(read_end, previous),
                                         name="dlinear-ctrl-c", daemon=True)
        self._watcher.start()
        return self

    @staticmethod
    def _watch(read_end: int, previous: int) -> None:
        import signal
        while True:
            try:
                received = os.read(read_end, 64)
            except OSError:
                return
            if not received:        # the write end closed: the fit is over
                return
            if signal.SIGINT in received:
                stop_flag()[0] = 1
                _ctrl_c_seen_at[0] = time.monotonic()
            if previous >= 0:
                try:
                    os.write(previous, received)
                except OSError:
                    pass

    def __exit__(self, *exc):
        if self._owner:
            import signal
            signal.set_wakeup_fd(self._previous)
            sys.unraisablehook = self._hook
            read_end, write_end = self._ends
            os.close(write_end)
            self._watcher.join()
            os.close(read_end)
            self.ctrl_c_arrived = bool(stop_flag()[0])
            stop_flag()[0] = 0
            _watching.release()
        return False


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
        stopped = []      # set when the calling thread fails (Ctrl-C): no part is started

        def work():
            while True:
                with lock:
                    q = None if stopped else next(todo, None)
                if q is None:
                    return
                results[q] = fn(*parts[q])

        def helper():
            _part.stopped = stopped     # what stop_point() looks at in this thread
            try:
                work()
            finally:
                _part.stopped = None

        helpers = [self._pool.submit(helper)
                   for _ in range(min(self.n_threads, len(parts)) - 1)]
        try:
            work()
        except BaseException:
            stopped.append(True)
            for f in helpers:
                f.exception()           # they end at their next stop_point
            raise
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
