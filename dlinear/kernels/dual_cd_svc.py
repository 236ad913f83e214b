"""Dual coordinate descent for L2-regularized L1-/L2-loss SVC (LIBLINEAR -s 3 / -s 1).

    min_alpha 0.5 alpha^T (Q + D) alpha - e^T alpha,  0 <= alpha_i <= U_i,
    Q_ij = y_i y_j x_i^T x_j
    L1-loss: U_i = C_i,   D_ii = 0
    L2-loss: U_i = inf,   D_ii = 1 / (2 C_i)

Hsieh et al. 2008, Algorithm 3: random permutation of the active set every outer
iteration, shrinking by the projected-gradient bounds of the previous iteration (Sec. 3.2),
and LIBLINEAR's stop: max PG - min PG <= eps with both within eps, confirmed on the full
set before stopping. C_i is per instance so class weights and instance weights are one thing.
"""
import numpy as np
from numba import njit

from .rng import seed_state, shuffle_prefix
from .sparse_ops import prefetch_visit, row_axpy, row_dot, row_sq_norm

INF = np.inf


# Per-instance state packed in one 32-byte record: an instance visited in random order
# then costs one cache miss instead of one per array (BENCHMARKS.md, "Every solver
# against LIBLINEAR").
ALPHA, QD, BOUND, Y = 0, 1, 2, 3   # BOUND: D_ii for L2-loss (U_i = inf), U_i for L1-loss


NO_TRACE = np.zeros((0, 2))       # dual_cd_svc's and block_cd_svc's trace: none

@njit(cache=True, nogil=True, inline="always")
def init_dual_state(indptr, indices, data, n_features, bias, y, C, l2_loss, alpha, w):
    """(inst, index, n): the packed per-instance records from the warm start `alpha`,
    w = sum_i alpha_i y_i x_i, and in index[:n] the rows that take part. A row with
    C_i <= 0 (zero instance weight) is left out: its alpha_i is 0 and it is never visited."""
    l = len(indptr) - 1
    inst = np.empty((l, 4))
    for j in range(len(w)):
        w[j] = 0.0
    init_records(indptr, indices, data, n_features, bias, y, C, l2_loss, alpha, inst, 0, l,
                 w)
    index = np.empty(l, dtype=np.int64)
    # np.int64(0), not 0: a count that starts as a literal makes Numba compile what it
    # is passed to (shuffle_prefix) once more, for Literal[int](0)
    n = np.int64(0)
    for i in range(l):
        if C[i] > 0.0:
            index[n] = i
            n += 1
    return inst, index, n


@njit(cache=True, nogil=True, inline="always")
def init_records(indptr, indices, data, n_features, bias, y, C, l2_loss, alpha, inst, lo, hi,
                 w):
    """init_dual_state's work on rows [lo, hi): their packed records into inst, and
    w += alpha_i y_i x_i for each of them that takes part (C_i > 0)."""
    for i in range(lo, hi):
        for f in range(4):
            inst[i, f] = 0.0
        if C[i] <= 0.0:
            continue
        bound = 0.5 / C[i] if l2_loss else C[i]
        inst[i, ALPHA] = alpha[i]
        inst[i, BOUND] = bound
        inst[i, Y] = y[i]
        inst[i, QD] = (bound if l2_loss else 0.0) + row_sq_norm(indptr, data, i, bias)
        if alpha[i] != 0.0:
            row_axpy(y[i] * alpha[i], indptr, indices, data, i, w, n_features, bias)


@njit(cache=True, nogil=True, inline="always")
def one_variable_step(a, G, qd, U):
    """The new alpha_i of a one-variable step: a - G / Q_ii clipped to [0, U]. An empty
    row under L1 loss has Q_ii = 0: its sub-problem is linear, and the step goes to U if
    G < 0, else to 0 (where LIBLINEAR's C code gets there through -G/0 = +-inf)."""
    if qd > 0.0:
        a = a - G / qd
    else:
        a = U if G < 0.0 else 0.0
    if a < 0.0:
        return 0.0
    if a > U:
        return U
    return a


@njit(cache=True, nogil=True, inline="always")
def gradient_parts(inst, i, l2_loss):
    """(alpha_i, D_ii, U_i) of instance i."""
    if l2_loss:
        return inst[i, ALPHA], inst[i, BOUND], INF
    return inst[i, ALPHA], 0.0, inst[i, BOUND]


