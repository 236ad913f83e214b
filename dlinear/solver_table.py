"""The solver table: LIBLINEAR's `-s` numbers and everything each one implies.

CLI help, default tolerances, parameter checks, model-file names and the parity tests all
read SOLVERS. It is plain data at the bottom of the layers, so model files and parameter
checks know the solvers without importing them; the fit function of each row is in
dlinear.solvers (FIT_ONE_TASK, FIT_ALL_CLASSES). Adding a solver means one kernel, one fit
function, its entry there and its row here.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class SolverSpec:
    id: int
    name: str             # as in LIBLINEAR model files
    description: str      # as in LIBLINEAR's `train` help
    kind: str             # "classification", "regression" or "oneclass"
    default_eps: float
    # the problem, in scikit-learn's words where it has them
    loss: str             # logistic_regression, squared_hinge, hinge, squared_epsilon_insensitive,
                          # epsilon_insensitive, crammer_singer, oneclass
    penalty: str          # "l2" or "l1"
    dual: bool            # solved in the dual (dual variables per row)
    probability: bool = False     # -b 1 allowed (logistic regression)
    dual_cd: bool = False         # a dual coordinate-descent solver (iteration cap applies)
    fallback: Optional[int] = None        # primal solver run when the dual cap is hit
    fallback_tol_scale: float = 1.0
    faster_hint: Optional[int] = None     # primal solver suggested when the dual cap is hit
    regularize_bias_optional: bool = False  # -R allowed
    init_sol: bool = False                  # warm start from w0 supported
    # A solver of all classes at once (Crammer-Singer): dlinear.solvers.FIT_ALL_CLASSES
    # holds its fit function, fit(problem, class_of_row, weighted_C, params, seed) ->
    # FitResult whose w is (w_size, nr_class); the others fit one task at a time
    # (dlinear.solvers.FIT_ONE_TASK).
    all_classes: bool = False
    # False: a row known to model files and help texts, but with no fit function in this
    # version (tests/test_layers.py checks that every available row has one)
    available: bool = True


SOLVERS: dict[int, SolverSpec] = {s.id: s for s in [
    SolverSpec(0, "L2R_LR", "L2-regularized logistic regression (primal)",
               "classification", 0.01, "logistic_regression", "l2", False,
               probability=True, regularize_bias_optional=True, init_sol=True),
    SolverSpec(1, "L2R_L2LOSS_SVC_DUAL",
               "L2-regularized L2-loss support vector classification (dual)",
               "classification", 0.1, "squared_hinge", "l2", True, dual_cd=True,
               fallback=2, fallback_tol_scale=0.1, regularize_bias_optional=True),
    SolverSpec(2, "L2R_L2LOSS_SVC",
               "L2-regularized L2-loss support vector classification (primal)",
               "classification", 0.01, "squared_hinge", "l2", False,
               regularize_bias_optional=True, init_sol=True),
    SolverSpec(3, "L2R_L1LOSS_SVC_DUAL",
               "L2-regularized L1-loss support vector classification (dual)",
               "classification", 0.1, "hinge", "l2", True, dual_cd=True, faster_hint=2,
               regularize_bias_optional=True),
    SolverSpec(4, "MCSVM_CS", "support vector classification by Crammer and Singer",
               "classification", 0.1, "crammer_singer", "l2", True, all_classes=True),
    SolverSpec(5, "L1R_L2LOSS_SVC", "L1-regularized L2-loss support vector classification",
               "classification", 0.01, "squared_hinge", "l1", False,
               regularize_bias_optional=True),
    SolverSpec(6, "L1R_LR", "L1-regularized logistic regression",
               "classification", 0.01, "logistic_regression", "l1", False,
               probability=True, regularize_bias_optional=True),
    SolverSpec(7, "L2R_LR_DUAL", "L2-regularized logistic regression (dual)",
               "classification", 0.1, "logistic_regression", "l2", True,
               probability=True, dual_cd=True, fallback=0, fallback_tol_scale=0.1),
    SolverSpec(11, "L2R_L2LOSS_SVR", "L2-regularized L2-loss support vector regression (primal)",
               "regression", 0.0001, "squared_epsilon_insensitive", "l2",
               False, regularize_bias_optional=True, init_sol=True),
    SolverSpec(12, "L2R_L2LOSS_SVR_DUAL",
               "L2-regularized L2-loss support vector regression (dual)",
               "regression", 0.1, "squared_epsilon_insensitive", "l2", True,
               dual_cd=True, fallback=11, fallback_tol_scale=0.001),
    SolverSpec(13, "L2R_L1LOSS_SVR_DUAL",
               "L2-regularized L1-loss support vector regression (dual)",
               "regression", 0.1, "epsilon_insensitive", "l2", True,
               dual_cd=True, faster_hint=11),
    SolverSpec(21, "ONECLASS_SVM", "one-class support vector machine (dual)",
               "oneclass", 0.01, "oneclass", "l2", True),
]}

SOLVER_BY_NAME = {s.name: s for s in SOLVERS.values()}

# LIBLINEAR's cap on outer iterations of its dual CD solvers (train_one in linear.cpp)
DUAL_MAX_ITER = 300
