"""Fit functions of the L1-regularized solvers (-s 5 and -s 6).

-s 5 (L1R_L2LOSS_SVC) is the coordinate descent method of the LIBLINEAR paper's
Appendix F (Yuan et al. 2010). -s 6 (L1R_LR) is newGLMNET (Yuan, Ho and Lin 2012), the
method of LIBLINEAR >= 1.8 and 2.x: Newton iterations whose direction comes from
coordinate descent on an L1-regularized quadratic model, followed by a line search; not
the older CDN coordinate descent of the paper's appendix. With Params.l1_ratio (rho), -s 6
solves dlinear's elastic net rho ||w||_1 + (1 - rho)/2 ||w||^2 + sum_i C_i loss_i by the
same newGLMNET (rho = 1, the default, is LIBLINEAR's -s 6). dlinear/kernels/l1r_cd.py (-s 5)
and dlinear/kernels/l1r_newglmnet.py (-s 6) give the algorithms and their constants
(LIBLINEAR 2.50's).

Both walk features, so they read X transposed to CSC, with the `-B` bias as an explicit
last column of that copy; one-vs-rest classes share one copy (SubProblem.columns). On
SubProblem.n_threads threads, -s 6's gradient pass (each column's gradient and Hessian
diagonal, its own) runs in ranges of columns: the same model on any number of threads.
-s 5, and -s 6's coordinate descent and line search, run on the threads as
liblinear-multicore does (Zhuang, Juan, Yuan & Lin, CIKM 2018): each coordinate step's
passes over its column, and the line search's over the rows, are split by rows, one
range of rows a thread, and the threads meet inside the kernel to add their partial
sums (dlinear/kernels/spin.py), so they take the same steps as one thread. As in
LIBLINEAR's train_one, the stopping tolerance handed to the kernels is
eps * max(min(#pos, #neg), 1) / l, relative to the first pass's sum of optimality
violations.
"""
from __future__ import annotations


import numpy as np

from ..kernels import l1r_newglmnet as NG
from ..kernels.l1r_cd import l1r_l2_svc, l1r_l2_svc_state, part_starts
from ..kernels.rng import seed_state
from ..kernels.spin import meeting_place
from ..threads import (PassPool, available_cores, nonzero_ranges, raise_if_stopped,
                       stop_flag)
from .checkpoint import run_in_pieces
from .newton import primal_solver_tol
from .status import Status, note
from .task import FitResult, starting_w

# LIBLINEAR 2.50's caps, each with its own meaning
L1R_L2SVC_MAX_OUTER_ITER = 1000   # -s 5: CD passes over the features
L1R_LR_MAX_INNER_ITER = 1000      # -s 6: CD passes of one Newton step's direction
L1R_LR_MAX_NEWTON_ITER = 100      # -s 6: Newton iterations


def fit_l1r(task, params, max_outer_iter: int = L1R_L2SVC_MAX_OUTER_ITER,
            max_inner_iter: int = L1R_LR_MAX_INNER_ITER,
            max_newton_iter: int = L1R_LR_MAX_NEWTON_ITER) -> FitResult:
    """-s 5 or -s 6 on one binary task, from w = 0 as in LIBLINEAR, or from the warm
    start task.w0."""
    col_ptr, row_ind, vals = task.columns()
    y = np.where(np.asarray(task.y) > 0, 1.0, -1.0)
    C = np.ascontiguousarray(task.C, dtype=np.float64)
    w = starting_w(task.w0, task.w_size)
    unreg_bias = (not params.regularize_bias) and task.bias >= 0
    tol = primal_solver_tol(params.eps, y, regression=False)
    log = []
    status = Status.CONVERGED
    if params.spec.loss == "squared_hinge":
        n_iter, obj, nnz, _, _ = l1r_l2svc((col_ptr, row_ind, vals), task.problem.indptr,
                                           y, C, unreg_bias, tol, int(max_outer_iter),
                                           int(task.seed), w, task.n_threads,
                                           warm=task.w0 is not None,
                                           checkpoint=task.checkpoint)
        log.append(f"optimization finished, #iter = {n_iter}")
        hit = n_iter >= max_outer_iter
    elif params.spec.loss == "logistic_regression":
        passes = np.zeros(max_newton_iter, dtype=np.int64)
        l1_ratio = 1.0 if params.l1_ratio is None else float(params.l1_ratio)
        xjneg_sum = NG.negative_rows_column_sums(
            task.problem.indptr, task.problem.indices, task.problem.data, y, C,
            int(task.problem.n_features), float(task.bias))
        n_iter, obj, nnz, inner_capped = l1r_lr(
            (col_ptr, row_ind, vals), task.problem.indptr, y, C, xjneg_sum, unreg_bias,
            l1_ratio, tol, max_newton_iter, max_inner_iter, int(task.seed), w, passes,
            task.n_threads, w0=None if task.w0 is None else w.copy(),
            checkpoint=task.checkpoint)
        log += [f"iter {k + 1:3d}  #CD cycles {int(passes[k])}" for k in range(n_iter)]
        if inner_capped:
            status |= note(log, Status.MAX_INNER_ITER,
                           detail=f"{inner_capped} of {n_iter} Newton iterations")
        log += ["=========================", f"optimization finished, #iter = {n_iter}"]
        hit = n_iter >= max_newton_iter
    else:
        raise ValueError(f"fit_l1r: no L1-regularized solver of the loss {params.spec.loss}")
    if hit:
        status |= note(log, Status.MAX_ITER)
    log += [f"Objective value = {obj:f}", f"#nonzeros/#features = {nnz}/{task.w_size}"]
    return FitResult(w=w, n_iter=int(n_iter), log=log, hit_max_iter=hit, status=status)


