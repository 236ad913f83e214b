"""Model and output files are durable (issue #25, part 3): the file's data is fsynced
before the rename, the directory after it; a failed fsync leaves nothing behind."""
import errno
import os
import stat

import numpy as np
import pytest

from dlinear import fileio
from dlinear.errors import DlinearError
from dlinear.model import Model, load_model, save_model


@pytest.fixture
def events(monkeypatch):
    """Records ("fsync", kind, inode) and ("replace", inode) in the order they happen."""
    seen = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        st = os.fstat(fd)
        seen.append(("fsync", "dir" if stat.S_ISDIR(st.st_mode) else "file", st.st_ino))
        real_fsync(fd)

    def replace(src, dst):
        seen.append(("replace", os.stat(src).st_ino))
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    return seen


def model():
    return Model(solver_type=1, nr_class=2, label=np.array([1, -1]), nr_feature=2, bias=-1.0,
                 w=np.array([[0.5], [-0.25]]))


def test_save_model_syncs_the_file_before_the_rename_and_the_directory_after(tmp_path,
                                                                              events):
    path = tmp_path / "m.model"
    save_model(path, model())
    file_inode = os.stat(path).st_ino
    dir_inode = os.stat(tmp_path).st_ino
    assert events == [("fsync", "file", file_inode), ("replace", file_inode),
                      ("fsync", "dir", dir_inode)]
    assert np.array_equal(load_model(path).w, model().w)


def test_a_failed_fsync_leaves_no_file(tmp_path, monkeypatch):
    def fsync(fd):
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, "fsync", fsync)
    path = tmp_path / "m.model"
    with pytest.raises(DlinearError, match="can't save model to file .*m.model"):
        save_model(path, model())
    assert os.listdir(tmp_path) == []


def test_an_old_file_stays_whole_when_the_new_one_fails(tmp_path, monkeypatch):
    path = tmp_path / "out"
    fileio.write_text_atomically(path, "old\n")

    def fsync(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(DlinearError, match="No space left"):
        fileio.write_text_atomically(path, "new\n")
    assert path.read_text() == "old\n" and os.listdir(tmp_path) == ["out"]
