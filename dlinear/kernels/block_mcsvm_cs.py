"""One round of Crammer and Singer's sequential dual method (-s 4, kernels/mcsvm_cs.py) on
one block of rows, for the partitioned -s 4 (solvers/partitioned_crammer_singer.py).

With W = sum_i alpha_i x_i^T over all rows (one column per class), block b's subproblem
in its own step d (rows i in b, d_i a k-vector with sum_m d_i^m = 0) is, as the
block-diagonal dual of the binary solvers (block_dual_cd.py; Lee & Chang 2019, Ma et al.
2015),

    min_d  sum_{i in b} sum_m (e_i^m + W_m.x_i) d_i^m + sigma / 2 sum_m ||sum_{i in b} d_i^m x_i||^2
    s.t.   alpha_i^m + d_i^m <= C_i^m,   sum_m d_i^m = 0,

and one instance's sub-problem on it is the in-process one (Fan et al. 2008, Appendix E,
Algorithm 2) with A_i = sigma ||x_i||^2 and the gradient at W + sigma dW. In the first
pass each row is visited once before its d_i moves, so that pass also gives LIBLINEAR's
stopping quantity S_i = max_m G_i^m - min_{m: alpha_i^m < C_i^m} G_i^m of the *global* dual
at the round's alpha, and the primal loss at W.
"""
import numpy as np
from numba import njit

from .block_dual_cd import (DUAL_PART, PG_MAX, PG_MIN, PRIMAL_LOSS, ROWS, ACTIVE,
                            STEP_LINEAR, _row)
from .mcsvm_cs import _solve_sub_problem
from .rng import shuffle_prefix

INF = np.inf


@njit(cache=True, nogil=True)
def block_round_cs(layout, part_of, n_features, bias, y, C, sq_norms, alpha, trial, W,
                   sigma, n_passes, state, dW, stats):
    """`n_passes` random-order passes of the Crammer-Singer sub-problem CD on this block
    at the global W (k x w_size, read only) and the block's `alpha` (rows x k, read only).
    Writes alpha + d into `trial` (rows x k), sum_i d_i x_i^T into dW (k x w_size, zeroed
    here) and into `stats` (block_dual_cd's indices): PG_MAX the largest S_i at the
    round's alpha, DUAL_PART the linear part sum_i sum_m e_i^m alpha_i^m, PRIMAL_LOSS
    sum_i C_i max_m (e_i^m + (W_m - W_{y_i}).x_i), STEP_LINEAR sum_i sum_m e_i^m d_i^m
    (the dual's quadratic part is 0.5 ||W||^2 only: its step's curvature is ||dW||^2)."""
    l = len(part_of)
    k, w_size = W.shape
    # W and dW by rows of features (a row's k values side by side, as mcsvm_cs's w)
    Wt = np.empty((w_size, k))
    dWt = np.zeros((w_size, k))
    for m in range(k):
        for j in range(w_size):
            Wt[j, m] = W[m, j]
    G = np.empty(k)
    H = np.empty(k)
    B = np.empty(k)
    D = np.empty(k)
    alpha_new = np.empty(k)
    index = np.empty(l, dtype=np.int64)
    n = 0
    for i in range(l):
        yi = y[i]
        for m in range(k):
            a = alpha[i, m]
            trial[i, m] = a
            if m != yi:
                stats[DUAL_PART] += a
        if sq_norms[i] > 0.0:
            index[n] = i
            n += 1
    for p in range(n_passes):
        shuffle_prefix(state, index, n)
        for s in range(n):
            i = index[s]
            indptr, indices, data, r = _row(layout, part_of, i)
            yi = y[i]
            Ci = C[i]
            for m in range(k):
                G[m] = 0.0
                H[m] = 0.0
            for q in range(np.uint64(indptr[r]), np.uint64(indptr[r + 1])):
                f = np.uint64(indices[q])
                v = data[q]
                for m in range(k):
                    G[m] += Wt[f, m] * v
                    H[m] += dWt[f, m] * v
            if bias >= 0:
                for m in range(k):
                    G[m] += Wt[n_features, m] * bias
                    H[m] += dWt[n_features, m] * bias
            for m in range(k):
                if m != yi:
                    G[m] += 1.0
            if p == 0:
                # H is 0 here for this row's own step: G is the global dual's gradient
                minG = INF
                maxG = -INF
                for m in range(k):
                    bound = Ci if m == yi else 0.0
                    if alpha[i, m] < bound and G[m] < minG:
                        minG = G[m]
                    if G[m] > maxG:
                        maxG = G[m]
                if maxG - minG > stats[PG_MAX]:
                    stats[PG_MAX] = maxG - minG
                stats[PRIMAL_LOSS] += Ci * (maxG - G[yi])
            A = sigma * sq_norms[i]
            minG = INF
            maxG = -INF
            for m in range(k):
                G[m] += sigma * H[m]
                bound = Ci if m == yi else 0.0
                if trial[i, m] < bound and G[m] < minG:
                    minG = G[m]
                if G[m] > maxG:
                    maxG = G[m]
            if maxG - minG <= 1e-12:
                continue
            for m in range(k):
                B[m] = G[m] - A * trial[i, m]
            _solve_sub_problem(A, B, yi, Ci, k, D, alpha_new)
            for m in range(k):
                d = alpha_new[m] - trial[i, m]
                if d == 0.0:
                    continue
                trial[i, m] = alpha_new[m]
                for q in range(np.uint64(indptr[r]), np.uint64(indptr[r + 1])):
                    dWt[np.uint64(indices[q]), m] += d * data[q]
                if bias >= 0:
                    dWt[n_features, m] += d * bias
    for i in range(l):
        yi = y[i]
        for m in range(k):
            if m != yi:
                stats[STEP_LINEAR] += trial[i, m] - alpha[i, m]
    stats[PG_MIN] = min(stats[PG_MIN], 0.0)
    stats[ACTIVE] += n
    stats[ROWS] += l
    for m in range(k):
        for j in range(w_size):
            dW[m, j] = dWt[j, m]
