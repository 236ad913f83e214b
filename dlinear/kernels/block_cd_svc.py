"""Two-variable block dual coordinate descent for L2-regularized L1-/L2-loss SVC.

The dual of -s 3 / -s 1 (see dual_cd_svc.py),

    min_alpha 0.5 alpha^T (Q + D) alpha - e^T alpha,  0 <= alpha_i <= U_i,

updated two variables at a time (Chiu, Lin & Lin, "Two-variable block dual coordinate
descent methods for large-scale linear SVM"). Each outer iteration permutes the active
set at random and walks it in consecutive pairs (i, j); a pair's sub-problem is the 2-D
box-constrained QP

    min_d 0.5 d^T B d + g^T d,   -alpha_k <= d_k <= U_k - alpha_k  (k = i, j),
    B = [[Qbar_ii, Qbar_ij], [Qbar_ij, Qbar_jj]],  Qbar = Q + D,  g = gradient at alpha,

solved exactly (see `solve_pair`). Shrinking, the projected-gradient bounds and the stop
(max PG - min PG <= eps with both within eps, confirmed on the whole set) are those of
the one-variable solver, applied to each variable of a pair separately. An odd variable
left at the end of the active set gets a one-variable step. The only extra work per pair
over two one-variable steps is x_i^T x_j: x_i is scattered into a dense scratch vector
while w^T x_i is computed, so the cross term is one more multiply-add in the loop of
w^T x_j, and the scratch is cleared after the pair.
"""
import numpy as np
from numba import njit

from .rng import seed_state, shuffle_prefix
from .dual_cd_svc import (ALPHA, QD, Y, dual_objective, end_of_sweep, gradient_parts,
                          init_dual_state, one_variable_step, projected_gradient)
from .sparse_ops import prefetch_visit, row_axpy

INF = np.inf
# det(B) <= SINGULAR_RTOL * B_ii * B_jj: B is treated as singular (x_i, x_j parallel)
SINGULAR_RTOL = 1e-10


@njit(cache=True, nogil=True, inline="always")
def dot_and_scatter(w, indptr, indices, data, i, n_features, bias, buf):
    """w^T x_i, leaving x_i scattered into the all-zero scratch vector `buf`."""
    s = 0.0
    for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
        c = np.uint64(indices[k])
        v = data[k]
        s += w[c] * v
        buf[c] = v
    if bias >= 0:
        s += w[n_features] * bias
    return s


@njit(cache=True, nogil=True, inline="always")
def dot_and_cross(w, indptr, indices, data, j, n_features, bias, buf):
    """(w^T x_j, x_i^T x_j) with x_i scattered in `buf`: the cross term costs one more
    multiply-add in the gradient's loop instead of a merge of two sorted rows."""
    s = 0.0
    q = 0.0
    for k in range(np.uint64(indptr[j]), np.uint64(indptr[j + 1])):
        c = np.uint64(indices[k])
        v = data[k]
        s += w[c] * v
        q += buf[c] * v
    if bias >= 0:
        s += w[n_features] * bias
        q += bias * bias
    return s, q


@njit(cache=True, nogil=True, inline="always")
def clear_row(indptr, indices, i, buf):
    for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
        buf[np.uint64(indices[k])] = 0.0


@njit(cache=True, nogil=True, inline="always")
def axpy_and_clear(a, indptr, indices, data, i, w, n_features, bias, buf):
    """w += a x_i, zeroing x_i's entries of `buf` in the same loop (saves a pass)."""
    for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
        c = np.uint64(indices[k])
        w[c] += a * data[k]
        buf[c] = 0.0
    if bias >= 0:
        w[n_features] += a * bias


@njit(cache=True, nogil=True)
def min_1d(q, c, lo, hi):
    """argmin of 0.5 q t^2 + c t over [lo, hi] (lo <= 0 <= hi, hi may be inf).
    q == 0 (an empty row under L1 loss): the function is linear; 0/0 guard."""
    if q > 0.0:
        t = -c / q
    elif c > 0.0:
        t = lo
    elif c < 0.0:
        t = hi
    else:
        t = 0.0
    if t < lo:
        t = lo
    if t > hi:
        t = hi
    if not np.isfinite(t):   # unbounded linear piece (cannot happen with finite U)
        t = 0.0
    return t


@njit(cache=True, nogil=True)
def pair_value(a, b, c, gi, gj, di, dj):
    return 0.5 * (a * di * di + 2.0 * c * di * dj + b * dj * dj) + gi * di + gj * dj


