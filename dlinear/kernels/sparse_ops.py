"""Row operations on raw CSR arrays with LIBLINEAR's `-B` bias as a virtual last column.

A row i is (indices[indptr[i]:indptr[i+1]], data[...]) plus, when bias >= 0, one more
feature of value `bias` at column n_features. Keeping the bias virtual means a block
from Dask (possibly read-only) reaches the kernels without a copy.

Loop counters and column ids are cast to unsigned so Numba drops its negative-index
wraparound on every access: about 18% of a CD sweep on rcv1-shaped data.
"""
import numpy as np
from numba import njit


@njit(cache=True, nogil=True, inline="always")
def row_dot(w, indptr, indices, data, i, n_features, bias):
    s = 0.0
    for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
        s += w[np.uint64(indices[k])] * data[k]
    if bias >= 0:
        s += w[n_features] * bias
    return s


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
        s += data[k] * data[k]
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
