"""L1-regularized solvers that walk features (LIBLINEAR -s 5 and -s 6), on CSC arrays.

Both take X by columns (col_ptr int64, row_ind int32, vals float64; the `-B` bias, when
present, is an explicit last column of this copy) and a per-instance C_i (class weight x
instance weight x C). `unreg_bias` is LIBLINEAR's -R: the last weight is not penalised,
never shrunk, and takes a plain Newton step.

-s 5, L1-regularized L2-loss SVC:  min_w ||w||_1 + sum_i C_i max(0, 1 - y_i w.x_i)^2.
    Coordinate descent of Fan et al. 2008, Appendix F (Yuan et al. 2010): for feature j,
    the Newton direction d of the one-variable problem |w_j + d| - |w_j| + G d + H d^2 / 2
    (soft threshold at +-1); a step size 0.5^k chosen by the sufficient-decrease test (27)
    |w_j + d| - |w_j| + L(w + d e_j) - L(w) <= sigma (G d + |w_j + d| - |w_j|), tried first
    through the cheap upper bound (28) sum_i C_i x_ij^2 d^2 + G d + ... <= 0, which needs no
    pass over the data; b_i = 1 - y_i w.x_i is the one array kept (30), updated in place
    while testing a step and rolled forward on acceptance (stored scaled by sqrt(C_i), so
    per-instance C costs no extra memory traffic). Features with w_j = 0 whose
    gradient is strictly inside (-1 + M/l, 1 - M/l) (M the largest violation of the previous
    pass) are shrunk; the stop is sum_j |violation_j| <= eps' * (the same sum at the first
    pass), with LIBLINEAR's eps' = eps * max(min(#pos, #neg), 1) / l (computed by the caller),
    checked again on the whole set after shrinking. sigma = 0.01, 20 step halvings, 1000
    passes, as LIBLINEAR 2.50.

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
"""
import numpy as np
from numba import njit

from .rng import seed_state, shuffle_prefix


@njit(cache=True, nogil=True, inline="always")
def _l1_violation(G, x, free, shrink_bound):
    """(violation, shrink) of weight x whose loss gradient is G, under the L1 term (none
    for the -R bias, `free`): the size of the minimum-norm subgradient, and whether x = 0
    lies so deep inside the subdifferential (|G| < 1 - shrink_bound) that it is shrunk."""
    if free:
        return abs(G), False
    Gp = G + 1.0
    Gn = G - 1.0
    if x == 0.0:
        if Gp < 0.0:
            return -Gp, False
        if Gn > 0.0:
            return Gn, False
        return 0.0, Gp > shrink_bound and Gn < -shrink_bound
    if x > 0.0:
        return abs(Gp), False
    return abs(Gn), False


@njit(cache=True, nogil=True, inline="always")
def _l1_newton_step(G, H, x, free):
    """The minimiser d of G d + H d^2 / 2 + |x + d| (without the |.| when `free`)."""
    if free:
        return -G / H
    if G + 1.0 < H * x:
        return -(G + 1.0) / H
    if G - 1.0 > H * x:
        return -(G - 1.0) / H
    return -x

INF = np.inf
D, TAU, XTD = 0, 1, 2      # fields of -s 6's per-row record


