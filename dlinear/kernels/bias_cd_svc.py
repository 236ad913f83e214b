"""Dual of L2-regularized L1-/L2-loss SVC with a true (unregularized) bias: -s 3 / -s 1
with `-B 1 -R`.

    min_alpha 0.5 alpha^T (Q + D) alpha - e^T alpha,  0 <= alpha_i <= U_i,  y^T alpha = 0,

with Q, D, U as in dual_cd_svc.py but Q_ij = y_i y_j x_i^T x_j over the features only: the
bias b is the multiplier of y^T alpha = 0, not a weight of a constant column. One
variable cannot move under the equality, so each step moves a pair (i, j) along
y_i e_i - y_j e_j, which keeps y^T alpha fixed (Chiu, Lin & Lin, Section 4; the SMO step
of libsvm in the linear case, where a gradient costs O(nnz of a row) through w).

Two phases. First, passes of many pairs: each pass computes every gradient once through
w (O(nnz)), ranks I_up by decreasing v and I_low by increasing v (I_up = {t: alpha_t < U_t,
y_t = +1} u {t: alpha_t > 0, y_t = -1}, I_low = {t: alpha_t < U_t, y_t = -1} u {t: alpha_t
> 0, y_t = +1}, v_t = -y_t G_t; the KKT conditions are max_{I_up} v <= min_{I_low} v) and
pairs the k-th of each ranking (Joachims' SVMlight working set from both ends, solved as a
sequence of pairs), each pair's gradients fresh through w, with libsvm's shrinking. On
sparse data (rcv1) this is fast: a pass costs one product with X and moves hundreds of
pairs. On small dense sets (heart_scale) the ranked pairs stall near the end: when
STALL_PASSES passes in a row have not halved the gap (and a step of it is cheap,
WSS2_MAX_STEP_COST), libsvm's own loop finishes:
the second-order working-set selection (Fan, Chen & Lin, JMLR 2005, "WSS 2"), i =
argmax_{I_up} v and, among t in I_low with v_t < v_i, the j of the largest decrease along
the pair's line, (v_i - v_t)^2 / (Q_ii + Q_tt - 2 x_i^T x_t); every gradient kept up to
date by the kernel columns X x_i and X x_j, formed from X by columns (O(l + the nonzeros
of the columns x_i and x_j touch) a step); libsvm's shrinking every min(l, 1000) steps,
all variables active again (at gradients computed exactly from w) the first time the
gap falls below 10 eps and whenever the active set meets the stop. The run stops only
when the whole set meets the stop at exactly computed gradients.

Iterations ("#iter", capped by --max-iter) are the passes of the first phase, and l pair
steps of the second each.

Stop: max_{I_up} v - min_{I_low} v <= eps, LIBLINEAR's dual rule (max projected gradient -
min projected gradient <= eps) for the problem with the equality constraint: with the
best b the projected gradients G_t + y_t b all lie within eps of each other (libsvm's
rule, with -e for its tolerance). b is then the mean of v over the free variables
(libsvm's rule), or the middle of [max_up v, min_low v] when none is free.
"""
import numpy as np
from numba import njit

from .block_cd_svc import clear_row, dot_and_cross, dot_and_scatter
from .dual_cd_svc import ALPHA, BOUND, QD, Y, dual_objective, init_dual_state
from .sparse_ops import csr_to_csc, prefetch_visit, row_axpy, row_dot

INF = np.inf


@njit(cache=True, nogil=True, inline="always")
def _up_low(a, U, y):
    """(in I_up, in I_low): may alpha move so that y alpha grows / shrinks."""
    if y > 0.0:
        return a < U, a > 0.0
    return a > 0.0, a < U


@njit(cache=True, nogil=True, inline="always")
def _bounds(inst, i, l2_loss):
    """(U_i, D_ii) of variable i."""
    if l2_loss:
        return INF, inst[i, BOUND]
    return inst[i, BOUND], 0.0


@njit(cache=True, nogil=True)
def _exact_gradients(indptr, indices, data, n_features, inst, index, n, l2_loss, w, G):
    """G_t = y_t w^T x_t - 1 + D_tt alpha_t for the variables index[:n]."""
    for s in range(n):
        t = index[s]
        D = inst[t, BOUND] if l2_loss else 0.0
        G[t] = inst[t, Y] * row_dot(w, indptr, indices, data, t, n_features, -1.0) - 1.0 \
            + D * inst[t, ALPHA]


