"""Primal coordinate descent for L2-regularized L2-loss SVC (-s 2 with --primal-cd).

    min_w f(w) = 0.5 sum_j r_j w_j^2 + sum_i C_i max(0, 1 - y_i w^T x_i)^2

(r_j = 1, except r = 0 for the bias weight under -R). Chang, Hsieh & Lin 2008 (JMLR 9),
Algorithms 1-3. The one-variable sub-problem D_j(z) = f(w + z e_j) is a differentiable
piecewise quadratic; with b_i = 1 - y_i w^T x_i kept up to date for every row,

    D_j'(0)  = r_j w_j - 2 sum_{b_i > 0} C_i y_i x_ij b_i
    D_j''(0) = r_j + 2 sum_{b_i > 0} C_i x_ij^2        (generalised second derivative)

the step is the Newton direction d = -D'(0)/D''(0) with a backtracking line search on
lambda = 1, beta, beta^2, ... for the sufficient decrease
D_j(lambda d) - D_j(0) <= -sigma (lambda d)^2. The paper's cheap test comes first: the
condition is guaranteed whenever lambda <= D''(0) / (H_j/2 + sigma), with
H_j = r_j + 2 sum_i C_i x_ij^2 (a bound on D_j'' everywhere, precomputed), so D_j(lambda d)
is evaluated (one pass over column j) only when that test fails. sigma = 0.01, beta = 0.5.

Batch mode (Algorithm 1): a random permutation of the features every outer iteration.
Online mode (Algorithm 3): one feature drawn uniformly at random with replacement per
update, at most `max_updates` updates. Stop (both modes) as LIBLINEAR's -s 2:
||grad f(w)||_2 <= tol_rel * ||grad f(0)||_2, tol_rel = eps * max(min(pos, neg), 1) / l.
The norm is estimated per outer iteration (or per window of n updates online) from the
D_j'(0) met on the way and, when the estimate passes, computed exactly (one pass over
the data) before stopping.

Column access: X as CSC arrays (colptr int64, rows int32, vals float64) with the bias as
a virtual last column of value `bias` in every row.
"""
import math

import numpy as np
from numba import njit

from .rng import rand_below, seed_state, shuffle_prefix

SIGMA = 0.01
BETA = 0.5


@njit(cache=True, nogil=True)
def _column_range(colptr, j, n_features, l):
    if j == n_features:
        return 0, l
    return colptr[j], colptr[j + 1]


@njit(cache=True, nogil=True, inline="always")
def _entry(k, is_bias, rows, vals, bias):
    """(row, value) of the k-th entry of a column in _column_range: the CSC arrays, or
    the virtual bias column (every row, value `bias`)."""
    if is_bias:
        return k, bias
    return rows[k], vals[k]


@njit(cache=True, nogil=True)
def _grad_norm(colptr, rows, vals, n_features, bias, y, C, reg, w, b):
    l = len(y)
    s = 0.0
    for j in range(len(w)):
        start, end = _column_range(colptr, j, n_features, l)
        acc = 0.0
        for k in range(start, end):
            i, x = _entry(k, j == n_features, rows, vals, bias)
            if b[i] > 0.0:
                acc += C[i] * y[i] * x * b[i]
        g = reg[j] * w[j] - 2.0 * acc
        s += g * g
    return math.sqrt(s)


