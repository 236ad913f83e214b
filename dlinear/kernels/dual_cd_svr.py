"""Dual coordinate descent for L2-regularized L1-/L2-loss SVR (LIBLINEAR -s 13 / -s 12).

    min_beta 0.5 beta^T (Q + diag(lambda)) beta + p sum_i |beta_i| - y^T beta,
    -U_i <= beta_i <= U_i,   Q_ij = x_i^T x_j,   w = sum_i beta_i x_i
    L1-loss: U_i = C_i,   lambda_i = 0
    L2-loss: U_i = inf,   lambda_i = 1 / (2 C_i)

Ho & Lin 2012, Algorithm 4, as LIBLINEAR 2.50 runs it: random permutation of the active
set every outer iteration; the one-variable sub-problem (a quadratic plus p|beta_i|) is
solved in closed form by the Newton direction of the side of zero it falls on, then
clipped to the box; shrinking by the largest violation of the previous iteration (Gmax);
stop when the 1-norm of the minimum-norm sub-gradient over the active set falls to
eps times its value in the first iteration, confirmed on the whole set. C_i is per
instance (LIBLINEAR has one C; instance weights multiply it here).
"""
import numpy as np
from numba import njit

from .rng import seed_state, shuffle_prefix
from .sparse_ops import prefetch_visit, row_axpy, row_dot, row_sq_norm

INF = np.inf


# Per-instance state packed in one 32-byte record (see dual_cd_svc.py).
BETA, H, BOUND, Y = 0, 1, 2, 3   # H = ||x_i||^2 + lambda_i; BOUND: lambda_i (L2), U_i (L1)


@njit(cache=True, nogil=True, inline="always")
def one_variable_step(bi, Gp, Gn, Hi, Ui):
    """The new beta_i: the Newton direction of the piece of the one-variable sub-problem
    (G +- p the gradients right and left of zero, Hi its curvature) the minimum lies on,
    clipped to [-Ui, Ui]; beta_i itself when the move is below 1e-12."""
    if Hi > 0.0:
        if Gp < Hi * bi:
            d = -Gp / Hi
        elif Gn > Hi * bi:
            d = -Gn / Hi
        else:
            d = -bi
    else:
        # empty row with L1 loss: the sub-problem is linear, go to the bound
        # it decreases towards (0 when neither side decreases it)
        if Gp < 0.0:
            d = Ui - bi
        elif Gn > 0.0:
            d = -Ui - bi
        else:
            d = -bi
    if abs(d) < 1.0e-12:
        return bi
    nb = bi + d
    if nb > Ui:
        nb = Ui
    if nb < -Ui:
        nb = -Ui
    return nb


@njit(cache=True, nogil=True, inline="always")
def violation_or_shrink(bi, Gp, Gn, Ui, Gmax_old):
    """(|minimum-norm sub-gradient| of the dual at beta_i, LIBLINEAR's stopping measure;
    whether beta_i leaves the active set): a beta_i at 0 or a bound, pushed there by a
    gradient beyond Gmax_old (the last sweep's largest violation), is shrunk."""
    if bi == 0.0:
        if Gp < 0.0:
            return -Gp, False
        if Gn > 0.0:
            return Gn, False
        return 0.0, Gp > Gmax_old and Gn < -Gmax_old
    if bi >= Ui:
        if Gp > 0.0:
            return Gp, False
        return 0.0, Gp < -Gmax_old
    if bi <= -Ui:
        if Gn < 0.0:
            return -Gn, False
        return 0.0, Gn > Gmax_old
    return (abs(Gp) if bi > 0.0 else abs(Gn)), False


@njit(cache=True, nogil=True, inline="always")
def violation(bi, Gp, Gn, Ui):
    """|minimum-norm sub-gradient| of the dual at beta_i (LIBLINEAR's stopping measure)."""
    return violation_or_shrink(bi, Gp, Gn, Ui, INF)[0]


@njit(cache=True, nogil=True, inline="always")
def init_svr_state(indptr, indices, data, n_features, bias, y, C, l2_loss, beta, w):
    """(inst, index, n): the packed per-instance records from the warm start beta (zeros:
    LIBLINEAR's start; within its bounds, dlinear.solvers.dual_start), w = sum beta_i x_i,
    and in index[:n] the instances with C_i > 0 (the others take no part, beta_i = 0)."""
    l = len(indptr) - 1
    inst = np.zeros((l, 4))
    index = np.empty(l, dtype=np.int64)
    for j in range(len(w)):
        w[j] = 0.0
    n = 0                       # instances with C_i > 0, listed first in index
    for i in range(l):
        if C[i] <= 0.0:
            beta[i] = 0.0
        else:
            init_svr_row(inst, i, indptr, indices, data, i, n_features, bias, y[i], C[i],
                         l2_loss, beta[i], w)
            index[n] = i
            n += 1
    return inst, index, n


