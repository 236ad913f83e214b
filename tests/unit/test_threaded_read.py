"""read_libsvm on several threads: the file split at line starts into parts, parsed apart
and joined in order, gives the arrays of a one-thread read bit for bit, and an error names
its line in the file."""
import pickle
from pathlib import Path

import numpy as np
import pytest

import dlinear.data.libsvm_reader as data_module
from dlinear.data.libsvm_reader import read_libsvm
from dlinear.errors import DlinearError
from tests.support.problems import assert_same_problem, chunk_test_text, mixed_file_text

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture
def tiny_parts(monkeypatch):
    """Parts of a few bytes, so small files make many."""
    monkeypatch.setattr(data_module, "_MIN_PART_BYTES", 1)


def write(tmp_path, text, name="d.svm"):
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def parts_made(monkeypatch, path, **options):
    """The number of parts read_libsvm splits path into."""
    seen = []
    real = data_module._parse_parts

    def spy(*args):
        parsers = real(*args)
        seen.append(len(parsers))
        return parsers

    monkeypatch.setattr(data_module, "_parse_parts", spy)
    problem = read_libsvm(path, **options)
    monkeypatch.setattr(data_module, "_parse_parts", real)
    return problem, (seen[0] if seen else 1)


@pytest.mark.parametrize("n_threads", [2, 3, 8])
@pytest.mark.parametrize("chunk_bytes", [7, 4 << 20])
def test_parts_join_to_the_one_thread_arrays(tmp_path, tiny_parts, monkeypatch, n_threads,
                                             chunk_bytes):
    text = chunk_test_text(400, seed=n_threads)  # comments, blank lines, CRLF, no final newline
    path = write(tmp_path, text)
    one = read_libsvm(path, n_threads=1)
    many, n_parts = parts_made(monkeypatch, path, n_threads=n_threads, chunk_bytes=chunk_bytes)
    assert n_threads < n_parts <= 4 * n_threads     # cuts inside the long line merge parts
    assert_same_problem(many, one)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rcv1_small_in_many_parts(tiny_parts, monkeypatch, dtype):
    path = EXAMPLES / "rcv1_small.train"
    many, n_parts = parts_made(monkeypatch, path, n_threads=4, dtype=dtype)
    assert n_parts == 16
    one = read_libsvm(path, n_threads=1, dtype=dtype)
    assert many.data.dtype == dtype
    np.testing.assert_array_equal(many.indptr, one.indptr)
    np.testing.assert_array_equal(many.indices, one.indices)
    assert np.array_equal(many.data.view(np.uint8), one.data.view(np.uint8))
    assert np.array_equal(many.y.view(np.uint8), one.y.view(np.uint8))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_parts_joined_in_small_pieces_are_the_one_thread_arrays(tiny_parts, monkeypatch,
                                                                dtype):
    """The join copies a part's values and indices a piece at a time from the end, the
    part's array shrunk after each piece: pieces of a few values give the same arrays."""
    monkeypatch.setattr(data_module, "_JOIN_PIECE_BYTES", 20)
    path = EXAMPLES / "rcv1_small.train"
    many = read_libsvm(path, n_threads=4, dtype=dtype)
    one = read_libsvm(path, n_threads=1, dtype=dtype)
    np.testing.assert_array_equal(many.indptr, one.indptr)
    np.testing.assert_array_equal(many.indices, one.indices)
    assert np.array_equal(many.data.view(np.uint8), one.data.view(np.uint8))


@pytest.mark.parametrize("text", [
    "1 1:0.5\n",                                   # one row: more parts asked than lines
    "1 1:0.5",                                     # no final newline
    "\n\n\n1 3:2\n\n\n",                           # blank lines around one row
    "# c\n# d\n1 1:1\n# e\n-1 2:2\n#f",            # comments
    "1 1:0.5\r\n-1 2:1.5\r\n\r\n3 4:1e-3\r\n",     # CRLF
    "1 1:1\n" + "1\n" * 40 + "2 5:1",              # label-only rows
    "1 " + " ".join(f"{j}:{j / 7!r}" for j in range(1, 300)) + "\n1 1:1\n",  # long line
])
def test_tiny_files_in_tiny_parts(tmp_path, tiny_parts, text):
    path = write(tmp_path, text)
    assert_same_problem(read_libsvm(path, n_threads=5, chunk_bytes=3),
                        read_libsvm(path, n_threads=1))


def test_empty_and_comment_only_files(tmp_path, tiny_parts):
    for text in ["", "\n\n", "# only\n# comments\n"]:
        path = write(tmp_path, text)
        with pytest.raises(DlinearError, match="line 1: file has no data"):
            read_libsvm(path, n_threads=4)
        assert read_libsvm(path, n_threads=4, allow_empty=True).n_samples == 0


@pytest.mark.parametrize("bad_line", [1, 2, 57, 123, 200])
def test_an_error_in_a_later_part_names_its_line_in_the_file(tmp_path, tiny_parts, bad_line):
    lines = [f"{i % 2} 1:{i}.5 4:0.25" for i in range(200)]
    lines[bad_line - 1] = "1 1:0.5 2:oops"
    path = write(tmp_path, "\n".join(lines) + "\n", name="bad.svm")
    with pytest.raises(DlinearError, match=rf"bad.svm: line {bad_line}: value 'oops' of feature 2"):
        read_libsvm(path, n_threads=4)