@njit(cache=True, nogil=True)
def _coordinate_step(j, colptr, rows, vals, n_features, bias, y, C, reg_j, H_j, w, b):
    """Newton step with line search on w_j; updates w_j and b. Returns (D'(0), function
    evaluations of the line search)."""
    l = len(y)
    start, end = _column_range(colptr, j, n_features, l)
    is_bias = j == n_features
    D1 = 0.0
    D2 = 0.0
    for k in range(start, end):
        i, x = _entry(k, is_bias, rows, vals, bias)
        bi = b[i]
        if bi > 0.0:
            c = C[i]
            D1 += c * y[i] * x * bi
            D2 += c * x * x
    Dp = reg_j * w[j] - 2.0 * D1
    Dpp = reg_j + 2.0 * D2
    if Dpp <= 0.0 or Dp == 0.0:
        return Dp, 0
    d = -Dp / Dpp
    lam_bar = Dpp / (0.5 * H_j + SIGMA)
    lam = 1.0
    evals = 0
    while lam > lam_bar:        # terminates: lam_bar > 0 and lam halves
        z = lam * d
        delta = reg_j * (w[j] * z + 0.5 * z * z)
        for k in range(start, end):
            i, x = _entry(k, is_bias, rows, vals, bias)
            bi = b[i]
            nb = bi - z * y[i] * x
            if nb > 0.0:
                delta += C[i] * nb * nb
            if bi > 0.0:
                delta -= C[i] * bi * bi
        evals += 1
        if delta <= -SIGMA * z * z:
            break
        lam *= BETA
    z = lam * d
    w[j] += z
    for k in range(start, end):
        i, x = _entry(k, is_bias, rows, vals, bias)
        b[i] -= z * y[i] * x
    return Dp, evals


@njit(cache=True, nogil=True)
def primal_cd_l2svc(colptr, rows, vals, n_features, bias, y, C, regularize_bias, tol_rel,
                    max_iter, online, max_updates, seed, w, ctrl_c):
    """Runs in place on `w` (the starting point: zeros or a warm start).

    Returns (outer iterations or windows of n updates, updates, converged, line-search
    function evaluations, ||grad f(0)||, ||grad f(w)|| at the last exact check (-1 if
    none), objective); early, within a coordinate's step, once ctrl_c[0] is set (a
    Ctrl-C: dlinear.threads.stop_flag)."""
    l = len(y)
    n_w = len(w)
    reg = np.ones(n_w)
    if bias >= 0 and not regularize_bias:
        reg[n_features] = 0.0
    # H_j, b = 1 - y * (X w), ||grad f(0)||
    H = np.empty(n_w)
    b = np.ones(l)
    g0 = 0.0
    for j in range(n_w):
        start, end = _column_range(colptr, j, n_features, l)
        h = 0.0
        acc = 0.0
        wj = w[j]
        for k in range(start, end):
            i, x = _entry(k, j == n_features, rows, vals, bias)
            h += C[i] * x * x
            acc += C[i] * y[i] * x
            if wj != 0.0:
                b[i] -= y[i] * x * wj
        H[j] = reg[j] + 2.0 * h
        g0 += 4.0 * acc * acc
    gnorm0 = math.sqrt(g0)
    tol = tol_rel * gnorm0

    state = seed_state(seed)
    perm = np.arange(n_w)
    it = 0
    updates = 0
    evals = 0
    converged = False
    gnorm = -1.0
    if online:
        gsq = 0.0
        window = 0
        while updates < max_updates and n_w > 0:
            if ctrl_c[0]:
                break
            j = rand_below(state, n_w)
            Dp, e = _coordinate_step(j, colptr, rows, vals, n_features, bias, y, C,
                                     reg[j], H[j], w, b)
            evals += e
            gsq += Dp * Dp
            updates += 1
            window += 1
            if window == n_w:
                it += 1
                if math.sqrt(gsq) <= tol:
                    gnorm = _grad_norm(colptr, rows, vals, n_features, bias, y, C, reg, w, b)
                    if gnorm <= tol:
                        converged = True
                        break
                window = 0
                gsq = 0.0
    else:
        while it < max_iter:
            shuffle_prefix(state, perm, n_w)
            gsq = 0.0
            for s in range(n_w):
                if ctrl_c[0]:
                    break
                j = perm[s]
                Dp, e = _coordinate_step(j, colptr, rows, vals, n_features, bias, y, C,
                                         reg[j], H[j], w, b)
                evals += e
                gsq += Dp * Dp
            if ctrl_c[0]:
                break
            updates += n_w
            it += 1
            if math.sqrt(gsq) <= tol:
                gnorm = _grad_norm(colptr, rows, vals, n_features, bias, y, C, reg, w, b)
                if gnorm <= tol:
                    converged = True
                    break

    v = 0.0
    for j in range(n_w):
        v += 0.5 * reg[j] * w[j] * w[j]
    for i in range(l):
        if b[i] > 0.0:
            v += C[i] * b[i] * b[i]
    return it, updates, converged, evals, gnorm0, gnorm, v
