"""Dual coordinate descent for L2-regularized logistic regression (LIBLINEAR -s 7).

    min_alpha 0.5 alpha^T Q alpha
              + sum_i [alpha_i log alpha_i + (C_i - alpha_i) log(C_i - alpha_i)],
    0 < alpha_i < C_i,   Q_ij = y_i y_j x_i^T x_j

Yu, Huang & Lin 2011 (MLJ), Algorithm 5, as LIBLINEAR 2.50 runs it: each pair
(alpha_i, C_i - alpha_i) is kept explicitly so values near either bound keep their
precision; the one-variable sub-problem is minimised in whichever of the two variables
is the smaller side (g_1 or g_2 of the paper) by a safeguarded Newton method (a step
leaving (0, C) is replaced by z <- eta z with eta = 0.1); the inner tolerance starts at
1e-2 and shrinks tenfold (down to min(1e-8, eps)) whenever an outer iteration needed at
most l/10 Newton steps; at most 100 Newton steps per sub-problem. Stop when the largest
|g'(z)| at the current points of the sub-problems of one outer iteration is below eps.
Two differences from LIBLINEAR, both in `one_variable_newton`: its test takes g' where
its Newton starts (0.1 z when the chosen side is the larger), and a Newton that must step
may start nearer the solution, so each sub-problem's solution agrees with LIBLINEAR's to
the inner tolerance rather than to the bit. No shrinking (LIBLINEAR has none for this
solver). C_i is per instance.
"""
import math

import numpy as np
from numba import njit

from .rng import seed_state, shuffle_prefix
from .sparse_ops import prefetch_visit, row_axpy, row_dot, row_sq_norm

MAX_INNER_ITER = 100      # Newton steps per sub-problem
INNER_EPS_START = 1e-2
INNER_EPS_FLOOR = 1e-8    # innereps_min = min(1e-8, eps)
ETA = 0.1                 # step-back factor when a Newton step leaves (0, C)


# Per-instance state packed in one 32-byte record (see dual_cd_svc.py): alpha_i, C_i - alpha_i,
# ||x_i||^2 and y_i C_i (C_i > 0, so y_i and C_i both come back from it).
A1, A2, XTX, YC = 0, 1, 2, 3


@njit(cache=True, nogil=True, inline="always")
def one_variable_newton(a, b, a1, a2, Ci, innereps):
    """The one-variable sub-problem at alpha_i = a1 (C_i - alpha_i = a2), a = its Q_ii,
    b = its linear coefficient y_i x_i.w: minimised over alpha_i (sign +1) or over
    C_i - alpha_i (sign -1), whichever is the smaller side, by the safeguarded Newton
    method. Returns (g'(z_old), the gradient at the current point; the new value of that
    side, sign, Newton steps)."""
    sign = 1.0
    z_old = a1
    if 0.5 * a * (a2 - a1) + b < 0.0:
        sign = -1.0
        z_old = a2
    # g(z) = z log z + (C-z) log(C-z) + a/2 (z - z_old)^2 + sign b (z - z_old)
    z = z_old
    gp = sign * b + math.log(z / (Ci - z))
    first_gp = gp               # g'(z_old): the gradient at the current point
    if Ci - z < 0.5 * Ci:
        # the chosen side is the larger: Newton starts from 0.1 z_old, as LIBLINEAR's
        # does, whose stop measures g' there, not at z_old: a row near alpha = C/2 whose
        # side flips reports |g'| ~ 3.4 however close to its optimum, which holds the
        # largest |g'| of a sweep on a plateau for several sweeps (BENCHMARKS.md,
        # "Against Snap ML (Newton -s 0, -s 2 and dual CD -s 3)")
        z = 0.1 * z
        gp = a * (z - z_old) + sign * b + math.log(z / (Ci - z))
    inner = 0
    if abs(gp) >= innereps:
        # The solution lies between z_old and z0, the zero of the log and linear terms
        # (g'(z0) = a (z0 - z_old)). Where Newton must step, it starts from z0 when |g'|
        # is smaller there and z0 is in (0, C/2], where g' is concave, so the safeguarded
        # steps still converge; the move counts as a step. From LIBLINEAR's start alpha =
        # 1e-8 the first sweep then takes 0.96M steps instead of 5.0M on the rcv1-shaped
        # set (BENCHMARKS.md, "Against Snap ML (Newton -s 0, -s 2 and dual CD -s 3)").
        z0 = Ci / (1.0 + math.exp(sign * b))
        if 0.0 < z0 <= 0.5 * Ci:
            gp0 = a * (z0 - z_old)
            if abs(gp0) < abs(gp):
                z = z0
                gp = gp0
                inner = 1
    while inner <= MAX_INNER_ITER:
        if abs(gp) < innereps:
            break
        gpp = a + Ci / (Ci - z) / z
        tmpz = z - gp / gpp
        if tmpz <= 0.0:
            z *= ETA
        else:
            z = tmpz
        gp = a * (z - z_old) + sign * b + math.log(z / (Ci - z))
        inner += 1
    return first_gp, z, sign, inner