@njit(cache=True, nogil=True)
def solve_pair(a, b, c, gi, gj, lo_i, hi_i, lo_j, hi_j):
    """Exact minimiser (d_i, d_j) of 0.5 [a d_i^2 + 2 c d_i d_j + b d_j^2] + g_i d_i + g_j d_j
    over the box [lo_i, hi_i] x [lo_j, hi_j] (which contains 0; hi may be inf).

    Nonsingular B: the unconstrained Newton point -B^{-1} g; if it is outside the box,
    the optimum lies on an edge where a bound it violates is active (the segment from the
    optimum to the Newton point is a descent direction, so it must leave the box through
    an active bound). One violated bound: fix that variable there and minimise the other
    in 1-D with clipping. Both violated: try the first edge and accept it if the gradient
    of the fixed variable points out of the box there (the boundary test: a KKT point of
    a convex problem is optimal); else the optimum is on the second edge.

    Singular B (det ~ 0, i.e. x_i and x_j parallel, or an empty row, with L1 loss; the
    0/0 guard): no Newton point. The minimum is then attained on the boundary (finite
    box), so each edge is minimised in 1-D and the best is taken; the two one-variable
    steps are candidates too, so the result never increases the objective."""
    det = a * b - c * c
    if a > 0.0 and b > 0.0 and det > SINGULAR_RTOL * a * b:
        di = (c * gj - b * gi) / det
        dj = (c * gi - a * gj) / det
        out_i = di < lo_i or di > hi_i
        out_j = dj < lo_j or dj > hi_j
        if not out_i and not out_j:
            return di, dj
        if out_i:
            fi = lo_i if di < lo_i else hi_i
            fj_if = min_1d(b, gj + c * fi, lo_j, hi_j)
            if not out_j:
                return fi, fj_if
            # boundary test on edge d_i = fi: gradient of d_i must point outwards
            gri = a * fi + c * fj_if + gi
            if (fi == lo_i and gri >= 0.0) or (fi == hi_i and gri <= 0.0):
                return fi, fj_if
        fj = lo_j if dj < lo_j else hi_j
        return min_1d(a, gi + c * fj, lo_i, hi_i), fj

    # singular: best of the edges and of the two single-variable steps
    fi = 0.0
    fj = 0.0
    best_i = min_1d(a, gi, lo_i, hi_i)
    best_j = 0.0
    best_v = pair_value(a, b, c, gi, gj, best_i, best_j)
    t = min_1d(b, gj, lo_j, hi_j)
    v = pair_value(a, b, c, gi, gj, 0.0, t)
    if v < best_v:
        best_i, best_j, best_v = 0.0, t, v
    for side in range(4):
        if side == 0:
            fi = lo_i
        elif side == 1:
            fi = hi_i
        elif side == 2:
            fj = lo_j
        else:
            fj = hi_j
        if side < 2:
            if not np.isfinite(fi):
                continue
            fj = min_1d(b, gj + c * fi, lo_j, hi_j)
        else:
            if not np.isfinite(fj):
                continue
            fi = min_1d(a, gi + c * fj, lo_i, hi_i)
        v = pair_value(a, b, c, gi, gj, fi, fj)
        if v < best_v:
            best_i, best_j, best_v = fi, fj, v
    return best_i, best_j


# Per-instance state packed in one 32-byte record, as in dual_cd_svc.py: a pair visited in
# random order costs two cache misses instead of two per array.


