"""-s 6, L1-regularized (and elastic-net) logistic regression by newGLMNET, on CSC arrays.

X comes by columns as in l1r_cd.py (the `-B` bias an explicit last column), with a
per-instance C_i; `unreg_bias` is LIBLINEAR's -R.

-s 6, L1-regularized logistic regression:  min_w ||w||_1 + sum_i C_i log(1 + exp(-y_i w.x_i)).
    newGLMNET (Yuan, Ho and Lin 2012), as LIBLINEAR 2.x: at each outer (Newton) iteration
    the loss is replaced by its second-order model around w with a diagonal shift
    nu = 1e-12 in the Hessian; that L1-regularized quadratic is minimised approximately by
    coordinate descent on the direction (wpd = w + d, steps clipped to [-10, 10], with the
    quantity X d kept up to date), with inner shrinking and an inner stop sum |violation| <=
    inner_eps * (initial outer sum), inner_eps starting at 1 and divided by 4 whenever an
    inner solve finishes in one pass, at most 1000 inner passes. The direction is then
    accepted by an Armijo line search on the true objective (sigma = 0.01, step halved up
    to 20 times) using exp(w.x) products so no logarithm of a margin is recomputed from
    scratch. Outer shrinking uses the previous outer iteration's largest violation; the
    outer stop is the same relative rule as -s 5, at most 100 Newton iterations.

Elastic net (dlinear; LIBLINEAR has none), with rho = l1_ratio in [0, 1]:
    min_w rho ||w||_1 + (1 - rho)/2 ||w||^2 + sum_i C_i log(1 + exp(-y_i w.x_i)),
    the -R bias in neither term. The L2 part is smooth, so it joins the loss in the
    quadratic model: its gradient (1 - rho) w_j is added to each Grad_j and its exact
    curvature (1 - rho) to each Hessian diagonal (beside nu), and the one-variable steps,
    violations and shrinking use the L1 weight rho instead of 1. The line search's
    Armijo test compares the true objective (with both terms) to sigma times delta =
    Grad.d + rho (||w + d||_1 - ||w||_1), as in Tseng and Yun's rule that newGLMNET
    follows. rho = 1 is LIBLINEAR's -s 6 operation for operation (every added term is
    skipped or is an exact 0), so its models stay bit-identical; rho = 0 is pure L2,
    which the same iterations solve (no weight is ever shrunk).
"""
import numpy as np
from numba import njit

from .l1r_cd import INF, l1_newton_step, l1_violation, own_entries
from .rng import seed_state, shuffle_prefix
from .spin import combined, combined_unless_stopped

D, TAU = 0, 1      # fields of the gradient pass's per-row records
XTD = 1            # the CD passes' records: (D, XTD)


@njit(cache=True, nogil=True, inline="always")
def _sq_norm_change(wpd, w, n):
    """||wpd||^2 - ||w||^2 over the first n weights, as sum (wpd - w)(wpd + w): accurate
    when the step is small, where the difference of the two norms would cancel."""
    acc = 0.0
    for j in range(n):
        acc += (wpd[j] - w[j]) * (wpd[j] + w[j])
    return acc


@njit(cache=True, nogil=True)
def negative_rows_column_sums(indptr, indices, data, y, C, n_features, bias):
    """sum_{i: y_i = -1} C_i x_ij for each column j of CSR X (the bias column last when
    bias >= 0), the gradient's constant part. Rows are added in ascending order, the order
    a walk down a CSC column adds them, so the sums are a column walk's bit for bit; the
    walk over rows reads y and C in order and adds into n_features sums that stay in
    cache, where a column walk gathers y and C at random."""
    l = len(indptr) - 1
    sums = np.zeros(n_features + (1 if bias >= 0 else 0))
    for i in range(l):
        if y[i] != -1.0:
            continue
        c = C[i]
        for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            sums[np.uint64(indices[k])] += c * data[k]
        if bias >= 0:
            sums[n_features] += c * bias
    return sums


# The scalars a Newton iteration hands to the next (newton_state's array)
GMAX_OLD, GNORM1_INIT, INNER_EPS, W_NORM, INNER_CAPPED, FAILED_SEARCHES = range(6)


