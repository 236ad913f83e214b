"""LogisticRegression: LIBLINEAR's logistic regression (-s 0, 6, 7, the multinomial -s 0
and -s 6's elastic net) under scikit-learn's parameters (mapping.logistic_problem)."""
from __future__ import annotations

import os

from dataclasses import replace
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Hidden, Interval, StrOptions

from ..model import Model
from ..params import Params
from ..predict import probabilities
from ..solver_table import SOLVERS
from .dask_helpers import is_dask, map_probabilities
from .base import _LiblinearClassifier, shown
from .mapping import (UNPENALIZED_C, LIBLINEAR_SOLVER, SKLEARN_LOGISTIC_SOLVERS, LogisticProblem, logistic_problem,
                      resolved_penalty)
from .validation import CLASS_WEIGHT, LINEAR, SOLVER_NUMBERS


# scikit-learn's words when its solver of that name stops at max_iter (what its users
# filter on); dlinear's own message follows as {detail}
SKLEARN_CONVERGENCE_MESSAGES = {
    "lbfgs": "lbfgs failed to converge after {n_iter} iterations ({detail}). Increase the "
             "number of iterations (max_iter) or scale the data.",
    "newton-cg": "newton-cg failed to converge ({detail}). Increase the number of "
                 "iterations.",
    "newton-cholesky": "Newton solver did not converge after {n_iter} iterations ({detail}).",
    "sag": "The max_iter was reached which means the coef_ did not converge ({detail}).",
    "saga": "The max_iter was reached which means the coef_ did not converge ({detail}).",
    LIBLINEAR_SOLVER: "Liblinear failed to converge, increase the number of iterations. "
                      "({detail})",
}


