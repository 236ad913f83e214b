"""One round of the one-class SVM's dual (-s 21, kernels/oneclass.py) on one block of
rows, for the partitioned -s 21 (solvers/partitioned_oneclass.py).

The dual, min 0.5 ||sum_i alpha_i x_i||^2 with 0 <= alpha_i <= U_i and
sum_i alpha_i = nu sum_i U_i, couples all rows through the sum. Each block keeps its
share s_b = sum_{i in b} alpha_i: its local step moves mass between its own rows only
(LIBLINEAR's two-variable steps on the max-violating pairs, Chou et al. 2020, on the
block-diagonal subproblem scaled by sigma as the binary duals', block_dual_cd.py), and
mass moves between blocks only when the driver says so: `shift` is added to the block's
share first, on its rows of the smallest gradient with room (shift > 0) or of the largest
with mass (shift < 0), so sum_i alpha_i stays exact.
"""
import numpy as np
from numba import njit

from .block_dual_cd import _row
from .oneclass import _select, clipped_pair, dot_rows

INF = np.inf

# The round's extremes of one block (at the round's alpha, before its step), reduced over
# blocks by solvers.partitioned_oneclass.combine_extremes: the smallest gradient of a row
# with room (G_UP) and the largest of a row with mass (G_LOW), with their block and
# ||x_i||; the largest ||x_i|| of the block's rows.
(G_UP, UP_BLOCK, UP_NORM, G_LOW, LOW_BLOCK, LOW_NORM) = range(6)
N_EXTREMES = 6


@njit(cache=True, nogil=True, inline="always")
def _grad(layout, part_of, g, w, dw, sigma, n_features, bias):
    """(w + sigma dw).x_g"""
    indptr, indices, data, r = _row(layout, part_of, g)
    s = 0.0
    for q in range(np.uint64(indptr[r]), np.uint64(indptr[r + 1])):
        j = np.uint64(indices[q])
        s += (w[j] + sigma * dw[j]) * data[q]
    if bias >= 0:
        s += (w[n_features] + sigma * dw[n_features]) * bias
    return s


@njit(cache=True, nogil=True, inline="always")
def _axpy(a, layout, part_of, g, dw, n_features, bias):
    indptr, indices, data, r = _row(layout, part_of, g)
    for q in range(np.uint64(indptr[r]), np.uint64(indptr[r + 1])):
        dw[np.uint64(indices[q])] += a * data[q]
    if bias >= 0:
        dw[n_features] += a * bias


@njit(cache=True, nogil=True)
def block_round_oneclass(layout, part_of, n_features, bias, U, sq_norms, alpha, trial, w,
                         sigma, n_passes, shift, block, dw, extremes):
    """Adds `shift` to the block's share, then runs `n_passes` outer iterations of
    LIBLINEAR's one-class step (the max(rows / 10, 1) most violating pairs of the block,
    each solved in closed form) on the subproblem at the global `w` (read only), from
    `alpha` (read only). Writes alpha + d into `trial`, sum_i d_i x_i into `dw` (zeroed
    here) and the block's extremes at alpha into `extremes` (G_UP...)."""
    l = len(part_of)
    G = np.empty(l)
    up = np.empty(l, dtype=np.int64)
    low = np.empty(l, dtype=np.int64)
    pick_up = np.empty(l, dtype=np.int64)
    pick_low = np.empty(l, dtype=np.int64)
    for j in range(len(dw)):
        dw[j] = 0.0
    for e in range(N_EXTREMES):
        extremes[e] = 0.0
    extremes[G_UP] = INF
    extremes[G_LOW] = -INF
    for i in range(l):
        trial[i] = alpha[i]
        G[i] = _grad(layout, part_of, i, w, dw, 0.0, n_features, bias)
        if alpha[i] < U[i] and G[i] < extremes[G_UP]:
            extremes[G_UP] = G[i]
            extremes[UP_NORM] = np.sqrt(sq_norms[i])
            extremes[UP_BLOCK] = block
        if alpha[i] > 0.0 and G[i] > extremes[G_LOW]:
            extremes[G_LOW] = G[i]
            extremes[LOW_NORM] = np.sqrt(sq_norms[i])
            extremes[LOW_BLOCK] = block
    # the driver's shift of the share, on the rows of the most profitable gradients
    rest = shift
    while rest > 0.0:
        best = -1
        for i in range(l):
            if trial[i] < U[i] and (best < 0 or G[i] < G[best]):
                best = i
        if best < 0:
            break
        a = min(U[best], trial[best] + rest)
        d = a - trial[best]
        trial[best] = a
        rest -= d
        _axpy(d, layout, part_of, best, dw, n_features, bias)
        if a < U[best]:
            break
    while rest < 0.0:
        best = -1
        for i in range(l):
            if trial[i] > 0.0 and (best < 0 or G[i] > G[best]):
                best = i
        if best < 0:
            break
        a = max(0.0, trial[best] + rest)
        d = a - trial[best]
        trial[best] = a
        rest -= d
        _axpy(d, layout, part_of, best, dw, n_features, bias)
        if a > 0.0:
            break
    for p in range(n_passes):
        n_up = 0
        n_low = 0
        for i in range(l):
            G[i] = _grad(layout, part_of, i, w, dw, sigma, n_features, bias)
            if trial[i] < U[i]:
                up[n_up] = i
                n_up += 1
            if trial[i] > 0.0:
                low[n_low] = i
                n_low += 1
        n_pairs = min(max(l // 10, 1), min(n_up, n_low))
        if n_pairs > 0:
            _select(up, np.int64(n_up), G, np.int64(n_pairs), np.bool_(True), pick_up)
            _select(low, np.int64(n_low), G, np.int64(n_pairs), np.bool_(False), pick_low)
        for s in range(n_pairs):
            i = pick_up[s]
            j = pick_low[s]
            if i == j:
                continue
            if (trial[i] == 0.0 and trial[j] == 0.0) or (trial[i] == U[i]
                                                         and trial[j] == U[j]):
                continue
            Gi = _grad(layout, part_of, i, w, dw, sigma, n_features, bias)
            Gj = _grad(layout, part_of, j, w, dw, sigma, n_features, bias)
            violating = ((trial[i] < U[i] and trial[j] > 0.0 and -Gj + 1e-12 < -Gi)
                         or (trial[i] > 0.0 and trial[j] < U[j] and -Gi + 1e-12 < -Gj))
            if not violating:
                continue
            pa, xa, va, ra = _row(layout, part_of, i)
            pb, xb, vb, rb = _row(layout, part_of, j)
            quad = sigma * (sq_norms[i] + sq_norms[j]
                            - 2.0 * dot_rows(pa, xa, va, ra, pb, xb, vb, rb, bias))
            if quad <= 0.0:
                quad = 1e-12
            delta = (Gi - Gj) / quad
            old_i = trial[i]
            total = trial[i] + trial[j]
            ai, aj = clipped_pair(trial[i] - delta, trial[j] + delta, total, U[i], U[j])
            trial[i] = ai
            trial[j] = aj
            delta = ai - old_i
            _axpy(delta, layout, part_of, i, dw, n_features, bias)
            _axpy(-delta, layout, part_of, j, dw, n_features, bias)
