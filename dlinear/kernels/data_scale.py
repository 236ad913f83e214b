"""The scale statistics of a CSR matrix that the default formulation's rule reads
(dlinear.planning.formulation): each column's energy and the rows' squared norms, and the
sums the rule reads of the energies.

The sums are a loop here rather than NumPy's `s @ s`: that is an OpenBLAS call, which on
more than 10,000 columns wakes OpenBLAS's thread per core, and those threads spin on after
it returns, taking a core from the solver that runs next (a 3,000-row fit of 300k
columns took twice as long after it on 2 cores)."""
import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def column_energy_into(indptr, indices, data, row_scale, s):
    """(largest row value, sum of row values) in one pass over the nonzeros, adding
    s[j] += row_scale[i] * x_ij**2 into the caller's s (zeros, one per column), where a
    row's value is row_scale[i] * ||x_i||**2. s comes from NumPy: on wide data NumPy asks
    Linux for transparent huge pages and Numba's allocations do not, so s's first writes
    would fault a 4 KiB page at a time."""
    largest = 0.0
    total = 0.0
    for i in range(indptr.shape[0] - 1):
        c = row_scale[i]
        norm2 = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            v = np.float64(data[k])
            v2 = c * v * v
            s[indices[k]] += v2
            norm2 += v2
        total += norm2
        if norm2 > largest:
            largest = norm2
    return largest, total


@njit(cache=True, nogil=True)
def energy_sums(s):
    """(sum of s**2, sum of s, largest of s) of the column energies s, in one pass."""
    squares = 0.0
    total = 0.0
    top = 0.0
    for j in range(s.shape[0]):
        v = s[j]
        squares += v * v
        total += v
        if v > top:
            top = v
    return squares, total, top
