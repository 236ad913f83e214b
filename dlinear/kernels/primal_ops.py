"""Kernels of the primal L2-regularized objectives (LIBLINEAR -s 0, -s 2, -s 11).

    f(w) = 0.5 w^T w + sum_i C_i loss(z_i),   z = X w
    LR     (-s 0):  loss = log(1 + exp(-y_i z_i))
    L2SVC  (-s 2):  loss = max(0, 1 - y_i z_i)^2
    L2SVR  (-s 11): loss = max(0, |z_i - y_i| - p)^2

The regulariser, the -R bias exception and everything else of size n (the number of
variables) is done by the caller in NumPy; these kernels do the passes over the rows:

    xv                    z = X v (row dots: gathers)
    loss_sum              sum_i C_i loss(z_i)
    loss_sum_along        sum_i C_i loss(z_i + alpha zs_i)  (the line search, no pass over X)
    grad_precond          X^T dloss, diag(X^T H X), the rows with nonzero curvature and their
                          weights (one pass: gradient and preconditioner fused)
    hess_vec              X_I^T diag(h_I) X_I s over the rows I of the last grad_precond

The two X^T accumulations add into their outputs, so a worker's several blocks sum into
one output without a temporary per block. Their n-vectors come in pairs, (n, 2) C-order
arrays (gradient and preconditioner; s and H s): the scatter's time on rcv1-shaped rows
is the cache lines of the n-vectors it touches, and a pair shares them.

Data are raw CSR arrays (indptr int64, indices int32, data float64) plus LIBLINEAR's -B
bias as a virtual last column (see sparse_ops). y is float64, or the +1/-1 labels as int8
(exact in the float64 arithmetic); C is float64, contiguous or one value broadcast over
the rows (a zero-stride view, when all rows share it). Inputs are never written: every output
array is passed in separately by the caller, which owns it. X^T v accumulations are scatter
loops over rows, as LIBLINEAR does; loop counters and column ids are unsigned,
which removes Numba's negative-index wraparound checks.

Per-row state is kept in separate contiguous float64 arrays (z, Xs) streamed in row order;
the rows with nonzero curvature and their Hessian weights are compacted into two arrays
(`rows` int32 or int64, `coef`), so an Hv pass reads exactly the rows it needs, in order.

Several columns at once (one-vs-rest or k-fold runs carrying k weight vectors through one
pass of X) fit the same loops: v/s/g become (n, k) C-order arrays and z/zs/coef (l, k), so
a row's k values and a feature's k weights are adjacent; the per-row loops below become a
loop over k inside the nnz loop. Those kernels are dlinear.kernels.kcolumn_ops (k-column
Newton for one-vs-rest, and the multinomial loss), doing each column's arithmetic in the
order of the kernels here.
"""
import math

import numpy as np
from numba import njit

from .prefetch import prefetch_span
from .sparse_ops import row_dot

LR, L2SVC, L2SVR = 0, 1, 2


@njit(cache=True, nogil=True, inline="always")
def _c_times_loss(loss, yi, Ci, zi, p):
    if loss == LR:
        m = yi * zi
        if m >= 0.0:
            return Ci * math.log1p(math.exp(-m))
        return Ci * (math.log1p(math.exp(m)) - m)
    if loss == L2SVC:
        d = 1.0 - yi * zi
        if d > 0.0:
            return Ci * d * d
        return 0.0
    d = zi - yi
    if d < -p:
        return Ci * (d + p) * (d + p)
    if d > p:
        return Ci * (d - p) * (d - p)
    return 0.0


@njit(cache=True, nogil=True, inline="always")
def _c_times_derivatives(loss, yi, Ci, zi, p):
    """(dl, h) = C_i times the first and second derivative of the loss at z_i: the row's
    gradient coefficient and curvature, (0, 0) on the rows outside LIBLINEAR's index set I
    of the L2 losses. The one place these formulas are written (grad_precond here, the
    k-column kernels)."""
    if loss == LR:
        sig = 1.0 / (1.0 + math.exp(-yi * zi))
        return Ci * (sig - 1.0) * yi, Ci * sig * (1.0 - sig)
    if loss == L2SVC:
        m = yi * zi
        if m < 1.0:
            return 2.0 * Ci * yi * (m - 1.0), 2.0 * Ci
        return 0.0, 0.0
    d = zi - yi
    if d < -p:
        return 2.0 * Ci * (d + p), 2.0 * Ci
    if d > p:
        return 2.0 * Ci * (d - p), 2.0 * Ci
    return 0.0, 0.0


@njit(cache=True, nogil=True)
def xv(indptr, indices, data, n_features, bias, v, out):
    """out[i] = x_i . v (with the bias column)."""
    l = len(indptr) - 1
    for i in range(np.uint64(l)):
        out[i] = row_dot(v, indptr, indices, data, i, n_features, bias)


@njit(cache=True, nogil=True)
def loss_sum(loss, y, C, z, p):
    """sum_i C_i loss_i(z_i)."""
    s = 0.0
    for i in range(np.uint64(len(z))):
        s += _c_times_loss(loss, y[i], C[i], z[i], p)
    return s


@njit(cache=True, nogil=True)
def loss_sum_along(loss, y, C, z, zs, alpha, p):
    """sum_i C_i loss_i(z_i + alpha zs_i): the loss at w + alpha s given z = Xw, zs = Xs."""
    s = 0.0
    for i in range(np.uint64(len(z))):
        s += _c_times_loss(loss, y[i], C[i], z[i] + alpha * zs[i], p)
    return s


@njit(cache=True, nogil=True)
def add_scaled(alpha, x, out):
    """out += alpha * x (z += alpha Xs after an accepted line-search step)."""
    for i in range(np.uint64(len(out))):
        out[i] += alpha * x[i]


