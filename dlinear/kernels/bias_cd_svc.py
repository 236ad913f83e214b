"""Dual of L2-regularized L1-/L2-loss SVC with a true (unregularized) bias: -s 3 / -s 1
with `-B 1 -R`.

    min_alpha 0.5 alpha^T (Q + D) alpha - e^T alpha,  0 <= alpha_i <= U_i,  y^T alpha = 0,

with Q, D, U as in dual_cd_svc.py but Q_ij = y_i y_j x_i^T x_j over the features only: the
bias b is the multiplier of y^T alpha = 0, not a weight of a constant column. One
variable cannot move under the equality, so each step moves a pair (i, j) along
y_i e_i - y_j e_j, which keeps y^T alpha fixed (Chiu, Lin & Lin, Section 4; the SMO step
of libsvm in the linear case, where a gradient costs O(nnz of a row) through w).

Working set: with I_up = {t: alpha_t < U_t, y_t = +1} u {t: alpha_t > 0, y_t = -1} and
I_low = {t: alpha_t < U_t, y_t = -1} u {t: alpha_t > 0, y_t = +1}, and v_t = -y_t G_t, the
KKT conditions are max_{I_up} v <= min_{I_low} v. Each outer iteration computes every
gradient once (one pass over X; it also gives the stopping test exactly), ranks I_up by
decreasing v and I_low by increasing v, and walks the two rankings together: the k-th
most violating variable of I_up is paired with the k-th of I_low, each variable in at most
one pair per iteration (Joachims' SVMlight selection of a working set from both ends of
the ranking, here solved as a sequence of pairs). The first pair is the maximal violating
pair of libsvm; the later ones are the next most violating, which a single maximal pair
per pass over X (O(nnz(X)) per step in the linear case, as every gradient moves with w)
would reach one pass each. Each pair's gradients are recomputed through w before its
step, so every step is the exact minimiser along its line and never increases the
objective; a pair no longer violating is skipped.

Shrinking (as libsvm's): a variable at a bound that cannot be part of a violating pair
at the current gradients (e.g. alpha_t = 0, y_t = +1, v_t below min_{I_low} v) leaves the
active set; when the active set meets the stop, all gradients are computed again and the
run continues on the whole set unless it meets the stop too.

Stop: max_{I_up} v - min_{I_low} v <= eps, LIBLINEAR's dual rule (max projected gradient -
min projected gradient <= eps) for the problem with the equality constraint: with the
best b the projected gradients G_t + y_t b all lie within eps of each other. b is then the
mean of v over the free variables (libsvm's rule), or the middle of [max_up v, min_low v]
when none is free.
"""
import numpy as np
from numba import njit

from .block_cd_svc import clear_row, dot_and_cross, dot_and_scatter
from .dual_cd_svc import ALPHA, BOUND, QD, Y, dual_objective, init_dual_state
from .sparse_ops import row_axpy, row_dot

INF = np.inf


@njit(cache=True, nogil=True, inline="always")
def _up_low(a, U, y):
    """(in I_up, in I_low): may alpha move so that y alpha grows / shrinks."""
    if y > 0.0:
        return a < U, a > 0.0
    return a > 0.0, a < U


