"""The fit function of each `-s`, bound here to its row of the registry
(dlinear.solver_table.SOLVERS, SolverSpec.fit).

A fit function takes a SubProblem (one binary, regression or one-class problem) and the
Params and returns a FitResult (dlinear.solvers.task); Crammer-Singer fits all classes at
once (SolverSpec.all_classes). A solver whose options choose among variants (-s 1 and 3:
a true bias, --cd-block 2, --online; -s 2: --primal-cd) is bound to the one function that
chooses, so every variant runs through its row's binding.
The registry is re-exported here for the code that looked it up in this package.
"""
from __future__ import annotations

from ..solver_table import DUAL_MAX_ITER, SOLVER_BY_NAME, SOLVERS, SolverSpec, bind_fits
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
           "fit_task", "fit_all_classes"]


def _fit_svc_dual(task, params):
    """-s 1 / -s 3 in the variant the options ask for: the dual with a true bias (-R with
    a bias), two-variable blocks (--cd-block 2), online (--online), else one-variable
    dual CD."""
    if not params.regularize_bias and task.bias >= 0:
        return fit_bias_dual_cd_svc(task, params)
    if params.cd_block == 2:
        return fit_block_cd_svc(task, params)
    if params.online:
        return fit_online_dual_cd_svc(task, params)
    return fit_dual_cd_svc(task, params)


def _fit_l2r_l2svc(task, params):
    """-s 2: primal coordinate descent with --primal-cd, else LIBLINEAR's Newton method."""
    if params.primal_cd:
        return fit_primal_cd_l2svc(task, params)
    return fit_newton(task, params)


# -s -> fit(task, params), or for an all-classes solver fit(problem, class_of_row,
# weighted_C, params, seed)
bind_fits({
    0: fit_newton, 1: _fit_svc_dual, 2: _fit_l2r_l2svc, 3: _fit_svc_dual,
    4: fit_crammer_singer, 5: fit_l1r, 6: fit_l1r, 7: fit_dual_cd_lr,
    11: fit_newton, 12: fit_dual_cd_svr, 13: fit_dual_cd_svr,
    21: fit_oneclass,
})


def fit_task(task: SubProblem, params) -> FitResult:
    """Runs the solver params.solver_type, in the variant its options ask for, on one
    task."""
    return params.spec.fit(task, params)


def fit_all_classes(problem, class_of_row, weighted_C, params, seed: int) -> FitResult:
    """Runs the all-classes solver params.solver_type (Crammer-Singer), from the warm
    start params.init_sol (w_size, nr_class) when given."""
    if params.init_sol is not None:
        return params.spec.fit(problem, class_of_row, weighted_C, params, seed,
                               w0=params.init_sol)
    return params.spec.fit(problem, class_of_row, weighted_C, params, seed)