@njit(cache=True, nogil=True)
def grad_precond(loss, indptr, indices, data, n_features, bias, y, C, z, p, gm, rows,
                 coef):
    """One pass over the rows at z = Xw:

        gm[:, 0] += sum_i dl_i x_i,       dl_i = C_i dloss_i/dz_i       (the gradient)
        gm[:, 1] += sum_i h_i x_i^2,      h_i  = C_i d2loss_i/dz_i^2    (diag of X^T H X)
        rows[:k], coef[:k]                the rows with h_i != 0 and their h_i, in row order

    (LR: every row; L2SVC/L2SVR: LIBLINEAR's index set I, with h_i = 2 C_i.) Returns k.
    gm is (n_features (+1 with the bias), 2), C order: a feature's two sums share a
    cache line, so a nonzero's scatter misses once where two n-vectors miss twice. It is
    added to, not overwritten, so the blocks of one worker accumulate into one."""
    l = len(indptr) - 1
    k = 0
    for i in range(np.uint64(l)):
        dl, h = _c_times_derivatives(loss, y[i], C[i], z[i], p)
        if h != 0.0:
            rows[k] = i
            coef[k] = h
            k += 1
            for q in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
                j = np.uint64(indices[q])
                v = data[q]
                gm[j, 0] += dl * v
                gm[j, 1] += h * v * v
            if bias >= 0:
                gm[n_features, 0] += dl * bias
                gm[n_features, 1] += h * bias * bias
        elif dl != 0.0:
            for q in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
                gm[np.uint64(indices[q]), 0] += dl * data[q]
            if bias >= 0:
                gm[n_features, 0] += dl * bias
    return k


@njit(cache=True, nogil=True, inline="always")
def _prefetch_if_apart(indptr, indices, data, rows, r, count):
    """Where the next row of the curvature rows is not the one after rows[r]: prefetches
    its nonzeros, and the row pointer of the one after it. The rows of an L2 loss's index
    set are a scattered few (a few % of them late in -s 2), whose nonzeros the hardware
    prefetcher does not foresee: each row's first lines would come from memory one after
    the other (a hint only: no result changes)."""
    following = rows[r + np.uint64(1)]
    if following != rows[r] + 1:
        prefetch_span(indices, indptr[following], indptr[following + 1])
        prefetch_span(data, indptr[following], indptr[following + 1])
        if r + np.uint64(2) < count:
            after = rows[r + np.uint64(2)]
            prefetch_span(indptr, after, after + 2)


@njit(cache=True, nogil=True, inline="always")
def _hess_row(indptr, indices, data, n_features, bias, i, c, s_hs):
    """s_hs[:, 1] += c x_i (x_i . s_hs[:, 0]), in row_dot's and row_axpy's order."""
    t = 0.0
    for q in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
        t += s_hs[np.uint64(indices[q]), 0] * data[q]
    if bias >= 0:
        t += s_hs[n_features, 0] * bias
    t = c * t
    for q in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
        s_hs[np.uint64(indices[q]), 1] += t * data[q]
    if bias >= 0:
        s_hs[n_features, 1] += t * bias


@njit(cache=True, nogil=True)
def hess_vec(indptr, indices, data, n_features, bias, rows, coef, k, s_hs):
    """s_hs[:, 1] += sum_{r < k} coef[r] x_{rows[r]} (x_{rows[r]} . s): the loss part of
    H s, where s = s_hs[:, 0]. s and the product are interleaved (n_variables, 2), C
    order, for the reason grad_precond's pair is: a nonzero's gather and scatter then
    touch one cache line. Rows that are not one run (rows ascending) are prefetched a
    row ahead; a run is left to the hardware prefetcher (the check a row costs ~10% of a
    pass over all rows)."""
    count = np.uint64(k)
    if count == 0:
        return
    if rows[count - np.uint64(1)] - rows[0] + 1 == k:
        for r in range(count):
            _hess_row(indptr, indices, data, n_features, bias, rows[r], coef[r], s_hs)
        return
    for r in range(count):
        if r + np.uint64(1) < count:
            _prefetch_if_apart(indptr, indices, data, rows, r, count)
        _hess_row(indptr, indices, data, n_features, bias, rows[r], coef[r], s_hs)


@njit(cache=True, nogil=True)
def second_to_front(pair):
    """Moves pair[:, 1] of an (n, 2) C-order array to its first n doubles, in place: entry
    j comes from flat position 2j + 1 >= j, so no entry is overwritten before it is read."""
    flat = pair.reshape(-1)
    for j in range(np.uint64(pair.shape[0])):
        flat[j] = flat[j + j + np.uint64(1)]


@njit(cache=True, nogil=True)
def zero(v):
    """v[:] = 0 without the GIL (a chunk's part, zeroed by its own thread, stays in
    that core's cache for the pass that follows)."""
    for j in range(np.uint64(len(v))):
        v[j] = 0.0


@njit(cache=True, nogil=True)
def add_parts(parts, n_parts, out, start, stop, first):
    """For start <= j < stop, the n-vector of a pass whose row chunks each scattered into
    a part of their own, a few parts at a time: out[j] = parts[0, j] + ... +
    parts[n_parts - 1, j] (added in the order of the parts) where these are the pass's
    first parts, else out[j] += parts[0, j], ..., one after the other; so the parts taken
    a wave at a time give the bits of all of them added at once."""
    c0 = np.uint64(0)
    if first:
        for j in range(np.uint64(start), np.uint64(stop)):
            out[j] = parts[0, j]
        c0 = np.uint64(1)
    for c in range(c0, np.uint64(n_parts)):
        for j in range(np.uint64(start), np.uint64(stop)):
            out[j] += parts[c, j]
