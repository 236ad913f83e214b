"""Fit functions of primal coordinate descent for L2-loss SVC (-s 2 with --primal-cd,
batch or --online)."""
import math

from ..threads import raise_if_stopped, stop_flag
from .dual_cd import online_update_budget
from .newton import primal_solver_tol
from .status import Status, note
from .task import FitResult, starting_w


def fit_primal_cd_l2svc(task, params):
    """-s 2 by primal coordinate descent (Chang, Hsieh & Lin 2008) on one binary task;
    batch (random permutation of the features each outer iteration, at most max_iter
    outer iterations) or online (--online: random feature with replacement, at most
    --max-updates updates). Warm-starts from task.w0 when given."""
    from ..kernels.primal_cd_svc import primal_cd_l2svc
    X = task.problem
    colptr, rows, vals = task.columns(with_bias=False)   # the kernel adds the bias
    w = starting_w(task.w0, task.w_size)
    online = bool(params.online)
    budget = online_update_budget(params, task.w_size) if online else 0
    tol_rel = primal_solver_tol(params.eps, task.y, regression=False)
    it, updates, converged, evals, gnorm0, gnorm, obj = primal_cd_l2svc(
        colptr, rows, vals, X.n_features, float(task.bias), task.y, task.C,
        bool(params.regularize_bias), tol_rel, int(params.max_iter), online, budget,
        int(task.seed), w, stop_flag())
    raise_if_stopped()
    what = "windows of n updates" if online else "iter"
    log = [
        f"primal coordinate descent: #{what} = {it}, #updates = {updates}, "
        f"line-search function evaluations = {evals}",
        f"|g0| = {gnorm0:.6e}, |g| = {gnorm:.6e}, tolerance = {tol_rel * gnorm0:.6e}"
        if gnorm >= 0 else f"|g0| = {gnorm0:.6e}, tolerance = {tol_rel * gnorm0:.6e}",
        f"Objective value = {obj:f}",
    ]
    hit = False
    status = Status.CONVERGED
    if not converged:
        if online:
            status |= note(log, Status.MAX_UPDATES, budget=budget)
        else:
            status |= note(log, Status.MAX_ITER)
            hit = True
    n_iter = it if not online else int(math.ceil(updates / max(task.w_size, 1)))
    return FitResult(w=w, n_iter=int(n_iter), log=log, hit_max_iter=hit, status=status)

