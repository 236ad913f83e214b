"""X by columns (CSR to CSC) in parts that threads can run: rows ascending within each
column, plus a last column of `bias` in every row when bias >= 0 (LIBLINEAR's transpose()
with the bias feature).

A stable two-pass radix sort on the column index. Writing each non-zero straight to its
column scatters over all columns' write positions at once (47k on rcv1, more cache lines
than the cache holds: a miss a non-zero); instead the first pass writes each non-zero to
its bucket of 2^shift consecutive columns (256 or fewer buckets up to 2^24 columns, laid
out where their columns end up), the second copies one bucket at a time aside and
scatters it to its columns. Both passes keep the order of rows, so the result is the
one-pass counting sort's, bit for bit, whatever the parts:

- count_columns: each part of rows counts its non-zeros per column;
- bucket_starts: from the counts, col_ptr and where each part of rows writes in each
  bucket (after the parts of the rows before it);
- rows_to_buckets: a part of rows, into the buckets;
- buckets_to_columns: a range of buckets, to their columns (then add_bias_column).
"""
import numpy as np
from numba import njit

# 2^shift columns per bucket, shift in [6, 16]: few enough buckets (<= 2^8 up to 2^24
# columns) that the first pass's write positions stay in L1, few enough columns per bucket
# that the second pass's do too, and a column's place in its bucket fits 16 bits.
BUCKET_SHIFT_MIN = 6
BUCKET_SHIFT_MAX = 16
MAX_BUCKETS_LOG2 = 8


@njit(cache=True, nogil=True)
def bucket_shift(n_features):
    shift = BUCKET_SHIFT_MIN
    while (n_features >> shift) >= (1 << MAX_BUCKETS_LOG2) and shift < BUCKET_SHIFT_MAX:
        shift += 1
    return shift


@njit(cache=True, nogil=True)
def count_columns(indptr, indices, r0, r1, counts):
    """counts[j] = the non-zeros of column j in rows [r0, r1)."""
    for k in range(np.uint64(indptr[r0]), np.uint64(indptr[r1])):
        counts[np.uint64(indices[k])] += 1


@njit(cache=True, nogil=True)
def bucket_starts(counts, n_rows, has_bias, shift):
    """(col_ptr int64 (with the bias column's n_rows entries when has_bias), starts: [q, b]
    = where part q of the rows (counts[q]: its columns' counts) writes its first non-zero
    of bucket b)."""
    n_parts, n_features = counts.shape
    n_cols = n_features + (1 if has_bias else 0)
    col_ptr = np.zeros(n_cols + 1, dtype=np.int64)
    for q in range(n_parts):
        for j in range(n_features):
            col_ptr[j + 1] += counts[q, j]
    for j in range(n_features):
        col_ptr[j + 1] += col_ptr[j]
    if has_bias:
        col_ptr[n_cols] = col_ptr[n_features] + n_rows
    n_buckets = (n_features >> shift) + 1
    starts = np.empty((n_parts, n_buckets), dtype=np.int64)
    for b in range(n_buckets):
        first = b << shift
        last = min(first + (1 << shift), n_features)
        p = col_ptr[first]
        for q in range(n_parts):
            starts[q, b] = p
            for j in range(first, last):
                p += counts[q, j]
    return col_ptr, starts


@njit(cache=True, nogil=True)
def rows_to_buckets(indptr, indices, data, r0, r1, shift, fill, row_ind, vals,
                    col_in_bucket):
    """Rows [r0, r1) into their buckets, from positions fill[b] on (advanced)."""
    low = (1 << shift) - 1
    for i in range(r0, r1):
        for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            j = indices[k]
            b = np.uint64(j >> shift)
            p = fill[b]
            row_ind[p] = i
            vals[p] = data[k]
            col_in_bucket[p] = j & low
            fill[b] = p + 1


@njit(cache=True, nogil=True)
def buckets_to_columns(col_ptr, n_features, shift, b0, b1, row_ind, vals, col_in_bucket):
    """Buckets [b0, b1), each copied aside and written to its columns in place."""
    largest = 0
    for b in range(b0, b1):
        first = b << shift
        largest = max(largest, col_ptr[min(first + (1 << shift), n_features)] - col_ptr[first])
    aside_rows = np.empty(largest, dtype=np.int32)
    aside_vals = np.empty(largest, dtype=np.float64)
    for b in range(b0, b1):
        first = b << shift
        last = min(first + (1 << shift), n_features)
        fill = col_ptr[first:last].copy()
        start = col_ptr[first]
        size = col_ptr[last] - start
        for q in range(size):
            aside_rows[q] = row_ind[start + q]
            aside_vals[q] = vals[start + q]
        for q in range(size):
            c = np.uint64(col_in_bucket[start + q])
            p = fill[c]
            row_ind[p] = aside_rows[q]
            vals[p] = aside_vals[q]
            fill[c] = p + 1


@njit(cache=True, nogil=True)
def add_bias_column(col_ptr, n_features, n_rows, bias, row_ind, vals):
    start = col_ptr[n_features]
    for i in range(n_rows):
        row_ind[start + i] = i
        vals[start + i] = bias