@njit(cache=True, nogil=True, inline="always")
def store_solution(inst, i, z, sign, Ci):
    """Stores z, the solution of instance i's sub-problem, in the member of its pair
    that `sign` names (the other becomes C_i - z); returns alpha_i's change."""
    ind1, ind2 = (A1, A2) if sign > 0.0 else (A2, A1)
    z_old = inst[i, ind1]
    inst[i, ind1] = z
    inst[i, ind2] = Ci - z
    return sign * (z - z_old)


@njit(cache=True, nogil=True, inline="always")
def init_lr_row(inst, r, indptr, indices, data, i, n_features, bias, yi, Ci, warm, w):
    """Record r for CSR row i (C_i > 0) at LIBLINEAR's starting point, or at the warm
    start alpha_i = warm where that is > 0; w += alpha_i y_i x_i."""
    a0 = min(0.001 * Ci, 1e-8)
    if warm > 0.0:
        a0 = warm
    inst[r, A1] = a0
    inst[r, A2] = Ci - a0
    inst[r, XTX] = row_sq_norm(indptr, data, i, bias)
    inst[r, YC] = yi * Ci
    row_axpy(yi * a0, indptr, indices, data, i, w, n_features, bias)


@njit(cache=True, nogil=True, inline="always")
def init_lr_state(indptr, indices, data, n_features, bias, y, C, w, alpha):
    """(inst, index, n): the packed records at LIBLINEAR's starting point, or at the warm
    start alpha[2i] where that is > 0 (inside (0, C_i), dlinear.solvers.dual_start), w of
    it, and in index[:n] the instances with C_i > 0."""
    l = len(indptr) - 1
    inst = np.zeros((l, 4))
    index = np.empty(l, dtype=np.int64)
    for j in range(len(w)):
        w[j] = 0.0
    n = 0                       # instances with C_i > 0, listed first in index
    for i in range(l):
        if C[i] > 0.0:
            init_lr_row(inst, i, indptr, indices, data, i, n_features, bias, y[i], C[i],
                        alpha[2 * i], w)
            index[n] = i
            n += 1
    return inst, index, n


@njit(cache=True, nogil=True, inline="always")
def lr_row_step(inst, r, dot, innereps):
    """Record r's sub-problem at w (dot = x_r.w) solved and stored: returns
    (|g'| at its current point, Newton steps, the coefficient c of w += c x_r)."""
    yc = inst[r, YC]
    yi = 1.0 if yc > 0.0 else -1.0
    Ci = abs(yc)
    first_gp, z, sign, inner = one_variable_newton(inst[r, XTX], yi * dot, inst[r, A1],
                                                   inst[r, A2], Ci, innereps)
    if inner == 0:
        return abs(first_gp), 0, 0.0
    return abs(first_gp), inner, store_solution(inst, r, z, sign, Ci) * yi


@njit(cache=True, nogil=True, inline="always")
def lr_objective(w, inst, C, alpha):
    """The dual objective; copies the packed pairs to `alpha` (2i, 2i+1)."""
    v = 0.0
    for j in range(len(w)):
        v += w[j] * w[j]
    v *= 0.5
    for i in range(inst.shape[0]):
        alpha[2 * i] = inst[i, A1]
        alpha[2 * i + 1] = inst[i, A2]
        if C[i] > 0.0:
            v += (inst[i, A1] * math.log(inst[i, A1]) + inst[i, A2] * math.log(inst[i, A2])
                  - C[i] * math.log(C[i]))
    return v


@njit(cache=True, nogil=True)
def dual_cd_lr(indptr, indices, data, n_features, bias, y, C, eps, max_iter, seed,
               alpha, w, ctrl_c):
    """Runs the solver from the warm start alpha[2i] where > 0 (zeros: LIBLINEAR's start);
    fills `alpha` (length 2l: alpha_i at 2i, C_i - alpha_i at 2i+1)
    and `w` (= sum_i alpha_i y_i x_i). Inputs are never written. Instances with C_i <= 0
    (zero instance weight) take no part: their alpha_i is 0.

    Returns (outer iterations, total inner Newton steps, dual objective); early, within a
    row's step, once ctrl_c[0] is set (a Ctrl-C: dlinear.threads.stop_flag)."""
    inst, index, n = init_lr_state(indptr, indices, data, n_features, bias, y, C, w, alpha)
    innereps = INNER_EPS_START
    innereps_min = min(INNER_EPS_FLOOR, eps)
    state = seed_state(seed)
    it = 0
    total_newton = 0
    while it < max_iter:
        shuffle_prefix(state, index, n)
        newton_iter = 0
        Gmax = 0.0
        for s in range(n):
            if ctrl_c[0]:
                break
            prefetch_visit(index, s, n, indptr, indices, data, inst)
            i = index[s]
            g, inner, coef = lr_row_step(
                inst, i, row_dot(w, indptr, indices, data, i, n_features, bias), innereps)
            if g > Gmax:
                Gmax = g
            newton_iter += inner
            if inner > 0:
                row_axpy(coef, indptr, indices, data, i, w, n_features, bias)
        if ctrl_c[0]:
            break
        it += 1
        total_newton += newton_iter
        if Gmax < eps:
            break
        if newton_iter <= n // 10:
            innereps = max(innereps_min, 0.1 * innereps)

    return it, total_newton, lr_objective(w, inst, C, alpha)