@njit(cache=True, nogil=True)
def block_cd_svc(indptr, indices, data, n_features, bias, y, C, l2_loss, eps, max_iter,
                 seed, alpha, w, ctrl_c, shrinking, trace):
    """Runs the solver in place on `alpha` (warm start; zeros for a cold one) and `w`
    (set to sum_i alpha_i y_i x_i first). Inputs are never written. Instances with
    C_i <= 0 (zero instance weight) take no part: their alpha_i is 0. `shrinking` and
    `trace` as in dual_cd_svc (a CD step here is a pair's sub-problem, or a single
    variable's when it has no partner).

    Returns (iterations, final active-set size, shrinking restarts, pair updates,
    objective); early, within a pair's step, once ctrl_c[0] is set (a Ctrl-C:
    dlinear.threads.stop_flag)."""
    inst, index, n = init_dual_state(indptr, indices, data, n_features, bias, y, C,
                                     l2_loss, alpha, w)
    buf = np.zeros(n_features)     # scratch holding x_i while x_i^T x_j is formed

    state = seed_state(seed)
    active_size = n
    PGmax_old = INF
    PGmin_old = -INF
    it = 0
    restarts = 0
    pairs = 0
    steps = 0
    while it < max_iter and n > 0:
        PGmax_new = -INF
        PGmin_new = INF
        shuffle_prefix(state, index, active_size)

        s = 0
        while s < active_size:
            if ctrl_c[0]:
                break
            prefetch_visit(index, s, active_size, indptr, indices, data, inst)
            # first variable of the pair: index[s]
            i = index[s]
            yi = inst[i, Y]
            ai, Di, Ui = gradient_parts(inst, i, l2_loss)
            Gi = (yi * dot_and_scatter(w, indptr, indices, data, i, n_features, bias, buf)
                  - 1.0 + ai * Di)
            PGi, shrink = projected_gradient(Gi, ai, Ui, PGmax_old, PGmin_old)
            if shrink:
                clear_row(indptr, indices, i, buf)
                active_size -= 1
                index[s], index[active_size] = index[active_size], index[s]
                continue
            if PGi > PGmax_new:
                PGmax_new = PGi
            if PGi < PGmin_new:
                PGmin_new = PGi

            # second variable: the next one of the permutation not shrunk now
            have_j = False
            j = -1
            yj = 0.0
            aj = 0.0
            Uj = 0.0
            Gj = 0.0
            PGj = 0.0
            xixj = 0.0
            while s + 1 < active_size:
                j = index[s + 1]
                yj = inst[j, Y]
                aj, Dj, Uj = gradient_parts(inst, j, l2_loss)
                wxj, xixj = dot_and_cross(w, indptr, indices, data, j, n_features, bias, buf)
                Gj = yj * wxj - 1.0 + aj * Dj
                PGj, shrink = projected_gradient(Gj, aj, Uj, PGmax_old, PGmin_old)
                if shrink:
                    active_size -= 1
                    index[s + 1], index[active_size] = index[active_size], index[s + 1]
                    continue
                if PGj > PGmax_new:
                    PGmax_new = PGj
                if PGj < PGmin_new:
                    PGmin_new = PGj
                have_j = True
                break

            # buf holds x_i until x_i's last pass below, which also zeroes it again
            moved_i = False
            if have_j:
                if abs(PGi) > 1.0e-12 or abs(PGj) > 1.0e-12:
                    di, dj = solve_pair(inst[i, QD], inst[j, QD], yi * yj * xixj, Gi, Gj,
                                        -ai, Ui - ai, -aj, Uj - aj)
                    # land exactly on the bounds so shrinking recognises them
                    ni = ai + di
                    if ni < 0.0 or di == -ai:
                        ni = 0.0
                    if ni > Ui or di == Ui - ai:
                        ni = Ui
                    nj = aj + dj
                    if nj < 0.0 or dj == -aj:
                        nj = 0.0
                    if nj > Uj or dj == Uj - aj:
                        nj = Uj
                    inst[i, ALPHA] = ni
                    inst[j, ALPHA] = nj
                    if ni != ai:
                        axpy_and_clear((ni - ai) * yi, indptr, indices, data, i, w,
                                       n_features, bias, buf)
                        moved_i = True
                    if nj != aj:
                        row_axpy((nj - aj) * yj, indptr, indices, data, j, w, n_features, bias)
                    pairs += 1
                s += 2
            else:
                if abs(PGi) > 1.0e-12:
                    a = one_variable_step(ai, Gi, inst[i, QD], Ui)
                    inst[i, ALPHA] = a
                    axpy_and_clear((a - ai) * yi, indptr, indices, data, i, w, n_features,
                                   bias, buf)
                    moved_i = True
                s += 1
            if not moved_i:
                clear_row(indptr, indices, i, buf)     # buf is all zero again
            steps += 1

        if ctrl_c[0]:
            break
        if it < trace.shape[0]:
            trace[it, 0] = steps
            trace[it, 1] = dual_objective(w, inst, l2_loss, alpha)
        it += 1
        stop, restart, PGmax_old, PGmin_old = end_of_sweep(PGmax_new, PGmin_new, eps,
                                                           active_size, n)
        if not shrinking:
            PGmax_old = INF
            PGmin_old = -INF
        if stop:
            break
        if restart:
            active_size = n
            restarts += 1

    return it, active_size, restarts, pairs, dual_objective(w, inst, l2_loss, alpha)
