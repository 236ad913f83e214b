"""The shared machinery of the estimators: _LiblinearEstimator (fit, predict, LIBLINEAR
model files, clone and pickling) and _LiblinearClassifier; the classes in svm.py and
logistic.py only name their parameters, their constraints and their solver.
"""
from __future__ import annotations

import os
import sys
import warnings
from dataclasses import replace
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from joblib import effective_n_jobs
from sklearn.base import BaseEstimator, ClassifierMixin, _clone_parametrized
from sklearn.exceptions import ConvergenceWarning as _SklearnConvergenceWarning
from sklearn.utils import check_random_state, compute_class_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from ..api import train
from ..data.libsvm_reader import Problem
from ..errors import ConvergenceWarning as _DlinearConvergenceWarning
from ..errors import DlinearError
from ..model import Model, load_model, save_model
from ..params import Params
from ..solver_table import SOLVERS
from ..planning.class_plan import first_appearance, order_labels
from .dask_helpers import (as_dask_array, as_labels, block_labels, block_scores, chunked_as,
                           class_counts, dask_class_codes, dask_rows, dataset, fit_scale,
                           dataset_label_order, in_memory_column, is_dask, map_labels,
                           map_scores, ones_per_row)

# X keeps float32 (no float64 copy on the way to the kernels), the scikit-learn convention.
_X_DTYPES = (np.float64, np.float32)


class ConvergenceWarning(_DlinearConvergenceWarning, _SklearnConvergenceWarning):
    """The solver's iteration-cap warning as the estimators raise it.

    A subclass of both :class:`dlinear.ConvergenceWarning` and scikit-learn's
    ``ConvergenceWarning``, so either filter catches it.
    """


# ----------------------------------------------------------------- model -> attributes

def linear_attributes(model, n_classes: int | None):
    """``coef_`` and ``intercept_`` of a dlinear or LIBLINEAR model in scikit-learn's shape.

    Parameters
    ----------
    model : dlinear.Model
        A classification model must have been trained on labels 0 .. n_classes - 1
        (the indices of ``classes_``).
    n_classes : int or None
        The number of classes (None for regression and one-class models).

    Returns
    -------
    coef : numpy.ndarray
        Classification: one row for two classes, positive for class 1, else one row per
        class in class order. Regression: shape (n_features,). One-class: (1, n_features).
    intercept : numpy.ndarray
        Shape (rows of coef,); regression (1,); one-class ``[-rho]``.
    """
    n = model.nr_feature
    W = np.asarray(model.w, dtype=np.float64).reshape(model.w_size, model.nr_w)
    coef = W[:n]
    intercept = W[n] * model.bias if model.bias >= 0 else np.zeros(model.nr_w)
    if model.is_regression:
        return coef[:, 0].copy(), intercept.copy()
    if model.is_oneclass:
        return coef.T.copy(), np.array([-model.rho])
    label = np.asarray(model.label, dtype=np.int64)
    position = np.empty(n_classes, dtype=np.int64)
    position[label] = np.arange(len(label))
    if model.nr_w == 1:             # binary: column 0 is label[0] against label[1]
        sign = 1.0 if label[0] == 1 else -1.0
        return sign * coef.T.copy(), sign * intercept.copy()
    coef, intercept = coef[:, position].T.copy(), intercept[position].copy()
    if n_classes == 2:               # Crammer-Singer on two classes: one row w_1 - w_0
        return coef[1:] - coef[:1], intercept[1:] - intercept[:1]
    return coef, intercept


def _label_order(y_encoded, sample_weight):
    """The class indices in the order train gives their binary problems (LIBLINEAR's:
    first appearance among the rows trained on, which leave out weight-0 rows)."""
    if sample_weight is not None:
        y_encoded = y_encoded[sample_weight > 0]
    return order_labels(first_appearance(np.asarray(y_encoded, dtype=np.float64)))


def shown(values, most: int = 5) -> str:
    """Labels (or other values) as a message shows them: as Python values ('a', 2.5),
    not numpy's reprs (np.str_('a'), np.float64(2.5)); a single one bare, the first
    `most` of a list, then '...'."""
    values = np.asarray(values)
    items = ", ".join(repr(v) for v in values[:most].tolist())
    if len(values) == 1:
        return items
    return f"[{items}{', ...' if len(values) > most else ''}]"


