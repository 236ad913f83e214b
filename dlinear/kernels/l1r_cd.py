"""-s 5, L1-regularized L2-loss SVC by coordinate descent, on CSC arrays, and the
one-variable L1 helpers it shares with -s 6 (kernels/l1r_newglmnet.py).

The kernels take X by columns (col_ptr int64, row_ind int32, vals float64; the `-B` bias, when
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
    On threads, each thread runs the whole method on its range of rows: it reads and
    writes only those rows' b and entries, adds its partial sums of G, H and the losses
    to the others' at each step (spin.combined, in thread order), and so takes the same
    steps; w is each thread's own copy.

-s 6 (newGLMNET) is in l1r_newglmnet.py and shares the one-variable helpers here.
"""
import numpy as np
from numba import njit

from .rng import seed_state, shuffle_prefix
from .spin import combined, combined_unless_stopped, wait_for_all


@njit(cache=True, nogil=True, inline="always")
def l1_violation(G, x, free, shrink_bound, l1):
    """(violation, shrink) of weight x whose smooth-part gradient is G, under the term
    l1 |x| (l1 = 1 for LIBLINEAR's L1 solvers; none for the -R bias, `free`): the size of
    the minimum-norm subgradient, and whether x = 0 lies so deep inside the subdifferential
    (|G| < l1 - shrink_bound) that it is shrunk."""
    if free:
        return abs(G), False
    Gp = G + l1
    Gn = G - l1
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
def l1_newton_step(G, H, x, free, l1):
    """The minimiser d of G d + H d^2 / 2 + l1 |x + d| (without the |.| when `free`)."""
    if free:
        return -G / H
    if G + l1 < H * x:
        return -(G + l1) / H
    if G - l1 > H * x:
        return -(G - l1) / H
    return -x

INF = np.inf


@njit(cache=True, nogil=True, inline="always")
def own_entries(col_ptr, starts, t, n_parts, j):
    """[lo, hi): the entries of column j in the rows of part t (a column's entries are in
    row order; starts[t - 1, j] is where part t's begin)."""
    lo = col_ptr[j] if t == 0 else starts[t - 1, j]
    hi = col_ptr[j + 1] if t == n_parts - 1 else starts[t, j]
    return np.uint64(lo), np.uint64(hi)


@njit(cache=True, nogil=True)
def part_starts(col_ptr, row_ind, row_bounds):
    """starts[t - 1, j]: the first entry of column j whose row is at least row_bounds[t],
    for the parts t = 1 .. len(row_bounds) - 2 (rows in order within each column)."""
    n_parts = len(row_bounds) - 1
    w_size = len(col_ptr) - 1
    starts = np.empty((max(n_parts - 1, 0), w_size), dtype=np.int64)
    for j in range(w_size):
        column = row_ind[col_ptr[j]:col_ptr[j + 1]]
        for t in range(1, n_parts):
            starts[t - 1, j] = col_ptr[j] + np.searchsorted(column, row_bounds[t])
    return starts


@njit(cache=True, nogil=True, inline="always")
def b_from_w(col_ptr, row_ind, yx, sqrtC, w, starts, t, n_parts, row_lo, row_hi, b):
    """b_i = sqrt(C_i) (1 - y_i w.x_i) on part t's rows [row_lo, row_hi), from w (yx
    the entries sqrt(C_i) y_i x_ij), adding the columns in order."""
    for i in range(row_lo, row_hi):
        b[i] = sqrtC[i]
    for j in range(len(w)):
        if w[j] == 0.0:
            continue
        lo, hi = own_entries(col_ptr, starts, t, n_parts, j)
        for k in range(lo, hi):
            b[np.uint64(row_ind[k])] -= w[j] * yx[k]


# l1r_l2_svc's state between two calls, a row per part (the parts' rows are alike):
# counts (int64) and bounds (float64)
IT, ACTIVE, RESTARTS, RECOMPUTES, STOPPED, STARTED = 0, 1, 2, 3, 4, 5
GMAX_OLD, GNORM1_INIT = 0, 1


def l1r_l2_svc_state(n_parts: int, w_size: int, seed: int):
    """l1r_l2_svc's state before its first pass, for n_parts parts: (index, random
    state, counts, bounds); the kernel sets it up on its first call."""
    return (np.empty((n_parts, w_size), dtype=np.int64),
            np.empty((n_parts, 1), dtype=np.uint64),
            np.zeros((n_parts, 6), dtype=np.int64), np.zeros((n_parts, 2)))