# The threads of -s 5's steps and -s 6's coordinate descent meet two to three times a
# column visit (spin.combined, well under a microsecond each); a thread's share of an
# average column must take longer than that (~5 ns an entry: 256 entries, about a
# microsecond), and a small problem stays on one thread (as dual CD's: below a million
# nonzeros a thread). They never outnumber the cores: a thread that waits for one
# without a core waits for the scheduler (3 threads on 2 cores: -s 5 4x slower than 1)
MIN_COLUMN_ENTRIES_PER_THREAD = 256
MIN_NNZ_PER_THREAD = 1_000_000


def row_split_threads(n_threads, nnz: int, w_size: int) -> int:
    """How many threads -s 5's steps and -s 6's coordinate descent run on, each on its
    range of rows: n_threads (None: 1), fewer on a small problem or short columns, at
    most one a core."""
    by_columns = int(nnz) // (MIN_COLUMN_ENTRIES_PER_THREAD * max(int(w_size), 1))
    return max(1, min(int(n_threads or 1), int(nnz) // MIN_NNZ_PER_THREAD, by_columns,
                      available_cores()))


def row_parts(row_ptr, n_parts: int):
    """The bounds [0, ..., l] of at most n_parts ranges of rows of about equal nonzeros
    (row_ptr: the CSR rows' pointers), one for each thread of -s 5 or -s 6's steps."""
    return np.array([0] + [hi for _, hi in nonzero_ranges(row_ptr, n_parts)],
                    dtype=np.int64)


def l1r_l2svc(columns, row_ptr, y, C, unreg_bias, eps, max_outer_iter, seed, w,
              n_threads=None, warm=False, checkpoint=None):
    """-s 5 (dlinear/kernels/l1r_cd.py) from w = 0 (w is overwritten), or with `warm`
    from w as given, on
    row_split_threads threads, each on its range of rows (of about equal nonzeros by
    row_ptr, the CSR rows' pointers): the same model on any number of threads but for
    the order in which the threads' partial sums are added (one thread: LIBLINEAR's
    order). checkpoint: a ProblemCheckpoint (dlinear.solvers.checkpoint): the passes
    run in pieces, the state saved between them and resumed from (the same steps).
    Returns (passes, objective, non-zero weights, shrinking restarts, b
    recomputations)."""
    col_ptr, row_ind, vals = columns
    w_size = len(col_ptr) - 1
    row_bounds = row_parts(row_ptr, row_split_threads(n_threads, len(vals), w_size))
    n_parts = len(row_bounds) - 1
    starts = part_starts(col_ptr, row_ind, row_bounds)
    sqrtC = np.sqrt(C)
    yx = np.empty(len(vals))
    b = np.empty(len(y))
    xj_sq_parts = np.empty((n_parts, w_size))
    partials, arrivals = meeting_place(n_parts)
    own_w = [w] + [w.copy() for _ in range(n_parts - 1)]
    # LIBLINEAR's stop is relative to the first pass from w = 0: a warm start's to the
    # violations at w = 0 (G_j = -2 sum_i C_i y_i x_ij there)
    gnorm1_start = (_violations_at_zero(-2.0 * _column_sums(columns, C * y), unreg_bias,
                                        1.0) if warm else -1.0)
    index_parts, rng_parts, counts_parts, bounds_parts = l1r_l2_svc_state(n_parts, w_size,
                                                                          seed)
    pool = PassPool(n_parts, "l1r")
    ctrl_c = stop_flag()

    def run(n_passes, setup=True):
        arrivals[:] = 0
        result = pool.run(l1r_l2_svc, [
            (col_ptr, row_ind, vals, y, sqrtC, unreg_bias, eps, max_outer_iter, seed,
             own_w[t], t, starts, row_bounds, yx, b, xj_sq_parts, partials, arrivals,
             bool(warm), gnorm1_start, index_parts, rng_parts, counts_parts, bounds_parts,
             ctrl_c, n_passes, setup) for t in range(n_parts)])[0]
        raise_if_stopped()      # a stopped pass's state is not saved
        return result
    try:
        if checkpoint is None:
            return run(max_outer_iter)
        return _l1r_l2svc_in_pieces(run, checkpoint, own_w, b, index_parts, rng_parts,
                                    counts_parts, bounds_parts)
    finally:
        pool.close()


