"""How dlinear's commands answer: the exit status and the one line on stderr for what a
command raises (help, version, a usage error, a user error, Ctrl-C)."""
from __future__ import annotations

import sys

from ..errors import DlinearError, interrupt_in
from . import startup


class UsageError(DlinearError):
    """A command-line mistake: the message points to -h."""


class _HelpRequested(Exception):
    pass


class _VersionRequested(Exception):
    pass


def version_line(program: str) -> str:
    from .. import __version__
    return f"{program} (dlinear) {__version__}"


def _print_version(program: str) -> int:
    print(version_line(program))
    return 0


def interrupted() -> int:
    """Ctrl-C: one line and exit status 130 (128 + SIGINT), as a shell reports it. In a
    command's own process the process ends here: nothing is left to write (outputs are
    written whole or not at all), and the interpreter's shutdown (thread pools, Dask,
    freeing the data) would take another second."""
    sys.stderr.write("dlinear: interrupted\n")
    if startup.command_process:
        import os
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(130)
    return 130


def _print_usage(text: str, code: int) -> int:
    (sys.stdout if code == 0 else sys.stderr).write(text)
    return code


def _fail(message: str, usage: bool = False, status: int = 1,
          usage_hint: str = " (run with -h for the options)") -> int:
    sys.stderr.write(f"ERROR: {message}{usage_hint if usage else ''}\n")
    return status


def command_line(argv, command, program: str, usage: str, **answers) -> int:
    """dlinear's commands: argv (default sys.argv[1:]) empty prints `usage` on stderr,
    exit 1; else exit_status(command(argv)), with `answers` passed on."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        return _print_usage(usage, 1)
    return exit_status(lambda: command(argv), program, usage, **answers)


def exit_status(command, program: str = "dlinear", usage: str = "",
                usage_hint: str = " (run with -h for the options)", error_status: int = 1) -> int:
    """Runs command() and returns its exit status; what it raises is the command line's
    answer: -h (_HelpRequested) prints `usage`, exit 0; --version (_VersionRequested)
    prints `program`'s version, exit 0; a UsageError is one line ending in `usage_hint`,
    exit 1; another DlinearError one line, exit `error_status`; Ctrl-C one line, exit 130
    (interrupted)."""
    startup.end_import_answer()
    try:
        return command()
    except _HelpRequested:
        return _print_usage(usage, 0)
    except _VersionRequested:
        return _print_version(program)
    except UsageError as e:
        return _fail(str(e), usage=True, usage_hint=usage_hint)
    except DlinearError as e:
        return _fail(str(e), status=error_status)
    except KeyboardInterrupt:
        return interrupted()
    except SystemError as e:
        if interrupt_in(e) is not None:     # Ctrl-C as Numba boxed a kernel's result
            return interrupted()
        raise


def answering_ctrl_c(work):
    """work() on a worker thread while this (the main) thread waits: Python runs a
    Ctrl-C's handler on the main thread only, between bytecodes, so a main thread inside
    a kernel of several seconds (reading, or -m 1 training) would answer only when the
    kernel returns. Waiting here instead, it answers at once (interrupted() ends a
    command's process; the worker's outputs are whole or absent). The result and
    exceptions of work() are passed on as they are."""
    import threading

    from ..progress import COMMAND_THREAD
    outcome = {}

    def run():
        try:
            outcome["value"] = work()
        except BaseException as e:      # handed to the main thread
            outcome["error"] = e
    worker = threading.Thread(target=run, name=COMMAND_THREAD, daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.1)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
