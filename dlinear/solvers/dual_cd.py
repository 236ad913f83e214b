"""Fit functions of the dual coordinate-descent solvers: SVC (-s 1, -s 3; one-variable,
two-variable block and online), logistic regression (-s 7) and SVR (-s 12, -s 13)."""
import math

import numpy as np

from ..kernels.bias_cd_svc import bias_dual_cd_svc
from ..kernels.block_cd_svc import block_cd_svc
from ..kernels.dual_cd_lr import dual_cd_lr
from ..kernels.dual_cd_svc import (ACTIVE, ALPHA, IT, NO_TRACE, RESTARTS, STOPPED,
                                   dual_cd_svc, dual_cd_svc_objective, dual_cd_svc_start,
                                   dual_cd_svc_sweeps)
from ..kernels.dual_cd_svr import dual_cd_svr
from ..kernels.online_dual_cd_svc import online_dual_cd_svc
from ..threads import raise_if_stopped, stop_flag
from .parallel_dual_cd import (RUN_LR, RUN_SVR, run_on_threads, scheme_for, solver_threads,
                               svr_scheme)
from .dual_start import balanced, lr_duals, svc_duals, svr_duals
from .checkpoint import run_in_pieces
from .status import Status, note
from .task import FitResult


def starting_alpha(task, params) -> np.ndarray:
    """The SVC dual's starting point: a copy of the warm start task.alpha0 (the -C search
    passes the alpha of the previous C; -s 3's box [0, C_i] is applied, so it is
    feasible for any C), the duals consistent with the warm start task.w0
    (dlinear.solvers.dual_start), or zeros."""
    if task.alpha0 is None:
        if task.w0 is not None:
            return svc_duals(task, task.w0, params.spec.squared_loss)
        return np.zeros(task.problem.n_samples)
    alpha = np.array(task.alpha0, dtype=np.float64)
    if params.spec.loss == "hinge":
        np.minimum(alpha, task.C, out=alpha)
    return alpha


def feasible_warm_start(task, params) -> np.ndarray:
    """The true-bias dual's starting point: zeros, or the warm start task.alpha0 (the -C
    search passes the solution at the previous C) scaled by the largest t <= 1 that keeps
    it in the box [0, U_i] (U_i = C_i for -s 3, unbounded for -s 1; 0 for a row with
    C_i <= 0, which takes no part). Clipping alone would break y^T alpha = 0; scaling
    keeps it. Along the -C grid (C grows) t is 1 and alpha0 is kept as it is. From the
    warm start task.w0: the duals consistent with it, balanced to y^T alpha = 0."""
    if task.alpha0 is None:
        if task.w0 is not None:
            return balanced(svc_duals(task, task.w0, params.spec.squared_loss), task.y)
        return np.zeros(task.problem.n_samples)
    alpha = np.array(task.alpha0, dtype=np.float64)
    if params.spec.loss == "hinge":
        U = np.maximum(task.C, 0.0)
    else:
        U = np.where(task.C > 0.0, np.inf, 0.0)
    over = alpha > U
    if np.any(over):
        alpha *= float(np.min(U[over] / alpha[over]))
    return alpha


def fit_dual_cd_svc(task, params):
    """-s 1 (L2-loss) or -s 3 (L1-loss) by one-variable dual CD on one binary task,
    warm-started from task.alpha0 when given, on task.n_threads threads when the problem
    is large enough (dlinear.solvers.parallel_dual_cd; one thread: the serial kernel).
    Its variants (a true bias, --cd-block 2, --online) are chosen by
    dlinear.solvers._fit_svc_dual."""
    X = task.problem
    alpha = starting_alpha(task, params)
    w = np.zeros(task.w_size)
    if task.checkpoint is not None:
        return _checkpointed_dual_cd_svc(task, params, alpha, w)
    args = (float(task.bias), task.y, task.C, params.spec.squared_loss, float(params.eps),
            int(params.max_iter), int(task.seed), alpha, w)
    threads = solver_threads(task.n_threads, X.nnz)
    if threads > 1:
        n_iter, active, restarts, obj, scheme = run_on_threads(X, args, threads)
        details = [f"{scheme} parallel dual CD on {threads} threads"]
    else:
        n_iter, active, restarts, obj = dual_cd_svc(X.indptr, X.indices, X.data,
                                                    X.n_features, *args, stop_flag(), True,
                                                    NO_TRACE)
        details = []
    raise_if_stopped()
    return dual_svc_result(w, alpha, n_iter, obj, params, [
        f"active set at the end = {active}/{X.n_samples}, shrinking restarts = {restarts}",
        *details])


