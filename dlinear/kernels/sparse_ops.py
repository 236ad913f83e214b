"""Row operations on raw CSR arrays with LIBLINEAR's `-B` bias as a virtual last column.

A row i is (indices[indptr[i]:indptr[i+1]], data[...]) plus, when bias >= 0, one more
feature of value `bias` at column n_features. Keeping the bias virtual means a block
from Dask (possibly read-only) reaches the kernels without a copy.

Loop counters and column ids are cast to unsigned so Numba drops its negative-index
wraparound on every access: about 18% of a CD sweep on rcv1-shaped data.
"""
import numpy as np
from numba import njit

from .prefetch import prefetch_row_read, prefetch_span


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
def span_dot(w, indices, data, first, end, n_features, bias):
    """x.w of the row whose nonzeros are indices/data[first:end] (row_dot for a row given
    by its span, as a cache of copied rows holds them)."""
    s = 0.0
    for k in range(np.uint64(first), np.uint64(end)):
        s += w[np.uint64(indices[k])] * data[k]
    if bias >= 0:
        s += w[n_features] * bias
    return s


@njit(cache=True, nogil=True, inline="always")
def span_axpy(a, indices, data, first, end, w, n_features, bias):
    """w += a * x for the row whose nonzeros are indices/data[first:end]."""
    for k in range(np.uint64(first), np.uint64(end)):
        w[np.uint64(indices[k])] += a * data[k]
    if bias >= 0:
        w[n_features] += a * bias


@njit(cache=True, nogil=True, inline="always")
def row_axpy(a, indptr, indices, data, i, w, n_features, bias):
    """w += a * x_i"""
    for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
        w[np.uint64(indices[k])] += a * data[k]
    if bias >= 0:
        w[n_features] += a * bias


@njit(cache=True, nogil=True, inline="always")
def prefetch_visit(index, s, end, indptr, indices, data, inst):
    """Before visiting row index[s] of a sweep over index[:end]: prefetches the nonzeros
    and the per-row record (a row of the float64 array `inst`) of the next row visited,
    and the row pointer of the one after, whose start the next visit's prefetch needs
    (kernels.prefetch). A hint only: it changes no result. s < end; near the end the last
    row is asked for again rather than a branch skipping the prefetch: -s 1 / -s 3 in
    memory on 400k rcv1-shaped rows took 1-7% less time without the branches
    (kernels.block_minimization says what branches in helpers inlined with arrays cost)."""
    k = index[min(s + 2, end - 1)]
    prefetch_span(indptr, k, k + 2)
    k = index[min(s + 1, end - 1)]
    prefetch_span(indices, indptr[k], indptr[k + 1])
    prefetch_span(data, indptr[k], indptr[k + 1])
    prefetch_row_read(inst, k, inst.shape[1] * 8)


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


# Columns per bucket of csr_to_csc's first pass, 2^shift with shift in [6, 16]: few enough
# buckets (<= 2^8 up to 2^24 columns) that the first pass's write positions stay in L1,
# few enough columns per bucket that the second pass's do too, and a column's place in
# its bucket fits 16 bits.
_BUCKET_SHIFT_MIN = 6
_BUCKET_SHIFT_MAX = 16
_MAX_BUCKETS_LOG2 = 8


@njit(cache=True, nogil=True)
def csr_to_csc(indptr, indices, data, n_features, bias):
    """X by columns (col_ptr int64, row_ind int32, vals float64), rows ascending within
    each column, plus a last column of `bias` in every row when bias >= 0 (LIBLINEAR's
    transpose() with the bias feature), in arrays allocated here (see csr_to_csc_into)."""
    l = len(indptr) - 1
    nnz = indptr[l]
    n_cols = n_features + (1 if bias >= 0 else 0)
    total = nnz + (l if bias >= 0 else 0)
    col_ptr = np.zeros(n_cols + 1, dtype=np.int64)
    row_ind = np.empty(total, dtype=np.int32)
    vals = np.empty(total, dtype=np.float64)
    csr_to_csc_into(indptr, indices, data, n_features, bias, col_ptr, row_ind, vals,
                    np.empty(nnz, dtype=np.uint16))
    return col_ptr, row_ind, vals


@njit(cache=True, nogil=True)
def csr_to_csc_into(indptr, indices, data, n_features, bias, col_ptr, row_ind, vals,
                    col_in_bucket):
    """csr_to_csc into arrays of the caller: col_ptr zeros (n_features + 1, plus one with
    the bias column), row_ind and vals of nnz (+ rows with the bias column), col_in_bucket
    scratch of nnz uint16. Arrays from NumPy are worth it on large X: NumPy asks Linux
    for transparent huge pages (madvise MADV_HUGEPAGE) on large arrays and Numba's
    allocations do not, so the first pass's writes would fault a 4 KiB page at a time.

    A stable two-pass radix sort on the column index. Writing each non-zero straight to
    its column scatters over all columns' write positions at once (47k on rcv1, more
    cache lines than the cache holds: a miss a non-zero); instead the first pass writes
    each non-zero to its bucket of 2^shift consecutive columns (256 or fewer up to 2^24
    columns; laid out where their columns end up), the second copies one bucket at a time
    aside and scatters it to its columns. Rows stay ascending (both passes keep order), so the result is the
    one-pass counting sort's, bit for bit."""
    l = len(indptr) - 1
    nnz = indptr[l]
    has_bias = bias >= 0
    n_cols = n_features + (1 if has_bias else 0)
    for k in range(np.uint64(nnz)):
        col_ptr[np.uint64(indices[k]) + 1] += 1
    for j in range(n_features):
        col_ptr[j + 1] += col_ptr[j]
    if has_bias:
        col_ptr[n_cols] = col_ptr[n_features] + l

    shift = _BUCKET_SHIFT_MIN
    while (n_features >> shift) >= (1 << _MAX_BUCKETS_LOG2) and shift < _BUCKET_SHIFT_MAX:
        shift += 1
    low = (1 << shift) - 1
    n_buckets = (n_features >> shift) + 1
    bucket_fill = np.empty(n_buckets, dtype=np.int64)
    largest = 0
    for b in range(n_buckets):
        first = b << shift
        last = min(first + (1 << shift), n_features)
        bucket_fill[b] = col_ptr[first]
        largest = max(largest, col_ptr[last] - col_ptr[first])
    for i in range(l):
        for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            j = indices[k]
            b = np.uint64(j >> shift)
            p = bucket_fill[b]
            row_ind[p] = i
            vals[p] = data[k]
            col_in_bucket[p] = j & low
            bucket_fill[b] = p + 1

    aside_rows = np.empty(largest, dtype=np.int32)
    aside_vals = np.empty(largest, dtype=np.float64)
    fill = col_ptr[:n_features].copy()
    for b in range(n_buckets):
        first = b << shift
        start = col_ptr[first]
        size = col_ptr[min(first + (1 << shift), n_features)] - start
        for q in range(size):
            aside_rows[q] = row_ind[start + q]
            aside_vals[q] = vals[start + q]
        for q in range(size):
            j = np.uint64(first + col_in_bucket[start + q])
            p = fill[j]
            row_ind[p] = aside_rows[q]
            vals[p] = aside_vals[q]
            fill[j] = p + 1
    if has_bias:
        start = col_ptr[n_features]
        for i in range(l):
            row_ind[start + i] = i
            vals[start + i] = bias