def test_the_first_error_in_file_order_wins(tmp_path, tiny_parts):
    lines = [f"1 1:{i}" for i in range(100)]
    lines[30] = "1 1:nan"
    lines[80] = "z 1:1"
    path = write(tmp_path, "\n".join(lines) + "\n", name="two.svm")
    with pytest.raises(DlinearError, match=r"two.svm: line 31: value 'nan' of feature 1 is NaN"):
        read_libsvm(path, n_threads=3)


def test_an_overflowing_slow_token_in_a_later_part_names_its_line(tmp_path, tiny_parts):
    lines = ["1 1:0.5"] * 60
    lines[44] = "1 1:" + "9" * 30 + "e300"          # float() decides it: infinity
    path = write(tmp_path, "\n".join(lines) + "\n", name="slow.svm")
    with pytest.raises(DlinearError, match=r"slow.svm: line 45: value '9+e300' of feature 1 is NaN"):
        read_libsvm(path, n_threads=2)


def test_a_range_in_parts_numbers_lines_from_first_line(tmp_path, tiny_parts):
    lines = [f"1 1:{i}" for i in range(100)]
    lines[70] = "1 0:1"
    text = "\n".join(lines) + "\n"
    start = text.index("\n", 200) + 1
    path = write(tmp_path, text, name="range.svm")
    first_line = text[:start].count("\n") + 1
    with pytest.raises(DlinearError, match=r"range.svm: line 71: feature index 0 is less"):
        read_libsvm(path, start=start, first_line=first_line, n_threads=4)
    whole = read_libsvm(write(tmp_path, text.replace("1 0:1", "1 1:1")), n_threads=1)
    part = read_libsvm(tmp_path / "d.svm", start=start, n_threads=4)
    assert part.n_samples == whole.n_samples - (first_line - 1)


def test_a_line_error_pickles_as_a_plain_dlinear_error(tmp_path):
    path = write(tmp_path, "1 1:x\n", name="p.svm")
    with pytest.raises(DlinearError) as caught:
        read_libsvm(path, n_threads=1)
    again = pickle.loads(pickle.dumps(caught.value))
    assert type(again) is DlinearError and str(again) == str(caught.value)


def test_one_thread_or_a_small_file_reads_in_one_part(tmp_path, monkeypatch):
    path = write(tmp_path, mixed_file_text(50))
    assert parts_made(monkeypatch, path, n_threads=1)[1] == 1
    assert parts_made(monkeypatch, path, n_threads=4)[1] == 1        # below _MIN_PART_BYTES
    monkeypatch.setattr(data_module, "_MIN_PART_BYTES", path.stat().st_size // 3)
    assert parts_made(monkeypatch, path, n_threads=4)[1] == 3


_PEAK_CHILD = r"""
import sys
import dlinear.data.libsvm_reader as d
def status(key):    # VmHWM: this program's peak (ru_maxrss would count the parent's too)
    return int(open("/proc/self/status").read().split(key + ":")[1].split()[0]) << 10
with open(sys.argv[1] + ".small", "w") as f:
    f.write("1 1:0.5\n" * 8)
d._MIN_PART_BYTES = 1           # every kernel of the reader compiled or loaded, on a small file
d.read_libsvm(sys.argv[1] + ".small", n_threads=2, chunk_bytes=8)
d._MIN_PART_BYTES = 1 << 20
before = status("VmHWM")
p = d.read_libsvm(sys.argv[1], n_threads=int(sys.argv[2]), chunk_bytes=1 << 18)
arrays = p.indptr.nbytes + p.indices.nbytes + p.data.nbytes + p.y.nbytes
print(status("VmHWM") - before, arrays)
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_joining_parts_holds_about_one_part_beyond_the_result(tmp_path):
    """Peak RSS of a read in 8 parts: the result plus about one part (growing the first
    part's arrays with numpy's resize wrote zeros over all of them: twice the result)."""
    import os
    import subprocess
    import sys

    import scipy.sparse as sp

    from dlinear.data.libsvm_reader import write_libsvm

    rng = np.random.default_rng(0)
    X = sp.random(60_000, 5_000, density=0.01, format="csr", random_state=rng)
    path = str(tmp_path / "big.svm")
    write_libsvm(path, X, np.where(rng.random(60_000) < 0.5, 1.0, -1.0))
    env = dict(os.environ, PYTHONPATH=str(Path(data_module.__file__).parents[2]))
    growth = {}
    for threads in (1, 2):
        out = subprocess.run([sys.executable, "-c", _PEAK_CHILD, path, str(threads)], env=env,
                             capture_output=True, text=True, check=True).stdout.split()
        growth[threads], arrays = int(out[0]), int(out[1])
    assert growth[1] < 1.3 * arrays, (growth, arrays)
    assert growth[2] < growth[1] + 0.35 * arrays, (growth, arrays)
