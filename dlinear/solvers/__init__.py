"""The solver table: LIBLINEAR's `-s` numbers and everything each one implies.

CLI help, default tolerances, parameter checks, model-file names and the parity tests all
read SOLVERS; adding a solver means one kernel, one fit function and filling in its row.
A fit function takes a BinaryTask (one binary or regression problem) and the Params and
returns a FitResult.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from ..data import Problem, arrays_nbytes


@dataclass
class BinaryTask:
    """One binary classification (y = +1/-1) or regression (y = targets) problem."""

    problem: Problem      # X as raw CSR arrays (y of the problem is ignored)
    y: np.ndarray         # float64 +1/-1 (classification) or targets (regression)
    C: np.ndarray         # float64 per instance: class weight x instance weight x C
    bias: float           # < 0: no bias feature; else the value of the virtual last column
    seed: int
    w0: Optional[np.ndarray] = None
    alpha0: Optional[np.ndarray] = None   # warm start of the dual CD solvers (-s 1, 3)

    @property
    def w_size(self) -> int:
        return self.problem.n_features + (1 if self.bias >= 0 else 0)


def starting_w(w0, w_size: int) -> np.ndarray:
    """The primal solvers' starting point: a float64 copy of the warm start w0, or zeros."""
    if w0 is None:
        return np.zeros(w_size)
    from ..errors import DlinearError
    w = np.array(w0, dtype=np.float64, copy=True).reshape(-1)
    if w.shape[0] != w_size:
        raise DlinearError(f"initial w has {w.shape[0]} values, expected {w_size}")
    return w


@dataclass
class FitResult:
    w: np.ndarray
    n_iter: int
    log: list = field(default_factory=list)  # lines, printed in class order by train()
    hit_max_iter: bool = False
    rho: float = 0.0
    alpha: Optional[np.ndarray] = None    # the dual solution, where the solver has one

    def __sizeof__(self) -> int:    # dask.sizeof of a result kept on a worker
        return object.__sizeof__(self) + arrays_nbytes(self.w, self.alpha)


@dataclass(frozen=True)
class SolverSpec:
    id: int
    name: str             # as in LIBLINEAR model files
    description: str      # as in LIBLINEAR's `train` help
    kind: str             # "classification", "regression" or "oneclass"
    default_eps: float
    fit: Optional[Callable] = None
    probability: bool = False     # -b 1 allowed (logistic regression)
    dual_cd: bool = False         # a dual coordinate-descent solver (iteration cap applies)
    fallback: Optional[int] = None        # primal solver run when the dual cap is hit
    fallback_tol_scale: float = 1.0
    faster_hint: Optional[int] = None     # primal solver suggested when the dual cap is hit
    regularize_bias_optional: bool = False  # -R allowed
    init_sol: bool = False                  # warm start from w0 supported
    # A solver of all classes at once (Crammer-Singer): called as
    # fit_all_classes(problem, class_of_row, weighted_C, params, seed) -> FitResult whose
    # w is (w_size, nr_class); `fit` is then unused.
    fit_all_classes: Optional[Callable] = None

    @property
    def available(self) -> bool:
        return self.fit is not None or self.fit_all_classes is not None


def _fit_dual_cd_svc(task, params):
    from .dual_cd import fit_dual_cd_svc
    return fit_dual_cd_svc(task, params)


def _fit_l2r_l2svc_primal(task, params):
    from .primal_cd import fit_l2r_l2svc_primal
    return fit_l2r_l2svc_primal(task, params)


def _fit_newton(task, params):
    from .newton import fit_newton
    return fit_newton(task, params)


def _fit_l2r_l2svc(task, params):
    """-s 2: primal coordinate descent with --primal-cd, else LIBLINEAR's Newton method."""
    if getattr(params, "primal_cd", False):
        return _fit_l2r_l2svc_primal(task, params)
    return _fit_newton(task, params)


def _fit_dual_cd_lr(task, params):
    from .dual_cd import fit_dual_cd_lr
    return fit_dual_cd_lr(task, params)


def _fit_dual_cd_svr(task, params):
    from .dual_cd import fit_dual_cd_svr
    return fit_dual_cd_svr(task, params)


def _fit_crammer_singer(problem, class_of_row, weighted_C, params, seed):
    from .crammer_singer import fit_crammer_singer
    return fit_crammer_singer(problem, class_of_row, weighted_C, params, seed)


def _fit_l1r(task, params):
    from .l1r import fit_l1r
    return fit_l1r(task, params)


def _fit_oneclass(task, params):
    from .oneclass import fit_oneclass
    return fit_oneclass(task, params)


SOLVERS: dict[int, SolverSpec] = {s.id: s for s in [
    SolverSpec(0, "L2R_LR", "L2-regularized logistic regression (primal)",
               "classification", 0.01, fit=_fit_newton, probability=True,
               regularize_bias_optional=True, init_sol=True),
    SolverSpec(1, "L2R_L2LOSS_SVC_DUAL",
               "L2-regularized L2-loss support vector classification (dual)",
               "classification", 0.1, fit=_fit_dual_cd_svc, dual_cd=True,
               fallback=2, fallback_tol_scale=0.1),
    SolverSpec(2, "L2R_L2LOSS_SVC",
               "L2-regularized L2-loss support vector classification (primal)",
               "classification", 0.01, fit=_fit_l2r_l2svc,
               regularize_bias_optional=True, init_sol=True),
    SolverSpec(3, "L2R_L1LOSS_SVC_DUAL",
               "L2-regularized L1-loss support vector classification (dual)",
               "classification", 0.1, fit=_fit_dual_cd_svc, dual_cd=True, faster_hint=2),
    SolverSpec(4, "MCSVM_CS", "support vector classification by Crammer and Singer",
               "classification", 0.1, fit_all_classes=_fit_crammer_singer),
    SolverSpec(5, "L1R_L2LOSS_SVC", "L1-regularized L2-loss support vector classification",
               "classification", 0.01, fit=_fit_l1r, regularize_bias_optional=True),
    SolverSpec(6, "L1R_LR", "L1-regularized logistic regression",
               "classification", 0.01, fit=_fit_l1r, probability=True,
               regularize_bias_optional=True),
    SolverSpec(7, "L2R_LR_DUAL", "L2-regularized logistic regression (dual)",
               "classification", 0.1, fit=_fit_dual_cd_lr, probability=True, dual_cd=True,
               fallback=0, fallback_tol_scale=0.1),
    SolverSpec(11, "L2R_L2LOSS_SVR", "L2-regularized L2-loss support vector regression (primal)",
               "regression", 0.0001, fit=_fit_newton, regularize_bias_optional=True,
               init_sol=True),
    SolverSpec(12, "L2R_L2LOSS_SVR_DUAL",
               "L2-regularized L2-loss support vector regression (dual)",
               "regression", 0.1, fit=_fit_dual_cd_svr, dual_cd=True, fallback=11,
               fallback_tol_scale=0.001),
    SolverSpec(13, "L2R_L1LOSS_SVR_DUAL",
               "L2-regularized L1-loss support vector regression (dual)",
               "regression", 0.1, fit=_fit_dual_cd_svr, dual_cd=True, faster_hint=11),
    SolverSpec(21, "ONECLASS_SVM", "one-class support vector machine (dual)",
               "oneclass", 0.01, fit=_fit_oneclass),
]}

SOLVER_BY_NAME = {s.name: s for s in SOLVERS.values()}

# LIBLINEAR's cap on outer iterations of its dual CD solvers (train_one in linear.cpp)
DUAL_MAX_ITER = 300