@njit(cache=True, nogil=True)
def l1r_l2_svc(col_ptr, row_ind, vals, y, sqrtC, unreg_bias, eps, max_outer_iter, seed, w,
               t, starts, row_bounds, yx, b, xj_sq_parts, partials, arrivals, warm,
               gnorm1_start, index_parts, rng_parts, counts_parts, bounds_parts, ctrl_c,
               n_passes, setup):
    """-s 5 from w = 0 (w is overwritten), or with `warm` from w as given and the stop
    relative to gnorm1_start (the violations at w = 0, LIBLINEAR's reference), as part t of len(row_bounds) - 1 parts that run
    at once on as many threads, each on the entries of its rows [row_bounds[t],
    row_bounds[t + 1]): every part takes every decision (the same ones: the sums it
    decides on are combined in part order, `spin.combined`) and keeps its own w, and each
    writes only its rows of the shared b and its entries of the shared yx. One part (t =
    0, row_bounds = [0, l], starts empty) is the serial solver. y is +1/-1 per row,
    sqrtC the square roots of the per-row C.

    At most n_passes passes from the state (l1r_l2_svc_state: row t of index_parts,
    rng_parts, counts_parts, bounds_parts; with b and w, updated in place), which the
    first call (counts STARTED = 0) sets up: a fit run in pieces, between which its
    state can be saved (checkpoints), takes the same steps. `setup`: compute yx and
    xj_sq_parts (the first call in a process; they depend on the data only).

    Returns (passes, objective, non-zero weights, shrinking restarts, b recomputations);
    the objective is NaN where the run goes on (not stopped, passes below the cap), as
    when ctrl_c[0] is set (a Ctrl-C: dlinear.threads.stop_flag): then every part returns
    before its next column's step, with w, b and the state as after the last one."""
    l = len(y)
    w_size = len(col_ptr) - 1
    n_parts = len(row_bounds) - 1
    row_lo = row_bounds[t]
    row_hi = row_bounds[t + 1]
    meeting = 0
    sigma = 0.01
    max_num_linesearch = 20
    counts = counts_parts[t]
    bounds = bounds_parts[t]
    index = index_parts[t]
    state = rng_parts[t]
    fresh = counts[STARTED] == 0
    # Everything is scaled by sqrt(C_i): yx = sqrt(C_i) y_i x_ij and b_i = sqrt(C_i) (1 -
    # y_i w.x_i), so C_i max(0, 1 - y_i w.x_i)^2 = max(0, b_i)^2 and the column loops read
    # b and yx only (no random access into C; C_i = 0 leaves b_i = 0, contributing nothing).
    if fresh:
        for i in range(row_lo, row_hi):
            b[i] = sqrtC[i]
    xj_sq = np.empty(w_size)               # sum_i C_i x_ij^2: the curvature bound of (28)
    for j in range(w_size):
        if fresh:
            if not warm:
                w[j] = 0.0
            index[j] = j
        if setup:
            acc = 0.0
            lo, hi = own_entries(col_ptr, starts, t, n_parts, j)
            for k in range(lo, hi):
                r = np.uint64(row_ind[k])
                v = vals[k] * y[r] * sqrtC[r]
                yx[k] = v
                acc += v * v
            xj_sq_parts[t, j] = acc
    if n_parts > 1:
        wait_for_all(arrivals, n_parts, meeting)
        meeting += 1
    for j in range(w_size):
        acc = xj_sq_parts[0, j]
        for q in range(1, n_parts):
            acc += xj_sq_parts[q, j]
        xj_sq[j] = acc
    if warm and fresh:        # b of the warm start (this part's rows)
        b_from_w(col_ptr, row_ind, yx, sqrtC, w, starts, t, n_parts, row_lo, row_hi, b)

    if fresh:
        state[0] = seed_state(seed)[0]
        bounds[GMAX_OLD] = INF
        bounds[GNORM1_INIT] = gnorm1_start if warm else -1.0
        counts[ACTIVE] = w_size
        counts[STARTED] = 1
    Gmax_old = bounds[GMAX_OLD]
    Gnorm1_init = bounds[GNORM1_INIT]
    active_size = counts[ACTIVE]
    it = counts[IT]
    restarts = counts[RESTARTS]
    recomputes = counts[RECOMPUTES]
    stopped = counts[STOPPED] != 0
    passes = 0
    interrupted = False
    while it < max_outer_iter and not stopped and passes < n_passes:
        passes += 1
        Gmax_new = 0.0
        Gnorm1_new = 0.0
        shuffle_prefix(state, index, active_size)

        s = 0
        while s < active_size:
            j = index[s]
            lo, hi = own_entries(col_ptr, starts, t, n_parts, j)
            G_loss = 0.0
            H = 0.0
            for k in range(lo, hi):
                # rows outside the loss (b_r <= 0) add a zero: the sums are bit for bit
                # those that skip them, without a branch the predictor loses
                br = b[np.uint64(row_ind[k])]
                v = yx[k]
                in_loss = br > 0.0
                G_loss -= v * (br if in_loss else 0.0)
                H += (v if in_loss else 0.0) * v
            G_loss, H, interrupted = combined_unless_stopped(
                partials, arrivals, t, n_parts, meeting, G_loss, H, ctrl_c)
            meeting += 1
            if interrupted:
                break
            G_loss *= 2.0
            G = G_loss
            H *= 2.0
            if H < 1e-12:
                H = 1e-12

            free = unreg_bias and j == w_size - 1
            wj = w[j]
            violation, shrink = l1_violation(G, wj, free, Gmax_old / l, 1.0)
            if shrink:
                active_size -= 1
                index[s], index[active_size] = index[active_size], index[s]
                continue
            if violation > Gmax_new:
                Gmax_new = violation
            Gnorm1_new += violation

            # Newton direction of the one-variable problem
            d = l1_newton_step(G, H, wj, free, 1.0)

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
                    for k in range(lo, hi):
                        b[np.uint64(row_ind[k])] += d_diff * yx[k]
                    break
                # (27) exactly, moving b to w_j + d as it goes (30)
                loss_new = 0.0
                if num_linesearch == 0:
                    loss_old = 0.0
                    for k in range(lo, hi):
                        r = np.uint64(row_ind[k])
                        br = b[r]
                        bn = br + d_diff * yx[k]
                        b[r] = bn
                        br = br if br > 0.0 else 0.0
                        loss_old += br * br
                        bn = bn if bn > 0.0 else 0.0
                        loss_new += bn * bn
                    loss_old, loss_new = combined(partials, arrivals, t, n_parts, meeting,
                                                  loss_old, loss_new)
                else:
                    for k in range(lo, hi):
                        r = np.uint64(row_ind[k])
                        bn = b[r] + d_diff * yx[k]
                        b[r] = bn
                        bn = bn if bn > 0.0 else 0.0
                        loss_new += bn * bn
                    loss_new, _ = combined(partials, arrivals, t, n_parts, meeting,
                                           loss_new, 0.0)
                meeting += 1
                cond = cond + loss_new - loss_old
                if cond <= 0.0:
                    break
                d_old = d
                d *= 0.5
                delta *= 0.5
                num_linesearch += 1

            w[j] += d

            # b holds w_j + d_old after a failed search
            if num_linesearch >= max_num_linesearch:
                recomputes += 1
                b_from_w(col_ptr, row_ind, yx, sqrtC, w, starts, t, n_parts, row_lo,
                         row_hi, b)
            s += 1

        if interrupted:
            break
        if it == 0 and not warm:
            Gnorm1_init = Gnorm1_new
        it += 1
        if Gnorm1_new <= eps * Gnorm1_init:
            if active_size == w_size:
                stopped = True
                break
            active_size = w_size
            restarts += 1
            Gmax_old = INF
            continue
        Gmax_old = Gmax_new

    bounds[GMAX_OLD] = Gmax_old
    bounds[GNORM1_INIT] = Gnorm1_init
    counts[ACTIVE] = active_size
    counts[IT] = it
    counts[RESTARTS] = restarts
    counts[RECOMPUTES] = recomputes
    counts[STOPPED] = 1 if stopped else 0
    if not stopped and it < max_outer_iter:
        return it, np.nan, 0, restarts, recomputes
    v = 0.0
    nnz = 0
    for j in range(w_size):
        if w[j] != 0.0:
            v += abs(w[j])
            nnz += 1
    if unreg_bias and w_size > 0:
        v -= abs(w[w_size - 1])
    # the loss terms of this part's rows, after the weights' in part 0 (so that one part
    # adds in the serial order)
    part_v = v if t == 0 else 0.0
    for i in range(row_lo, row_hi):
        if b[i] > 0.0:
            part_v += b[i] * b[i]
    v, _ = combined(partials, arrivals, t, n_parts, meeting, part_v, 0.0)
    return it, v, nnz, restarts, recomputes