@njit(cache=True, nogil=True)
def _kernel_column(indptr, indices, data, col_ptr, row_ind, col_val, i, K):
    """K[t] = x_t^T x_i for every row t, through the columns x_i has entries in."""
    K[:] = 0.0
    for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
        c = np.uint64(indices[k])
        x = data[k]
        for p in range(np.uint64(col_ptr[c]), np.uint64(col_ptr[c + 1])):
            K[np.uint64(row_ind[p])] += x * col_val[p]


@njit(cache=True, nogil=True)
def _gap_and_bias(inst, index, active, l2_loss, G):
    """(max_{I_up} v, min_{I_low} v, libsvm's b) over the variables index[:active]: b is
    the mean of v over the free variables, else the middle of the two extremes."""
    m_up = -INF
    M_low = INF
    free_sum = 0.0
    n_free = 0
    for s in range(active):
        t = index[s]
        U, D = _bounds(inst, t, l2_loss)
        yt = inst[t, Y]
        vt = -yt * G[t]
        is_up, is_low = _up_low(inst[t, ALPHA], U, yt)
        if is_up and vt > m_up:
            m_up = vt
        if is_low and vt < M_low:
            M_low = vt
        if is_up and is_low:
            free_sum += vt
            n_free += 1
    if n_free > 0:
        b = free_sum / n_free
    elif m_up > -INF and M_low < INF:
        b = 0.5 * (m_up + M_low)
    elif m_up > -INF:
        b = m_up
    elif M_low < INF:
        b = M_low
    else:
        b = 0.0
    return m_up, M_low, b


@njit(cache=True, nogil=True)
def _shrink(inst, index, active, l2_loss, G, m_up, M_low):
    """libsvm's do_shrinking at the extremes m_up, M_low: the new active count."""
    s = 0
    while s < active:
        t = index[s]
        U, D = _bounds(inst, t, l2_loss)
        yt = inst[t, Y]
        vt = -yt * G[t]
        is_up, is_low = _up_low(inst[t, ALPHA], U, yt)
        if (is_up and not is_low and vt < M_low) or (is_low and not is_up and vt > m_up):
            active -= 1
            index[s], index[active] = index[active], index[s]
            continue
        s += 1
    return active


TAU = 1e-12      # libsvm's curvature for a pair whose line is (almost) flat


@njit(cache=True, nogil=True)
def _ranked_pair_passes(indptr, indices, data, n_features, inst, index, n, l2_loss, eps,
                        max_iter, stall, w, ctrl_c):
    """Passes of many pairs each: every gradient computed once a pass (O(nnz)), I_up
    ranked by decreasing v and I_low by increasing v, the k-th of each paired (Joachims'
    SVMlight working set from both ends of the ranking, solved as a sequence of pairs),
    each pair's gradients fresh through w, and the shrinking of a pass. Stops at the
    eps rule on the whole set, after max_iter passes, or when `stall` passes in a row
    did not halve the gap, or early once ctrl_c[0] is set (a Ctrl-C). Returns (passes,
    pair steps, shrinking restarts, converged)."""
    l = len(indptr) - 1
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
    best_gap = INF
    since_best = 0
    while not ctrl_c[0]:
        # the active variables' gradients and the KKT gap, in one pass
        m_up = -INF
        M_low = INF
        for s in range(active):
            prefetch_visit(index, s, active, indptr, indices, data, inst)
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
        gap = m_up - M_low
        if gap <= eps or it >= max_iter:
            if active == n:
                return it, steps, restarts, gap <= eps
            # confirm on the whole set before stopping
            active = n
            restarts += 1
            continue

        if gap < 0.5 * best_gap:
            best_gap = gap
            since_best = 0
        else:
            since_best += 1
            if since_best >= stall:
                return it, steps, restarts, False

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
        while p < n_up and q < n_low and not ctrl_c[0]:
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
    return it, steps, restarts, False


