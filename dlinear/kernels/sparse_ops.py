"""Row operations on raw CSR arrays with LIBLINEAR's `-B` bias as a virtual last column.

A row i is (indices[indptr[i]:indptr[i+1]], data[...]) plus, when bias >= 0, one more
feature of value `bias` at column n_features. Keeping the bias virtual means a block
from Dask (possibly read-only) reaches the kernels without a copy.

Loop counters and column ids are cast to unsigned so Numba drops its negative-index
wraparound on every access: about 18% of a CD sweep on rcv1-shaped data.
"""
import numpy as np
from numba import njit

from . import transpose as T


@njit(cache=True, nogil=True, inline="always")
def row_dot(w, indptr, indices, data, i, n_features, bias):
    s = 0.0
    for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
        s += w[np.uint64(indices[k])] * data[k]
    if bias >= 0:
        s += w[n_features] * bias
    return s


@njit(cache=True, nogil=True, inline="always")
def row_dot2(u, v, indptr, indices, data, i, n_features, bias):
    """(x_i.u, x_i.v) in one walk over row i: its indices and values are read once."""
    su = 0.0
    sv = 0.0
    for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
        j = np.uint64(indices[k])
        x = data[k]
        su += u[j] * x
        sv += v[j] * x
    if bias >= 0:
        su += u[n_features] * bias
        sv += v[n_features] * bias
    return su, sv


@njit(cache=True, nogil=True, inline="always")
def row_axpy(a, indptr, indices, data, i, w, n_features, bias):
    """w += a * x_i"""
    for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
        w[np.uint64(indices[k])] += a * data[k]
    if bias >= 0:
        w[n_features] += a * bias


@njit(cache=True, nogil=True, inline="always")
def row_sq_norm(indptr, data, i, bias):
    s = 0.0
    for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
        x = np.float64(data[k])     # float32 data: the square in float64 too
        s += x * x
    if bias >= 0:
        s += bias * bias
    return s


@njit(cache=True, nogil=True)
def decision_values(indptr, indices, data, W, n_model_features, bias):
    """dec[i, j] = x_i . W[:, j] using only columns < n_model_features (test data may have
    more features than the training set; LIBLINEAR ignores them), plus the bias row."""
    l = len(indptr) - 1
    nr_w = W.shape[1]
    dec = np.zeros((l, nr_w))
    for i in range(l):
        for k in range(indptr[i], indptr[i + 1]):
            j = indices[k]
            if j < n_model_features:
                v = data[k]
                for c in range(nr_w):
                    dec[i, c] += W[j, c] * v
        if bias >= 0:
            for c in range(nr_w):
                dec[i, c] += W[n_model_features, c] * bias
    return dec


@njit(cache=True, nogil=True)
def csr_to_csc(indptr, indices, data, n_features, bias):
    """X by columns (col_ptr int64, row_ind int32, vals float64), rows ascending within
    each column, plus a last column of `bias` in every row when bias >= 0 (LIBLINEAR's
    transpose() with the bias feature); dlinear/kernels/transpose.py's parts on one
    thread (dlinear.solvers.task.columns_of runs them on several)."""
    l = len(indptr) - 1
    has_bias = bias >= 0
    shift = T.bucket_shift(n_features)
    counts = np.zeros((1, n_features), dtype=np.int64)
    T.count_columns(indptr, indices, 0, l, counts[0])
    col_ptr, starts = T.bucket_starts(counts, l, has_bias, shift)
    total = col_ptr[len(col_ptr) - 1]
    row_ind = np.empty(total, dtype=np.int32)
    vals = np.empty(total, dtype=np.float64)
    col_in_bucket = np.empty(indptr[l], dtype=np.uint16)
    T.rows_to_buckets(indptr, indices, data, 0, l, shift, starts[0], row_ind, vals,
                      col_in_bucket)
    T.buckets_to_columns(col_ptr, n_features, shift, 0, starts.shape[1], row_ind, vals,
                         col_in_bucket)
    if has_bias:
        T.add_bias_column(col_ptr, n_features, l, bias, row_ind, vals)
    return col_ptr, row_ind, vals
