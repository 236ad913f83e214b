"""LogisticRegressionCV: every C at once. Each fold's models along C are trained in
ascending order of C, each fit starting from the one before (warm_start of
LogisticRegression, so the mapping of parameters to -s numbers is LogisticRegression's);
the (fold, l1_ratio) paths run on threads, or as tasks on a Dask cluster with ``client=``.

For L1 (and the elastic net), ``Cs=int`` starts the grid at the smallest C whose model has
a nonzero weight (l1_path_start), not at scikit-learn's 1e-4, below which every model is 0.
"""
from __future__ import annotations

import inspect
import warnings
from concurrent.futures import ThreadPoolExecutor
from numbers import Integral, Real

import numpy as np
from sklearn.base import clone
from sklearn.metrics import get_scorer, make_scorer
from sklearn.model_selection import check_cv
from sklearn.utils import compute_class_weight
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.metadata_routing import _raise_for_params
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, validate_data

from .dask_helpers import as_dask_array, is_dask
from .logistic import LogisticRegression
from .mapping import SKLEARN_LOGISTIC_SOLVERS
from .validation import CLASS_WEIGHT, COMMON, POSITIVE, SOLVER_NUMBERS

# scikit-learn's grid for Cs=int: np.logspace(-4, 4, Cs)
GRID_LOW, GRID_HIGH = -4.0, 4.0


def l1_path_start(X, y_encoded, n_classes, sample_weight, class_weight, bias,
                  unpenalized_intercept, l1_ratio, multinomial=False) -> float:
    """The smallest C at which -s 6's model (binary or one-vs-rest) has a nonzero weight.

    In LIBLINEAR's scaling the objective is l1_ratio ||w||_1 + (1 - l1_ratio)/2 ||w||^2
    + C sum_i c_i log(1 + exp(-y_i w.x_i)) (c_i: the row's class and sample weight), so
    w = 0 is the optimum while C max_j |g_j| <= l1_ratio, with g the loss's gradient at
    w = 0: g_j = -sum_i c_i y_i x_ij / 2. The penalized bias (-B) is a feature of value
    `bias`; an unpenalized intercept (-R) is first set to its own optimum at w = 0,
    log(P / N) for the weights P and N of the two sides, which makes g_j =
    -sum_i c_i y_i x_ij sigma(-y_i b). Returns inf when no C gives a nonzero weight."""
    if l1_ratio <= 0:
        return 0.0
    c = np.ones(X.shape[0]) if sample_weight is None else np.asarray(sample_weight, float)
    if class_weight is not None:
        c = c * class_weight[y_encoded]
    positives = [1] if n_classes == 2 else range(n_classes)
    largest = 0.0
    for k in positives:
        y = np.where(y_encoded == k, 1.0, -1.0)
        if unpenalized_intercept:
            P, N = c[y > 0].sum(), c[y < 0].sum()
            # sigma(-y_i b) at b = log(P/N): N/(P+N) for y = +1, P/(P+N) for y = -1
            factor = np.where(y > 0, N, P) / (P + N)
        else:
            factor = np.full(len(y), 0.5)
        r = c * y * factor
        g = np.abs(np.asarray(X.T @ r).ravel())
        if bias > 0 and not unpenalized_intercept:
            g = np.append(g, abs(bias * r.sum()))
        largest = max(largest, float(g.max()) if g.size else 0.0)
    return l1_ratio / largest if largest > 0 else np.inf


def _scorer_for(scoring, classes):
    """The scorer of a fold (None: the estimator's accuracy); a metric that takes
    `labels` gets all the classes, which a fold's test rows may lack."""
    if scoring is None:
        return None
    scorer = get_scorer(scoring)
    score_func = getattr(scorer, "_score_func", None)
    if score_func is None or "labels" not in inspect.signature(score_func).parameters:
        return scorer
    extra = dict(getattr(scorer, "_kwargs", {}), labels=classes)
    if len(classes) == 2 and "pos_label" in inspect.signature(score_func).parameters:
        extra.setdefault("pos_label", classes[-1])
    return make_scorer(score_func, greater_is_better=scorer._sign == 1,
                       response_method=scorer._response_method, **extra)


