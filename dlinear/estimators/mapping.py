"""scikit-learn's names of a problem -> the LIBLINEAR solver (`-s` number) that solves it.

LinearSVC and LinearSVR choose by (loss, penalty, dual), read from the solver table's
SolverSpec.loss/penalty/dual; LogisticRegression's penalty, l1_ratio and solver names map
to a LogisticProblem (resolved_penalty, logistic_problem, _elasticnet_problem).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, replace

import numpy as np

from ..solver_table import SOLVERS

# (loss, penalty, dual) -> -s, for the solvers scikit-learn chooses by those three:
# Crammer-Singer (multi_class="crammer_singer") and the one-class SVM (its own class) are
# chosen by other parameters
SKLEARN_SOLVERS = {(s.loss, s.penalty, s.dual): s.id for s in SOLVERS.values()
                   if s.available and not s.all_classes and s.kind != "oneclass"}


def _solver_of_loss(loss: str) -> int:
    return next(s.id for s in SOLVERS.values() if s.loss == loss and s.available)


CRAMMER_SINGER = _solver_of_loss("crammer_singer")
ONECLASS = _solver_of_loss("oneclass")
L2_LOGISTIC = SKLEARN_SOLVERS["logistic_regression", "l2", False]     # also the multinomial
L1_LOGISTIC = SKLEARN_SOLVERS["logistic_regression", "l1", False]     # also the elastic net


def solver_for(loss: str, penalty: str, dual, n_samples: int, n_features: int) -> int:
    """The ``-s`` number of scikit-learn's (loss, penalty, dual) combination.

    Parameters
    ----------
    loss : str
        A loss of the keys of SKLEARN_SOLVERS ("squared_hinge", "hinge", ...).
    penalty : {"l1", "l2"}
    dual : bool or "auto"
        "auto" prefers the dual when n_samples < n_features, as scikit-learn does.
    n_samples, n_features : int
        The data's shape, for ``dual="auto"``.

    Returns
    -------
    int

    Raises
    ------
    ValueError
        For a combination scikit-learn does not support, with its words.
    """
    if dual == "auto":
        order = (True, False) if n_samples < n_features else (False, True)
        for d in order:
            if (loss, penalty, d) in SKLEARN_SOLVERS:
                return SKLEARN_SOLVERS[loss, penalty, d]
        dual = order[1]                  # scikit-learn's _validate_dual_parameter
    if (loss, penalty, dual) in SKLEARN_SOLVERS:
        return SKLEARN_SOLVERS[loss, penalty, dual]
    if not any(k[:2] == (loss, penalty) for k in SKLEARN_SOLVERS):
        raise ValueError(f"Unsupported set of arguments: The combination of "
                         f"penalty={penalty!r} and loss={loss!r} is not supported, "
                         f"Parameters: penalty={penalty!r}, loss={loss!r}, dual={dual!r}")
    raise ValueError(f"Unsupported set of arguments: The combination of penalty={penalty!r} "
                     f"and loss={loss!r} are not supported when dual={dual!r}, "
                     f"Parameters: penalty={penalty!r}, loss={loss!r}, dual={dual!r}")


# ----------------------------------------------------------------- LogisticRegression

LIBLINEAR_SOLVER = "liblinear"
# scikit-learn's other solvers all minimize the multinomial loss for three or more
# classes and leave the intercept out of the penalty
MULTINOMIAL_SOLVERS = ("lbfgs", "newton-cg", "newton-cholesky", "sag", "saga")
SKLEARN_LOGISTIC_SOLVERS = (LIBLINEAR_SOLVER,) + MULTINOMIAL_SOLVERS


@dataclass(frozen=True)
class LogisticProblem:
    """What a LogisticRegression fit solves: the -s number, the softmax loss over all
    classes (Params.multinomial) instead of one-vs-rest, and the intercept left out of
    the penalty (-B 1 -R)."""
    solver_type: int
    multinomial: bool = False
    unpenalized_intercept: bool = False
    l1_ratio: float | None = None         # -s 6's elastic net (Params.l1_ratio)
    unpenalized: bool = False             # penalty=None / C=np.inf: C is UNPENALIZED_C


# C for penalty=None / C=np.inf: LIBLINEAR's objectives need a finite C; at this one the
# penalty 0.5 ||w||^2 weighs 1e-12 of the loss (per row), below the solvers' tolerance,
# and the Hessian (identity + C X'DX) stays positive definite on separable data
UNPENALIZED_C = 1e12


def resolved_penalty(penalty, l1_ratio, C):
    """The penalty, "l2", "l1", "elasticnet" or None (none), as scikit-learn 1.9 reads
    penalty, l1_ratio and C, with its warnings: `penalty` is deprecated there in favour
    of l1_ratio (0: L2, 1: L1, in between: elastic net) and C=np.inf (no penalty)."""
    if penalty == "deprecated":
        if l1_ratio is None:
            warnings.warn("'l1_ratio=None' was deprecated in version 1.8 and will trigger "
                          "an error in 1.10. Use 0<=l1_ratio<=1 instead.", FutureWarning,
                          stacklevel=6)
            resolved = "l2"
        else:
            resolved = {0: "l2", 1: "l1"}.get(l1_ratio, "elasticnet")
        if C == np.inf:
            resolved = None
    else:
        resolved = penalty
        if penalty is None and C != 1.0:
            warnings.warn("Setting penalty=None will ignore the C and l1_ratio parameters",
                          UserWarning, stacklevel=6)
        warnings.warn("'penalty' was deprecated in version 1.8 and will be removed in 1.10. "
                      "To avoid this warning, leave 'penalty' set to its default value and "
                      "use 'l1_ratio' or 'C' instead. Use l1_ratio=0 instead of "
                      "penalty='l2', l1_ratio=1 instead of penalty='l1', l1_ratio set to a "
                      "float between 0 and 1 instead of penalty='elasticnet', and C=np.inf "
                      "instead of penalty=None.", FutureWarning, stacklevel=6)
    if resolved != "elasticnet" and l1_ratio is not None and 0 < l1_ratio < 1:
        warnings.warn(f"l1_ratio parameter is only used when penalty is 'elasticnet'. Got "
                      f"(penalty={resolved})", UserWarning, stacklevel=6)
    if (penalty == "l2" and l1_ratio != 0) or (penalty == "l1" and l1_ratio != 1):
        warnings.warn(f"Inconsistent values: penalty={penalty} with l1_ratio={l1_ratio}. "
                      "penalty is deprecated. Please use l1_ratio only.", UserWarning,
                      stacklevel=6)
    if resolved == "elasticnet" and l1_ratio is None:
        raise ValueError("l1_ratio must be specified when penalty is elasticnet.")
    return resolved


def logistic_problem(solver, penalty, dual, multi_class, n_classes, n_samples, n_features,
                     l1_ratio=None) -> LogisticProblem:
    """The problem of LogisticRegression(solver=..., penalty) on n_classes classes.

    - "liblinear": scikit-learn's liblinear: -s 0 (dual=False) or -s 7 (dual=True) for
      L2, -s 6 for L1, the intercept a penalized feature of value intercept_scaling;
      binary only, as in scikit-learn 1.9 (dlinear: multi_class="ovr" for one-vs-rest);
    - "lbfgs", "newton-cg", "newton-cholesky", "sag", "saga": the binary logistic loss
      for two classes, the multinomial loss for more, the intercept not penalized
      (-B 1 -R); dlinear solves them all by Newton (-s 0, the multinomial -s 0) and
      saga's L1 by newGLMNET (-s 6 -R, binary or multi_class="ovr");
    - None: LIBLINEAR's mapping (-s 0, 7, 6 by penalty and dual, one-vs-rest, the
      intercept penalized), or multi_class="multinomial"; an int: that -s number.
    scikit-learn's errors for the combinations it refuses keep its words; where dlinear
    has no solver for the problem, a ValueError names the nearest supported choice. The
    parameters' own values have been validated (LogisticRegression._parameter_constraints)."""
    several = n_classes is not None and n_classes > 2
    if isinstance(solver, str):     # one of SKLEARN_LOGISTIC_SOLVERS (validated)
        # scikit-learn's _check_solver, in its words
        if solver not in (LIBLINEAR_SOLVER, "saga") and penalty not in ("l2", None):
            raise ValueError(f"Solver {solver} supports only 'l2' or None penalties, got "
                             f"{penalty} penalty.")
        if solver != LIBLINEAR_SOLVER and dual:
            raise ValueError(f"Solver {solver} supports only dual=False, got dual={dual}")
        if penalty == "elasticnet" and solver != "saga":
            raise ValueError(f"Only 'saga' solver supports elasticnet penalty, got "
                             f"solver={solver}.")
        if solver == LIBLINEAR_SOLVER and penalty is None:
            raise ValueError("C=np.inf as well as penalty=None is not supported for the "
                             "liblinear solver")
    if penalty is None:         # Newton's -s 0 at UNPENALIZED_C (a finite C: LIBLINEAR's)
        problem = logistic_problem(solver, "l2", dual, multi_class, n_classes, n_samples,
                                   n_features)
        return replace(problem, unpenalized=True)
    if penalty == "elasticnet" and solver == "saga" and l1_ratio == 0:
        penalty = "l2"          # no L1 part: the L2 problem, by the L2 solver (Newton)
    if penalty == "elasticnet":
        return _elasticnet_problem(solver, l1_ratio, multi_class, n_classes)
    if solver in MULTINOMIAL_SOLVERS:
        if multi_class == "ovr" or not (several or multi_class == "multinomial"):
            return LogisticProblem(L2_LOGISTIC if penalty == "l2" else L1_LOGISTIC,
                                   unpenalized_intercept=True)
        if penalty == "l1":
            raise ValueError(f"solver={solver!r} with l1_ratio=1 (L1) on {n_classes} classes "
                             "is the L1-penalized multinomial model, which dlinear has no "
                             "solver for: multi_class='ovr' trains one-vs-rest L1 (-s 6), "
                             "l1_ratio=0 the L2 multinomial model")
        return LogisticProblem(L2_LOGISTIC, multinomial=True, unpenalized_intercept=True)
    if solver == LIBLINEAR_SOLVER:
        if multi_class == "multinomial":
            raise ValueError("Solver liblinear does not support a multinomial backend.")
        if several and multi_class != "ovr":
            raise ValueError("The 'liblinear' solver does not support multiclass "
                             "classification (n_classes >= 3). Either use another solver or "
                             "wrap the estimator in a OneVsRestClassifier to keep applying a "
                             "one-versus-rest scheme (dlinear: or multi_class='ovr').")
        return LogisticProblem(solver_for("logistic_regression", penalty, dual, n_samples,
                                          n_features))
    if multi_class == "multinomial":
        if penalty != "l2" or (solver is not None and solver != L2_LOGISTIC):
            raise ValueError("multi_class='multinomial' is L2-regularized logistic "
                             "regression by Newton (-s 0) only")
        return LogisticProblem(L2_LOGISTIC, multinomial=True)
    if solver is not None:
        return LogisticProblem(solver)
    return LogisticProblem(solver_for("logistic_regression", penalty, dual, n_samples,
                                      n_features))