@njit(cache=True, nogil=True)
def newton_setup(y, C, w_size):
    """The solver's arrays at w = 0: (index, Hdiag, Grad, wpd, exp_wTx, exp_wTx_new,
    grad_rec, cd_rec, scalars). The per-row quantities the column loops gather are in
    16-byte records holding what one loop reads: (D_i, tau_i) for the gradient pass,
    (D_i, (X d)_i) for the CD passes (D_i kept in both). A row met in a column costs one
    cache miss, not one per array, and a loop's records take half the cache lines of one
    32-byte record."""
    l = len(y)
    index = np.arange(w_size)
    Hdiag = np.zeros(w_size)
    Grad = np.zeros(w_size)
    wpd = np.zeros(w_size)
    exp_wTx = np.zeros(l)
    exp_wTx_new = np.empty(l)
    grad_rec = np.zeros((l, 2))
    cd_rec = np.zeros((l, 2))
    # w starts at 0, so exp(w.x_i) = 1 without a pass over X
    for i in range(l):
        e = np.exp(exp_wTx[i])
        exp_wTx[i] = e
        tau_tmp = 1.0 / (1.0 + e)
        grad_rec[i, TAU] = C[i] * tau_tmp
        grad_rec[i, D] = cd_rec[i, D] = C[i] * e * tau_tmp * tau_tmp
    scalars = np.zeros(6)
    scalars[GMAX_OLD] = INF
    scalars[GNORM1_INIT] = -1.0
    scalars[INNER_EPS] = 1.0
    return index, Hdiag, Grad, wpd, exp_wTx, exp_wTx_new, grad_rec, cd_rec, scalars


@njit(cache=True, nogil=True)
def gradient_columns(col_ptr, row_ind, vals, grad_rec, xjneg_sum, w, l2, last_penalized,
                     j0, j1, Hdiag, Grad):
    """The Hessian diagonal (with nu and the L2 curvature) and the gradient of the loss
    (with the L2 term) of columns [j0, j1): each column's own, so column ranges can run
    on threads and give the same numbers."""
    nu = 1e-12
    for j in range(j0, j1):
        l2j = l2 if j < last_penalized else 0.0
        h = nu + l2j
        tmp = 0.0
        for k in range(np.uint64(col_ptr[j]), np.uint64(col_ptr[j + 1])):
            r = np.uint64(row_ind[k])
            v = vals[k]
            h += v * v * grad_rec[r, D]
            tmp += v * grad_rec[r, TAU]
        Hdiag[j] = h
        g = -tmp + xjneg_sum[j]
        if l2j != 0.0:
            g += l2j * w[j]
        Grad[j] = g


