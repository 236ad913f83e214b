"""The fit function of each `-s` (the rows of dlinear.solver_table.SOLVERS).

A fit function takes a SubProblem (one binary, regression or one-class problem) and the
Params and returns a FitResult (dlinear.solvers.task); Crammer-Singer fits all classes at
once.
The solver table is re-exported here for the code that looked it up in this package.
"""
from __future__ import annotations

from ..solver_table import DUAL_MAX_ITER, SOLVER_BY_NAME, SOLVERS, SolverSpec
from .crammer_singer import fit_crammer_singer
from .dual_cd import fit_dual_cd_lr, fit_dual_cd_svc, fit_dual_cd_svr
from .l1r import fit_l1r
from .newton import fit_newton
from .oneclass import fit_oneclass
from .primal_cd import fit_primal_cd_l2svc
from .task import FitResult, SharedColumns, SubProblem, columns_of, starting_w

__all__ = ["SOLVERS", "SOLVER_BY_NAME", "SolverSpec", "DUAL_MAX_ITER", "SubProblem",
           "FitResult", "SharedColumns", "columns_of", "starting_w",
           "FIT_ONE_TASK", "FIT_ALL_CLASSES", "fit_task", "fit_all_classes"]


def _fit_l2r_l2svc(task, params):
    """-s 2: primal coordinate descent with --primal-cd, else LIBLINEAR's Newton method."""
    if getattr(params, "primal_cd", False):
        return fit_primal_cd_l2svc(task, params)
    return fit_newton(task, params)


# solver id -> fit(task, params) -> FitResult
FIT_ONE_TASK = {
    0: fit_newton, 1: fit_dual_cd_svc, 2: _fit_l2r_l2svc, 3: fit_dual_cd_svc,
    5: fit_l1r, 6: fit_l1r, 7: fit_dual_cd_lr,
    11: fit_newton, 12: fit_dual_cd_svr, 13: fit_dual_cd_svr,
    21: fit_oneclass,
}
# solver id -> fit(problem, class_of_row, weighted_C, params, seed) -> FitResult whose w
# is (w_size, nr_class)
FIT_ALL_CLASSES = {4: fit_crammer_singer}


def fit_task(task: SubProblem, params) -> FitResult:
    """Runs the solver params.solver_type on one task."""
    return FIT_ONE_TASK[params.solver_type](task, params)


def fit_all_classes(problem, class_of_row, weighted_C, params, seed: int) -> FitResult:
    """Runs the all-classes solver params.solver_type (Crammer-Singer)."""
    return FIT_ALL_CLASSES[params.solver_type](problem, class_of_row, weighted_C, params, seed)
