"""csr_to_csc (X by columns for the solvers that walk features) against scipy's
transpose, on shapes that take its bucketed passes through several buckets."""
import numpy as np
import pytest
import scipy.sparse as sp

from dlinear.kernels.sparse_ops import csr_to_csc


def _random_csr(n_rows, n_features, density, dtype, seed):
    rng = np.random.default_rng(seed)
    X = sp.random(n_rows, n_features, density=density, format="csr", random_state=rng,
                  dtype=np.float64)
    # a few dense columns, as rcv1's frequent words, and some empty rows
    hot = rng.choice(n_features, size=min(3, n_features), replace=False)
    X = X.tolil()
    X[::2, hot] = 0.5
    X[1::7, :] = 0.0
    X = X.tocsr()
    X.data = X.data.astype(dtype)
    X.sort_indices()
    return X


@pytest.mark.parametrize("n_features", [1, 63, 64, 200, 16_384, 70_001])
@pytest.mark.parametrize("bias", [-1.0, 0.0, 1.5])
def test_columns_are_scipys_transpose(n_features, bias):
    X = _random_csr(300, n_features, min(0.05, 2000 / n_features / 300 + 0.01),
                    np.float64, n_features)
    col_ptr, row_ind, vals = csr_to_csc(X.indptr.astype(np.int64), X.indices, X.data,
                                        n_features, bias)
    expected = X.tocsc()
    expected.sort_indices()
    nnz = expected.nnz
    np.testing.assert_array_equal(col_ptr[:n_features + 1], expected.indptr)
    np.testing.assert_array_equal(row_ind[:nnz], expected.indices)
    np.testing.assert_array_equal(vals[:nnz], expected.data)
    if bias >= 0:
        assert col_ptr.shape[0] == n_features + 2 and col_ptr[-1] == nnz + X.shape[0]
        np.testing.assert_array_equal(row_ind[nnz:], np.arange(X.shape[0]))
        assert (vals[nnz:] == bias).all()
    else:
        assert col_ptr.shape[0] == n_features + 1 and len(row_ind) == nnz


def test_float32_values_and_read_only_blocks():
    X = _random_csr(500, 20_000, 0.002, np.float32, 1)
    arrays = [X.indptr.astype(np.int64), X.indices.copy(), X.data.copy()]
    for a in arrays:
        a.setflags(write=False)
    col_ptr, row_ind, vals = csr_to_csc(*arrays, 20_000, -1.0)
    expected = X.tocsc()
    expected.sort_indices()
    np.testing.assert_array_equal(row_ind, expected.indices)
    assert vals.dtype == np.float64
    np.testing.assert_array_equal(vals, expected.data.astype(np.float64))


def test_no_rows():
    col_ptr, row_ind, vals = csr_to_csc(np.zeros(1, np.int64), np.zeros(0, np.int32),
                                        np.zeros(0), 5, 1.0)
    assert list(col_ptr) == [0] * 7 and len(row_ind) == 0 and len(vals) == 0


@pytest.mark.parametrize("bias", [-1.0, 1.0])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_columns_of_fills_numpy_arrays_as_csr_to_csc(bias, dtype):
    # the solvers' transpose (columns_of: NumPy's arrays filled by csr_to_csc_into) is
    # csr_to_csc's, bit for bit, with uint16 indices too
    from dlinear.problem import Problem
    from dlinear.solvers.task import columns_of
    X = _random_csr(400, 5_000, 0.01, dtype, 3)
    problem = Problem(X.indptr.astype(np.int64), X.indices.astype(np.uint16), X.data,
                      np.ones(400), 5_000)
    got = columns_of(problem, bias)
    expected = csr_to_csc(X.indptr.astype(np.int64), X.indices, X.data, 5_000, bias)
    for a, b in zip(got, expected):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    assert got[1].flags.owndata and got[2].flags.owndata