def _checkpointed_dual_cd_svc(task, params, alpha, w):
    """fit_dual_cd_svc's one-thread run (the model of -m 1) in pieces of sweeps
    (dual_cd_svc_sweeps: the same steps), its state (the duals, w, the order of the rows,
    the random state, the shrinking bounds and counts) saved to task.checkpoint between
    two pieces, and resumed from it."""
    X = task.problem
    l2_loss = params.spec.squared_loss
    inst, index, l, rng, counts, bounds = dual_cd_svc_start(
        X.indptr, X.indices, X.data, X.n_features, float(task.bias), task.y, task.C,
        l2_loss, alpha, w, int(task.seed))
    saved = task.checkpoint.state()
    if saved is not None:
        inst[:, ALPHA] = saved["alpha"]
        for name, array in (("w", w), ("index", index), ("rng", rng), ("counts", counts),
                            ("bounds", bounds)):
            array[:] = saved[name]

    def run(n_sweeps):
        dual_cd_svc_sweeps(X.indptr, X.indices, X.data, X.n_features, float(task.bias),
                           l2_loss, float(params.eps), int(params.max_iter), inst, index,
                           l, rng, counts, bounds, w, n_sweeps, stop_flag())
        raise_if_stopped()      # a stopped sweep's state is not saved
        return counts[STOPPED] == 0 and counts[IT] < params.max_iter

    run_in_pieces(run, task.checkpoint, lambda: dict(
        alpha=inst[:, ALPHA].copy(), w=w, index=index, rng=rng, counts=counts,
        bounds=bounds))
    obj = dual_cd_svc_objective(w, inst, l2_loss, alpha)
    return dual_svc_result(w, alpha, int(counts[IT]), obj, params, [
        f"active set at the end = {int(counts[ACTIVE])}/{X.n_samples}, "
        f"shrinking restarts = {int(counts[RESTARTS])}"])


def dual_svc_result(w, alpha, n_iter, obj, params, details) -> FitResult:
    """The FitResult of a dual SVC solver: LIBLINEAR's closing log lines, then the
    variant's own `details` lines."""
    log = [f"optimization finished, #iter = {n_iter}", f"Objective value = {obj:f}",
           f"nSV = {int(np.count_nonzero(alpha))}", *details]
    return FitResult(w=w, n_iter=int(n_iter), log=log, hit_max_iter=n_iter >= params.max_iter,
                     alpha=alpha)


def fit_block_cd_svc(task, params):
    """-s 1 / -s 3 by two-variable block dual CD (--cd-block 2) on one binary task."""
    X = task.problem
    alpha = starting_alpha(task, params)
    w = np.zeros(task.w_size)
    n_iter, active, restarts, pairs, obj = block_cd_svc(
        X.indptr, X.indices, X.data, X.n_features, float(task.bias), task.y, task.C,
        params.spec.squared_loss, float(params.eps), int(params.max_iter), int(task.seed),
        alpha, w, stop_flag(), True, NO_TRACE)
    raise_if_stopped()
    return dual_svc_result(w, alpha, n_iter, obj, params, [
        f"two-variable blocks updated = {pairs}",
        f"active set at the end = {active}/{X.n_samples}, shrinking restarts = {restarts}"])


def fit_bias_dual_cd_svc(task, params):
    """-s 1 / -s 3 with -B 1 -R: the dual with a true bias b (the multiplier of
    y^T alpha = 0), by two-variable CD (kernels/bias_cd_svc.py), warm-started from
    task.alpha0 when given (feasible_warm_start). The model stores b as
    the weight of the bias feature, b / bias, as LIBLINEAR's -R models do, so any
    LIBLINEAR predict reads it."""
    X = task.problem
    w = np.zeros(task.w_size)
    alpha = feasible_warm_start(task, params)
    n_iter, steps, capped, b, obj, alpha, restarts = bias_dual_cd_svc(
        X.indptr, X.indices, X.data, X.n_features, task.y, task.C, params.spec.squared_loss,
        float(params.eps), int(params.max_iter), w, alpha, stop_flag())
    raise_if_stopped()
    w[X.n_features] = b / task.bias
    result = dual_svc_result(w, alpha, n_iter, obj, params, [
        f"two-variable steps = {steps}, bias b = {b:g}, shrinking restarts = {restarts}"])
    result.hit_max_iter = bool(capped)     # not at max_iter when WSS 2 ended within it
    return result