@njit(cache=True, nogil=True)
def l1r_l2_svc(col_ptr, row_ind, vals, y, C, unreg_bias, eps, max_iter, seed, w):
    """-s 5 from w = 0 (w is overwritten). y is +1/-1 per row.

    Returns (passes, objective, non-zero weights, shrinking restarts, b recomputations)."""
    l = len(y)
    w_size = len(col_ptr) - 1
    sigma = 0.01
    max_num_linesearch = 20
    # Everything is scaled by sqrt(C_i): yx = sqrt(C_i) y_i x_ij and b_i = sqrt(C_i) (1 -
    # y_i w.x_i), so C_i max(0, 1 - y_i w.x_i)^2 = max(0, b_i)^2 and the column loops read
    # b and yx only (no random access into C; C_i = 0 leaves b_i = 0, contributing nothing).
    sqrtC = np.sqrt(C)
    yx = np.empty(col_ptr[w_size])
    b = sqrtC.copy()
    xj_sq = np.empty(w_size)               # sum_i C_i x_ij^2: the curvature bound of (28)
    index = np.empty(w_size, dtype=np.int64)
    for j in range(w_size):
        w[j] = 0.0
        index[j] = j
        acc = 0.0
        for k in range(np.uint64(col_ptr[j]), np.uint64(col_ptr[j + 1])):
            r = np.uint64(row_ind[k])
            v = vals[k] * y[r] * sqrtC[r]
            yx[k] = v
            acc += v * v
        xj_sq[j] = acc

    state = seed_state(seed)
    Gmax_old = INF
    Gnorm1_init = -1.0
    active_size = w_size
    it = 0
    restarts = 0
    recomputes = 0
    while it < max_iter:
        Gmax_new = 0.0
        Gnorm1_new = 0.0
        shuffle_prefix(state, index, active_size)

        s = 0
        while s < active_size:
            j = index[s]
            G_loss = 0.0
            H = 0.0
            for k in range(np.uint64(col_ptr[j]), np.uint64(col_ptr[j + 1])):
                r = np.uint64(row_ind[k])
                br = b[r]
                if br > 0.0:
                    v = yx[k]
                    G_loss -= v * br
                    H += v * v
            G_loss *= 2.0
            G = G_loss
            H *= 2.0
            if H < 1e-12:
                H = 1e-12

            free = unreg_bias and j == w_size - 1
            wj = w[j]
            violation, shrink = _l1_violation(G, wj, free, Gmax_old / l)
            if shrink:
                active_size -= 1
                index[s], index[active_size] = index[active_size], index[s]
                continue
            if violation > Gmax_new:
                Gmax_new = violation
            Gnorm1_new += violation

            # Newton direction of the one-variable problem
            d = _l1_newton_step(G, H, wj, free)

            if abs(d) < 1.0e-12:
                s += 1
                continue

            if free:
                delta = G * d
            else:
                delta = abs(wj + d) - abs(wj) + G * d
            d_old = 0.0
            loss_old = 0.0
            num_linesearch = 0
            while num_linesearch < max_num_linesearch:
                d_diff = d_old - d
                if free:
                    cond = -sigma * delta
                else:
                    cond = abs(wj + d) - abs(wj) - sigma * delta
                # (28): a bound on the loss change that needs no pass over the column
                appxcond = xj_sq[j] * d * d + G_loss * d + cond
                if appxcond <= 0.0:
                    for k in range(np.uint64(col_ptr[j]), np.uint64(col_ptr[j + 1])):
                        b[np.uint64(row_ind[k])] += d_diff * yx[k]
                    break
                # (27) exactly, moving b to w_j + d as it goes (30)
                loss_new = 0.0
                if num_linesearch == 0:
                    loss_old = 0.0
                    for k in range(np.uint64(col_ptr[j]), np.uint64(col_ptr[j + 1])):
                        r = np.uint64(row_ind[k])
                        br = b[r]
                        if br > 0.0:
                            loss_old += br * br
                        bn = br + d_diff * yx[k]
                        b[r] = bn
                        if bn > 0.0:
                            loss_new += bn * bn
                else:
                    for k in range(np.uint64(col_ptr[j]), np.uint64(col_ptr[j + 1])):
                        r = np.uint64(row_ind[k])
                        bn = b[r] + d_diff * yx[k]
                        b[r] = bn
                        if bn > 0.0:
                            loss_new += bn * bn
                cond = cond + loss_new - loss_old
                if cond <= 0.0:
                    break
                d_old = d
                d *= 0.5
                delta *= 0.5
                num_linesearch += 1

            w[j] += d

            # b holds w_j + d_old after a failed search: rebuild it from w
            if num_linesearch >= max_num_linesearch:
                recomputes += 1
                for i in range(l):
                    b[i] = sqrtC[i]
                for jj in range(w_size):
                    if w[jj] == 0.0:
                        continue
                    for k in range(np.uint64(col_ptr[jj]), np.uint64(col_ptr[jj + 1])):
                        b[np.uint64(row_ind[k])] -= w[jj] * yx[k]
            s += 1

        if it == 0:
            Gnorm1_init = Gnorm1_new
        it += 1
        if Gnorm1_new <= eps * Gnorm1_init:
            if active_size == w_size:
                break
            active_size = w_size
            restarts += 1
            Gmax_old = INF
            continue
        Gmax_old = Gmax_new

    v = 0.0
    nnz = 0
    for j in range(w_size):
        if w[j] != 0.0:
            v += abs(w[j])
            nnz += 1
    if unreg_bias and w_size > 0:
        v -= abs(w[w_size - 1])
    for i in range(l):
        if b[i] > 0.0:
            v += b[i] * b[i]
    return it, v, nnz, restarts, recomputes