@njit(cache=True, nogil=True)
def newton_step(col_ptr, row_ind, vals, y, C, unreg_bias, l1_ratio, eps, max_inner_iter,
                first, rng, w, index, Hdiag, Grad, wpd, exp_wTx, exp_wTx_new, grad_rec,
                cd_rec, scalars, t, starts, row_bounds, partials, arrivals, ctrl_c):
    """One Newton iteration after gradient_columns of every column (w, the arrays and
    the scalars updated): the outer shrinking and stopping test, coordinate descent on
    the quadratic model, the line search. Returns the CD passes, or -1 when the outer
    stop is met (nothing changed then), or -2 once ctrl_c[0] is set (a Ctrl-C:
    dlinear.threads.stop_flag): every part returns before its next column's CD step, the
    iteration unfinished (its caller raises KeyboardInterrupt).

    As part t of len(row_bounds) - 1 parts that run at once on as many threads (as
    l1r_cd.l1r_l2_svc's): each part takes every step on the entries and rows of its rows
    [row_bounds[t], row_bounds[t + 1]), writing only those rows of the per-row arrays
    (exp_wTx, exp_wTx_new, grad_rec, cd_rec), and its own rng, w, index, wpd and
    scalars; the sums the steps decide on are combined in part order at meetings counted
    from 0 (arrivals zeroed before the call). One part (t = 0, row_bounds = [0, l],
    starts empty) is the serial iteration."""
    w_size = len(col_ptr) - 1
    n_parts = len(row_bounds) - 1
    row_lo = row_bounds[t]
    row_hi = row_bounds[t + 1]
    l = row_bounds[n_parts]
    meeting = 0
    nu = 1e-12
    sigma = 0.01
    max_num_linesearch = 20
    l1 = l1_ratio                  # weight of ||w||_1
    l2 = 1.0 - l1_ratio            # weight of ||w||^2 / 2
    half_l2 = 0.5 * l2
    last_penalized = w_size - 1 if unreg_bias else w_size
    Gmax_old = scalars[GMAX_OLD]
    w_norm = scalars[W_NORM]

    Gmax_new = 0.0
    Gnorm1_new = 0.0
    active_size = w_size
    s = 0
    while s < active_size:
        j = index[s]
        violation, shrink = l1_violation(Grad[j], w[j], unreg_bias and j == w_size - 1,
                                          Gmax_old / l, l1)
        if shrink:                                              # outer shrinking
            active_size -= 1
            index[s], index[active_size] = index[active_size], index[s]
            continue
        if violation > Gmax_new:
            Gmax_new = violation
        Gnorm1_new += violation
        s += 1

    if first and scalars[GNORM1_INIT] < 0.0:    # else a warm start's, at w = 0
        scalars[GNORM1_INIT] = Gnorm1_new
    Gnorm1_init = scalars[GNORM1_INIT]
    if Gnorm1_new <= eps * Gnorm1_init:
        return -1

    # coordinate descent on the quadratic model, over wpd = w + d
    inner_eps = scalars[INNER_EPS]
    it = 0
    QP_Gmax_old = INF
    QP_active_size = active_size
    for i in range(row_lo, row_hi):
        cd_rec[i, XTD] = 0.0
    while it < max_inner_iter:
        QP_Gmax_new = 0.0
        QP_Gnorm1_new = 0.0
        shuffle_prefix(rng, index, QP_active_size)

        s = 0
        while s < QP_active_size:
            j = index[s]
            H = Hdiag[j]
            # the model's diagonal shift: nu, plus the L2 term's curvature
            shift = nu + (l2 if j < last_penalized else 0.0)
            # part 0 adds its entries after the column's own terms (the serial order)
            G = Grad[j] + (wpd[j] - w[j]) * shift if t == 0 else 0.0
            lo, hi = own_entries(col_ptr, starts, t, n_parts, j)
            for k in range(lo, hi):
                r = np.uint64(row_ind[k])
                G += vals[k] * cd_rec[r, D] * cd_rec[r, XTD]
            G, _, interrupted = combined_unless_stopped(partials, arrivals, t, n_parts,
                                                        meeting, G, 0.0, ctrl_c)
            meeting += 1
            if interrupted:
                return -2

            free = unreg_bias and j == w_size - 1
            violation, shrink = l1_violation(G, wpd[j], free, QP_Gmax_old / l, l1)
            if shrink:                                          # inner shrinking
                QP_active_size -= 1
                index[s], index[QP_active_size] = index[QP_active_size], index[s]
                continue
            z = l1_newton_step(G, H, wpd[j], free, l1)
            if violation > QP_Gmax_new:
                QP_Gmax_new = violation
            QP_Gnorm1_new += violation

            if abs(z) < 1.0e-12:
                s += 1
                continue
            z = min(max(z, -10.0), 10.0)
            wpd[j] += z
            for k in range(lo, hi):
                cd_rec[np.uint64(row_ind[k]), XTD] += z * vals[k]
            s += 1

        it += 1
        if QP_Gnorm1_new <= inner_eps * Gnorm1_init:
            if QP_active_size == active_size:
                break
            QP_active_size = active_size     # reactivate the inner set
            QP_Gmax_old = INF
            continue
        QP_Gmax_old = QP_Gmax_new

    if it >= max_inner_iter:
        scalars[INNER_CAPPED] += 1

    delta = 0.0
    w_norm_new = 0.0
    for j in range(w_size):
        delta += Grad[j] * (wpd[j] - w[j])
        if wpd[j] != 0.0:
            w_norm_new += abs(wpd[j])
    if unreg_bias:
        w_norm_new -= abs(wpd[w_size - 1])
    delta += l1 * (w_norm_new - w_norm)
    sq_change = _sq_norm_change(wpd, w, last_penalized) if l2 != 0.0 else 0.0

    negsum_xTd = 0.0
    for i in range(row_lo, row_hi):
        if y[i] == -1.0:
            negsum_xTd += C[i] * cd_rec[i, XTD]
    negsum_xTd, _ = combined(partials, arrivals, t, n_parts, meeting, negsum_xTd, 0.0)
    meeting += 1

    num_linesearch = 0
    while num_linesearch < max_num_linesearch:
        reg_change = l1 * (w_norm_new - w_norm)
        if l2 != 0.0:
            reg_change += half_l2 * sq_change
        cond = reg_change + negsum_xTd - sigma * delta if t == 0 else 0.0
        for i in range(row_lo, row_hi):
            exp_xTd = np.exp(cd_rec[i, XTD])
            exp_wTx_new[i] = exp_wTx[i] * exp_xTd
            cond += C[i] * np.log((1.0 + exp_wTx_new[i]) / (exp_xTd + exp_wTx_new[i]))
        cond, _ = combined(partials, arrivals, t, n_parts, meeting, cond, 0.0)
        meeting += 1
        if cond <= 0.0:
            w_norm = w_norm_new
            for j in range(w_size):
                w[j] = wpd[j]
            for i in range(row_lo, row_hi):
                e = exp_wTx_new[i]
                exp_wTx[i] = e
                tau_tmp = 1.0 / (1.0 + e)
                grad_rec[i, TAU] = C[i] * tau_tmp
                grad_rec[i, D] = cd_rec[i, D] = C[i] * e * tau_tmp * tau_tmp
            break
        w_norm_new = 0.0
        for j in range(w_size):
            wpd[j] = (w[j] + wpd[j]) * 0.5
            if wpd[j] != 0.0:
                w_norm_new += abs(wpd[j])
        if unreg_bias:
            w_norm_new -= abs(wpd[w_size - 1])
        if l2 != 0.0:
            sq_change = _sq_norm_change(wpd, w, last_penalized)
        delta *= 0.5
        negsum_xTd *= 0.5
        for i in range(row_lo, row_hi):
            cd_rec[i, XTD] *= 0.5
        num_linesearch += 1

    if num_linesearch >= max_num_linesearch:
        # too many halvings: recompute exp(w.x) from w to shed rounding drift
        scalars[FAILED_SEARCHES] += 1
        for i in range(row_lo, row_hi):
            exp_wTx[i] = 0.0
        for j in range(w_size):
            if w[j] == 0.0:
                continue
            lo, hi = own_entries(col_ptr, starts, t, n_parts, j)
            for k in range(lo, hi):
                exp_wTx[np.uint64(row_ind[k])] += w[j] * vals[k]
        for i in range(row_lo, row_hi):
            exp_wTx[i] = np.exp(exp_wTx[i])

    if it == 1:
        scalars[INNER_EPS] = inner_eps * 0.25
    scalars[W_NORM] = w_norm
    scalars[GMAX_OLD] = Gmax_new
    return it


@njit(cache=True, nogil=True)
def objective(y, C, unreg_bias, l1_ratio, w, exp_wTx):
    """(objective at w, non-zero weights), from exp(w.x_i)."""
    l1 = l1_ratio
    l2 = 1.0 - l1_ratio
    w_size = len(w)
    last_penalized = w_size - 1 if unreg_bias else w_size
    v = 0.0
    nnz = 0
    for j in range(w_size):
        if w[j] != 0.0:
            v += abs(w[j])
            nnz += 1
    if unreg_bias and w_size > 0:
        v -= abs(w[w_size - 1])
    v *= l1
    if l2 != 0.0:
        sq = 0.0
        for j in range(last_penalized):
            sq += w[j] * w[j]
        v += 0.5 * l2 * sq
    for i in range(len(y)):
        if y[i] == 1.0:
            v += C[i] * np.log(1.0 + 1.0 / exp_wTx[i])
        else:
            v += C[i] * np.log(1.0 + exp_wTx[i])
    return v, nnz