def _l1r_l2svc_in_pieces(run, checkpoint, own_w, b, index_parts, rng_parts, counts_parts,
                         bounds_parts):
    """l1r_l2svc's run in pieces of passes, its state (w, b, the order of the columns,
    the random state, the shrinking bound, the counts; the parts' copies alike) saved to
    `checkpoint` between two pieces, and resumed from it: the same steps."""
    per_part = dict(w=own_w, index=index_parts, rng=rng_parts, counts=counts_parts,
                    bounds=bounds_parts)
    saved = checkpoint.state()
    setup = True
    if saved is not None:
        run(0)      # sets up yx and the curvature bounds, and a fresh state to replace
        setup = False
        b[:] = saved["b"]
        for name, arrays in per_part.items():
            for part in arrays:
                part[...] = saved[name]
    result = []

    def piece(n_passes):
        nonlocal setup
        result[:] = [run(n_passes, setup)]
        setup = False
        return np.isnan(result[0][1])
    run_in_pieces(piece, checkpoint, lambda: dict(
        b=b, **{name: arrays[0] for name, arrays in per_part.items()}))
    return result[0]


def l1r_lr(columns, row_ptr, y, C, xjneg_sum, unreg_bias, l1_ratio, eps, max_newton_iter,
           max_inner_iter, seed, w, cd_passes, n_threads=None, w0=None, checkpoint=None):
    """-s 6 (newGLMNET, dlinear/kernels/l1r_newglmnet.py) from w = 0 (w is overwritten),
    or from the warm start w0,
    on n_threads threads: the gradient pass of each Newton iteration in ranges of
    columns, the rest of the iteration (coordinate descent, line search) on
    row_split_threads of them in ranges of rows by row_ptr (the CSR rows' pointers), as
    -s 5's. cd_passes receives the CD passes of each Newton iteration. checkpoint: a
    ProblemCheckpoint (dlinear.solvers.checkpoint) the solver's state is saved to after
    a Newton iteration, and resumed from (the same steps). Returns (Newton iterations,
    objective, non-zero weights, inner solves that hit the cap)."""
    col_ptr, row_ind, vals = columns
    w_size = len(col_ptr) - 1
    w[:] = 0.0
    (index, Hdiag, Grad, wpd, exp_wTx, exp_wTx_new, grad_rec, cd_rec,
     scalars) = NG.newton_setup(y, C, w_size)
    if w0 is not None:
        # the stop relative to the violations at w = 0 (LIBLINEAR's first iteration's):
        # there tau_i = C_i / 2, G_j = -sum_i x_ij C_i / 2 + xjneg_sum_j
        scalars[NG.GNORM1_INIT] = _violations_at_zero(
            -0.5 * _column_sums(columns, C) + xjneg_sum, unreg_bias, l1_ratio)
        _newton_state_at(w0, columns, C, unreg_bias, w, wpd, exp_wTx, grad_rec, cd_rec,
                         scalars)
    l2 = 1.0 - l1_ratio
    last_penalized = w_size - 1 if unreg_bias else w_size
    pool = PassPool(n_threads or 1, "l1r")
    ranges = nonzero_ranges(col_ptr, pool.n_threads)
    row_bounds = row_parts(row_ptr, row_split_threads(n_threads, len(vals), w_size))
    n_parts = len(row_bounds) - 1
    starts = part_starts(col_ptr, row_ind, row_bounds)
    partials, arrivals = meeting_place(n_parts)
    ctrl_c = stop_flag()
    # each part's own copies of what every part writes alike (part 0's are the solver's)
    own = [(seed_state(seed), w, index, wpd, scalars)] + [
        (seed_state(seed), w.copy(), index.copy(), wpd.copy(), scalars.copy())
        for _ in range(n_parts - 1)]

    def gradient(j0, j1):
        NG.gradient_columns(col_ptr, row_ind, vals, grad_rec, xjneg_sum, w, l2,
                            last_penalized, j0, j1, Hdiag, Grad)

    def step(t, first):
        rng, w_t, index_t, wpd_t, scalars_t = own[t]
        return NG.newton_step(col_ptr, row_ind, vals, y, C, unreg_bias, l1_ratio, eps,
                              max_inner_iter, first, rng, w_t, index_t, Hdiag, Grad, wpd_t,
                              exp_wTx, exp_wTx_new, grad_rec, cd_rec, scalars_t, t, starts,
                              row_bounds, partials, arrivals, ctrl_c)
    # what a Newton iteration leaves for the next (the parts' copies are alike then)
    state = dict(w=w, wpd=wpd, index=index, scalars=scalars, exp_wTx=exp_wTx,
                 grad_rec=grad_rec, cd_rec=cd_rec, rng=own[0][0], cd_passes=cd_passes)
    newton_iter = 0
    saved = None if checkpoint is None else checkpoint.state()
    if saved is not None:
        newton_iter = int(saved["newton_iter"])
        for name, array in state.items():
            array[...] = saved[name]
        for copies in own[1:]:
            for mine, theirs in zip(copies, own[0]):
                mine[...] = theirs
    try:
        while newton_iter < max_newton_iter:
            pool.run(gradient, ranges)
            arrivals[:] = 0
            it = pool.run(step, [(t, newton_iter == 0) for t in range(n_parts)])[0]
            raise_if_stopped()      # a stopped iteration's state is not saved
            if it < 0:
                break
            cd_passes[newton_iter] = it
            newton_iter += 1
            if checkpoint is not None:
                checkpoint.save_if_due(lambda: dict(state, newton_iter=newton_iter))
    finally:
        pool.close()
    obj, nnz = NG.objective(y, C, unreg_bias, l1_ratio, w, exp_wTx)
    return newton_iter, obj, nnz, int(scalars[NG.INNER_CAPPED])