def fold_path(estimator, X, y, sample_weight, train, test, Cs, classes, scoring):
    """One fold's path: `estimator` (a LogisticRegression with warm_start=True) fitted on
    the train rows at each C of Cs in ascending order, each fit starting from the one
    before, and scored on the test rows. Returns (coefs (n_cs, n_rows, n_dof) in the
    order of Cs, scores (n_cs,), n_iter (n_cs,)). Runs here or on a Dask worker."""
    estimator = clone(estimator)
    sw_train = None if sample_weight is None else sample_weight[train]
    sw_test = None if sample_weight is None else sample_weight[test]
    X_train, y_train, X_test, y_test = X[train], y[train], X[test], y[test]
    n_rows = 1 if len(classes) == 2 else len(classes)
    n_dof = X.shape[1] + int(estimator.fit_intercept)
    coefs = np.zeros((len(Cs), n_rows, n_dof))
    scores = np.zeros(len(Cs))
    n_iter = np.zeros(len(Cs), dtype=np.int32)
    scorer = _scorer_for(scoring, classes)
    scoring_model = clone(estimator)
    scoring_model.classes_ = classes
    scoring_model.n_features_in_ = X.shape[1]
    present = np.isin(classes, y_train)
    for j in np.argsort(Cs, kind="stable"):
        estimator.set_params(C=float(Cs[j]))
        if present.sum() >= 2:
            estimator.fit(X_train, y_train, sample_weight=sw_train)
            coef, intercept = estimator._dense_coef(), np.ravel(estimator.intercept_)
            if n_rows > 1 and not present.all():    # a class absent from the fold: zeros
                rows = np.flatnonzero(present)
                full = np.zeros((n_rows, X.shape[1])), np.zeros(n_rows)
                if coef.shape[0] == 1:          # two classes left: one row, +/- for them
                    full[0][rows[1]], full[1][rows[1]] = coef[0], intercept[0]
                else:
                    full[0][rows], full[1][rows] = coef, intercept
                coef, intercept = full
            n_iter[j] = int(np.max(estimator.n_iter_))
        else:                                   # one class: no model to fit
            coef, intercept = np.zeros((n_rows, X.shape[1])), np.zeros(n_rows)
        coefs[j, :, :X.shape[1]] = coef
        if estimator.fit_intercept:
            coefs[j, :, -1] = intercept
        scoring_model.coef_ = coefs[j, :, :X.shape[1]].copy()
        scoring_model.intercept_ = (coefs[j, :, -1].copy() if estimator.fit_intercept
                                    else np.zeros(n_rows))
        if scorer is None:
            scores[j] = scoring_model.score(X_test, y_test, sample_weight=sw_test)
        else:
            extra = {} if sw_test is None else {"sample_weight": sw_test}
            scores[j] = scorer(scoring_model, X_test, y_test, **extra)
    return coefs, scores, n_iter


