"""Output files written atomically and durably: a temporary file in the target's directory,
flushed to disk (fsync), renamed over the target when complete, then the directory flushed
so the rename itself survives a power loss; the temporary file is removed on any failure.
Readers never see a partial file, a failed run leaves nothing behind, and after a crash
the target is either the old file or the whole new one."""
from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager

from .errors import DlinearError


@contextmanager
def atomic_output(path, failure: str = "can't write output file"):
    """Yields a binary file; on error raises DlinearError(f"{failure} {path}: reason")."""
    path = os.fspath(path)
    directory, base = os.path.split(os.path.abspath(path))
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{base}.", suffix=".part", dir=directory)
    except OSError as e:
        raise DlinearError(f"{failure} {path}: {e.strerror}") from None
    try:
        # mkstemp makes the file 0600; a model on shared storage must be readable by others
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())      # the data on disk before the name points to it
        os.replace(temporary, path)
        _fsync_directory(directory)   # the rename on disk
    except BaseException as e:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise DlinearError(f"{failure} {path}: {e.strerror}") from None
        raise


def _fsync_directory(directory: str) -> None:
    """fsync a directory (POSIX: makes a rename in it durable). Where directories cannot be
    opened or synced (Windows, some network file systems) the rename is as durable as the
    file system makes it."""
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_text_atomically(path, text: str, failure: str = "can't write output file") -> None:
    with atomic_output(path, failure) as f:
        f.write(text.encode("ascii"))
