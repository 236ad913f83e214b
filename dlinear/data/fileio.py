"""Output files and directories written atomically and durably: after any failure, a
kill or a power loss the target is either its old content or the whole new one.

A file is written, flushed to disk (fsync), and only then given the target's name, after
which the directory is flushed so that the name itself survives a power loss. On Linux
the file is written unnamed (O_TMPFILE) in the target's directory and linked into place
once complete, so a writer killed while writing leaves nothing behind. Elsewhere, and for
directories, the content is written under a temporary name beside the target that says
which process writes it, ``.TARGET.dlinear-PID-HOST.RANDOM.part``, then renamed; a
failure removes it, and the next write to the same target removes those of writers that
were killed (their process has ended).
"""
from __future__ import annotations

import errno
import os
import re
import secrets
import shutil
import socket
import threading
import zlib
from contextlib import contextmanager

from ..errors import DlinearError

# files written unnamed and linked into place (Linux: O_TMPFILE, and linkat through
# /proc/self/fd, which needs no privilege as a link of the fd itself would)
UNNAMED_FILES = hasattr(os, "O_TMPFILE") and os.path.isdir("/proc/self/fd")
_PROC_FD = "/proc/self/fd"
_CREATE_FILE = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
                | getattr(os, "O_BINARY", 0))


@contextmanager
def atomic_output(path, failure: str = "can't write output file"):
    """Yields a binary file that appears at `path` whole once the block ends, or not at
    all; on error raises DlinearError(f"{failure} {path}: reason")."""
    path = os.fspath(path)
    directory, base = os.path.split(os.path.abspath(path))
    remove_stale_temporaries(directory, base)
    try:
        fd, temporary = _open_output(directory, base)
    except OSError as e:
        raise DlinearError(f"{failure} {path}: {e.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            sync_to_disk(f.fileno())  # the data on disk before a name points to it
            if temporary is None:
                _link_into_place(f.fileno(), directory, base, path)
        if temporary is not None:
            os.replace(temporary, path)
        _fsync_directory(directory)   # the name on disk
    except BaseException as e:
        if temporary is not None:
            _remove(temporary)
        if isinstance(e, OSError):
            raise DlinearError(f"{failure} {path}: {e.strerror}") from None
        raise


# LIBLINEAR's train's words when the model file cannot be written
SAVE_FAILURE = "can't save model to file"


def check_writable(path, failure: str = "can't write output file") -> None:
    """Fails now, as atomic_output would at the end, where `path` cannot be written (no
    such directory, no permission, a directory in the way): a command checks its output
    before its long work, as LIBLINEAR opens its output first. Leaves nothing behind: the
    probe is the same unnamed or temporary file that atomic_output writes, dropped."""
    path = os.fspath(path)
    directory, base = os.path.split(os.path.abspath(path))
    if os.path.isdir(path):
        raise DlinearError(f"{failure} {path}: {os.strerror(errno.EISDIR)}")
    try:
        fd, temporary = _open_output(directory, base)
    except OSError as e:
        raise DlinearError(f"{failure} {path}: {e.strerror}") from None
    os.close(fd)
    if temporary is not None:
        _remove(temporary)


def write_text_atomically(path, text: str, failure: str = "can't write output file") -> None:
    with atomic_output(path, failure) as f:
        f.write(text.encode("ascii"))


@contextmanager
def atomic_directory(path, failure: str = "can't write output directory"):
    """Yields the path of a new empty directory beside `path` to fill; when the block
    ends it replaces `path` (an existing directory there is swapped out, then deleted).
    On error the new directory is deleted and DlinearError(f"{failure} {path}: reason")
    raised."""
    path = os.path.abspath(os.fspath(path))
    directory, base = os.path.split(path)
    remove_stale_temporaries(directory, base)
    try:
        work = _create_temporary(directory, base, ".part", lambda name: os.mkdir(name, 0o777))
    except OSError as e:
        raise DlinearError(f"{failure} {path}: {e.strerror}") from None
    try:
        yield work
        _replace_directory(work, path, directory, base)
        _fsync_directory(directory)
    except BaseException as e:
        shutil.rmtree(work, ignore_errors=True)
        if isinstance(e, OSError):
            raise DlinearError(f"{failure} {path}: {e}") from None
        raise


def _open_output(directory: str, base: str):
    """(fd, None) for an unnamed file in `directory`, or (fd, name) for a named temporary
    file where the platform or the file system has no unnamed files."""
    if UNNAMED_FILES:
        try:
            return os.open(directory, os.O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC, 0o666), None
        except OSError:
            pass      # e.g. EOPNOTSUPP: this file system has none; a real error recurs below
    fd = []
    name = _create_temporary(directory, base, ".part",
                             lambda name: fd.append(os.open(name, _CREATE_FILE, 0o666)))
    return fd[0], name


def _link_into_place(fd: int, directory: str, base: str, path: str) -> None:
    """Gives the unnamed file `fd` the name `path`: a link when nothing has that name
    (nothing named exists before the file is whole), else a link under a temporary name
    renamed over the old file (a writer killed between the two leaves that name)."""
    proc = os.open(_PROC_FD, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        try:
            os.link(str(fd), path, src_dir_fd=proc)
            return
        except FileExistsError:
            pass
        temporary = _create_temporary(directory, base, ".part",
                                      lambda name: os.link(str(fd), name, src_dir_fd=proc))
        try:
            os.replace(temporary, path)
        except BaseException:
            _remove(temporary)
            raise
    finally:
        os.close(proc)


def _replace_directory(work: str, target: str, directory: str, base: str) -> None:
    """Renames `work` to `target`. An existing target is swapped with work in one step
    where the platform can (Linux renameat2 RENAME_EXCHANGE), else moved aside first:
    then a writer killed between the two renames leaves no target until the next write."""
    if not os.path.lexists(target):
        os.rename(work, target)
        return
    if _exchange(work, target):
        shutil.rmtree(work, ignore_errors=True)      # now the old dataset
        return
    old = _create_temporary(directory, base, ".old", lambda name: os.mkdir(name, 0o700))
    os.rename(target, os.path.join(old, "dataset"))
    os.rename(work, target)
    shutil.rmtree(old, ignore_errors=True)


_RENAME_EXCHANGE, _AT_FDCWD = 2, -100


def _exchange(a: str, b: str) -> bool:
    """Swaps the names a and b atomically (Linux renameat2); False where the C library,
    the kernel or the file system cannot."""
    import ctypes
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), b)