def _elasticnet_problem(solver, l1_ratio, multi_class, n_classes) -> LogisticProblem:
    """The elastic net (penalty="elasticnet", or 0 < l1_ratio < 1): -s 6's newGLMNET with
    l1_ratio ||w||_1 + (1 - l1_ratio)/2 ||w||^2 + C sum loss (Params.l1_ratio). "saga"
    is scikit-learn's problem: the intercept unpenalized (-B 1 -R), binary, or one-vs-rest
    with multi_class="ovr" (for three or more classes saga fits the multinomial loss,
    which dlinear has no elastic-net solver for). None or 6 is LIBLINEAR's way: one-vs-rest,
    the intercept a penalized feature. (logistic_problem has already raised scikit-learn's
    errors for the other solver names and for dual=True with them.)"""
    if l1_ratio is None:
        raise ValueError("l1_ratio must be specified when penalty is elasticnet.")
    if solver == "saga":
        if n_classes is not None and n_classes > 2 and multi_class != "ovr":
            raise ValueError(f"solver='saga' with the elastic net on {n_classes} classes is "
                             "the elastic-net multinomial model, which dlinear has no solver "
                             "for: multi_class='ovr' trains it one-vs-rest (-s 6)")
        return LogisticProblem(L1_LOGISTIC, unpenalized_intercept=True,
                               l1_ratio=float(l1_ratio))
    if solver is not None and solver != L1_LOGISTIC:
        raise ValueError(f"the elastic net is solved by -s 6 (newGLMNET) only; got "
                         f"solver={solver!r}: use solver='saga', None or 6")
    if multi_class == "multinomial":
        raise ValueError("dlinear has no multinomial elastic net: use multi_class='ovr'")
    return LogisticProblem(L1_LOGISTIC, l1_ratio=float(l1_ratio))
