"""A dlinear command's first moments: Ctrl-C while Python imports NumPy, Numba and Dask
(seconds), before the command's own answer (exit.exit_status) is in place. Imports
nothing of dlinear, so that the package can call it first."""
from __future__ import annotations

import os
import signal
import sys

COMMAND_NAMES = ("dlinear-train", "dlinear-predict", "dlinear-submit", "dlinear-status")

command_process = False     # whether this process runs a dlinear command


def end_import_answer() -> None:
    """Python's Ctrl-C handler back, as a command starts (exit.exit_status)."""


def answer_ctrl_c_while_importing() -> None:
    """In a dlinear command (a console script, or python -m dlinear, whose argv[0] is
    "-m" while the package is imported), a Ctrl-C during the imports ends with the one
    line and 130 rather than a traceback: nothing is written yet, so the process just
    ends."""
    global command_process, end_import_answer
    name = os.path.basename(sys.argv[0]) if sys.argv else ""
    run = list(getattr(sys, "orig_argv", []))
    module = run[run.index("-m") + 1] if "-m" in run[:-1] else None
    if (name not in COMMAND_NAMES and not (name == "-m" and module == "dlinear")) or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return

    def end(signum, frame):
        sys.stderr.write("dlinear: interrupted\n")
        sys.stderr.flush()
        os._exit(130)
    try:
        signal.signal(signal.SIGINT, end)
    except ValueError:          # not the main thread
        return
    command_process = True

    def restore() -> None:
        if signal.getsignal(signal.SIGINT) is end:
            signal.signal(signal.SIGINT, signal.default_int_handler)
    end_import_answer = restore


# glibc's mallopt parameter, and the size from which an allocation gets a mapping of its own
M_MMAP_THRESHOLD = -3
OWN_MAPPING_BYTES = 1 << 20


def give_back_freed_arrays() -> None:
    """Under glibc, arrays of 1 MiB or more get mappings of their own, returned to the
    system when freed. Otherwise glibc raises that threshold to the size of the largest
    such array freed so far (up to 32 MiB): the text reader's pieces and the Newton
    solvers' vectors below it are then carved from the heap and, freed, stay resident
    (40-80 MB of a wide -s 2 fit's peak). Elsewhere (no glibc) nothing changes."""
    import ctypes
    try:
        ctypes.CDLL(None).mallopt(M_MMAP_THRESHOLD, OWN_MAPPING_BYTES)
    except (OSError, AttributeError):
        pass