class LogisticRegression(_LiblinearClassifier):
    """Logistic regression with scikit-learn 1.9's parameters (LIBLINEAR -s 0, 6, 7).

    Every parameter scikit-learn's ``LogisticRegression`` takes is taken; the defaults
    are LIBLINEAR's (``solver=None``: -s 0, one-vs-rest, the intercept penalized).

    Parameters
    ----------
    penalty : {"l1", "l2", "elasticnet"} or None, deprecated
        scikit-learn 1.8 deprecated it for ``l1_ratio``; it still works and warns as
        there.
    C : float, default 1.0
        ``-c``; ``np.inf`` (scikit-learn's "no penalty") trains at C = 1e12, since
        LIBLINEAR's objectives need a finite C.
    l1_ratio : float, default 0.0
        0 is L2, 1 is L1 (-s 6), between them the elastic net (-s 6 ``--l1-ratio``).
    dual : bool, default False
        True is -s 7.
    tol : float or None, default None
        ``-e``; None is the solver's default.
    fit_intercept : bool, default True
    intercept_scaling : float, default 1.0
        ``-B`` for LIBLINEAR's way (a penalized bias feature).
    class_weight : dict, "balanced" or None, default None
        Multiplies C per class (``-wi``).
    random_state : int, numpy.random.RandomState or None, default None
        ``--seed``.
    solver : str, int or None, default None
        scikit-learn's names give scikit-learn's problems: "liblinear" is -s 0 / 7 (L2)
        or -s 6 (L1) with the intercept penalized; "lbfgs", "newton-cg",
        "newton-cholesky", "sag" and "saga" the binary or, for three or more classes,
        multinomial loss with the intercept unpenalized, all solved by dlinear's Newton
        (-s 0; saga's L1 and elastic net by -s 6). None is LIBLINEAR's way: -s 0, 7 or 6
        by penalty and dual, one-vs-rest. An int is that ``-s`` number.
    max_iter : int, default 300
        The dual solver's iteration cap.
    verbose : int, default 0
        1 prints LIBLINEAR's progress lines to stderr.
    warm_start : bool, default False
        Start -s 0 (also multinomial) from the previous ``coef_`` and ``intercept_``.
    checkpoint : str, os.PathLike or None, default None
        A directory where ``fit`` saves the solver's state every 10 seconds and resumes
        from it when run again on the same data (docs/guide/checkpoints.rst); in process,
        for the solvers -s 0, 1, 2, 3, 5, 6, 11.
    n_jobs : int or None, default None
        As for :class:`LinearSVC`.
    multi_class : {"auto", "ovr", "multinomial"}, default "auto"
        dlinear's: the solver's own way, one-vs-rest with any solver, or multinomial.
    partition : bool or None, default None
        Dask input only: as :class:`LinearSVC`'s, for -s 7 (``dual=True``); for -s 0,
        True map-reduces over the parts, False fits the classes on a copy per worker,
        None a copy for one-vs-rest with 3+ classes when it fits one worker; for -s 6
        (``penalty="l1"`` or ``"elasticnet"``), True trains by OWL-QN map-reduced over
        the parts, False on a copy per worker, None OWL-QN when a copy would not fit.
    client : distributed.Client or None, default None
        As for :class:`LinearSVC`.

    Attributes
    ----------
    coef_ : numpy.ndarray of shape (1, n_features) or (n_classes, n_features)
    intercept_ : numpy.ndarray of shape (1,) or (n_classes,)
        A multinomial model's intercepts sum to 0.
    classes_ : numpy.ndarray
    n_iter_ : numpy.ndarray
        (1,) for a binary or multinomial fit, (n_classes,) for one-vs-rest.
    solver_type_ : int
    model_ : dlinear.Model

    Raises
    ------
    ValueError
        In ``fit``, for a combination scikit-learn refuses (with its words), or a problem
        dlinear has no solver for (the L1 or elastic-net multinomial model), naming the
        nearest choice. No penalty (``C=np.inf`` or ``penalty=None``) trains at C = 1e12.
    """

    # C=np.inf is scikit-learn's spelling of no penalty (trained at mapping.UNPENALIZED_C:
    # dlinear's solvers need a finite C); penalty is deprecated in scikit-learn 1.8 for
    # l1_ratio
    _parameter_constraints: dict = {
        **LINEAR,
        "C": [Interval(Real, 0.0, None, closed="right")],
        "penalty": [StrOptions({"l1", "l2", "elasticnet"}), Hidden(StrOptions({"deprecated"})),
                    None],
        "l1_ratio": [Interval(Real, 0.0, 1.0, closed="both"), None],
        "class_weight": CLASS_WEIGHT,
        "solver": [StrOptions(set(SKLEARN_LOGISTIC_SOLVERS)), SOLVER_NUMBERS, None],
        "warm_start": ["boolean"],
        "checkpoint": [str, os.PathLike, None],
        "multi_class": [StrOptions({"auto", "ovr", "multinomial"})],
        # 0: the starting point (zeros, or the previous fit's with warm_start), as
        # scikit-learn's Newton solvers
        "max_iter": [Interval(Integral, 0, None, closed="left")],
    }

    def __init__(self, penalty="deprecated", *, C=1.0, l1_ratio=0.0, dual=False, tol=None,
                 fit_intercept=True, intercept_scaling=1.0, class_weight=None,
                 random_state=None, solver=None, max_iter=300, verbose=0, warm_start=False,
                 n_jobs=None, multi_class="auto", partition=None, client=None,
                 checkpoint=None):
        self.checkpoint = checkpoint
        self.penalty = penalty
        self.C = C
        self.l1_ratio = l1_ratio
        self.dual = dual
        self.tol = tol
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.random_state = random_state
        self.solver = solver
        self.max_iter = max_iter
        self.verbose = verbose
        self.warm_start = warm_start
        self.n_jobs = n_jobs
        self.multi_class = multi_class
        self.partition = partition
        self.client = client

    def _problem(self, n_samples, n_features, n_classes) -> LogisticProblem:
        r = self.l1_ratio
        penalty = resolved_penalty(self.penalty, r, self.C)
        if self.C == np.inf:
            penalty = None
        explicit = self._explicit_solver()
        solver = self.solver if explicit is None else explicit
        problem = logistic_problem(solver, penalty, self.dual, self.multi_class, n_classes,
                                   n_samples, n_features, r)
        if not SOLVERS[problem.solver_type].probability:
            raise ValueError(f"solver -s {problem.solver_type} is not logistic regression")
        return problem

    def _solver_type(self, n_samples, n_features, n_classes=2):
        return self._problem(n_samples, n_features, n_classes).solver_type

    def _fit_params(self, n_samples, n_features, classes, label_order, scale=None) -> Params:
        problem = self._problem(n_samples, n_features, len(classes))
        params = self._params(problem.solver_type)
        if problem.unpenalized:
            params.C = UNPENALIZED_C
        params.multinomial = problem.multinomial
        params.l1_ratio = problem.l1_ratio
        if problem.unpenalized_intercept and self.fit_intercept:
            params.bias = 1.0       # -R needs -B 1; an unpenalized intercept has no scale
            params.regularize_bias = False
        if self.warm_start and hasattr(self, "coef_") and params.spec.init_sol:
            params.init_sol = self._previous_w(params, classes, n_features, label_order())
        return params

    def _fitted(self, model, params) -> Model:
        """A multinomial model's weights are unique only up to a constant per feature
        added to every class (the softmax ignores it): each feature's weights are shifted
        to sum to 0 over the classes (scikit-learn's symmetric convention). The
        probabilities do not change; for the penalized weights that is the exact optimum,
        which the solver reaches only within its tolerance (the shift lowers 0.5 ||w||^2),
        for an unpenalized intercept a choice."""
        if not model.multinomial:
            return model
        W = np.array(model.w, dtype=np.float64).reshape(model.w_size, model.nr_w)
        W -= W.mean(axis=1, keepdims=True)
        return replace(model, w=W)

    def _previous_w(self, params, classes, n_features, order):
        """coef_ and intercept_ of the previous fit as Params.init_sol: a column per binary
        problem (or class, multinomial) in the order they are trained."""
        coef = self._dense_coef()
        if coef.shape[1] != n_features or not np.array_equal(self.classes_, classes):
            raise ValueError(f"warm_start=True starts from the previous fit's coef_ "
                             f"{coef.shape} and classes {shown(self.classes_)}; this fit has "
                             f"{n_features} features and classes {shown(classes)}: fit with "
                             "warm_start=False")
        W = coef.T
        if params.bias >= 0:
            intercept = np.broadcast_to(np.asarray(self.intercept_, dtype=np.float64),
                                        (coef.shape[0],))
            W = np.vstack([W, intercept / params.bias])
        if len(classes) > 2:
            return np.ascontiguousarray(W[:, order])
        if params.multinomial:      # w_1 - w_0 = coef_ at the symmetric optimum
            return np.ascontiguousarray(np.column_stack([-W[:, 0] / 2, W[:, 0] / 2])[:, order])
        return W[:, :1] * (1.0 if order[0] == 1 else -1.0)

    def _n_iter(self, model):
        """scikit-learn's shape: (1,) for a binary or multinomial fit, else one count per
        class in the order of classes_."""
        counts = np.asarray(model.n_iter, dtype=np.int32)
        if len(counts) <= 1:
            return counts.reshape(1) if len(counts) else np.zeros(1, dtype=np.int32)
        by_class = np.empty(len(counts), dtype=np.int32)
        by_class[np.asarray(model.label, dtype=np.int64)] = counts
        return by_class

    def _set_output_dtype(self, input_dtype):
        """float32 X gives float32 coef_ and intercept_ (as scikit-learn's solvers other
        than liblinear); dlinear trains in float64 either way."""
        if input_dtype == np.float32 and self.solver != LIBLINEAR_SOLVER:
            self.coef_ = self.coef_.astype(np.float32)
            self.intercept_ = np.asarray(self.intercept_).astype(np.float32)

    def _convergence_message(self, message, params) -> str:
        """An iteration cap in scikit-learn's words for the solver named, then dlinear's
        (which solves every name by a LIBLINEAR solver)."""
        if not isinstance(self.solver, str):
            return message
        detail = (f"dlinear trains solver={self.solver!r} with -s {params.solver_type} "
                  f"({SOLVERS[params.solver_type].name}): {message}")
        return SKLEARN_CONVERGENCE_MESSAGES[self.solver].format(detail=detail,
                                                                 n_iter=self.max_iter)

    def _multinomial(self) -> bool:
        """Whether the probabilities are the softmax of all classes' scores (else one
        sigmoid per class, normalized). Without a model_ (coef_ set by hand, as scikit-
        learn's LogisticRegressionCV scores its folds), what a fit would train."""
        model = getattr(self, "model_", None)
        if model is not None:
            return model.multinomial
        return self._problem(0, self.n_features_in_ if hasattr(self, "n_features_in_")
                             else self._dense_coef().shape[1], len(self.classes_)).multinomial

    def predict_proba(self, X):
        """Class probabilities; a lazy dask array for dask input.

        Parameters
        ----------
        X : array-like, scipy.sparse matrix, dask array or dask DataFrame

        Returns
        -------
        numpy.ndarray or dask.array.Array of shape (n_samples, n_classes)
            In the order of ``classes_``.
        """
        scores = self._scores(X)
        if is_dask(scores):
            return map_probabilities(scores, self._multinomial())
        return probabilities(scores, self._multinomial())

    def predict_log_proba(self, X):
        proba = self.predict_proba(X)
        if is_dask(proba):
            return proba.map_blocks(np.log, dtype=np.float64)
        return np.log(proba)
