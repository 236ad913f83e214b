"""A small progress bar on stderr for runs of many tasks (one-vs-rest classes, CV folds,
the C values of -C).

The bar is drawn only when stderr is a terminal, only from the thread that runs the
command (the main thread, or a command's work thread, COMMAND_THREAD), only one at a
time (a bar inside a bar, e.g. the classes inside a CV fold, draws nothing) and never
inside `quiet()` (the CLI's -q). It is erased when done, so what stays on the terminal is
exactly what a run without a terminal prints. It only counts: it changes no result.

    with progress_bar(len(items), "classes") as bar:
        for item in items:
            work(item)
            bar.update()
"""
from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager

_lock = threading.Lock()
_active = []          # the bar being drawn, if any
_quiet_depth = [0]    # > 0 inside quiet()


@contextmanager
def quiet(on: bool = True):
    """No bars inside this block (the CLI's -q)."""
    if not on:
        yield
        return
    with _lock:
        _quiet_depth[0] += 1
    try:
        yield
    finally:
        with _lock:
            _quiet_depth[0] -= 1


def _is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):      # no isatty, or a closed stream
        return False


class _NoBar:
    """Stands in for a bar that is not drawn: counts nothing, prints log lines as they are."""

    def update(self, n: int = 1) -> None:
        pass

    def emit(self, log, line: str) -> None:
        log(line)

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


NO_BAR = _NoBar()


class ProgressBar(_NoBar):
    """`label |#######.......| 3/7 1.2s` on one terminal line, redrawn at most every
    `min_interval` seconds. Thread-safe: tasks may call update() from worker threads."""

    def __init__(self, total: int, label: str, stream, width: int = 24,
                 min_interval: float = 0.1):
        self.total = max(int(total), 1)
        self.label = label
        self.stream = stream
        self.width = width
        self.min_interval = min_interval
        self.done = 0
        self.start = time.monotonic()
        self._last_draw = -1.0
        self._drawn = 0          # characters on the terminal line now
        self._closed = False
        self._lock = threading.Lock()
        with self._lock:
            self._draw(force=True)

    def _text(self) -> str:
        done = min(self.done, self.total)
        filled = self.width * done // self.total
        return (f"{self.label} |{'#' * filled}{'.' * (self.width - filled)}| "
                f"{done}/{self.total} {time.monotonic() - self.start:.1f}s")

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):     # a closed terminal must not stop the training
            pass

    def _draw(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last_draw < self.min_interval:
            return
        self._last_draw = now
        text = self._text()
        pad = max(self._drawn - len(text), 0)
        self._write("\r" + text + " " * pad)
        self._drawn = len(text)

    def _erase(self) -> None:
        if self._drawn:
            self._write("\r" + " " * self._drawn + "\r")
            self._drawn = 0

    def update(self, n: int = 1) -> None:
        with self._lock:
            if self._closed:
                return
            self.done += n
            self._draw(force=self.done >= self.total)

    def emit(self, log, line: str) -> None:
        """log(line) without tearing the bar: erase it, print, draw it again."""
        with self._lock:
            if self._closed:
                log(line)
                return
            self._erase()
            log(line)
            self._draw(force=True)

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._erase()
        with _lock:
            if self in _active:
                _active.remove(self)


# the name of the thread a command runs its work on while its main thread answers Ctrl-C
# (dlinear.cli.exit.answering_ctrl_c): it draws bars as the main thread does
COMMAND_THREAD = "dlinear-work"


def _runs_the_command() -> bool:
    thread = threading.current_thread()
    return thread is threading.main_thread() or thread.name == COMMAND_THREAD


def progress_bar(total: int, label: str, stream=None):
    """A ProgressBar on `stream` (default sys.stderr, looked up now) if one should be
    drawn, else NO_BAR. Use it as a context manager so it is always erased."""
    stream = sys.stderr if stream is None else stream
    with _lock:
        if (total <= 1 or _quiet_depth[0] or _active
                or not _runs_the_command()
                or not _is_terminal(stream)):
            return NO_BAR
        bar = ProgressBar(total, label, stream)
        _active.append(bar)
        return bar