@njit(cache=True, nogil=True)
def l1r_lr(col_ptr, row_ind, vals, y, C, unreg_bias, eps, max_newton_iter, max_iter, seed,
           w, cd_passes):
    """-s 6 (newGLMNET) from w = 0 (w is overwritten). y is +1/-1 per row. cd_passes
    (length >= max_newton_iter) receives the CD passes of each Newton iteration.

    Returns (Newton iterations, objective, non-zero weights, inner solves that hit the cap,
    line searches that failed)."""
    l = len(y)
    w_size = len(col_ptr) - 1
    nu = 1e-12
    inner_eps = 1.0
    sigma = 0.01
    max_num_linesearch = 20

    index = np.empty(w_size, dtype=np.int64)
    Hdiag = np.zeros(w_size)
    Grad = np.zeros(w_size)
    wpd = np.empty(w_size)
    xjneg_sum = np.zeros(w_size)
    exp_wTx = np.zeros(l)
    exp_wTx_new = np.empty(l)
    # The per-row quantities the column loops gather, D_i, tau_i and (X d)_i, packed in
    # one 32-byte record: a row met in a column costs one cache miss, not one per array.
    row = np.zeros((l, 4))

    # w starts at 0, so exp(w.x_i) = 1 without a pass over X
    for j in range(w_size):
        w[j] = 0.0
    w_norm = 0.0
    for j in range(w_size):
        wpd[j] = w[j]
        index[j] = j
        acc = 0.0
        for k in range(np.uint64(col_ptr[j]), np.uint64(col_ptr[j + 1])):
            r = np.uint64(row_ind[k])
            if y[r] == -1.0:
                acc += C[r] * vals[k]
        xjneg_sum[j] = acc
    for i in range(l):
        e = np.exp(exp_wTx[i])
        exp_wTx[i] = e
        tau_tmp = 1.0 / (1.0 + e)
        row[i, TAU] = C[i] * tau_tmp
        row[i, D] = C[i] * e * tau_tmp * tau_tmp

    state = seed_state(seed)
    Gmax_old = INF
    Gnorm1_init = -1.0
    newton_iter = 0
    inner_capped = 0
    failed_searches = 0
    while newton_iter < max_newton_iter:
        Gmax_new = 0.0
        Gnorm1_new = 0.0
        active_size = w_size

        s = 0
        while s < active_size:
            j = index[s]
            h = nu
            tmp = 0.0
            for k in range(np.uint64(col_ptr[j]), np.uint64(col_ptr[j + 1])):
                r = np.uint64(row_ind[k])
                v = vals[k]
                h += v * v * row[r, D]
                tmp += v * row[r, TAU]
            Hdiag[j] = h
            Grad[j] = -tmp + xjneg_sum[j]

            violation, shrink = _l1_violation(Grad[j], w[j], unreg_bias and j == w_size - 1,
                                              Gmax_old / l)
            if shrink:                                              # outer shrinking
                active_size -= 1
                index[s], index[active_size] = index[active_size], index[s]
                continue
            if violation > Gmax_new:
                Gmax_new = violation
            Gnorm1_new += violation
            s += 1

        if newton_iter == 0:
            Gnorm1_init = Gnorm1_new
        if Gnorm1_new <= eps * Gnorm1_init:
            break

        # coordinate descent on the quadratic model, over wpd = w + d
        it = 0
        QP_Gmax_old = INF
        QP_active_size = active_size
        for i in range(l):
            row[i, XTD] = 0.0
        while it < max_iter:
            QP_Gmax_new = 0.0
            QP_Gnorm1_new = 0.0
            shuffle_prefix(state, index, QP_active_size)

            s = 0
            while s < QP_active_size:
                j = index[s]
                H = Hdiag[j]
                G = Grad[j] + (wpd[j] - w[j]) * nu
                for k in range(np.uint64(col_ptr[j]), np.uint64(col_ptr[j + 1])):
                    r = np.uint64(row_ind[k])
                    G += vals[k] * row[r, D] * row[r, XTD]

                free = unreg_bias and j == w_size - 1
                violation, shrink = _l1_violation(G, wpd[j], free, QP_Gmax_old / l)
                if shrink:                                          # inner shrinking
                    QP_active_size -= 1
                    index[s], index[QP_active_size] = index[QP_active_size], index[s]
                    continue
                z = _l1_newton_step(G, H, wpd[j], free)
                if violation > QP_Gmax_new:
                    QP_Gmax_new = violation
                QP_Gnorm1_new += violation

                if abs(z) < 1.0e-12:
                    s += 1
                    continue
                z = min(max(z, -10.0), 10.0)
                wpd[j] += z
                for k in range(np.uint64(col_ptr[j]), np.uint64(col_ptr[j + 1])):
                    row[np.uint64(row_ind[k]), XTD] += z * vals[k]
                s += 1

            it += 1
            if QP_Gnorm1_new <= inner_eps * Gnorm1_init:
                if QP_active_size == active_size:
                    break
                QP_active_size = active_size     # reactivate the inner set
                QP_Gmax_old = INF
                continue
            QP_Gmax_old = QP_Gmax_new

        if it >= max_iter:
            inner_capped += 1

        delta = 0.0
        w_norm_new = 0.0
        for j in range(w_size):
            delta += Grad[j] * (wpd[j] - w[j])
            if wpd[j] != 0.0:
                w_norm_new += abs(wpd[j])
        if unreg_bias:
            w_norm_new -= abs(wpd[w_size - 1])
        delta += w_norm_new - w_norm

        negsum_xTd = 0.0
        for i in range(l):
            if y[i] == -1.0:
                negsum_xTd += C[i] * row[i, XTD]

        num_linesearch = 0
        while num_linesearch < max_num_linesearch:
            cond = w_norm_new - w_norm + negsum_xTd - sigma * delta
            for i in range(l):
                exp_xTd = np.exp(row[i, XTD])
                exp_wTx_new[i] = exp_wTx[i] * exp_xTd
                cond += C[i] * np.log((1.0 + exp_wTx_new[i]) / (exp_xTd + exp_wTx_new[i]))
            if cond <= 0.0:
                w_norm = w_norm_new
                for j in range(w_size):
                    w[j] = wpd[j]
                for i in range(l):
                    e = exp_wTx_new[i]
                    exp_wTx[i] = e
                    tau_tmp = 1.0 / (1.0 + e)
                    row[i, TAU] = C[i] * tau_tmp
                    row[i, D] = C[i] * e * tau_tmp * tau_tmp
                break
            w_norm_new = 0.0
            for j in range(w_size):
                wpd[j] = (w[j] + wpd[j]) * 0.5
                if wpd[j] != 0.0:
                    w_norm_new += abs(wpd[j])
            if unreg_bias:
                w_norm_new -= abs(wpd[w_size - 1])
            delta *= 0.5
            negsum_xTd *= 0.5
            for i in range(l):
                row[i, XTD] *= 0.5
            num_linesearch += 1

        if num_linesearch >= max_num_linesearch:
            # too many halvings: recompute exp(w.x) from w to shed rounding drift
            failed_searches += 1
            for i in range(l):
                exp_wTx[i] = 0.0
            for j in range(w_size):
                if w[j] == 0.0:
                    continue
                for k in range(np.uint64(col_ptr[j]), np.uint64(col_ptr[j + 1])):
                    exp_wTx[np.uint64(row_ind[k])] += w[j] * vals[k]
            for i in range(l):
                exp_wTx[i] = np.exp(exp_wTx[i])

        if it == 1:
            inner_eps *= 0.25
        cd_passes[newton_iter] = it
        newton_iter += 1
        Gmax_old = Gmax_new

    v = 0.0
    nnz = 0
    for j in range(w_size):
        if w[j] != 0.0:
            v += abs(w[j])
            nnz += 1
    if unreg_bias and w_size > 0:
        v -= abs(w[w_size - 1])
    for i in range(l):
        if y[i] == 1.0:
            v += C[i] * np.log(1.0 + 1.0 / exp_wTx[i])
        else:
            v += C[i] * np.log(1.0 + exp_wTx[i])
    return newton_iter, v, nnz, inner_capped, failed_searches
