"""How dlinear's commands answer: the exit status and the one line on stderr for what a
command raises (help, version, a usage error, a user error, Ctrl-C)."""
from __future__ import annotations

import sys

from ..errors import DlinearError


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
    """Ctrl-C: one line and exit status 130 (128 + SIGINT), as a shell reports it."""
    sys.stderr.write("dlinear: interrupted\n")
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
