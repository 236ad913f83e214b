"""The support vector machines: LinearSVC (-s 1, 2, 3, 4, 5), LinearSVR (-s 11, 12, 13)
and OneClassSVM (-s 21)."""
from __future__ import annotations

import os

from numbers import Real

import numpy as np
from sklearn.base import OutlierMixin, RegressorMixin
from sklearn.utils._param_validation import Interval, StrOptions

from ..planning.formulation import choose_formulation
from .dask_helpers import block_oneclass, is_dask, map_oneclass
from .base import _LiblinearClassifier, _LiblinearEstimator
from .mapping import CRAMMER_SINGER, ONECLASS, solver_for
from .validation import CLASS_WEIGHT, COMMON, LINEAR


class LinearSVC(_LiblinearClassifier):
    """Linear support vector classification (LIBLINEAR -s 1, 2, 3, 4, 5).

    scikit-learn's ``LinearSVC`` over LIBLINEAR's solvers: ``loss``, ``penalty`` and
    ``dual`` choose the solver as in scikit-learn, and the other defaults are
    LIBLINEAR's. ``dual="auto"`` (the default) chooses for the default squared hinge
    (l2 penalty) as ``dlinear-train`` without ``-s`` does: dual CD (-s 1) or its Newton
    primal (-s 2) by the data's scale (C, sample weights and the column energies, one
    pass over X, on the cluster for dask X; the documentation's "The default
    formulation"); for the other losses and penalties it takes the primal when
    n_samples > n_features and the loss and penalty allow it, else the dual, as
    scikit-learn does.

    Parameters
    ----------
    C : float, default 1.0
        ``-c``.
    loss : {"squared_hinge", "hinge"}, default "squared_hinge"
        L2-loss or L1-loss.
    penalty : {"l2", "l1"}, default "l2"
    dual : bool or "auto", default "auto"
        Solve the dual; "auto" picks by the data's scale (see above).
    tol : float or None, default None
        ``-e``; None is the solver's default.
    fit_intercept : bool, default True
        Add a bias feature of value ``intercept_scaling`` (``-B``), penalized as in
        LIBLINEAR.
    intercept_scaling : float, default 1.0
    class_weight : dict, "balanced" or None, default None
        Multiplies C per class (``-wi``).
    max_iter : int, default 300
        The solvers' iteration cap: dual CD passes (``--max-iter``), Newton iterations
        up to LIBLINEAR's 1000.
    random_state : int, numpy.random.RandomState or None, default None
        ``--seed`` (None: 1).
    multi_class : {"ovr", "crammer_singer"}, default "ovr"
        "crammer_singer" is -s 4.
    solver : int or None, default None
        A ``-s`` number, overriding the mapping (dlinear's).
    partition : bool or None, default None
        Dask input only: True trains -s 1, 3 (and -s 4, "crammer_singer") partitioned
        (each worker solves its own rows), False on a copy per worker, None partitioned when a copy would not fit one
        worker's memory. For -s 2 (``dual=False``): True map-reduces over the parts,
        False fits the classes on a copy per worker, None a copy for 3+ classes when it
        fits one worker. For -s 5 (``penalty="l1"``): True trains by OWL-QN map-reduced
        over the parts, False on a copy per worker, None OWL-QN when a copy would not fit.
    n_jobs : int or None, default None
        Threads for an in-process fit's one-vs-rest classes (and a multinomial fit's
        passes): None is 1, as in scikit-learn, so ``GridSearchCV(n_jobs=...)`` is not
        oversubscribed; -1 is one per core.
    verbose : int, default 0
        1 prints LIBLINEAR's progress lines to stderr.
    warm_start : bool, default False
        ``fit`` starts from the previous fit's ``coef_`` and ``intercept_`` (the dual
        solvers from duals consistent with them; docs/guide/warm_start.rst): the same
        optimum in fewer iterations when the data changed a little. A classifier's
        classes must be the previous fit's.
    checkpoint : str, os.PathLike or None, default None
        A directory where ``fit`` saves the solver's state every 10 seconds and resumes
        from it when run again on the same data (docs/guide/checkpoints.rst); in process,
        for the solvers -s 0, 1, 2, 3, 5, 6, 11.
    client : distributed.Client or None, default None
        Train on this Dask cluster (numpy and scipy inputs too). Dask arrays and
        DataFrames train on the current client without it. ``clone`` shares the client;
        pickling drops it.

    Attributes
    ----------
    coef_ : numpy.ndarray of shape (1, n_features) or (n_classes, n_features)
        For two classes one row, positive for ``classes_[1]``.
    intercept_ : numpy.ndarray of shape (1,) or (n_classes,)
    classes_ : numpy.ndarray
        The sorted classes (strings are fine).
    n_iter_ : int
        The most iterations of any binary problem.
    solver_type_ : int
        The ``-s`` number that ran.
    model_ : dlinear.Model
        The model as trained (class indices as labels).
    """

    _parameter_constraints: dict = {
        **LINEAR,
        "loss": [StrOptions({"squared_hinge", "hinge"})],
        "penalty": [StrOptions({"l2", "l1"})],
        "class_weight": CLASS_WEIGHT,
        "multi_class": [StrOptions({"ovr", "crammer_singer"})],
        "warm_start": ["boolean"],
        "checkpoint": [str, os.PathLike, None],
    }

    def __init__(self, C=1.0, loss="squared_hinge", penalty="l2", dual="auto", tol=None,
                 fit_intercept=True, intercept_scaling=1.0, class_weight=None, max_iter=300,
                 random_state=None, multi_class="ovr", solver=None, partition=None,
                 n_jobs=None, verbose=0, client=None, warm_start=False, checkpoint=None):
        self.warm_start = warm_start
        self.checkpoint = checkpoint
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

    def _by_scale(self, params, scale):
        """dual="auto" for the squared hinge: dual CD or its Newton primal by the data's
        scale, as dlinear-train without -s (dlinear.planning.formulation)."""
        if not (scale is not None and self.dual == "auto" and self.solver is None
                and self.multi_class != "crammer_singer"
                and (self.loss, self.penalty) == ("squared_hinge", "l2")):
            return params
        dual = solver_for(self.loss, self.penalty, True, 0, 0)
        chosen = choose_formulation(dual, scale(self._params(dual)))
        return self._params(chosen.solver_type)


