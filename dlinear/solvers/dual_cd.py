"""Fit functions of the dual coordinate-descent SVC solvers (-s 1, -s 3)."""
import numpy as np

from ..kernels.dual_cd_svc import dual_cd_svc
from . import FitResult


def fit_dual_cd_svc(task, params):
    """-s 1 (L2-loss) or -s 3 (L1-loss) on one binary task."""
    X = task.problem
    alpha = np.zeros(X.n_samples)
    w = np.zeros(task.w_size)
    n_iter, active, restarts, obj = dual_cd_svc(
        X.indptr, X.indices, X.data, X.n_features, float(task.bias), task.y, task.C,
        params.solver_type == 1, float(params.eps), int(params.max_iter), int(task.seed),
        alpha, w)
    log = [
        f"optimization finished, #iter = {n_iter}",
        f"Objective value = {obj:f}",
        f"nSV = {int(np.count_nonzero(alpha))}",
        f"active set at the end = {active}/{X.n_samples}, shrinking restarts = {restarts}",
    ]
    return FitResult(w=w, n_iter=int(n_iter), log=log, hit_max_iter=n_iter >= params.max_iter)