@njit(cache=True, nogil=True, inline="always")
def projected_gradient(G, a, U, PGmax_old, PGmin_old):
    """(projected gradient, shrink?) by LIBLINEAR's rule with last iteration's bounds."""
    if a == 0.0:
        if G > PGmax_old:
            return 0.0, True
        return (G if G < 0.0 else 0.0), False
    if a == U:
        if G < PGmin_old:
            return 0.0, True
        return (G if G > 0.0 else 0.0), False
    return G, False


@njit(cache=True, nogil=True, inline="always")
def end_of_sweep(PGmax_new, PGmin_new, eps, active_size, n_all):
    """LIBLINEAR's test after a sweep of the active set: (stop, restart, PGmax_old,
    PGmin_old). Converged on a shrunk set means restart on all n_all variables to confirm;
    otherwise the new projected-gradient bounds become the shrinking thresholds."""
    if PGmax_new - PGmin_new <= eps and abs(PGmax_new) <= eps and abs(PGmin_new) <= eps:
        return active_size == n_all, active_size != n_all, INF, -INF
    return (False, False, PGmax_new if PGmax_new > 0.0 else INF,
            PGmin_new if PGmin_new < 0.0 else -INF)


@njit(cache=True, nogil=True, inline="always")
def dual_objective(w, inst, l2_loss, alpha):
    """0.5 (w.w + sum_i alpha_i (alpha_i D_ii - 2)); copies the packed alphas to `alpha`."""
    v = 0.0
    for j in range(len(w)):
        v += w[j] * w[j]
    for i in range(inst.shape[0]):
        a = inst[i, ALPHA]
        alpha[i] = a
        v += a * (a * (inst[i, BOUND] if l2_loss else 0.0) - 2.0)
    return v / 2.0


@njit(cache=True, nogil=True, inline="always")
def sweep_active_set(indptr, indices, data, n_features, bias, l2_loss, inst, index,
                     active_size, w, PGmax_old, PGmin_old, ctrl_c):
    """One sweep of dual CD over index[:active_size] (in that order), shrinking by the
    previous sweep's bounds: (active size, PGmax_new, PGmin_new, steps taken). Ends early
    once ctrl_c[0] is set (a Ctrl-C: dlinear.threads.stop_flag)."""
    PGmax_new = -INF
    PGmin_new = INF
    steps = 0
    s = 0
    while s < active_size:
        if ctrl_c[0]:
            break
        prefetch_visit(index, s, active_size, indptr, indices, data, inst)
        i = index[s]
        yi = inst[i, Y]
        a_i, Di, Ui = gradient_parts(inst, i, l2_loss)
        G = yi * row_dot(w, indptr, indices, data, i, n_features, bias) - 1.0 + a_i * Di
        PG, shrink = projected_gradient(G, a_i, Ui, PGmax_old, PGmin_old)
        if shrink:
            active_size -= 1
            index[s], index[active_size] = index[active_size], index[s]
            # the row swapped in is visited next: the row that the next shrink swaps in
            # is asked for now
            if active_size > s + 1:
                prefetch_visit(index, active_size - 2, active_size, indptr, indices,
                               data, inst)
            continue

        if PG > PGmax_new:
            PGmax_new = PG
        if PG < PGmin_new:
            PGmin_new = PG

        if abs(PG) > 1.0e-12:
            a = one_variable_step(a_i, G, inst[i, QD], Ui)
            inst[i, ALPHA] = a
            row_axpy((a - a_i) * yi, indptr, indices, data, i, w, n_features, bias)
        s += 1
        steps += 1
    return active_size, PGmax_new, PGmin_new, steps


