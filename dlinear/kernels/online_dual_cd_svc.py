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

from .dual_cd_svc import ALPHA, BOUND, QD, Y, dual_objective, init_dual_state, one_variable_step
from .rng import rand_below, seed_state
from .sparse_ops import row_axpy, row_dot

INF = np.inf


# Per-instance state packed in one 32-byte record (see dual_cd_svc.py).


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
                       max_updates, seed, alpha, w, ctrl_c):
    """Runs in place on `alpha` (warm start) and `w` (set to sum_i alpha_i y_i x_i first).
    Instances with C_i <= 0 (zero instance weight) take no part: their alpha_i is 0.

    Returns (updates, full stopping checks, converged, objective); early, within an
    update, once ctrl_c[0] is set (a Ctrl-C: dlinear.threads.stop_flag)."""
    inst, index, n = init_dual_state(indptr, indices, data, n_features, bias, y, C,
                                     l2_loss, alpha, w)

    state = seed_state(seed)
    updates = 0
    checks = 0
    converged = n == 0
    window = 0
    PGmax = -INF
    PGmin = INF
    while updates < max_updates and not converged and not ctrl_c[0]:
        i = index[rand_below(state, n)]
        G, PG, a_old, U = _gradient(inst, i, l2_loss, w, indptr, indices, data,
                                    n_features, bias)
        if PG > PGmax:
            PGmax = PG
        if PG < PGmin:
            PGmin = PG
        if abs(PG) > 1.0e-12:
            a = one_variable_step(a_old, G, inst[i, QD], U)
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

    return updates, checks, converged, dual_objective(w, inst, l2_loss, alpha)
