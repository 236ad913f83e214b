"""Output files written atomically: a temporary file in the target's directory, renamed
over the target when complete, removed on any failure. Readers never see a partial file
and a failed run leaves nothing behind."""
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
        os.replace(temporary, path)
    except BaseException as e:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise DlinearError(f"{failure} {path}: {e.strerror}") from None
        raise


def write_text_atomically(path, text: str, failure: str = "can't write output file") -> None:
    with atomic_output(path, failure) as f:
        f.write(text.encode("ascii"))
