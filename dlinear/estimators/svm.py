"""The support vector machines: LinearSVC (-s 1, 2, 3, 4, 5), LinearSVR (-s 11, 12, 13)
and OneClassSVM (-s 21)."""
from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.base import OutlierMixin, RegressorMixin
from sklearn.utils._param_validation import Interval, StrOptions

from .dask_helpers import block_oneclass, is_dask, map_oneclass
from .base import _LiblinearClassifier, _LiblinearEstimator
from .mapping import CRAMMER_SINGER, ONECLASS, solver_for
from .validation import CLASS_WEIGHT, COMMON, LINEAR


class LinearSVC(_LiblinearClassifier):
    """Linear support vector classification (LIBLINEAR -s 1, 2, 3, 4, 5).

    loss "squared_hinge" (L2-loss) or "hinge" (L1-loss), penalty "l2" or "l1", dual
    True/False/"auto" choose the solver as in scikit-learn; dual="auto" (the default, as
    scikit-learn's) is the primal solver when n_samples > n_features and the loss and
    penalty allow it (-s 2 for the default squared hinge), else the dual (LIBLINEAR's
    CLI default is the dual -s 1, which can take far longer on tall, narrow data); multi_class="crammer_singer"
    is -s 4; an explicit `solver` (a -s number) overrides the mapping. intercept_scaling
    is LIBLINEAR's -B value (used when fit_intercept), tol its -e (None: the solver's
    default), max_iter the solvers' iteration cap (dual CD passes; Newton iterations up to
    LIBLINEAR's 1000), random_state the seed. partition
    (dask input only): True trains -s 1, 3 partitioned (each worker solves its own rows),
    False on a copy per worker, None (default) partitioned when a copy would not fit one
    worker's memory. For the primal Newton solver -s 2 (dual=False): True map-reduces over
    the parts, False fits the classes on a copy per worker, None a copy for 3+ classes
    when it fits one worker (else map-reduced).
    """

    _parameter_constraints: dict = {
        **LINEAR,
        "loss": [StrOptions({"squared_hinge", "hinge"})],
        "penalty": [StrOptions({"l2", "l1"})],
        "class_weight": CLASS_WEIGHT,
        "multi_class": [StrOptions({"ovr", "crammer_singer"})],
    }

    def __init__(self, C=1.0, loss="squared_hinge", penalty="l2", dual="auto", tol=None,
                 fit_intercept=True, intercept_scaling=1.0, class_weight=None, max_iter=300,
                 random_state=None, multi_class="ovr", solver=None, partition=None,
                 n_jobs=None, verbose=0, client=None):
        self.C = C
        self.loss = loss
        self.penalty = penalty
        self.dual = dual
        self.tol = tol
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.max_iter = max_iter
        self.random_state = random_state
        self.multi_class = multi_class
        self.solver = solver
        self.partition = partition
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.client = client

    def _solver_type(self, n_samples, n_features):
        explicit = self._explicit_solver()
        if explicit is not None:
            return explicit
        if self.multi_class == "crammer_singer":
            return CRAMMER_SINGER
        return solver_for(self.loss, self.penalty, self.dual, n_samples, n_features)


class LinearSVR(RegressorMixin, _LiblinearEstimator):
    """Linear support vector regression (LIBLINEAR -s 11, 12, 13); epsilon is -p. dual
    as LinearSVC's: "auto" (the default) is the primal -s 11 when n_samples > n_features
    and the loss allows it, else the dual -s 12 / 13.
    partition (dask input only): as LinearSVC's, for the dual solvers -s 12, 13
    (dual=True)."""

    _kind = "regression"
    _parameter_constraints: dict = {
        **LINEAR,
        "epsilon": [Interval(Real, 0.0, np.inf, closed="left")],
        "loss": [StrOptions({"squared_epsilon_insensitive", "epsilon_insensitive"})],
    }

    def __init__(self, epsilon=0.1, tol=None, C=1.0, loss="squared_epsilon_insensitive",
                 fit_intercept=True, intercept_scaling=1.0, dual="auto", max_iter=300,
                 random_state=None, solver=None, partition=None, n_jobs=None, verbose=0,
                 client=None):
        self.epsilon = epsilon
        self.tol = tol
        self.C = C
        self.loss = loss
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.dual = dual
        self.max_iter = max_iter
        self.random_state = random_state
        self.solver = solver
        self.partition = partition
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.client = client

    def _solver_type(self, n_samples, n_features):
        explicit = self._explicit_solver()
        if explicit is not None:
            return explicit
        return solver_for(self.loss, "l2", self.dual, n_samples, n_features)

    def fit(self, X, y, sample_weight=None):
        """Fit the model to X and targets y; sample_weight scales each instance's C."""
        return self._fit(X, y, sample_weight)

    def predict(self, X):
        scores = self._scores(X)
        return scores[:, 0]


class OneClassSVM(OutlierMixin, _LiblinearEstimator):
    """LIBLINEAR's linear one-class SVM (-s 21): decision_function = w.x - rho (offset_ =
    rho), predict +1 (inlier) where it is > 0, else -1 (as LIBLINEAR's predict). No
    intercept feature (LIBLINEAR does not allow -B with -s 21); C plays no part."""

    _kind = "oneclass"
    _parameter_constraints: dict = {
        **COMMON,
        "nu": [Interval(Real, 0.0, 1.0, closed="right")],
    }

    def __init__(self, nu=0.5, tol=None, n_jobs=None, verbose=0, client=None):
        self.nu = nu
        self.tol = tol
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.client = client

    def _solver_type(self, n_samples, n_features):
        return ONECLASS

    def fit(self, X, y=None, sample_weight=None):
        """Fit on X (y is ignored); sample_weight scales each instance's bound."""
        return self._fit(X, None, sample_weight)

    def _set_model(self, model):
        super()._set_model(model)
        self.offset_ = float(model.rho)

    def _oneclass(self, X, what):
        X = self._validated(X)
        if is_dask(X):
            return map_oneclass(X, self.coef_, self.offset_, what)
        return block_oneclass(X, self.coef_, self.offset_, what)

    def score_samples(self, X):
        """w.x of each sample."""
        return self._oneclass(X, "score")

    def decision_function(self, X):
        """w.x - rho: negative for outliers."""
        return self._oneclass(X, "decision")

    def predict(self, X):
        """+1 for inliers (decision_function > 0), -1 for outliers (<= 0), as LIBLINEAR."""
        return self._oneclass(X, "predict")