@njit(cache=True, nogil=True)
def bias_dual_cd_svc(indptr, indices, data, n_features, y, C, l2_loss, eps, max_iter, w,
                     alpha):
    """Solves from `alpha` (a feasible warm start: 0 <= alpha <= U, y^T alpha = 0, e.g.
    zeros, or the solution at another C made feasible by `feasible_warm_start`), which
    receives the solution. w (length >= n_features) receives sum_i alpha_i y_i x_i in its
    first n_features entries. b needs no warm start: each iteration derives it from the
    gradients at alpha.

    Returns (iterations, pair steps, bias b, dual objective, alpha, shrinking restarts)."""
    l = len(indptr) - 1
    inst, index, n = init_dual_state(indptr, indices, data, n_features, -1.0, y, C,
                                     l2_loss, alpha, w)
    buf = np.zeros(n_features)          # x_i scattered while x_i^T x_j is formed
    v = np.empty(l)                     # -y_t G_t at the start of the iteration
    up = np.empty(n, dtype=np.int64)
    low = np.empty(n, dtype=np.int64)
    used = np.zeros(l, dtype=np.bool_)
    touched = np.empty(n, dtype=np.int64)

    it = 0
    steps = 0
    restarts = 0
    active = n
    b = 0.0
    while True:
        # the active variables' gradients, the KKT gap and libsvm's b, in one pass
        m_up = -INF
        M_low = INF
        free_sum = 0.0
        n_free = 0
        for s in range(active):
            i = index[s]
            a = inst[i, ALPHA]
            yi = inst[i, Y]
            U = INF if l2_loss else inst[i, BOUND]
            Di = inst[i, BOUND] if l2_loss else 0.0
            G = yi * row_dot(w, indptr, indices, data, i, n_features, -1.0) - 1.0 + a * Di
            vi = -yi * G
            v[i] = vi
            is_up, is_low = _up_low(a, U, yi)
            if is_up and vi > m_up:
                m_up = vi
            if is_low and vi < M_low:
                M_low = vi
            if is_up and is_low:
                free_sum += vi
                n_free += 1
        if n_free > 0:
            b = free_sum / n_free
        elif m_up > -INF and M_low < INF:
            b = 0.5 * (m_up + M_low)
        elif m_up > -INF:
            b = m_up
        elif M_low < INF:
            b = M_low
        if m_up - M_low <= eps or it >= max_iter:
            if active == n:
                break
            # confirm on the whole set (and take b from it) before stopping
            active = n
            restarts += 1
            continue

        # shrinking: a variable at a bound that is in only one of I_up / I_low and on the
        # wrong side of the other set's extreme cannot join a violating pair now; it is
        # left out until the active set converges (then everything is checked again)
        s = 0
        while s < active:
            i = index[s]
            is_up, is_low = _up_low(inst[i, ALPHA], INF if l2_loss else inst[i, BOUND],
                                    inst[i, Y])
            if (is_up and not is_low and v[i] < M_low) or \
                    (is_low and not is_up and v[i] > m_up) or (not is_up and not is_low):
                active -= 1
                index[s], index[active] = index[active], index[s]
                continue
            s += 1

        # the violators of each side, most violating first
        n_up = 0
        n_low = 0
        for s in range(active):
            i = index[s]
            is_up, is_low = _up_low(inst[i, ALPHA], INF if l2_loss else inst[i, BOUND],
                                    inst[i, Y])
            if is_up and v[i] > M_low:
                up[n_up] = i
                n_up += 1
            if is_low and v[i] < m_up:
                low[n_low] = i
                n_low += 1
        up_order = np.argsort(-v[up[:n_up]], kind="mergesort")
        low_order = np.argsort(v[low[:n_low]], kind="mergesort")

        n_touched = 0
        p = 0
        q = 0
        while p < n_up and q < n_low:
            i = up[up_order[p]]
            if used[i]:
                p += 1
                continue
            j = low[low_order[q]]
            if used[j] or j == i:
                q += 1
                continue
            if v[i] - v[j] <= 0.0:      # no violating pair left by this iteration's ranking
                break
            p += 1
            q += 1
            used[i] = True
            used[j] = True
            touched[n_touched] = i
            touched[n_touched + 1] = j
            n_touched += 2

            yi = inst[i, Y]
            yj = inst[j, Y]
            ai = inst[i, ALPHA]
            aj = inst[j, ALPHA]
            Ui = INF if l2_loss else inst[i, BOUND]
            Uj = INF if l2_loss else inst[j, BOUND]
            Di = inst[i, BOUND] if l2_loss else 0.0
            Dj = inst[j, BOUND] if l2_loss else 0.0
            wxi = dot_and_scatter(w, indptr, indices, data, i, n_features, -1.0, buf)
            wxj, xixj = dot_and_cross(w, indptr, indices, data, j, n_features, -1.0, buf)
            clear_row(indptr, indices, i, buf)
            # fresh violation (-y_i G_i) - (-y_j G_j): the slope of -f along the pair's line
            viol = (-yi * (yi * wxi - 1.0 + ai * Di)) - (-yj * (yj * wxj - 1.0 + aj * Dj))
            if viol <= 1e-12:
                continue
            # alpha_i += y_i t, alpha_j -= y_j t, t in [0, t_max]
            t_max_i = Ui - ai if yi > 0.0 else ai
            t_max_j = aj if yj > 0.0 else Uj - aj
            t_max = min(t_max_i, t_max_j)
            curvature = inst[i, QD] + inst[j, QD] - 2.0 * xixj
            if curvature > 0.0:
                t = min(viol / curvature, t_max)
            else:                     # linear along the line (L1 loss, x_i = x_j)
                t = t_max
            if not (t > 0.0) or t == INF:
                continue
            ni = ai + yi * t
            nj = aj - yj * t
            # land exactly on the bounds, so the sets I_up / I_low see them
            if t == t_max_i:
                ni = Ui if yi > 0.0 else 0.0
            if t == t_max_j:
                nj = 0.0 if yj > 0.0 else Uj
            ni = min(max(ni, 0.0), Ui)
            nj = min(max(nj, 0.0), Uj)
            inst[i, ALPHA] = ni
            inst[j, ALPHA] = nj
            row_axpy((ni - ai) * yi, indptr, indices, data, i, w, n_features, -1.0)
            row_axpy((nj - aj) * yj, indptr, indices, data, j, w, n_features, -1.0)
            steps += 1
        for k in range(n_touched):
            used[touched[k]] = False
        it += 1

    obj = dual_objective(w[:n_features], inst, l2_loss, alpha)
    return it, steps, b, obj, alpha, restarts