@njit(cache=True, nogil=True, inline="always")
def init_svr_row(inst, r, indptr, indices, data, i, n_features, bias, yi, Ci, l2_loss,
                 bi, w):
    """Record r for CSR row i (C_i > 0) at beta_i = bi; w += beta_i x_i."""
    inst[r, BETA] = bi
    if bi != 0.0:
        row_axpy(bi, indptr, indices, data, i, w, n_features, bias)
    lam = 0.5 / Ci if l2_loss else 0.0
    inst[r, BOUND] = lam if l2_loss else Ci
    inst[r, H] = row_sq_norm(indptr, data, i, bias) + lam
    inst[r, Y] = yi


@njit(cache=True, nogil=True, inline="always")
def svr_row_gradient(inst, r, dot, p, l2_loss):
    """(beta_r, the sub-gradients G + p and G - p right and left of zero at w
    (dot = x_r.w), its bound U_r)."""
    bi = inst[r, BETA]
    if l2_loss:
        lam = inst[r, BOUND]
        Ui = INF
    else:
        lam = 0.0
        Ui = inst[r, BOUND]
    G = dot - inst[r, Y] + lam * bi
    return bi, G + p, G - p, Ui


@njit(cache=True, nogil=True, inline="always")
def svr_objective(w, inst, y, p, l2_loss, beta):
    """The dual objective; copies the packed betas to `beta`."""
    v = 0.0
    for j in range(len(w)):
        v += w[j] * w[j]
    v *= 0.5
    for i in range(inst.shape[0]):
        b = inst[i, BETA]
        beta[i] = b
        if b != 0.0:
            lam = inst[i, BOUND] if l2_loss else 0.0
            v += p * abs(b) - y[i] * b + 0.5 * lam * b * b
    return v


@njit(cache=True, nogil=True)
def dual_cd_svr(indptr, indices, data, n_features, bias, y, C, p, l2_loss, eps, max_iter,
                seed, beta, w, ctrl_c):
    """Runs the solver from the warm start `beta` (zeros: LIBLINEAR's start); fills
    `beta` (length l) and `w` (= sum_i beta_i x_i).
    Inputs are never written. Instances with C_i <= 0 (zero instance weight) take no
    part: their beta_i is 0.

    Returns (iterations, final active-set size, shrinking restarts, dual objective);
    early, within a row's step, once ctrl_c[0] is set (dlinear.threads.stop_flag)."""
    inst, index, n = init_svr_state(indptr, indices, data, n_features, bias, y, C, l2_loss,
                                    beta, w)
    state = seed_state(seed)
    active_size = n
    Gmax_old = INF
    Gnorm1_init = -1.0
    it = 0
    restarts = 0
    while it < max_iter:
        Gmax_new = 0.0
        Gnorm1_new = 0.0
        shuffle_prefix(state, index, active_size)

        s = 0
        while s < active_size:
            if ctrl_c[0]:
                break
            prefetch_visit(index, s, active_size, indptr, indices, data, inst)
            i = index[s]
            bi, Gp, Gn, Ui = svr_row_gradient(
                inst, i, row_dot(w, indptr, indices, data, i, n_features, bias), p, l2_loss)
            Hi = inst[i, H]
            violation, shrink = violation_or_shrink(bi, Gp, Gn, Ui, Gmax_old)
            if shrink:
                active_size -= 1
                index[s], index[active_size] = index[active_size], index[s]
                continue
            if violation > Gmax_new:
                Gmax_new = violation
            Gnorm1_new += violation

            nb = one_variable_step(bi, Gp, Gn, Hi, Ui)
            if nb == bi:
                s += 1
                continue
            inst[i, BETA] = nb
            d = nb - bi
            if d != 0.0:
                row_axpy(d, indptr, indices, data, i, w, n_features, bias)
            s += 1

        if ctrl_c[0]:
            break
        if it == 0:
            Gnorm1_init = Gnorm1_new
        it += 1
        if Gnorm1_new <= eps * Gnorm1_init:
            if active_size == n:
                break
            active_size = n
            restarts += 1
            Gmax_old = INF
            continue
        Gmax_old = Gmax_new

    return it, active_size, restarts, svr_objective(w, inst, y, p, l2_loss, beta)
