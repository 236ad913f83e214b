"""The columns a CSR block uses, and its column indices renumbered into that space."""
import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def mark_columns(indices, n_columns):
    """uint8 flags over n_columns: 1 where a column occurs in `indices`."""
    seen = np.zeros(n_columns, dtype=np.uint8)
    for k in range(indices.shape[0]):
        seen[np.uint64(indices[k])] = 1
    return seen


@njit(cache=True, nogil=True)
def local_of_global(seen):
    """For flags from mark_columns: (the occurring columns in increasing order, int32;
    each column's number among them, int32, -1 where it does not occur)."""
    n = seen.shape[0]
    local = np.empty(n, dtype=np.int32)
    m = 0
    for j in range(n):
        if seen[j]:
            local[j] = m
            m += 1
        else:
            local[j] = -1
    used = np.empty(m, dtype=np.int32)
    for j in range(n):
        if seen[j]:
            used[local[j]] = j
    return used, local


@njit(cache=True, nogil=True)
def renumber_by_map(indices, local):
    """local[indices] as a new int32 array (never written in place: blocks from Dask may
    be read-only)."""
    out = np.empty(indices.shape[0], dtype=np.int32)
    for k in range(indices.shape[0]):
        out[k] = local[np.uint64(indices[k])]
    return out