def online_update_budget(params, n_variables):
    """--max-updates, or by default as many updates as max_iter passes over the variables."""
    n = int(params.max_updates)
    return n if n > 0 else int(params.max_iter) * max(int(n_variables), 1)


def fit_online_dual_cd_svc(task, params):
    """-s 1 / -s 3 by online dual CD (--online: random index with replacement, no
    shrinking) on one binary task. The update budget ends the run; running out of it is
    reported by a "WARNING: reaching max ..." log line (train turns it into a
    ConvergenceWarning), not as LIBLINEAR's iteration cap, so no switch to a primal
    solver follows."""
    X = task.problem
    l = X.n_samples
    budget = online_update_budget(params, l)
    alpha = starting_alpha(task, params)
    w = np.zeros(task.w_size)
    updates, checks, converged, obj = online_dual_cd_svc(
        X.indptr, X.indices, X.data, X.n_features, float(task.bias), task.y, task.C,
        params.spec.squared_loss, float(params.eps), budget, int(task.seed), alpha, w,
        stop_flag())
    raise_if_stopped()
    log = [
        f"optimization finished, #updates = {updates} ({updates / max(l, 1):.2f} passes), "
        f"full stopping checks = {checks}",
        f"Objective value = {obj:f}",
        f"nSV = {int(np.count_nonzero(alpha))}",
    ]
    status = Status.CONVERGED if converged else note(log, Status.MAX_UPDATES, budget=budget)
    return FitResult(w=w, n_iter=int(math.ceil(updates / max(l, 1))), log=log, alpha=alpha,
                     status=status)


def fit_dual_cd_lr(task, params):
    """-s 7: L2-regularized logistic regression in the dual, on one binary task, on
    task.n_threads threads (dlinear.solvers.parallel_dual_cd) when the problem is large
    enough and a scheme serves it; from the duals of the warm start task.w0 when given."""
    X = task.problem
    alpha = np.zeros(2 * X.n_samples) if task.w0 is None else lr_duals(task, task.w0)
    w = np.zeros(task.w_size)
    args = (float(task.bias), task.y, task.C, float(params.eps), int(params.max_iter),
            int(task.seed), alpha, w)
    threads = solver_threads(task.n_threads, X.nnz)
    scheme = scheme_for(RUN_LR, threads)
    details = []
    if scheme:
        n_iter, newton_steps, obj = RUN_LR[scheme](X, *args, threads)
        details = [f"{scheme} parallel dual CD on {threads} threads"]
    else:
        n_iter, newton_steps, obj = dual_cd_lr(X.indptr, X.indices, X.data, X.n_features,
                                               *args, stop_flag())
    raise_if_stopped()
    log = [
        f"optimization finished, #iter = {n_iter}",
        f"Objective value = {obj:f}",
        f"inner Newton steps = {newton_steps}",
        *details,
    ]
    return FitResult(w=w, n_iter=int(n_iter), log=log, hit_max_iter=n_iter >= params.max_iter)


def fit_dual_cd_svr(task, params):
    """-s 12 (L2-loss) or -s 13 (L1-loss) support vector regression in the dual, on
    task.n_threads threads (dlinear.solvers.parallel_dual_cd) when the problem is large
    enough and a scheme serves it; from the duals of the warm start task.w0 when given."""
    X = task.problem
    beta = (np.zeros(X.n_samples) if task.w0 is None else
            svr_duals(task, task.w0, float(params.p)))
    w = np.zeros(task.w_size)
    args = (float(task.bias), task.y, task.C, float(params.p), params.spec.squared_loss,
            float(params.eps), int(params.max_iter), int(task.seed), beta, w)
    threads = solver_threads(task.n_threads, X.nnz)
    scheme = svr_scheme(threads, params.spec.squared_loss, task.bias)
    details = []
    if scheme:
        n_iter, active, restarts, obj = RUN_SVR[scheme](X, *args, threads)
        details = [f"{scheme} parallel dual CD on {threads} threads"]
    else:
        n_iter, active, restarts, obj = dual_cd_svr(X.indptr, X.indices, X.data,
                                                    X.n_features, *args, stop_flag())
    raise_if_stopped()
    log = [
        f"optimization finished, #iter = {n_iter}",
        f"Objective value = {obj:f}",
        f"nSV = {int(np.count_nonzero(beta))}",
        f"active set at the end = {active}/{X.n_samples}, shrinking restarts = {restarts}",
        *details,
    ]
    return FitResult(w=w, n_iter=int(n_iter), log=log, hit_max_iter=n_iter >= params.max_iter)