@njit(cache=True, nogil=True)
def _wss2_steps(indptr, indices, data, n_features, inst, index, n, l2_loss, eps, max_steps,
                w, G, ctrl_c):
    """libsvm's loop: a WSS 2 pair a step, every gradient kept in G, shrinking. Stops at
    the eps rule on the whole set at exact gradients, after max_steps steps, or once
    ctrl_c[0] is set (a Ctrl-C). Returns
    (pair steps, whether max_steps ended the run, shrinking restarts)."""
    l = len(indptr) - 1
    col_ptr, row_ind, col_val = csr_to_csc(indptr, indices, data, n_features, -1.0)
    Ki = np.zeros(l)
    Kj = np.zeros(l)
    _exact_gradients(indptr, indices, data, n_features, inst, index, n, l2_loss, w, G)
    shrink_period = max(min(n, 1000), 1)
    counter = shrink_period
    unshrunk = False
    active = n
    steps = 0
    restarts = 0
    while steps < max_steps and not ctrl_c[0]:
        counter -= 1
        if counter == 0:
            counter = shrink_period
            m_up, M_low, b = _gap_and_bias(inst, index, active, l2_loss, G)
            if not unshrunk and m_up - M_low <= 10.0 * eps:
                # near the end: every variable gets a chance again, at exact gradients
                unshrunk = True
                _exact_gradients(indptr, indices, data, n_features, inst, index, n,
                                 l2_loss, w, G)
                active = n
                m_up, M_low, b = _gap_and_bias(inst, index, active, l2_loss, G)
            active = _shrink(inst, index, active, l2_loss, G, m_up, M_low)

        # i: the most violating variable of I_up
        i = -1
        v_i = -INF
        for s in range(active):
            t = index[s]
            U, D = _bounds(inst, t, l2_loss)
            yt = inst[t, Y]
            is_up, is_low = _up_low(inst[t, ALPHA], U, yt)
            if is_up and -yt * G[t] >= v_i:
                v_i = -yt * G[t]
                i = t
        # j: of I_low, the partner that decreases the objective most (second order)
        j = -1
        M_low = INF
        best = INF
        if i >= 0:
            _kernel_column(indptr, indices, data, col_ptr, row_ind, col_val, i, Ki)
            qd_i = inst[i, QD]
            for s in range(active):
                t = index[s]
                U, D = _bounds(inst, t, l2_loss)
                yt = inst[t, Y]
                is_up, is_low = _up_low(inst[t, ALPHA], U, yt)
                if not is_low:
                    continue
                vt = -yt * G[t]
                if vt < M_low:
                    M_low = vt
                diff = v_i - vt
                if diff > 0.0:
                    curvature = qd_i + inst[t, QD] - 2.0 * Ki[t]
                    if curvature <= 0.0:
                        curvature = TAU
                    gain = -diff * diff / curvature
                    if gain <= best:
                        best = gain
                        j = t
        if j < 0 or v_i - M_low <= eps:
            # the active set meets the stop: confirm on the whole set at exact gradients
            _exact_gradients(indptr, indices, data, n_features, inst, index, n, l2_loss,
                             w, G)
            if active == n:
                m_up, M_low, b = _gap_and_bias(inst, index, n, l2_loss, G)
                if m_up - M_low <= eps:
                    break
            else:
                restarts += 1
            active = n
            counter = 2          # select on the whole set first, then shrink (as libsvm)
            continue

        # the step along y_i e_i - y_j e_j: alpha_i += y_i t, alpha_j -= y_j t
        yi = inst[i, Y]
        yj = inst[j, Y]
        ai = inst[i, ALPHA]
        aj = inst[j, ALPHA]
        Ui, Di = _bounds(inst, i, l2_loss)
        Uj, Dj = _bounds(inst, j, l2_loss)
        viol = (-yi * G[i]) - (-yj * G[j])
        t_max_i = Ui - ai if yi > 0.0 else ai
        t_max_j = aj if yj > 0.0 else Uj - aj
        t_max = min(t_max_i, t_max_j)
        curvature = inst[i, QD] + inst[j, QD] - 2.0 * Ki[j]
        if curvature > 0.0:
            step = min(viol / curvature, t_max)
        else:                     # linear along the line (L1 loss, x_i = x_j)
            step = t_max
        steps += 1
        if not (step > 0.0) or step == INF:
            # nothing moves (or an unbounded step, which a feasible dual never takes):
            # exact gradients, and the pair is not chosen again by stale ones
            _exact_gradients(indptr, indices, data, n_features, inst, index, n, l2_loss,
                             w, G)
            continue
        ni = ai + yi * step
        nj = aj - yj * step
        # land exactly on the bounds, so the sets I_up / I_low see them
        if step == t_max_i:
            ni = Ui if yi > 0.0 else 0.0
        if step == t_max_j:
            nj = 0.0 if yj > 0.0 else Uj
        ni = min(max(ni, 0.0), Ui)
        nj = min(max(nj, 0.0), Uj)
        inst[i, ALPHA] = ni
        inst[j, ALPHA] = nj
        di = (ni - ai) * yi
        dj = (nj - aj) * yj
        row_axpy(di, indptr, indices, data, i, w, n_features, -1.0)
        row_axpy(dj, indptr, indices, data, j, w, n_features, -1.0)
        # G_t moves by y_t (di x_i + dj x_j)^T x_t, and by D_tt on the pair itself
        _kernel_column(indptr, indices, data, col_ptr, row_ind, col_val, j, Kj)
        for s in range(active):
            t = index[s]
            G[t] += inst[t, Y] * (di * Ki[t] + dj * Kj[t])
        G[i] += Di * (ni - ai)
        G[j] += Dj * (nj - aj)

    return steps, steps >= max_steps, restarts


