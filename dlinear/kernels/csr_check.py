"""A check of CSR arrays read from a binary dataset before any kernel indexes with them:
a damaged file must give an error, not a read outside an array."""
import numpy as np
from numba import njit

OK = 0
ROW_POINTERS_DECREASE = 1     # indptr[i + 1] < indptr[i], or outside [0, nnz]
INDEX_OUT_OF_RANGE = 2        # a column id < 0 or >= n_features
INDEX_NOT_INCREASING = 3      # column ids within a row not strictly increasing


@njit(cache=True, nogil=True)
def check_csr_rows(indptr, indices, n_features, first_row, end_row):
    """(code, row) of the first fault in rows [first_row, end_row) of CSR arrays whose
    indptr runs from 0 to len(indices), (OK, -1) if none."""
    nnz = indices.shape[0]
    for i in range(first_row, end_row):
        a = indptr[i]
        b = indptr[i + 1]
        if b < a or b > nnz:
            return ROW_POINTERS_DECREASE, i
        previous = -1
        for k in range(a, b):
            j = indices[k]
            if j < 0 or j >= n_features:
                return INDEX_OUT_OF_RANGE, i
            if j <= previous:
                return INDEX_NOT_INCREASING, i
            previous = j
    return OK, -1