def _stacklevel_outside_package() -> int:
    """The stacklevel that makes a warning raised by the caller of this function point at
    the first frame outside dlinear (the user's line, or scikit-learn's when it calls the
    estimator): what warnings.warn's skip_file_prefixes does from Python 3.12 on."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    return level


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


# ----------------------------------------------------------------- the shared base

class _LiblinearEstimator(BaseEstimator):
    """The shared fit/predict machinery; subclasses name the parameters and the kind."""

    _kind = "classification"      # or "regression", "oneclass"
    # what each parameter may be (validation.py); each class lists all of its own
    _parameter_constraints: dict = {}
    # the params of a fit by its data's Scale (LinearSVC's dual="auto"); others keep theirs
    _by_scale = staticmethod(lambda params, scale: params)

    # -- parameters -> Params
    def _explicit_solver(self):
        """The -s number of `solver` when it is one (validated: a number dlinear trains),
        else None; ValueError when that solver is of another kind than the class."""
        solver = getattr(self, "solver", None)
        if solver is None or isinstance(solver, str):
            return None
        spec = SOLVERS[int(solver)]
        if spec.kind != self._kind:
            raise ValueError(f"solver -s {solver} ({spec.name}) is a {spec.kind} solver; "
                             f"{type(self).__name__} needs a {self._kind} solver")
        return int(solver)

    def _seed(self) -> int:
        rs = getattr(self, "random_state", None)
        if rs is None:
            return 1                      # dlinear's (and the CLI's) default seed
        if isinstance(rs, Integral) and not isinstance(rs, bool):
            return int(rs)
        return int(check_random_state(rs).randint(np.iinfo(np.int32).max))

    def _params(self, solver_type: int) -> Params:
        fit_intercept = getattr(self, "fit_intercept", False)
        return Params(solver_type=solver_type, C=float(getattr(self, "C", 1.0)),
                      eps=None if self.tol is None else float(self.tol),
                      p=float(getattr(self, "epsilon", 0.1)),
                      nu=float(getattr(self, "nu", 0.5)), checkpoint=vars(self).get("checkpoint"),
                      bias=float(self.intercept_scaling) if fit_intercept else -1.0,
                      max_iter=max(1, int(getattr(self, "max_iter", 300))),
                      max_newton_iter=int(getattr(self, "max_iter", 300)), seed=self._seed(),
                      partition=getattr(self, "partition", None))

    def _n_threads(self) -> int:
        """n_jobs as scikit-learn reads it (None: 1, or what joblib's context says; -1:
        one per core): the threads of an in-process fit (its one-vs-rest classes, or the
        passes or dual CD of its only problem; the model is the same for any number, but
        for the dual CD of a large -s 1, 3, 7 problem: the same for the same number)."""
        return max(1, effective_n_jobs(self.n_jobs))

    def _log(self):
        """verbose: LIBLINEAR's progress lines to stderr."""
        if not self.verbose:
            return None
        return lambda line: print(line, file=sys.stderr, flush=True)

    # -- fitting
    def _train(self, data, params):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                model = train(data, params, log=self._log(), n_threads=self._n_threads(),
                              client=self.client)
            except DlinearError as e:
                raise ValueError(str(e)) from e
        stacklevel = _stacklevel_outside_package()
        for w in caught:
            if issubclass(w.category, _DlinearConvergenceWarning):
                warnings.warn(self._convergence_message(str(w.message), params),
                              ConvergenceWarning, stacklevel=stacklevel)
            else:
                warnings.warn(str(w.message), w.category, stacklevel=stacklevel)
        return model

    def _convergence_message(self, message, params) -> str:
        """The text of a solver's ConvergenceWarning as this class raises it."""
        return message

    def _fit(self, X, y, sample_weight):
        self._validate_params()
        input_dtype = getattr(X, "dtype", None)
        self._fit_any(X, y, sample_weight)
        self._set_output_dtype(input_dtype)
        return self

    def _set_output_dtype(self, input_dtype):
        """coef_ and intercept_ in the dtype the class gives them for X of input_dtype
        (float64 here: LIBLINEAR's; LogisticRegression keeps float32)."""

    def _fit_any(self, X, y, sample_weight):
        if is_dask(X):
            return self._fit_dask(X, y, sample_weight)
        if self._kind == "oneclass":
            X = validate_data(self, X, accept_sparse="csr", dtype=_X_DTYPES, order="C",
                              accept_large_sparse=True)
            y = np.ones(X.shape[0])
        else:
            X, y = validate_data(self, X, y, accept_sparse="csr", dtype=_X_DTYPES,
                                 order="C", accept_large_sparse=True,
                                 y_numeric=self._kind == "regression")
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64,
                                                 ensure_non_negative=True)
        classes = None
        if self._kind == "classification":
            check_classification_targets(y)
            classes, y = np.unique(y, return_inverse=True)
        params = self._fit_params(X.shape[0], X.shape[1], classes,
                                  lambda: _label_order(y, sample_weight),
                                  lambda p: fit_scale(X, sample_weight, p, self.client))
        if self._kind == "classification":
            self.classes_ = classes
            self._check_classes(y, sample_weight)
            params.class_weights = self._class_weights(y)
            y = y.astype(np.float64)
        keep = None
        if sample_weight is not None and not np.all(sample_weight > 0):
            keep = np.flatnonzero(sample_weight > 0)
            X, y, sample_weight = X[keep], y[keep], sample_weight[keep]
        problem = Problem.from_arrays(X, y, n_features=self.n_features_in_,
                                      sample_weight=sample_weight)
        self._set_model(self._fitted(self._train(problem, params), params))
        return self

    def _fit_dask(self, X, y, sample_weight):
        """A dask X, with y and sample_weight as dask collections partitioned as X or as
        anything scikit-learn takes in memory (split as X's rows, whose counts are then
        computed once if unknown). Classes are encoded as their indices before they
        reach the cluster."""
        in_memory = [v for v in (y, sample_weight) if v is not None and not is_dask(v)]
        X = dask_rows(X, lengths=bool(in_memory))
        if np.isnan(X.shape[1]):
            raise ValueError("the number of columns of the dask array X must be known")
        self.n_features_in_ = int(X.shape[1])
        if sample_weight is not None:
            sample_weight = (as_dask_array(sample_weight, X.chunks[0])
                             if is_dask(sample_weight) else
                             chunked_as(in_memory_column(sample_weight, X.shape[0],
                                                         "sample_weight")
                                        .astype(np.float64), X))
        classes = None
        if self._kind == "oneclass":
            y = ones_per_row(X)
        elif not is_dask(y):
            y = in_memory_column(y, X.shape[0], "y")
            if self._kind == "classification":
                check_classification_targets(y)
                classes, y = np.unique(y, return_inverse=True)
            y = chunked_as(y.astype(np.float64), X)
        elif self._kind == "classification":
            classes, y = dask_class_codes(y, X.chunks[0])
            check_classification_targets(classes)
        else:
            y = as_labels(y, X.chunks[0])
        if classes is not None and len(classes) < 2:
            raise ValueError("This solver needs samples of at least 2 classes in the "
                             f"data, but the data contains only one class: {shown(classes[:1])}")
        # unknown row counts (a DataFrame's) are taken as more rows than columns
        n_samples = X.shape[0]
        data = None

        def label_order():       # only for a warm start: the parts' labels, read once
            nonlocal data
            data = dataset(X, y, None, sample_weight, self.client)
            return dataset_label_order(data)

        params = self._fit_params(n_samples, self.n_features_in_, classes, label_order,
                                  lambda p: fit_scale(X, sample_weight, p, self.client))
        if self._kind == "classification":
            self.classes_ = classes
            if isinstance(self.class_weight, str) and self.class_weight == "balanced":
                counts = class_counts(y, np.arange(len(classes)))
                params.class_weights = self._class_weights(np.repeat(np.arange(len(classes)),
                                                                     counts))
            else:
                params.class_weights = self._class_weights(None)
        if data is None:
            data = dataset(X, y, None, sample_weight, self.client)
        self._set_model(self._fitted(self._train(data, params), params))
        return self

    def _fitted(self, model, params) -> Model:
        """The model a fit keeps (as trained, here)."""
        return model

    def _fit_params(self, n_samples, n_features, classes, label_order, scale=None) -> Params:
        """The Params of this fit. classes: the sorted classes of y (None for regression
        and one-class); label_order() gives their indices in the order the binary
        problems will be trained (for a warm start; it may read the data); scale(params)
        the data's formulation.Scale. With warm_start, init_sol is the previous fit's."""
        params = self._by_scale(self._params(self._solver_type(n_samples, n_features)), scale)
        # ignored, as scikit-learn's solvers without one do, where the solver has none
        if getattr(self, "warm_start", False) and hasattr(self, "model_") \
                and params.spec.init_sol:
            params.init_sol = self._previous_model(params, classes)
        return params

    def _previous_model(self, params, classes) -> Model:
        """coef_ and intercept_ (scikit-learn's warm start) as a Model on the class
        indices, with this fit's bias; train aligns it to the fit (features, labels)
        and checks that the solver's problem is the same kind."""
        if classes is not None and not np.array_equal(self.classes_, classes):
            raise ValueError(f"warm_start=True starts from the previous fit's classes "
                             f"{shown(self.classes_)}; this fit has classes {shown(classes)}: "
                             "fit with warm_start=False")
        previous = self.model_
        coef = self._dense_coef()
        intercept = np.broadcast_to(np.asarray(self.intercept_, dtype=np.float64),
                                    (coef.shape[0],))
        W = coef.T
        if previous.nr_w == 2 and W.shape[1] == 1:   # Crammer-Singer, two classes: w_1 - w_0
            W = np.column_stack([-W[:, 0] / 2, W[:, 0] / 2])
            intercept = np.array([-intercept[0] / 2, intercept[0] / 2])
        if params.bias >= 0:
            W = np.vstack([W, intercept / params.bias])
        label = previous.label
        rho = previous.rho
        if classes is not None:
            label = np.arange(len(classes), dtype=np.int64)
            if W.shape[1] == 1:                      # positive for class 1
                label = label[::-1].copy()
        elif self._kind == "oneclass":
            rho = -float(intercept[0])
        return replace(previous, label=label, nr_feature=coef.shape[1],
                       bias=float(params.bias), w=np.ascontiguousarray(W), rho=rho)

    def _check_classes(self, y_encoded, sample_weight):
        k = len(self.classes_)
        if k < 2:
            raise ValueError("This solver needs samples of at least 2 classes in the data, "
                             f"but the data contains only one class: {shown(self.classes_[:1])}")
        if sample_weight is not None:
            present = np.bincount(y_encoded[sample_weight > 0], minlength=k) > 0
            if not present.all():
                missing = self.classes_[np.flatnonzero(~present)]
                raise ValueError(f"class(es) {shown(missing)} have no sample with a positive "
                                 "sample_weight; every class needs one")

    def _class_weights(self, y_encoded):
        cw = self.class_weight
        if cw is None:
            return []
        if isinstance(cw, str) and y_encoded is None:
            raise ValueError("class_weight='balanced' needs the labels")
        y_for_weights = self.classes_[y_encoded] if y_encoded is not None else self.classes_
        weights = compute_class_weight(cw, classes=self.classes_, y=y_for_weights)
        return [(k, float(w)) for k, w in enumerate(weights) if w != 1.0]

    def _set_model(self, model):
        self.model_ = model
        n_classes = len(self.classes_) if self._kind == "classification" else None
        self.coef_, self.intercept_ = linear_attributes(model, n_classes)
        self.n_iter_ = self._n_iter(model)
        self.solver_type_ = model.solver_type

    def _n_iter(self, model):
        """n_iter_ as scikit-learn's LinearSVC and LinearSVR: the most iterations of any
        binary problem."""
        return int(max(model.n_iter)) if model.n_iter else 0

    def _dense_coef(self):
        """coef_ as a 2-D array (also after sparsify())."""
        coef = self.coef_.toarray() if sp.issparse(self.coef_) else self.coef_
        return np.atleast_2d(np.asarray(coef, dtype=np.float64))

    # -- prediction
    def _validated(self, X):
        check_is_fitted(self)
        if is_dask(X):
            X = dask_rows(X)
            if X.shape[1] != self.n_features_in_:
                raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} "
                                 f"is expecting {self.n_features_in_} features as input.")
            return X
        return validate_data(self, X, accept_sparse="csr", dtype=_X_DTYPES, reset=False,
                             accept_large_sparse=True)

    def _scores(self, X):
        """(n, rows of coef_) scores; a dask array when X is one."""
        X = self._validated(X)
        coef = self._dense_coef()
        if is_dask(X):
            return map_scores(X, coef, self.intercept_)
        return block_scores(X, coef, self.intercept_)

    # -- LIBLINEAR model files
    def liblinear_model(self) -> Model:
        """The fitted model as LIBLINEAR sees it.

        Returns
        -------
        dlinear.Model
            A classifier's labels are its ``classes_`` (``model_`` holds their indices).

        Raises
        ------
        ValueError
            If the classes are not integers, which LIBLINEAR's files need.
        """
        check_is_fitted(self)
        if self._kind != "classification":
            return self.model_
        classes = self.classes_
        integral = (np.issubdtype(classes.dtype, np.number)
                    and not np.issubdtype(classes.dtype, np.bool_)
                    and np.all(np.isfinite(classes)) and np.all(classes == np.round(classes))
                    and np.all(np.abs(classes) < 2.0 ** 63))
        if not integral:
            raise ValueError(f"a LIBLINEAR model file holds integer class labels, but "
                             f"classes_ is {shown(classes)}"
                             ": train on integer labels to save the model in LIBLINEAR's "
                             "format (or pickle the estimator)")
        return replace(self.model_, label=classes.astype(np.int64)[self.model_.label])

    def save_liblinear(self, path) -> None:
        """Write LIBLINEAR's model file, with the classes as given to ``fit``.

        ``label -1 1`` for classes -1 and 1, so LIBLINEAR's predict and
        ``dlinear-predict`` print them.

        Parameters
        ----------
        path : str or os.PathLike

        Raises
        ------
        ValueError
            If the classes are not integers.
        """
        save_model(path, self.liblinear_model())

    @classmethod
    def load_liblinear(cls, path):
        """A fitted estimator from a LIBLINEAR model file.

        Parameters
        ----------
        path : str or os.PathLike
            A file written by LIBLINEAR, ``dlinear-train`` or :meth:`save_liblinear`;
            the solver, bias and classes come from it.

        Returns
        -------
        estimator
            An instance of this class.

        Raises
        ------
        ValueError
            If the file cannot be read, or holds another kind of model.
        """
        try:
            model = load_model(path)
        except DlinearError as e:
            raise ValueError(str(e)) from e
        if model.spec.kind != cls._kind:
            raise ValueError(f"{path}: a {model.spec.kind} model ({model.spec.name}) "
                             f"cannot be loaded as {cls.__name__}")
        names = cls._get_param_names()
        settings = {"solver": model.solver_type} if "solver" in names else {}
        if "fit_intercept" in names:
            settings["fit_intercept"] = model.bias >= 0
            settings["intercept_scaling"] = model.bias if model.bias >= 0 else 1.0
        estimator = cls(**settings)
        estimator._solver_type(0, model.nr_feature)        # the solver suits this class
        estimator.n_features_in_ = model.nr_feature
        if cls._kind == "classification":
            estimator.classes_ = np.sort(model.label)
            model = replace(model, label=np.searchsorted(estimator.classes_, model.label))
        estimator._set_model(model)
        return estimator

    # -- the client is shared, never copied: clone keeps it, pickling drops it
    def __sklearn_clone__(self):
        client, self.client = self.client, None
        try:
            copy = _clone_parametrized(self)
        finally:
            self.client = client
        copy.client = client
        return copy

    def __getstate__(self):
        state = super().__getstate__()
        if state.get("client") is not None:
            state = dict(state, client=None)
        return state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class _LiblinearClassifier(ClassifierMixin, _LiblinearEstimator):
    _kind = "classification"

    def fit(self, X, y, sample_weight=None):
        """Fit the model.

        Parameters
        ----------
        X : array-like, scipy.sparse matrix, dask array or dask DataFrame of shape (n_samples, n_features)
            Dask input trains on the cluster of ``client`` (or the current one).
        y : array-like, dask array or dask Series of shape (n_samples,)
            The labels (strings are fine).
        sample_weight : array-like, dask array or dask Series of shape (n_samples,), optional
            Multiplies each instance's C.

        Returns
        -------
        self

        Warns
        -----
        ConvergenceWarning
            When a solver stops at an iteration cap.
        """
        return self._fit(X, y, sample_weight)

    def decision_function(self, X):
        """Confidence scores; a lazy dask array for dask input.

        Parameters
        ----------
        X : array-like, scipy.sparse matrix, dask array or dask DataFrame

        Returns
        -------
        numpy.ndarray or dask.array.Array
            Shape (n_samples,) for two classes (positive for ``classes_[1]``), else
            (n_samples, n_classes).
        """
        scores = self._scores(X)
        if scores.shape[1] == 1:
            return scores[:, 0]
        return scores

    def sparsify(self):
        """Make ``coef_`` a scipy.sparse CSR array (``intercept_`` stays dense).

        Predictions are unchanged; worth it when most coefficients are zero (L1).

        Returns
        -------
        self
        """
        check_is_fitted(self, msg=f"Estimator, {type(self).__name__}, must be fitted "
                                  "before sparsifying.")
        self.coef_ = sp.csr_array(self.coef_)
        return self

    def densify(self):
        """Make ``coef_`` a numpy array again (a no-op unless :meth:`sparsify` was called).

        Returns
        -------
        self
        """
        check_is_fitted(self, msg=f"Estimator, {type(self).__name__}, must be fitted "
                                  "before densifying.")
        if sp.issparse(self.coef_):
            self.coef_ = self.coef_.toarray()
        return self

    def predict(self, X):
        """Predicted classes; a lazy dask array for dask input.

        Parameters
        ----------
        X : array-like, scipy.sparse matrix, dask array or dask DataFrame

        Returns
        -------
        numpy.ndarray or dask.array.Array of shape (n_samples,)
        """
        X = self._validated(X)
        coef = self._dense_coef()
        if is_dask(X):
            return map_labels(X, coef, self.intercept_, self.classes_)
        return block_labels(X, coef, self.intercept_, self.classes_)
