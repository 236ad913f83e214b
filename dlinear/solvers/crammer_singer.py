"""Fit function of Crammer and Singer's multi-class SVM (-s 4), and its primal objective."""
from __future__ import annotations


import numpy as np

from ..kernels.mcsvm_cs import mcsvm_cs
from ..params import class_C
from ..threads import raise_if_stopped, stop_flag
from .dual_start import crammer_singer_duals
from .status import Status, note
from .task import FitResult

# LIBLINEAR's Solver_MCSVM_CS cap on outer iterations (passes; not -s 1/-s 3's 300)
MCSVM_MAX_OUTER_ITER = 100000


def fit_crammer_singer(problem, class_of_row, weighted_C, params, seed,
                       max_outer_iter: int = MCSVM_MAX_OUTER_ITER, w0=None) -> FitResult:
    """All classes at once; w is (w_size, nr_class). C of row i is weighted_C[class of i]
    times its instance weight. w0 (w_size, nr_class): the warm start, from the duals
    consistent with it (dlinear.solvers.dual_start)."""
    bias = float(params.bias)
    y = np.ascontiguousarray(class_of_row, dtype=np.int64)
    weighted_C = np.asarray(weighted_C, dtype=np.float64)
    C = weighted_C[y]
    if problem.sample_weight is not None:
        C = C * problem.sample_weight
    C = np.ascontiguousarray(C, dtype=np.float64)
    nr_class = len(weighted_C)
    w_size = problem.n_features + (1 if bias >= 0 else 0)
    w = np.zeros((w_size, nr_class))
    alpha = (np.zeros((problem.n_samples, nr_class)) if w0 is None else
             crammer_singer_duals(problem, bias, y, C, w0))
    n_iter, obj, nSV, _ = mcsvm_cs(
        problem.indptr, problem.indices, problem.data, int(problem.n_features), bias, y, C,
        float(params.eps), int(max_outer_iter), int(seed), alpha, w, stop_flag())
    raise_if_stopped()
    log = [f"optimization finished, #iter = {n_iter}"]
    hit = n_iter >= max_outer_iter
    status = note(log, Status.MAX_ITER) if hit else Status.CONVERGED
    log += [f"Objective value = {obj:f}", f"nSV = {nSV}"]
    return FitResult(w=w, n_iter=int(n_iter), log=log, hit_max_iter=hit, status=status)


def crammer_singer_primal(problem, model, params) -> float:
    """0.5 sum_m ||w_m||^2 + sum_i C_i max_m (e_i^m + w_m.x_i - w_{y_i}.x_i), the primal
    whose dual LIBLINEAR's Solver_MCSVM_CS solves (e_i^m = 0 if m == y_i else 1; C_i the
    class's weighted C times the instance weight). Its optimum is minus the dual optimum."""
    X = problem.to_scipy()
    if model.bias >= 0:
        import scipy.sparse as sp   # here: a run that needs no objective never imports it
        X = sp.hstack([X, np.full((problem.n_samples, 1), model.bias)], format="csr")
    W = np.asarray(model.w, dtype=np.float64).reshape(model.w_size, model.nr_class)
    position = {lab: k for k, lab in enumerate(model.label.tolist())}
    y = np.array([position[int(v)] for v in problem.y], dtype=np.int64)
    C = class_C(model.label, params)[0][y]
    if problem.sample_weight is not None:
        C = C * problem.sample_weight
    Z = np.asarray(X @ W)
    rows = np.arange(problem.n_samples)
    margins = 1.0 + Z - Z[rows, y][:, None]
    margins[rows, y] = 0.0
    return float(0.5 * (W * W).sum() + (C * margins.max(axis=1)).sum())