def _writer() -> str:
    """This process, as temporary names say it: dlinear-PID-HOST (HOST a hash of the host
    name, since several hosts may write to one shared directory)."""
    return f"dlinear-{os.getpid()}-{zlib.crc32(socket.gethostname().encode()):08x}"


def _create_temporary(directory: str, base: str, suffix: str, create) -> str:
    """create(name) on an unused temporary name for `base` in `directory`; -> the name."""
    for _ in range(100):
        name = os.path.join(directory, f".{base}.{_writer()}.{secrets.token_hex(4)}{suffix}")
        try:
            create(name)
        except FileExistsError:
            continue
        return name
    raise FileExistsError(errno.EEXIST, "no unused temporary name", directory)


def remove_stale_temporaries(directory: str, base: str) -> None:
    """Removes the temporary files and directories for `base` in `directory` left by
    writers on this host whose process has ended (killed while writing)."""
    if os.name != "posix":    # os.kill(pid, 0) tests a process on POSIX only
        return
    pattern = re.compile(re.escape(f".{base}.") + r"dlinear-(\d+)-([0-9a-f]{8})\.[0-9a-f]+"
                         r"\.(?:part|old)")
    host = _writer().rsplit("-", 1)[1]
    try:
        names = os.listdir(directory)
    except OSError:
        return                # the write itself reports an unusable directory
    for name in names:
        match = pattern.fullmatch(name)
        if match and match.group(2) == host and not _running(int(match.group(1))):
            stale = os.path.join(directory, name)
            if os.path.isdir(stale) and not os.path.islink(stale):
                shutil.rmtree(stale, ignore_errors=True)
            else:
                _remove(stale)


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:           # EPERM: another user's process
        return True
    return True


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _fsync_directory(directory: str) -> None:
    """fsync a directory (POSIX: makes a rename in it durable). Where directories cannot be
    opened or synced (Windows, some network file systems) the rename is as durable as the
    file system makes it."""
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        sync_to_disk(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def sync_to_disk(fd: int) -> None:
    """os.fsync(fd), during which a Ctrl-C still raises KeyboardInterrupt at once: on a
    busy disk an fsync can block for seconds, and Python runs no signal handler inside a
    system call. The sync goes on in a thread of its own while this one waits; after a
    Ctrl-C the caller's cleanup runs (an unfinished output never gets its name) and the
    thread ends when the disk answers."""
    if threading.current_thread() is not threading.main_thread():
        os.fsync(fd)        # only the main thread receives the Ctrl-C
        return
    fd = os.dup(fd)         # the caller may close its fd while the sync still runs
    failure = []

    def sync():
        try:
            os.fsync(fd)
        except OSError as e:
            failure.append(e)
        finally:
            os.close(fd)

    syncing = threading.Thread(target=sync, name="dlinear-fsync", daemon=True)
    syncing.start()
    syncing.join()
    if failure:
        raise failure[0]