class LogisticRegressionCV(LogisticRegression):
    """Logistic regression with C (and l1_ratio) chosen by cross-validation, on the
    warm-started path over C: scikit-learn 1.9's ``LogisticRegressionCV``.

    Each fold's models are trained in ascending order of C, each starting from the model
    at the C before it (as LIBLINEAR's ``-C`` does). The problem of each C is the one
    :class:`LogisticRegression` trains with the same ``solver``, ``penalty`` /
    ``l1_ratios``, ``dual`` and ``multi_class``: ``solver=None`` is LIBLINEAR's -s 0
    (L2), -s 7 (``dual=True``) or -s 6 (L1, elastic net), one-vs-rest with a penalized
    intercept; scikit-learn's names ("lbfgs", "newton-cg", "newton-cholesky", "sag",
    "saga", "liblinear") their problems (the multinomial loss for three or more
    classes and an unpenalized intercept, except "liblinear"), solved by -s 0 or -s 6.

    Parameters
    ----------
    Cs : int or array-like, default 10
        The values of C, or how many: ``np.logspace(-4, 4, Cs)``, or for L1 and the
        elastic net (every ratio > 0) a logarithmic grid from the smallest C with a
        nonzero weight (computed on the whole data, :func:`l1_path_start`) up to 1e4.
    cv : int, cross-validation generator or iterable, default None
        scikit-learn's ``check_cv`` (stratified 5 folds by default).
    penalty : {"l1", "l2", "elasticnet"}, default "deprecated"
        As in scikit-learn 1.9, deprecated for ``l1_ratios``: by default the penalty is
        L2 when every ratio is 0 (or ``l1_ratios=None``), L1 when every ratio is 1, else
        the elastic net.
    l1_ratios : array-like or None, default "warn"
        The l1_ratio values to search (0: L2, 1: L1, between: -s 6's elastic net).
        "warn" is None (L2) with scikit-learn 1.9's FutureWarning (its default becomes
        ``(0.0,)``); None warns as deprecated, as there.
    scoring : str, callable or None, default "warn"
        A scikit-learn scorer; None is accuracy; "warn" is None with scikit-learn 1.9's
        FutureWarning (its default becomes "neg_log_loss").
    solver, dual, tol, max_iter, class_weight, fit_intercept, intercept_scaling,
    random_state, multi_class, verbose
        As for :class:`LogisticRegression` (dlinear's defaults: ``solver=None``,
        ``tol=None``, ``max_iter=300``).
    refit : bool, default True
        True refits on all the data at the best (C, l1_ratio) of the summed fold scores
        (from zero, so ``coef_`` is ``LogisticRegression(C=C_)``'s; scikit-learn starts
        from the folds' mean model); False averages each fold's best model.
    n_jobs : int or None, default None
        The (fold, l1_ratio) paths run on this many threads.
    use_legacy_attributes : bool, default "warn"
        True: scikit-learn 1.9's layout of the fitted attributes (dicts per class); False
        its 1.10 layout (arrays, ``C_`` a float); "warn" is True with its FutureWarning.
    client : distributed.Client or None, default None
        Run each (fold, l1_ratio) path as a task on this Dask cluster. A dask X (and y,
        sample_weight) is computed into memory first, and its folds then run on the
        cluster of ``client`` (default: the current client).

    Attributes
    ----------
    Cs_ : numpy.ndarray of shape (n_cs,)
    l1_ratios_ : numpy.ndarray of shape (n_l1_ratios,)
        ``[None]`` without ``l1_ratios``.
    coefs_paths_ : dict or numpy.ndarray
        Legacy: for each class (the positive one only, for two), shape
        (n_folds, n_cs, n_dof) or (n_folds, n_cs, n_l1_ratios, n_dof); else an array
        (n_folds, n_l1_ratios, n_cs, n_classes or 1, n_dof). n_dof counts the intercept.
    scores_ : dict or numpy.ndarray
        The fold scores, as ``coefs_paths_`` without its last axis (and class axis).
    C_, l1_ratio_ : numpy.ndarray or float
    coef_, intercept_, classes_, n_features_in_
    n_iter_ : numpy.ndarray
        The iterations of each path's fit: (1, n_folds, n_cs[, n_l1_ratios]), or
        (n_folds, n_l1_ratios, n_cs).
    model_ : dlinear.Model
        The refitted model (``refit=True`` only).
    """

    _parameter_constraints: dict = {
        **{k: v for k, v in LogisticRegression._parameter_constraints.items()
           if k not in ("C", "l1_ratio", "warm_start", "partition")},
        "Cs": [Interval(Integral, 1, None, closed="left"), "array-like"],
        "l1_ratios": ["array-like", None, StrOptions({"warn"})],
        "cv": ["cv_object"],
        "scoring": [callable, str, None],     # "warn": None, with scikit-learn's warning
        "refit": ["boolean"],
        "penalty": [StrOptions({"l1", "l2", "elasticnet", "deprecated"})],
        "use_legacy_attributes": ["boolean", StrOptions({"warn"})],
        "solver": [StrOptions(set(SKLEARN_LOGISTIC_SOLVERS)), SOLVER_NUMBERS, None],
        "class_weight": CLASS_WEIGHT,
        "tol": [POSITIVE, None],
        "n_jobs": COMMON["n_jobs"],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "intercept_scaling": [Interval(Real, 0.0, None, closed="neither")],
    }

    def __init__(self, *, Cs=10, l1_ratios="warn", fit_intercept=True, cv=None, dual=False,
                 penalty="deprecated", scoring="warn", solver=None, tol=None, max_iter=300,
                 class_weight=None, n_jobs=None, verbose=0, refit=True,
                 intercept_scaling=1.0, random_state=None, multi_class="auto",
                 use_legacy_attributes="warn", client=None):
        self.Cs = Cs
        self.l1_ratios = l1_ratios
        self.fit_intercept = fit_intercept
        self.cv = cv
        self.dual = dual
        self.penalty = penalty
        self.scoring = scoring
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.refit = refit
        self.intercept_scaling = intercept_scaling
        self.random_state = random_state
        self.multi_class = multi_class
        self.use_legacy_attributes = use_legacy_attributes
        self.client = client

    # -- the grid
    def _deprecations(self):
        """scikit-learn 1.9's FutureWarnings for its changing defaults; the values meant."""
        l1_ratios, scoring, legacy = self.l1_ratios, self.scoring, self.use_legacy_attributes
        if isinstance(l1_ratios, str):
            warnings.warn("The default value for l1_ratios will change from None to (0.0,) "
                          "in version 1.10. From version 1.10 onwards, only array-like "
                          "with values in [0, 1] will be allowed, None will be forbidden. "
                          "To avoid this warning, explicitly set a value, e.g. "
                          "l1_ratios=(0,).", FutureWarning, stacklevel=3)
            l1_ratios = None
        elif l1_ratios is None and self.penalty == "deprecated":
            warnings.warn("'l1_ratios=None' was deprecated in version 1.8 and will trigger "
                          "an error in 1.10. Use an array-like with values in [0, 1] "
                          "instead.", FutureWarning, stacklevel=3)
        if isinstance(scoring, str) and scoring == "warn":
            warnings.warn("The default value of the parameter 'scoring' will change from "
                          "None, i.e. accuracy, to 'neg_log_loss' in version 1.11. To "
                          "silence this warning, explicitly set the scoring parameter: "
                          "scoring='neg_log_loss' for the new, scoring='accuracy' or "
                          "scoring=None for the old default.", FutureWarning, stacklevel=3)
            scoring = None
        if isinstance(legacy, str):
            warnings.warn(f"The fitted attributes of {type(self).__name__} will be "
                          "simplified in scikit-learn 1.10 to remove redundancy. Set "
                          "`use_legacy_attributes=False` to enable the new behavior now, or "
                          "set it to `True` to silence this warning. The default value of "
                          "use_legacy_attributes will change from True to False in "
                          "scikit-learn 1.10.", FutureWarning, stacklevel=3)
            legacy = True
        return l1_ratios, scoring, legacy

    def _get_scorer(self):
        scoring = None if isinstance(self.scoring, str) and self.scoring == "warn" \
            else self.scoring
        return get_scorer(scoring or "accuracy")

    def _penalty_and_ratios(self, l1_ratios):
        """(penalty, the l1_ratio of each path, whether l1_ratios was given)."""
        given = l1_ratios is not None
        ratios = None if not given else [float(r) for r in np.ravel(l1_ratios)]
        if given and (not ratios or any(not 0 <= r <= 1 for r in ratios)):
            raise ValueError(f"l1_ratios must be an array-like of numbers between 0 and 1; "
                             f"got (l1_ratios={l1_ratios!r})")
        penalty = self.penalty
        if penalty == "deprecated":
            if not given or all(r == 0 for r in ratios):
                penalty = "l2"
            elif all(r == 1 for r in ratios):
                penalty = "l1"
            else:
                penalty = "elasticnet"
        if penalty == "elasticnet" and not given:
            raise ValueError("l1_ratios must be an array-like of numbers between 0 and 1; "
                             "got (l1_ratios=None)")
        if penalty != "elasticnet":     # l1 or l2: the ratio is the penalty's
            ratios = [1.0 if penalty == "l1" else 0.0] * (len(ratios) if given else 1)
        return penalty, ratios, given

    def _grid(self, X, y_encoded, sample_weight, class_weight, ratios, problem):
        if not isinstance(self.Cs, Integral):
            return np.asarray(self.Cs, dtype=np.float64).ravel()
        low = GRID_LOW
        if min(ratios) > 0 and not problem.multinomial:
            weights = np.ones(len(self.classes_))
            for k, w in (class_weight or {}).items():
                weights[np.searchsorted(self.classes_, k)] = w
            bias = self.intercept_scaling if self.fit_intercept else -1.0
            start = min(l1_path_start(X, y_encoded, len(self.classes_), sample_weight,
                                      weights, bias, problem.unpenalized_intercept
                                      and self.fit_intercept, r) for r in ratios)
            if 0 < start < 10 ** GRID_HIGH:
                low = np.log10(start)
        return np.logspace(low, GRID_HIGH, int(self.Cs))

    def _path_estimator(self, ratio) -> LogisticRegression:
        return LogisticRegression(
            l1_ratio=ratio, dual=self.dual, tol=self.tol, fit_intercept=self.fit_intercept,
            intercept_scaling=self.intercept_scaling, class_weight=self._class_weight_,
            random_state=self.random_state, solver=self.solver, max_iter=self.max_iter,
            verbose=max(0, self.verbose - 1), warm_start=True, n_jobs=1,
            multi_class=self.multi_class)

    # -- fitting
    def fit(self, X, y, sample_weight=None, **params):
        """Fit the paths of every fold and choose C (and l1_ratio).

        Parameters
        ----------
        X : array-like, scipy.sparse matrix, dask array or dask DataFrame
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
        **params
            Passed to the splitter's ``split`` (e.g. ``groups``).

        Returns
        -------
        self
        """
        self._validate_params()
        _raise_for_params(params, self, "fit")
        l1_ratios, scoring, self._legacy = self._deprecations()
        client = self.client
        if is_dask(X):
            from ..cluster.dataset import current_client
            client = client or current_client()
            X, y, sample_weight = (as_dask_array(v).compute() if is_dask(v) else v
                                   for v in (X, y, sample_weight))
        penalty, ratios, ratios_given = self._penalty_and_ratios(l1_ratios)
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64, order="C",
                             accept_large_sparse=True)
        check_classification_targets(y)
        self.classes_, y_encoded = np.unique(y, return_inverse=True)
        n_classes = len(self.classes_)
        if n_classes < 2:
            raise ValueError("This solver needs samples of at least 2 classes in the data, "
                             f"but the data contains only one class: {self.classes_[0]!r}.")
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64)
        self._class_weight_ = self._resolved_class_weight(y, sample_weight)
        problem = self._path_estimator(ratios[0])._problem(X.shape[0], X.shape[1], n_classes)
        self._multinomial_fit = problem.multinomial
        self.Cs_ = self._grid(X, y_encoded, sample_weight, self._class_weight_, ratios,
                              problem)
        folds = list(check_cv(self.cv, y, classifier=True).split(X, y, **params))
        tasks = [(self._path_estimator(r), X, y, sample_weight, train, test, self.Cs_,
                  self.classes_, scoring) for train, test in folds for r in ratios]
        results = self._run_paths(tasks, client)
        n_folds, n_l1, n_cs = len(folds), len(ratios), len(self.Cs_)
        # (n_folds, n_l1, n_cs, n_rows, n_dof), (n_folds, n_l1, n_cs) twice
        paths = np.stack([r[0] for r in results]).reshape(n_folds, n_l1, n_cs,
                                                          *results[0][0].shape[1:])
        scores = np.stack([r[1] for r in results]).reshape(n_folds, n_l1, n_cs)
        n_iter = np.stack([r[2] for r in results]).reshape(n_folds, n_l1, n_cs)
        best_C, best_ratio, W = self._choose(X, y, sample_weight, paths, scores, ratios)
        n_features = X.shape[1]
        self.coef_ = W[:, :n_features].copy()
        self.intercept_ = W[:, -1].copy() if self.fit_intercept else np.zeros(W.shape[0])
        self.l1_ratios_ = np.asarray(ratios if ratios_given else [None])
        if penalty != "elasticnet" and self.refit:
            best_ratio = None if not ratios_given else best_ratio
        self._set_attributes(paths, scores, n_iter, best_C, best_ratio, ratios_given,
                             penalty)
        return self

    def _resolved_class_weight(self, y, sample_weight):
        cw = self.class_weight
        if isinstance(cw, dict):
            if not set(cw) <= set(self.classes_.tolist()):
                raise ValueError(f"The given class_weight dict must have the class labels "
                                 f"as keys; classes={self.classes_} but key={cw.keys()}")
            return cw
        if cw == "balanced":    # on the whole data, for every fold
            weights = compute_class_weight("balanced", classes=self.classes_, y=y,
                                           sample_weight=sample_weight)
            return dict(zip(self.classes_.tolist(), weights))
        return None

    def _run_paths(self, tasks, client):
        if client is not None:
            shared = client.scatter(list(tasks[0][1:4]), broadcast=True)
            futures = [client.submit(fold_path, t[0], *shared, *t[4:], pure=False)
                       for t in tasks]
            return client.gather(futures)
        with ThreadPoolExecutor(max_workers=min(len(tasks), self._n_threads())) as pool:
            return list(pool.map(lambda t: fold_path(*t), tasks))

    def _choose(self, X, y, sample_weight, paths, scores, ratios):
        """(C_, l1_ratio_, the weights (n_rows, n_dof)): refit at the best summed score
        from the folds' mean model there, or average each fold's best."""
        n_folds, n_l1, n_cs = scores.shape
        if self.refit:
            # the first best in (C, l1_ratio) order, as scikit-learn's argmax
            total = scores.sum(axis=0).T            # (n_cs, n_l1)
            c, r = np.unravel_index(np.argmax(total), total.shape)
            final = self._path_estimator(ratios[r]).set_params(
                C=float(self.Cs_[c]), n_jobs=self.n_jobs, warm_start=False)
            final.fit(X, y, sample_weight=sample_weight)
            self.model_ = final.model_
            self.solver_type_ = final.solver_type_
            W = np.column_stack([final._dense_coef(), np.ravel(final.intercept_)])
            return float(self.Cs_[c]), ratios[r], W
        best = [np.unravel_index(np.argmax(scores[f].T), (n_cs, n_l1)) for f in range(n_folds)]
        W = np.mean([paths[f, r, c] for f, (c, r) in enumerate(best)], axis=0)
        if not self.fit_intercept:
            W = np.column_stack([W, np.zeros(len(W))])
        C = float(np.mean([self.Cs_[c] for c, _ in best]))
        ratio = float(np.mean([ratios[r] for _, r in best]))
        return C, ratio, W

    def _set_attributes(self, paths, scores, n_iter, best_C, best_ratio, ratios_given,
                        penalty):
        n_rows = paths.shape[3]
        if not self._legacy:
            self.coefs_paths_, self.scores_, self.n_iter_ = paths, scores, n_iter
            self.C_ = best_C
            self.l1_ratio_ = (float(best_ratio) if ratios_given and best_ratio is not None
                              else 1.0 if penalty == "l1" else 0.0)
            return
        keys = self.classes_[1:] if n_rows == 1 else self.classes_
        # legacy: (n_folds, n_cs, n_l1[, n_dof]) per class, without the l1 axis when
        # l1_ratios was not given
        by_class = np.moveaxis(paths, (3, 1), (0, 3))        # (n_rows, f, cs, l1, dof)
        legacy_scores = np.swapaxes(scores, 1, 2)             # (f, cs, l1)
        legacy_iter = np.swapaxes(n_iter, 1, 2)[None]
        if not ratios_given:
            by_class, legacy_scores = by_class[:, :, :, 0], legacy_scores[:, :, 0]
            legacy_iter = legacy_iter[..., 0]
        self.coefs_paths_ = dict(zip(keys, by_class))
        self.scores_ = {k: legacy_scores.copy() for k in keys}
        self.n_iter_ = legacy_iter
        self.C_ = np.full(n_rows, best_C)
        self.l1_ratio_ = np.full(n_rows, best_ratio, dtype=object if best_ratio is None
                                 else np.float64)

    # -- prediction
    def _multinomial(self) -> bool:
        return self._multinomial_fit

    def score(self, X, y, sample_weight=None, **score_params):
        """The ``scoring`` of the predictions (accuracy when None).

        Parameters
        ----------
        X : array-like or scipy.sparse matrix
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        float
        """
        _raise_for_params(score_params, self, "score")
        scorer = self._get_scorer()
        extra = {} if sample_weight is None else {"sample_weight": sample_weight}
        return scorer(self, X, y, **extra)
