"""Fit function of the one-class SVM (-s 21, `-n nu`), and its objectives.

LIBLINEAR's scaled dual (see dlinear/kernels/oneclass.py) has box 0 <= alpha_i <= 1 and
ignores C; the box here is the instance weight (1 without weights), so `-c` is ignored as
in LIBLINEAR. The model keeps w and rho; decision value w.x - rho, label +1 if > 0.
"""
from __future__ import annotations


import numpy as np

from ..kernels.oneclass import oneclass_svm
from ..predict import decision_values
from ..threads import raise_if_stopped, stop_flag
from .dual_start import oneclass_duals
from .status import Status, note
from .task import FitResult

ONECLASS_MAX_OUTER_ITER = 1000   # outer iterations, as LIBLINEAR 2.50's solve_oneclass_svm


def _upper_bounds(problem) -> np.ndarray:
    if problem.sample_weight is not None:
        return np.ascontiguousarray(problem.sample_weight, dtype=np.float64)
    return np.ones(problem.n_samples)


def fit_oneclass(task, params, max_outer_iter: int = ONECLASS_MAX_OUTER_ITER) -> FitResult:
    X = task.problem
    U = _upper_bounds(X)
    warm = task.w0 is not None
    alpha = oneclass_duals(task, task.w0, float(params.nu), U) if warm else np.zeros(X.n_samples)
    w = np.zeros(task.w_size)
    n_iter, obj, nSV, rho, _ = oneclass_svm(
        X.indptr, X.indices, X.data, int(X.n_features), float(task.bias), U,
        float(params.nu), float(params.eps), int(max_outer_iter), alpha, w, stop_flag(),
        warm)
    raise_if_stopped()
    log = [f"optimization finished, #iter = {n_iter}"]
    hit = n_iter >= max_outer_iter
    status = note(log, Status.MAX_ITER) if hit else Status.CONVERGED
    log += [f"Objective value = {obj:f}", f"nSV = {nSV}", f"rho = {rho:f}"]
    return FitResult(w=w, n_iter=int(n_iter), log=log, hit_max_iter=hit, rho=float(rho),
                     status=status)


def oneclass_objectives(problem, model, nu: float):
    """(dual, primal) of the scaled one-class problem at the model's (w, rho):
    dual 0.5 ||w||^2 (to be minimised over feasible alpha), primal
    0.5 ||w||^2 - nu sum_i U_i rho + sum_i U_i max(0, rho - w.x_i), whose optimum is
    minus the dual optimum (U_i the instance weight, 1 in LIBLINEAR)."""
    U = _upper_bounds(problem)
    w = np.asarray(model.w, dtype=np.float64).ravel()
    half_sq = 0.5 * float(w @ w)
    slack = -decision_values(model, problem)[:, 0]          # rho - w.x_i
    primal = half_sq - nu * U.sum() * model.rho + float((U * np.maximum(0.0, slack)).sum())
    return half_sq, primal