@njit(cache=True, nogil=True)
def dual_cd_svc(indptr, indices, data, n_features, bias, y, C, l2_loss, eps, max_iter,
                seed, alpha, w, ctrl_c, shrinking, trace):
    """Runs the solver in place on `alpha` (warm start; zeros for a cold one) and `w`
    (which it sets to sum_i alpha_i y_i x_i first). Inputs are never written.
    shrinking=False keeps every variable active (for convergence studies); a `trace`
    array (max_iter x 2) receives after each outer iteration (CD steps so far, dual
    objective), as scripts/tools/plot_convergence.py --block-cd draws them; NO_TRACE
    (no rows) takes none. Both are always passed: one compiled signature serves all.

    Returns (iterations, final active-set size, number of shrinking restarts, objective);
    early, within a row's step, once ctrl_c[0] is set (dlinear.threads.stop_flag)."""
    inst, index, l = init_dual_state(indptr, indices, data, n_features, bias, y, C,
                                     l2_loss, alpha, w)

    state = seed_state(seed)
    active_size = l
    PGmax_old = INF
    PGmin_old = -INF
    it = 0
    restarts = 0
    steps = 0
    while it < max_iter:
        shuffle_prefix(state, index, active_size)

        active_size, PGmax_new, PGmin_new, done = sweep_active_set(
            indptr, indices, data, n_features, bias, l2_loss, inst, index, active_size, w,
            PGmax_old, PGmin_old, ctrl_c)
        steps += done
        if ctrl_c[0]:
            break

        if it < trace.shape[0]:
            trace[it, 0] = steps
            trace[it, 1] = dual_objective(w, inst, l2_loss, alpha)
        it += 1
        stop, restart, PGmax_old, PGmin_old = end_of_sweep(PGmax_new, PGmin_new, eps,
                                                           active_size, l)
        if not shrinking:
            PGmax_old = INF
            PGmin_old = -INF
        if stop:
            break
        if restart:
            active_size = l
            restarts += 1

    return it, active_size, restarts, dual_objective(w, inst, l2_loss, alpha)


# dual_cd_svc_sweeps' state between two calls: counts (int64) and shrinking bounds
IT, ACTIVE, RESTARTS, STEPS, STOPPED = 0, 1, 2, 3, 4
PGMAX_OLD, PGMIN_OLD = 0, 1


@njit(cache=True, nogil=True)
def dual_cd_svc_start(indptr, indices, data, n_features, bias, y, C, l2_loss, alpha, w,
                      seed):
    """dual_cd_svc's state before its first sweep, for dual_cd_svc_sweeps: (inst, index,
    rows that take part, random state, counts, bounds)."""
    inst, index, l = init_dual_state(indptr, indices, data, n_features, bias, y, C,
                                     l2_loss, alpha, w)
    counts = np.zeros(5, dtype=np.int64)
    counts[ACTIVE] = l
    bounds = np.array([INF, -INF])
    return inst, index, l, seed_state(seed), counts, bounds


@njit(cache=True, nogil=True)
def dual_cd_svc_sweeps(indptr, indices, data, n_features, bias, l2_loss, eps, max_iter,
                       inst, index, l, state, counts, bounds, w, n_sweeps, ctrl_c):
    """At most n_sweeps outer iterations of dual_cd_svc from its state (inst, index, the
    random state, counts, bounds and w; updated in place), the same steps as
    dual_cd_svc's: a fit run in pieces, between which its state can be saved
    (checkpoints)."""
    active_size = counts[ACTIVE]
    PGmax_old = bounds[PGMAX_OLD]
    PGmin_old = bounds[PGMIN_OLD]
    done_sweeps = 0
    while (counts[IT] < max_iter and counts[STOPPED] == 0 and done_sweeps < n_sweeps
           and not ctrl_c[0]):
        shuffle_prefix(state, index, active_size)
        active_size, PGmax_new, PGmin_new, done = sweep_active_set(
            indptr, indices, data, n_features, bias, l2_loss, inst, index, active_size, w,
            PGmax_old, PGmin_old, ctrl_c)
        if ctrl_c[0]:
            break
        counts[STEPS] += done
        counts[IT] += 1
        done_sweeps += 1
        stop, restart, PGmax_old, PGmin_old = end_of_sweep(PGmax_new, PGmin_new, eps,
                                                           active_size, l)
        if stop:
            counts[STOPPED] = 1
        elif restart:
            active_size = l
            counts[RESTARTS] += 1
    counts[ACTIVE] = active_size
    bounds[PGMAX_OLD] = PGmax_old
    bounds[PGMIN_OLD] = PGmin_old


@njit(cache=True, nogil=True)
def dual_cd_svc_objective(w, inst, l2_loss, alpha):
    """dual_objective, callable from Python: the objective, alpha from the records."""
    return dual_objective(w, inst, l2_loss, alpha)
