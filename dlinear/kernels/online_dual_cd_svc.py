"""Online dual coordinate descent for L2-regularized L1-/L2-loss SVC (-s 3 / -s 1 with
--online).

Hsieh et al. 2008, Algorithm 2: at each step one index i is drawn uniformly at random
from {1..l} *with replacement* and alpha_i gets the same one-variable update as the
batch solver (dual_cd_svc.py); no permutation, no shrinking. The run ends after
`max_updates` updates, or earlier when LIBLINEAR's stopping rule holds: over each window
of l consecutive updates the projected gradients met are tracked, and when they satisfy
max PG - min PG <= eps (both within eps) the rule is checked on all l variables (one pass
over the data, no updates) and the run stops if it holds there.
"""
import numpy as np
from numba import njit

from .rng import rand_below, seed_state
from .sparse_ops import row_axpy, row_dot, row_sq_norm

INF = np.inf


# Per-instance state packed in one 32-byte record (see dual_cd_svc.py).
ALPHA, QD, BOUND, Y = 0, 1, 2, 3   # BOUND: D_ii for L2-loss (U_i = inf), U_i for L1-loss


@njit(cache=True, nogil=True, inline="always")
def _gradient(inst, i, l2_loss, w, indptr, indices, data, n_features, bias):
    """(G, PG, alpha_i, U_i) of instance i."""
    a = inst[i, ALPHA]
    if l2_loss:
        D = inst[i, BOUND]
        U = INF
    else:
        D = 0.0
        U = inst[i, BOUND]
    G = inst[i, Y] * row_dot(w, indptr, indices, data, i, n_features, bias) - 1.0 + a * D
    if a == 0.0:
        PG = G if G < 0.0 else 0.0
    elif a == U:
        PG = G if G > 0.0 else 0.0
    else:
        PG = G
    return G, PG, a, U


@njit(cache=True, nogil=True)
def online_dual_cd_svc(indptr, indices, data, n_features, bias, y, C, l2_loss, eps,
                       max_updates, seed, alpha, w):
    """Runs in place on `alpha` (warm start) and `w` (set to sum_i alpha_i y_i x_i first).
    Instances with C_i <= 0 (zero instance weight) take no part: their alpha_i is 0.

    Returns (updates, full stopping checks, converged, objective)."""
    l = len(indptr) - 1
    inst = np.zeros((l, 4))
    index = np.empty(l, dtype=np.int64)
    for j in range(len(w)):
        w[j] = 0.0
    n = 0                          # instances with C_i > 0, listed first in index
    for i in range(l):
        if C[i] > 0.0:
            bound = 0.5 / C[i] if l2_loss else C[i]
            inst[i, ALPHA] = alpha[i]
            inst[i, BOUND] = bound
            inst[i, Y] = y[i]
            inst[i, QD] = (bound if l2_loss else 0.0) + row_sq_norm(indptr, data, i, bias)
            if alpha[i] != 0.0:
                row_axpy(y[i] * alpha[i], indptr, indices, data, i, w, n_features, bias)
            index[n] = i
            n += 1

    state = seed_state(seed)
    updates = 0
    checks = 0
    converged = n == 0
    window = 0
    PGmax = -INF
    PGmin = INF
    while updates < max_updates and not converged:
        i = index[rand_below(state, n)]
        G, PG, a_old, U = _gradient(inst, i, l2_loss, w, indptr, indices, data,
                                    n_features, bias)
        if PG > PGmax:
            PGmax = PG
        if PG < PGmin:
            PGmin = PG
        if abs(PG) > 1.0e-12:
            qd = inst[i, QD]
            if qd > 0.0:
                a = a_old - G / qd
            else:               # empty row, L1 loss: linear sub-problem
                a = U if G < 0.0 else 0.0
            if a < 0.0:
                a = 0.0
            if a > U:
                a = U
            inst[i, ALPHA] = a
            row_axpy((a - a_old) * inst[i, Y], indptr, indices, data, i, w, n_features,
                     bias)
        updates += 1
        window += 1
        if window == n:
            if PGmax - PGmin <= eps and abs(PGmax) <= eps and abs(PGmin) <= eps:
                checks += 1
                fmax = -INF
                fmin = INF
                for s in range(n):
                    Gk, PGk, ak, Uk = _gradient(inst, index[s], l2_loss, w, indptr, indices,
                                                data, n_features, bias)
                    if PGk > fmax:
                        fmax = PGk
                    if PGk < fmin:
                        fmin = PGk
                if fmax - fmin <= eps and abs(fmax) <= eps and abs(fmin) <= eps:
                    converged = True
            window = 0
            PGmax = -INF
            PGmin = INF

    v = 0.0
    for j in range(len(w)):
        v += w[j] * w[j]
    for i in range(l):
        a = inst[i, ALPHA]
        alpha[i] = a
        if a != 0.0:
            v += a * (a * (inst[i, BOUND] if l2_loss else 0.0) - 2.0)
    return updates, checks, converged, v / 2.0