class LinearSVR(RegressorMixin, _LiblinearEstimator):
    """Linear support vector regression (LIBLINEAR -s 11, 12, 13).

    Parameters
    ----------
    epsilon : float, default 0.1
        ``-p``, the width of the insensitive tube.
    tol : float or None, default None
        ``-e``; None is the solver's default.
    C : float, default 1.0
        ``-c``.
    loss : {"squared_epsilon_insensitive", "epsilon_insensitive"}, default "squared_epsilon_insensitive"
        L2-loss (-s 11, 12) or L1-loss (-s 13).
    fit_intercept : bool, default True
        Add a bias feature of value ``intercept_scaling`` (``-B``).
    intercept_scaling : float, default 1.0
    dual : bool or "auto", default "auto"
        False is -s 11 (Newton), True -s 12 or 13; "auto" is -s 11 when
        n_samples > n_features and the loss allows it, else the dual.
    max_iter : int, default 300
        The solvers' iteration cap: dual CD passes, Newton iterations up to 1000.
    random_state : int, numpy.random.RandomState or None, default None
        ``--seed``.
    solver : int or None, default None
        A ``-s`` number, overriding the mapping.
    partition : bool or None, default None
        Dask input only: as :class:`LinearSVC`'s, for -s 12 and 13.
    n_jobs : int or None, default None
        Threads for an in-process fit's one-vs-rest classes (and a multinomial fit's
        passes): None is 1, as in scikit-learn, so ``GridSearchCV(n_jobs=...)`` is not
        oversubscribed; -1 is one per core.
    verbose : int, default 0
        1 prints LIBLINEAR's progress lines to stderr.
    warm_start : bool, default False
        ``fit`` starts from the previous fit's ``coef_`` and ``intercept_`` (the dual
        solvers from duals consistent with them; docs/guide/warm_start.rst): the same
        optimum in fewer iterations when the data changed a little. A classifier's
        classes must be the previous fit's.
    checkpoint : str, os.PathLike or None, default None
        A directory where ``fit`` saves the solver's state every 10 seconds and resumes
        from it when run again on the same data (docs/guide/checkpoints.rst); in process,
        for the solvers -s 0, 1, 2, 3, 5, 6, 11.
    client : distributed.Client or None, default None
        Train on this Dask cluster (numpy and scipy inputs too). Dask arrays and
        DataFrames train on the current client without it. ``clone`` shares the client;
        pickling drops it.

    Attributes
    ----------
    coef_ : numpy.ndarray of shape (n_features,)
    intercept_ : numpy.ndarray of shape (1,)
    n_iter_ : int
    solver_type_ : int
    model_ : dlinear.Model
    """

    _kind = "regression"
    _parameter_constraints: dict = {
        **LINEAR,
        "epsilon": [Interval(Real, 0.0, np.inf, closed="left")],
        "loss": [StrOptions({"squared_epsilon_insensitive", "epsilon_insensitive"})],
        "warm_start": ["boolean"],
        "checkpoint": [str, os.PathLike, None],
    }

    def __init__(self, epsilon=0.1, tol=None, C=1.0, loss="squared_epsilon_insensitive",
                 fit_intercept=True, intercept_scaling=1.0, dual="auto", max_iter=300,
                 random_state=None, solver=None, partition=None, n_jobs=None, verbose=0,
                 client=None, warm_start=False, checkpoint=None):
        self.warm_start = warm_start
        self.checkpoint = checkpoint
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
        """Fit the model.

        Parameters
        ----------
        X : array-like, scipy.sparse matrix, dask array or dask DataFrame of shape (n_samples, n_features)
        y : array-like, dask array or dask Series of shape (n_samples,)
            Targets.
        sample_weight : array-like of shape (n_samples,), optional
            Multiplies each instance's C.

        Returns
        -------
        self
        """
        return self._fit(X, y, sample_weight)

    def predict(self, X):
        """Predicted values; a lazy dask array for dask input.

        Parameters
        ----------
        X : array-like, scipy.sparse matrix, dask array or dask DataFrame

        Returns
        -------
        numpy.ndarray or dask.array.Array of shape (n_samples,)
        """
        scores = self._scores(X)
        return scores[:, 0]


