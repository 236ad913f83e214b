"""A writer killed (SIGKILL) while it writes leaves the previous output whole and, where
files can be written unnamed (Linux), nothing else; where a temporary name was left (a
directory, or no unnamed files) the next write to the same target removes it. The
process is stopped at a fixed point of the write by a hook, never by timing: the script
below replaces os.fsync (called once the data is written, before it is named) or
os.replace (after an unnamed file is linked under a temporary name, before the rename
over the old file) with a function that says so on stdout and waits to be killed."""
import os
import select
import subprocess
import sys
import time

import numpy as np
import pytest

import dlinear
from dlinear.data import fileio
from dlinear.data.binary_format import read_header
from dlinear.cli.main import main
from dlinear.datasets.rcv1_like import make_rcv1_like

STOP_SCRIPT = """
import os, sys
import dlinear.data.fileio
dlinear.data.fileio.UNNAMED_FILES = dlinear.data.fileio.UNNAMED_FILES and sys.argv[2] == "unnamed"

def stop(*args, **kwargs):
    sys.stdout.write("stopped in the write\\n")
    sys.stdout.flush()
    sys.stdin.read()          # until killed

setattr(os, sys.argv[1], stop)
from dlinear.cli.main import main
sys.exit(main(sys.argv[3:]))
"""


def kill_while_writing(hook: str, naming: str, command: list, cwd) -> None:
    process = subprocess.Popen([sys.executable, "-c", STOP_SCRIPT, hook, naming, *command],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, cwd=cwd)
    try:
        deadline = time.monotonic() + 120
        while not select.select([process.stdout], [], [], 1.0)[0]:
            assert process.poll() is None and time.monotonic() < deadline, \
                process.stderr.read()
        assert process.stdout.readline() == "stopped in the write\n", process.stderr.read()
    finally:
        process.kill()
        process.wait()
        process.stdin.close(), process.stdout.close(), process.stderr.close()
    assert process.returncode == -9


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A training file, a model of it, and a second training file for convert."""
    d = tmp_path_factory.mktemp("inputs")
    dlinear.write_libsvm(d / "train", make_rcv1_like(300, n_features=40, nnz_per_row=6,
                                                     seed=3))
    dlinear.write_libsvm(d / "other", make_rcv1_like(100, n_features=40, nnz_per_row=6,
                                                     seed=4))
    assert main(["train", "-q", "--workers", "0", str(d / "train"), str(d / "model")]) == 0
    return d


def _command(kind: str, files, out):
    return {"train": ["train", "-q", "--workers", "0", str(files / "train"), str(out)],
            "predict": ["predict", "-q", str(files / "train"), str(files / "model"), str(out)],
            "convert": ["convert", "-q", str(files / "train"), str(out)]}[kind]


def _old_output(kind: str, files, out) -> object:
    """Writes the previous output at out; -> what identifies it."""
    if kind == "convert":
        assert main(["convert", "-q", str(files / "other"), str(out)]) == 0
        return read_header(out).rows
    out.write_text("the previous output\n")
    return out.read_text()


def _same_as_old(kind, out, old) -> bool:
    return (read_header(out).rows if kind == "convert" else out.read_text()) == old


@pytest.mark.slow
@pytest.mark.parametrize("kind, naming", [("train", "unnamed"), ("train", "named"),
                                          ("predict", "unnamed"), ("predict", "named"),
                                          ("convert", "named")])     # a directory has a name
def test_a_writer_killed_mid_write_leaves_the_old_output(tmp_path, files, kind, naming):
    if naming == "unnamed" and not fileio.UNNAMED_FILES:
        pytest.skip("no unnamed files (O_TMPFILE) on this platform")
    out = tmp_path / "out"
    old = _old_output(kind, files, out)
    kill_while_writing("fsync", naming, _command(kind, files, out), tmp_path)
    assert _same_as_old(kind, out, old)
    left = sorted(os.listdir(tmp_path))
    if naming == "unnamed" and kind != "convert":
        assert left == ["out"]          # nothing was named before the file was whole
    else:
        assert len(left) == 2 and left[0].startswith(".out.dlinear-") \
            and left[0].endswith(".part"), left
    # the next write to the target replaces it and removes what the killed one left
    assert main(_command(kind, files, out)) == 0
    assert sorted(os.listdir(tmp_path)) == ["out"]
    assert not _same_as_old(kind, out, old)


@pytest.mark.slow
@pytest.mark.skipif(not fileio.UNNAMED_FILES, reason="no unnamed files (O_TMPFILE)")
def test_a_writer_killed_between_link_and_rename_leaves_a_name_the_next_write_removes(
        tmp_path, files):
    out = tmp_path / "out"
    out.write_text("the previous output\n")
    kill_while_writing("replace", "unnamed", _command("train", files, out), tmp_path)
    assert out.read_text() == "the previous output\n"
    left = sorted(os.listdir(tmp_path))
    assert len(left) == 2 and left[0].startswith(".out.dlinear-"), left
    # a whole model under the temporary name (linked after its fsync)
    assert np.array_equal(dlinear.load_model(tmp_path / left[0]).w,
                          dlinear.load_model(files / "model").w)
    fileio.write_text_atomically(out, "new\n")
    assert sorted(os.listdir(tmp_path)) == ["out"] and out.read_text() == "new\n"


def test_only_temporaries_of_ended_writers_on_this_host_are_removed(tmp_path):
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)
    dead_pid, host = int(ended.stdout), fileio._writer().rsplit("-", 1)[1]
    other_host = f"{(int(host, 16) + 1) % 2**32:08x}"
    names = {
        f".out.dlinear-{dead_pid}-{host}.0a1b2c3d.part": False,     # killed writer: removed
        f".out.dlinear-{dead_pid}-{host}.0a1b2c3d.old": False,      # its old directory too
        f".out.dlinear-{os.getpid()}-{host}.0a1b2c3d.part": True,   # a writer still running
        f".out.dlinear-{dead_pid}-{other_host}.0a1b2c3d.part": True,  # another host's
        f".other.dlinear-{dead_pid}-{host}.0a1b2c3d.part": True,    # another target's
        f".out.{dead_pid}.part": True,                              # not dlinear's
    }
    for name in names:
        if name.endswith(".old"):
            (tmp_path / name).mkdir()
            (tmp_path / name / "dataset").mkdir()
        else:
            (tmp_path / name).write_text("x")
    fileio.write_text_atomically(tmp_path / "out", "new\n")
    assert sorted(os.listdir(tmp_path)) == sorted(
        ["out"] + [name for name, kept in names.items() if kept])
