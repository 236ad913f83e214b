"""Reductions of dense vectors in a fixed order."""
from numba import njit


@njit(cache=True, nogil=True)
def dot_in_order(u, v):
    """u . v added strictly in index order, one product at a time: the sum over a vector
    with zeros between its entries is then the sum over the entries alone, bit for bit
    (dlinear.data.columns fits on the columns that occur and must give the same model)."""
    s = 0.0
    for i in range(u.shape[0]):
        s += u[i] * v[i]
    return s