class OneClassSVM(OutlierMixin, _LiblinearEstimator):
    """LIBLINEAR's linear one-class SVM (-s 21).

    ``decision_function`` is w.x - rho (``offset_`` is rho); ``predict`` gives +1
    (inlier) where it is > 0, else -1, as LIBLINEAR's predict. There is no intercept
    feature (LIBLINEAR does not allow ``-B`` with -s 21) and no C.

    Parameters
    ----------
    nu : float, default 0.5
        ``-n``: an upper bound on the fraction of outliers, in (0, 1].
    tol : float or None, default None
        ``-e``; None is the solver's default.
    n_jobs : int or None, default None
        Threads for an in-process fit's one-vs-rest classes (and a multinomial fit's
        passes): None is 1, as in scikit-learn, so ``GridSearchCV(n_jobs=...)`` is not
        oversubscribed; -1 is one per core.
    verbose : int, default 0
        1 prints LIBLINEAR's progress lines to stderr.
    warm_start : bool, default False
        ``fit`` starts from the previous fit's ``coef_`` and ``intercept_`` (the dual
        solvers from duals consistent with them; docs/guide/warm_start.rst): the same
        optimum in fewer iterations when the data changed a little. A classifier's
        classes must be the previous fit's.
    client : distributed.Client or None, default None
        Train on this Dask cluster (numpy and scipy inputs too). Dask arrays and
        DataFrames train on the current client without it. ``clone`` shares the client;
        pickling drops it.

    Attributes
    ----------
    coef_ : numpy.ndarray of shape (1, n_features)
    offset_ : float
        rho.
    solver_type_ : int
    model_ : dlinear.Model
    """

    _kind = "oneclass"
    _parameter_constraints: dict = {
        **COMMON,
        "nu": [Interval(Real, 0.0, 1.0, closed="right")],
        "warm_start": ["boolean"],
    }

    def __init__(self, nu=0.5, tol=None, n_jobs=None, verbose=0, client=None,
                 warm_start=False):
        self.warm_start = warm_start
        self.nu = nu
        self.tol = tol
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.client = client

    def _solver_type(self, n_samples, n_features):
        return ONECLASS

    def fit(self, X, y=None, sample_weight=None):
        """Fit the model.

        Parameters
        ----------
        X : array-like, scipy.sparse matrix, dask array or dask DataFrame of shape (n_samples, n_features)
        y : None
            Ignored.
        sample_weight : array-like of shape (n_samples,), optional
            Scales each instance's bound.

        Returns
        -------
        self
        """
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
