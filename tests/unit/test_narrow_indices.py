"""float32 data in at most 65,536 columns is read with uint16 column indices (6 bytes a
nonzero instead of 8): the same rows as the int32 read, the same errors, and models equal
to the int32-index float32 models bit for bit."""
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import dlinear.data.libsvm_reader as data_module
from dlinear import Params, Problem, train
from dlinear.data.columns import compact_problem
from dlinear.data.libsvm_reader import read_libsvm
from dlinear.errors import DlinearError
from dlinear.problem import NARROW_INDEX_COLUMNS, index_dtype
from tests.support.problems import assert_same_problem, chunk_test_text, same_bits

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rcv1_small.train"


def write(tmp_path, text, name="d.svm"):
    path = tmp_path / name
    path.write_text(text)
    return path


def int32_read(path, **options):
    """The float32 read with the indices as int32: what the reader gave before."""
    p = read_libsvm(path, dtype=np.float32, **options)
    return replace(p, indices=p.indices.astype(np.int32))


def test_the_rule_is_float32_in_at_most_65536_columns():
    assert NARROW_INDEX_COLUMNS == 65536
    assert index_dtype(65536, np.float32) is np.uint16
    assert index_dtype(65537, np.float32) is np.int32
    assert index_dtype(10, np.float64) is np.int32


@pytest.mark.parametrize("chunk_bytes", [9, 4 << 20])
def test_float32_reads_uint16_indices_equal_to_the_int32_read(tmp_path, chunk_bytes):
    text = chunk_test_text(400, seed=1)     # comments, blank lines, CRLF, no final newline
    path = write(tmp_path, text + "\n1 3:0.5 65536:2\n")
    p64 = read_libsvm(path)
    p32 = read_libsvm(path, dtype=np.float32, chunk_bytes=chunk_bytes)
    assert p64.indices.dtype == np.int32 and p32.indices.dtype == np.uint16
    assert p32.n_features == 65536 and p32.indices.max() == 65535
    np.testing.assert_array_equal(p32.indices, p64.indices)
    np.testing.assert_array_equal(p32.indptr, p64.indptr)
    assert same_bits(p32.data, p64.data.astype(np.float32))


@pytest.mark.parametrize("n_threads", [1, 2, 3])
@pytest.mark.parametrize("wide_line", [1, 150, 380])
def test_an_index_beyond_65536_widens_to_int32(tmp_path, monkeypatch, n_threads, wide_line):
    """Wherever the first wide index is (first chunk, a later chunk, a later part), the
    read is the int32 read."""
    monkeypatch.setattr(data_module, "_MIN_PART_BYTES", 1)
    lines = chunk_test_text(400, seed=2).splitlines()
    lines[wide_line] = "-1 4:0.25 65537:3 70000:1e-3"
    path = write(tmp_path, "\n".join(lines) + "\n")
    got = read_libsvm(path, dtype=np.float32, chunk_bytes=64, n_threads=n_threads)
    assert got.indices.dtype == np.int32 and got.n_features == 70000
    assert_same_problem(got, int32_read(path, n_threads=1, chunk_bytes=1 << 20))
    want = read_libsvm(path)
    np.testing.assert_array_equal(got.indices, want.indices)


def test_widening_stays_on_the_fast_path_kernel():
    """An index beyond 2-byte indices in ordinary text widens and parses again with the
    fast-path kernel: the general kernel (and its compilation) is for text that needs it."""
    text = np.frombuffer(b"1 1:0.5 7:1\n-1 3:2 70000:0.25\n1 2:1\n", dtype=np.uint8)
    parser = data_module._ChunkedParser("t", 1, data_module.MAX_FEATURE_INDEX, len(text),
                                        len(text), dtype=np.float32)
    parser.parse(text)
    got = parser.result(None)
    assert not parser.general
    assert got.indices.dtype == np.int32 and got.n_features == 70000
    np.testing.assert_array_equal(got.indices, [0, 6, 2, 69999, 1])


def test_a_given_n_features_chooses_the_type(tmp_path):
    path = write(tmp_path, "1 1:0.5 7:1\n-1 3:2\n")
    assert read_libsvm(path, dtype=np.float32, n_features=65536).indices.dtype == np.uint16
    assert read_libsvm(path, dtype=np.float32, n_features=65537).indices.dtype == np.int32
    assert read_libsvm(path, n_features=10).indices.dtype == np.int32


@pytest.mark.parametrize("text, message", [
    ("1 1:1\n-1 65537:1 65538:x\n", r"line 2: value 'x' of feature 65538 is not a number"),
    ("1 1:1\n-1 9:1 5:1\n", r"line 2: feature index 5 is not larger than the previous index 9"),
    ("1 1:1\n\n-1 99999999999:1\n", r"line 3: feature index 99999999999 is larger than 2147483646"),
    ("1 1:1\n-1 2:1e39\n", r"line 2: value '1e39' of feature 2 is NaN or infinity"),
])
def test_errors_name_the_file_and_line(tmp_path, text, message):
    path = write(tmp_path, text, name="bad.svm")
    with pytest.raises(DlinearError, match=r"^.*bad.svm: " + message):
        read_libsvm(path, dtype=np.float32, chunk_bytes=8)


def test_an_index_beyond_n_features_is_an_error_not_a_widening(tmp_path):
    path = write(tmp_path, "1 1:1\n-1 65537:1\n", name="bad.svm")
    for n_features in (100, 65536):
        with pytest.raises(DlinearError, match=f"bad.svm: line 2: feature index 65537 is "
                                               f"larger than n_features={n_features}"):
            read_libsvm(path, dtype=np.float32, n_features=n_features)


def _problems(classes):
    narrow = read_libsvm(EXAMPLE, dtype=np.float32)
    assert narrow.indices.dtype == np.uint16
    if classes > 2:
        narrow.y = (np.arange(narrow.n_samples) % classes).astype(np.float64)
    return narrow, replace(narrow, indices=narrow.indices.astype(np.int32))


@pytest.mark.parametrize("solver, classes", [(1, 2), (1, 3), (0, 2), (2, 3), (3, 2),
                                             (5, 2), (7, 2), (4, 3), (12, 2), (21, 2)])
def test_models_equal_the_int32_index_models_bit_for_bit(solver, classes):
    narrow, wide = _problems(classes)
    if solver in (11, 12, 13):
        narrow.y = wide.y = np.cos(np.arange(narrow.n_samples))
    params = Params(solver_type=solver, C=2.0, bias=-1 if solver == 21 else 1)
    a, b = train(narrow, params), train(wide, params)
    assert same_bits(a.w, b.w)
    if solver == 21:
        assert same_bits(a.rho, b.rho)


def test_compacting_keeps_uint16_indices_and_renumbers_alike():
    rng = np.random.default_rng(0)
    X = sp.random(20000, 60000, density=0.0005, format="csr", random_state=rng,
                  dtype=np.float32)
    X.indices = (X.indices // 4 * 4).astype(np.int32)      # every 4th column only
    X.sum_duplicates()
    wide = Problem.from_arrays(X, np.ones(X.shape[0]))
    narrow = replace(wide, indices=wide.indices.astype(np.uint16))
    narrow.indices.flags.writeable = False
    a, b = compact_problem(wide, only_if_worth=True), compact_problem(narrow, only_if_worth=True)
    assert a is not None and b is not None
    assert b.problem.indices.dtype == np.uint16 and a.problem.indices.dtype == np.int32
    np.testing.assert_array_equal(a.used, b.used)
    np.testing.assert_array_equal(a.problem.indices, b.problem.indices)
