"""The fit function of each `-s` (the rows of dlinear.solver_table.SOLVERS).

A fit function takes a SubProblem (one binary, regression or one-class problem) and the
Params and returns a FitResult (dlinear.solvers.task); Crammer-Singer fits all classes at
once.
The solver table is re-exported here for the code that looked it up in this package.
"""
from __future__ import annotations

from ..solver_table import DUAL_MAX_ITER, SOLVER_BY_NAME, SOLVERS, SolverSpec
from .crammer_singer import fit_crammer_singer
from .dual_cd import (fit_bias_dual_cd_svc, fit_block_cd_svc, fit_dual_cd_lr, fit_dual_cd_svc,
                      fit_dual_cd_svr, fit_online_dual_cd_svc)
from .l1r import fit_l1r
from .newton import fit_newton
from .oneclass import fit_oneclass
from .primal_cd import fit_primal_cd_l2svc
from .task import FitResult, SharedColumns, SubProblem, columns_of, starting_w

__all__ = ["SOLVERS", "SOLVER_BY_NAME", "SolverSpec", "DUAL_MAX_ITER", "SubProblem",
           "FitResult", "SharedColumns", "columns_of", "starting_w",
           "FIT_ONE_TASK", "FIT_ALL_CLASSES", "fit_function", "fit_task", "fit_all_classes"]


# solver id -> fit(task, params) -> FitResult
FIT_ONE_TASK = {
    0: fit_newton, 1: fit_dual_cd_svc, 2: fit_newton, 3: fit_dual_cd_svc,
    5: fit_l1r, 6: fit_l1r, 7: fit_dual_cd_lr,
    11: fit_newton, 12: fit_dual_cd_svr, 13: fit_dual_cd_svr,
    21: fit_oneclass,
}
# solver id -> fit(problem, class_of_row, weighted_C, params, seed) -> FitResult whose w
# is (w_size, nr_class)
FIT_ALL_CLASSES = {4: fit_crammer_singer}


def fit_function(params, bias: float):
    """The fit function of the solver params.solver_type in the variant its options ask
    for, on a task with this bias: -s 2 by primal CD (--primal-cd, -s 2 only); the SVC
    duals -s 1 / -s 3 with a true bias (-R with bias >= 0), by two-variable blocks
    (--cd-block 2) or online (--online); otherwise its FIT_ONE_TASK entry."""
    if params.primal_cd:
        return fit_primal_cd_l2svc
    fit = FIT_ONE_TASK[params.solver_type]
    if fit is fit_dual_cd_svc:
        if not params.regularize_bias and bias >= 0:
            return fit_bias_dual_cd_svc
        if params.cd_block == 2:
            return fit_block_cd_svc
        if params.online:
            return fit_online_dual_cd_svc
    return fit


def fit_task(task: SubProblem, params) -> FitResult:
    """Runs the solver params.solver_type, in the variant its options ask for, on one
    task."""
    return fit_function(params, task.bias)(task, params)


def fit_all_classes(problem, class_of_row, weighted_C, params, seed: int) -> FitResult:
    """Runs the all-classes solver params.solver_type (Crammer-Singer)."""
    return FIT_ALL_CLASSES[params.solver_type](problem, class_of_row, weighted_C, params, seed)