def _newton_state_at(w0, columns, C, unreg_bias, w, wpd, exp_wTx, grad_rec, cd_rec, scalars):
    """newGLMNET's state (NG.newton_setup's, which is at w = 0) moved to the warm start
    w0: w = wpd = w0, exp(w.x_i) and the rows' records of it, and ||w||_1 over the
    penalized weights."""
    col_ptr, row_ind, vals = columns
    w[:] = w0
    wpd[:] = w0
    wx = np.bincount(row_ind, weights=vals * np.repeat(w0, np.diff(col_ptr)),
                     minlength=len(exp_wTx))
    exp_wTx[:] = np.exp(wx)
    tau = 1.0 / (1.0 + exp_wTx)
    grad_rec[:, NG.TAU] = C * tau
    grad_rec[:, NG.D] = cd_rec[:, NG.D] = C * exp_wTx * tau * tau
    penalized = w0[:-1] if unreg_bias else w0
    scalars[NG.W_NORM] = float(np.abs(penalized).sum())


def _column_sums(columns, row_values) -> np.ndarray:
    """sum_i row_values_i x_ij of every column j of X by columns."""
    col_ptr, row_ind, vals = columns
    column_of_entry = np.repeat(np.arange(len(col_ptr) - 1), np.diff(col_ptr))
    return np.bincount(column_of_entry, weights=vals * row_values[row_ind],
                       minlength=len(col_ptr) - 1)


def _violations_at_zero(G, unreg_bias, l1) -> float:
    """The sum of the weights' optimality violations at w = 0 (kernels' l1_violation):
    |G_j| - l1 beyond the subdifferential, |G_j| for the unregularized bias."""
    violation = np.maximum(0.0, np.abs(G) - l1)
    if unreg_bias:
        violation[-1] = abs(G[-1])
    return float(violation.sum())
