"""Model and output files are durable (issue #25, part 3): the file's data is fsynced
before it gets its name (a link of the unnamed file, or a rename), the directory after
it; a failed fsync leaves nothing behind. Both ways of naming are tested: unnamed files
(Linux) and named temporary files (elsewhere)."""
import errno
import os
import stat

import numpy as np
import pytest

from dlinear.data import fileio
from dlinear.errors import DlinearError
from dlinear.model import Model, load_model, save_model


@pytest.fixture(params=["unnamed", "named"])
def unnamed(request, monkeypatch):
    """Whether files are written unnamed and linked into place (where the platform can)."""
    if request.param == "unnamed" and not fileio.UNNAMED_FILES:
        pytest.skip("no unnamed files (O_TMPFILE) on this platform")
    monkeypatch.setattr(fileio, "UNNAMED_FILES", request.param == "unnamed")
    return request.param == "unnamed"


@pytest.fixture
def events(monkeypatch, unnamed):
    """Records ("fsync", kind, inode), ("link", inode) and ("replace", inode) in the order
    they happen."""
    seen = []
    real_fsync, real_replace, real_link = os.fsync, os.replace, os.link

    def fsync(fd):
        st = os.fstat(fd)
        seen.append(("fsync", "dir" if stat.S_ISDIR(st.st_mode) else "file", st.st_ino))
        real_fsync(fd)

    def replace(src, dst):
        seen.append(("replace", os.stat(src).st_ino))
        real_replace(src, dst)

    def link(src, dst, *, src_dir_fd=None, **kwargs):
        real_link(src, dst, src_dir_fd=src_dir_fd, **kwargs)     # a name taken: not seen
        seen.append(("link", os.stat(src, dir_fd=src_dir_fd).st_ino))

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(os, "link", link)
    return seen


def model():
    return Model(solver_type=1, nr_class=2, label=np.array([1, -1]), nr_feature=2, bias=-1.0,
                 w=np.array([[0.5], [-0.25]]))


@pytest.mark.parametrize("existing", [False, True])
def test_save_model_syncs_the_file_before_naming_it_and_the_directory_after(
        tmp_path, events, unnamed, existing):
    path = tmp_path / "m.model"
    if existing:
        path.write_text("old\n")
    save_model(path, model())
    file_inode = os.stat(path).st_ino
    dir_inode = os.stat(tmp_path).st_ino
    # unnamed: linked to the name, or (replacing a file) to a temporary name renamed over it
    naming = ([("link", file_inode)] if unnamed else []) + (
        [("replace", file_inode)] if existing or not unnamed else [])
    assert events == [("fsync", "file", file_inode)] + naming + [("fsync", "dir", dir_inode)]
    assert np.array_equal(load_model(path).w, model().w)
    assert os.listdir(tmp_path) == ["m.model"]
    assert oct(os.stat(path).st_mode & 0o777) == oct(0o666 & ~_umask())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_failed_fsync_leaves_no_file(tmp_path, monkeypatch, unnamed):
    def fsync(fd):
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, "fsync", fsync)
    path = tmp_path / "m.model"
    with pytest.raises(DlinearError, match="can't save model to file .*m.model"):
        save_model(path, model())
    assert os.listdir(tmp_path) == []


def test_a_ctrl_c_during_a_slow_fsync_is_answered_at_once_and_leaves_no_file(
        tmp_path, monkeypatch, unnamed):
    """An fsync that blocks (a busy disk) does not hold up a Ctrl-C: the KeyboardInterrupt
    comes while the sync still runs, and the file never gets its name, then or after."""
    import signal
    import threading
    import time
    real_fsync = os.fsync
    synced = threading.Event()

    def slow_fsync(fd):
        time.sleep(1.5)
        real_fsync(fd)
        synced.set()

    monkeypatch.setattr(os, "fsync", slow_fsync)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT))
    path = tmp_path / "m.model"
    start = time.monotonic()
    try:
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            save_model(path, model())
        answered = time.monotonic() - start
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert answered < 1.0 and not synced.is_set()
    assert synced.wait(10)
    assert os.listdir(tmp_path) == []


def test_an_old_file_stays_whole_when_the_new_one_fails(tmp_path, monkeypatch, unnamed):
    path = tmp_path / "out"
    fileio.write_text_atomically(path, "old\n")

    def fsync(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(DlinearError, match="No space left"):
        fileio.write_text_atomically(path, "new\n")
    assert path.read_text() == "old\n" and os.listdir(tmp_path) == ["out"]


def test_check_writable_fails_where_the_write_would_and_leaves_nothing(tmp_path, unnamed):
    """The up-front check of an output path (dlinear-train's model file, dlinear-predict's
    output) fails as the write itself would, and writes nothing where it passes."""
    (tmp_path / "a-file").write_text("x")
    (tmp_path / "a-dir").mkdir()
    for path, reason in [(tmp_path / "no-such-dir" / "m", "No such file or directory"),
                         (tmp_path / "a-file" / "m", "Not a directory"),
                         (tmp_path / "a-dir", "Is a directory")]:
        with pytest.raises(DlinearError) as e:
            fileio.check_writable(path, "can't save model to file")
        assert str(e.value) == f"can't save model to file {path}: {reason}"
    fileio.check_writable(tmp_path / "m", "can't save model to file")
    fileio.check_writable(tmp_path / "a-file", "can't save model to file")
    assert sorted(os.listdir(tmp_path)) == ["a-dir", "a-file"]
    assert (tmp_path / "a-file").read_text() == "x"