@njit(cache=True, nogil=True)
def _wss2_step_cost(indptr, indices, n_features):
    """l + 2 sum_c nnz(c)^2 / l: a WSS 2 step's work for an average pair of rows (a row
    with column c reads that column's nnz(c) entries)."""
    l = len(indptr) - 1
    col_nnz = np.zeros(n_features)
    for k in range(np.uint64(indptr[l])):
        col_nnz[np.uint64(indices[k])] += 1.0
    return l + 2.0 * np.sum(col_nnz * col_nnz) / max(l, 1)


# Passes of ranked pairs without a halving of the gap before the exact WSS 2 takes over,
STALL_PASSES = 30
# where a WSS 2 step costs at most this many multiply-adds: WSS 2 needs thousands of steps,
# which on a large dense set take longer than the passes (dense 10,000 x 20, -s 1 -e 0.1:
# 85 s against 3.4 s).
WSS2_MAX_STEP_COST = 100_000


@njit(cache=True, nogil=True)
def bias_dual_cd_svc(indptr, indices, data, n_features, y, C, l2_loss, eps, max_iter, w,
                     alpha, ctrl_c):
    """Solves from `alpha` (a feasible warm start: 0 <= alpha <= U, y^T alpha = 0, e.g.
    zeros, or the solution at another C made feasible by `feasible_warm_start`), which
    receives the solution. w (length >= n_features) receives sum_i alpha_i y_i x_i in its
    first n_features entries. b needs no warm start: it is derived from the gradients.

    Returns (iterations, pair steps, whether max_iter ended the run, bias b, dual
    objective, alpha, shrinking restarts); early, within a pair's step or a pass, once
    ctrl_c[0] is set (dlinear.threads.stop_flag)."""
    l = len(indptr) - 1
    inst, index, n = init_dual_state(indptr, indices, data, n_features, -1.0, y, C,
                                     l2_loss, alpha, w)
    cheap = _wss2_step_cost(indptr, indices, n_features) <= WSS2_MAX_STEP_COST
    passes, steps, restarts, converged = _ranked_pair_passes(
        indptr, indices, data, n_features, inst, index, n, l2_loss, eps, max_iter,
        STALL_PASSES if cheap else max_iter + 1, w, ctrl_c)
    capped = not converged and passes >= max_iter
    iterations = passes
    G = np.zeros(l)
    if not converged and not capped:
        more, capped, more_restarts = _wss2_steps(
            indptr, indices, data, n_features, inst, index, n, l2_loss, eps,
            (max_iter - passes) * max(n, 1), w, G, ctrl_c)
        iterations += (more + max(n, 1) - 1) // max(n, 1)
        steps += more
        restarts += more_restarts
    _exact_gradients(indptr, indices, data, n_features, inst, index, n, l2_loss, w, G)
    m_up, M_low, b = _gap_and_bias(inst, index, n, l2_loss, G)
    obj = dual_objective(w[:n_features], inst, l2_loss, alpha)
    return iterations, steps, capped, b, obj, alpha, restarts
