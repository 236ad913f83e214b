"""One line on stderr when a run has to compile dlinear's Numba kernels.

A first run (an empty Numba cache: after installing, upgrading, or with a new
NUMBA_CACHE_DIR) compiles the reader's and the solver's kernels, a few seconds in which
nothing else would be printed. Numba reports each compilation as a "numba:compile" event,
and a kernel found in the cache sends none, so the line appears exactly when compiling
starts, once per run:

    notice = CompileNotice(note, "-s 1")
    with notice:
        problem = read_libsvm(path)
    with notice:
        train(problem, params)
"""
from __future__ import annotations

import threading

from numba.core import event

from ..kernels import cache_root


class CompileNotice(event.Listener):
    """Calls `note` with one line the first time, inside any of its `with` blocks, that
    Numba starts compiling a function of dlinear's own (not one of Numba's helpers)."""

    def __init__(self, note, what: str):
        super().__init__()
        self._note = note
        self._what = what
        self._said = False
        self._lock = threading.Lock()

    def on_start(self, ev):
        func = getattr(ev.data.get("dispatcher"), "py_func", None)
        if func is None or not func.__module__.startswith("dlinear."):
            return
        with self._lock:
            if self._said:
                return
            self._said = True
        self._note(f"dlinear: compiling the kernels for {self._what} (first run only, a "
                   f"few seconds; cached in {cache_root()})...")

    def on_end(self, ev):
        pass

    def __enter__(self):
        event.register("numba:compile", self)
        return self

    def __exit__(self, *exc):
        event.unregister("numba:compile", self)
        return False

