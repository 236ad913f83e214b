"""scikit-learn-style estimators over dlinear's solvers: LinearSVC, LogisticRegression,
LinearSVR and OneClassSVM.

Each class only names its parameters; one base class does the work. As in scikit-learn,
`__init__` stores the arguments and `fit` validates them, maps them to a LIBLINEAR `-s`
number through the SOLVERS table (loss, penalty and dual are read from the solvers'
LIBLINEAR names), trains with dlinear.train and exposes the model as `coef_` and
`intercept_` in scikit-learn's conventions (`classes_` sorted; for two classes one row
whose positive side is `classes_[1]`).

numpy and scipy.sparse inputs train in this process, one-vs-rest classes on n_jobs
threads (None: 1, as in scikit-learn, so GridSearchCV(n_jobs>1) is not oversubscribed),
or on the Dask cluster of `client=` when one is given. Dask arrays and DataFrames train
on the cluster of `client=` (default: the current distributed.Client), their partitions
made into parts where they are (dlinear.cluster.Dataset.from_arrays), and are predicted
lazily with map_blocks. verbose=1 prints LIBLINEAR's progress lines to stderr.
save_liblinear / load_liblinear write and read LIBLINEAR model files with the classes as
given to fit.

`sample_weight` scales each instance's C (LIBLINEAR's `-W` extension). Rows of weight 0
add nothing to the objective and are left out before training (numpy/scipy inputs).
"""
from __future__ import annotations

import sys
import warnings
from dataclasses import dataclass, replace
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.special import expit

from .errors import DlinearError

SKLEARN_HINT = ('dlinear\'s estimators need scikit-learn 1.6 or later: '
                'pip install "dlinear[sklearn]"')
try:
    from sklearn.base import (BaseEstimator, ClassifierMixin, OutlierMixin, RegressorMixin,
                              _clone_parametrized)
    from sklearn.exceptions import ConvergenceWarning as _SklearnConvergenceWarning
    from sklearn.utils import check_random_state, compute_class_weight
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import (_check_sample_weight, check_is_fitted,
                                          validate_data)
except ImportError as e:       # missing, or older than 1.6 (validate_data, __sklearn_tags__)
    raise ImportError(f"{SKLEARN_HINT} ({e})", name=e.name) from e

from .api import is_dask_collection, train
from .data import Problem
from .errors import ConvergenceWarning as _DlinearConvergenceWarning
from .model import Model, load_model, save_model
from .params import Params
from .solver_table import SOLVERS
from .plan import first_appearance, order_labels

__all__ = ["LinearSVC", "LogisticRegression", "LinearSVR", "OneClassSVM", "ConvergenceWarning"]


class ConvergenceWarning(_DlinearConvergenceWarning, _SklearnConvergenceWarning):
    """The solver's iteration-cap warning as the estimators raise it: both dlinear's and
    scikit-learn's ConvergenceWarning, so either filter catches it."""

# ----------------------------------------------------------------- the -s mapping

_LOSS_OF_NAME = {"LR": "logistic_regression", "L2LOSS_SVC": "squared_hinge",
                 "L1LOSS_SVC": "hinge", "L2LOSS_SVR": "squared_epsilon_insensitive",
                 "L1LOSS_SVR": "epsilon_insensitive"}


def _sklearn_key(name: str):
    """(loss, penalty, dual) of a LIBLINEAR solver name such as L2R_L2LOSS_SVC_DUAL, or
    None for the solvers outside that scheme (MCSVM_CS, ONECLASS_SVM)."""
    dual = name.endswith("_DUAL")
    core = name[:-5] if dual else name
    penalty, _, loss = core.partition("_")
    if penalty not in ("L1R", "L2R") or loss not in _LOSS_OF_NAME:
        return None
    return _LOSS_OF_NAME[loss], penalty[:2].lower(), dual


def _solver_table() -> dict:
    table = {}
    for spec in SOLVERS.values():
        key = _sklearn_key(spec.name)
        if key is not None and spec.available:
            table[key] = spec.id
    return table


SKLEARN_SOLVERS = _solver_table()   # (loss, penalty, dual) -> -s


def solver_for(loss: str, penalty: str, dual, n_samples: int, n_features: int) -> int:
    """The -s number of a (loss, penalty, dual) combination; dual="auto" prefers the dual
    when n_samples < n_features, as scikit-learn does. ValueError if unsupported."""
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


# ----------------------------------------------------------------- model -> attributes

def linear_attributes(model, n_classes: int | None):
    """(coef_, intercept_) of a dlinear/LIBLINEAR Model in scikit-learn's shape.

    Classification models must have been trained on labels 0..n_classes-1 (the indices
    of classes_): for two classes one row, positive for class 1; otherwise one row per
    class in class order. Regression: coef_ (n_features,), intercept_ (1,). One-class:
    coef_ (1, n_features), intercept_ = [-rho]."""
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


# ----------------------------------------------------------------- dask helpers

def _is_dask(x) -> bool:
    """A dask array, or a dask DataFrame or Series (made a dask array of its partitions,
    see _as_dask_array)."""
    return is_dask_collection(x)


def _as_dask_array(x):
    """A dask DataFrame or Series as a dask array of its partitions (row counts unknown:
    nothing is computed); a dask array as it is."""
    return x.to_dask_array() if hasattr(x, "to_dask_array") else x


def _block_as_matrix(block):
    if hasattr(block, "to_scipy_sparse"):       # pydata sparse (GCXS, COO)
        return block.to_scipy_sparse().tocsr()
    if sp.issparse(block):
        return block.tocsr()
    return np.asarray(block, dtype=np.float64)


def _block_scores(block, coef, intercept):
    X = _block_as_matrix(block)
    return np.asarray(X @ coef.T, dtype=np.float64) + intercept


def _block_decision(block, coef, intercept, ravel):
    scores = _block_scores(block, coef, intercept)
    return scores.ravel() if ravel else scores


def _block_labels(block, coef, intercept, classes):
    scores = _block_scores(block, coef, intercept)
    if scores.shape[1] == 1:
        return classes[(scores[:, 0] > 0).astype(np.int64)]
    return classes[np.argmax(scores, axis=1)]


def _block_proba(block, coef, intercept):
    return _proba_from_scores(_block_scores(block, coef, intercept))


def _block_oneclass(block, coef, rho, what):
    scores = _block_scores(block, coef, 0.0)[:, 0]
    if what == "score":
        return scores
    if what == "decision":
        return scores - rho
    return np.where(scores - rho > 0, 1, -1)     # LIBLINEAR's predict: 0 is an outlier


def _proba_from_scores(scores):
    """LIBLINEAR's probabilities: sigmoid of each one-vs-rest score, normalised."""
    if scores.shape[1] == 1:
        p = expit(scores[:, 0])
        return np.column_stack([1.0 - p, p])
    p = expit(scores)
    return p / p.sum(axis=1, keepdims=True)


def _dask_rows(X):
    """X with all columns in each block (what the blocks' products need)."""
    X = _as_dask_array(X)
    if X.ndim != 2:
        raise ValueError(f"Expected a 2D dask array, got {X.ndim} dimensions")
    return X.rechunk({1: -1}) if len(X.chunks[1]) != 1 else X


def _ones_block(block):
    return np.ones(block.shape[0])


def _encode_block(y_block, classes):
    idx = np.searchsorted(classes, y_block)
    return idx.astype(np.float64)


def _label_order(y_encoded, sample_weight):
    """The class indices in the order train gives their binary problems (LIBLINEAR's:
    first appearance among the rows trained on, which leave out weight-0 rows)."""
    if sample_weight is not None:
        y_encoded = y_encoded[sample_weight > 0]
    return order_labels(first_appearance(np.asarray(y_encoded, dtype=np.float64)))


# ----------------------------------------------------------------- the shared base

class _LiblinearEstimator(BaseEstimator):
    """The shared fit/predict machinery; subclasses name the parameters and the kind."""

    _kind = "classification"      # or "regression", "oneclass"
    _C_may_be_inf = False

    # -- parameters -> Params
    def _check_common(self):
        def positive(name, allow_none=False, allow_inf=False):
            v = getattr(self, name)
            if v is None and allow_none:
                return
            if isinstance(v, bool) or not isinstance(v, Real) or not (v > 0) \
                    or not (np.isfinite(v) or (allow_inf and v == np.inf)):
                raise ValueError(f"The '{name}' parameter of {type(self).__name__} must be a "
                                 f"float in the range (0, inf){' or None' if allow_none else ''}"
                                 f". Got {v!r} instead.")
        if hasattr(self, "C"):
            positive("C", allow_inf=self._C_may_be_inf)
        positive("tol", allow_none=True)
        if hasattr(self, "intercept_scaling"):
            positive("intercept_scaling")
        if hasattr(self, "max_iter"):
            if isinstance(self.max_iter, bool) or not isinstance(self.max_iter, Integral) \
                    or self.max_iter < 1:
                raise ValueError(f"The 'max_iter' parameter of {type(self).__name__} must be "
                                 f"an int in the range [1, inf). Got {self.max_iter!r} instead.")
        for name in ("dual", "fit_intercept"):
            if hasattr(self, name):
                v = getattr(self, name)
                allowed = (True, False, "auto") if name == "dual" else (True, False)
                if not any(v is a or (isinstance(a, str) and v == a) for a in allowed):
                    raise ValueError(f"The '{name}' parameter of {type(self).__name__} must be "
                                     f"one of {allowed}. Got {v!r} instead.")

    def _explicit_solver(self):
        solver = getattr(self, "solver", None)
        if solver is None:
            return None
        if isinstance(solver, bool) or not isinstance(solver, Integral) \
                or solver not in SOLVERS or not SOLVERS[solver].available:
            raise ValueError(f"solver must be None or one of the LIBLINEAR -s numbers "
                             f"{[s.id for s in SOLVERS.values() if s.available]}, got {solver!r}")
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
                      nu=float(getattr(self, "nu", 0.5)),
                      bias=float(self.intercept_scaling) if fit_intercept else -1.0,
                      max_iter=int(getattr(self, "max_iter", 300)), seed=self._seed(),
                      partition=getattr(self, "partition", None))

    def _n_threads(self) -> int:
        """n_jobs as scikit-learn reads it (None: 1, or what joblib's context says; -1:
        one per core): the threads of an in-process fit's one-vs-rest classes."""
        from joblib import effective_n_jobs
        n = self.n_jobs
        if n is not None and (isinstance(n, bool) or not isinstance(n, Integral) or n == 0):
            raise ValueError(f"n_jobs must be None or a non-zero int, got {n!r}")
        return max(1, effective_n_jobs(n))

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
        for w in caught:
            category = (ConvergenceWarning if issubclass(w.category, _DlinearConvergenceWarning)
                         else w.category)
            warnings.warn(str(w.message), category, stacklevel=4)
        return model

    def _fit(self, X, y, sample_weight):
        self._check_common()
        if _is_dask(X):
            return self._fit_dask(X, y, sample_weight)
        if self._kind == "oneclass":
            X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, order="C",
                              accept_large_sparse=True)
            y = np.ones(X.shape[0])
        else:
            X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64,
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
                                  lambda: _label_order(y, sample_weight))
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
        import dask.array as da

        X = _dask_rows(X)
        if np.isnan(X.shape[1]):
            raise ValueError("the number of columns of the dask array X must be known")
        self.n_features_in_ = int(X.shape[1])
        if sample_weight is not None:
            sample_weight = _as_dask_array(sample_weight)
        if self._kind == "oneclass":
            y = X.map_blocks(_ones_block, drop_axis=1, dtype=np.float64)
        else:
            y = da.asarray(_as_dask_array(y))
            if y.ndim != 1:
                raise ValueError(f"y must be 1-dimensional, got shape {y.shape}")
        n_samples = X.shape[0] if not np.isnan(X.shape[0]) else 0
        classes = None
        if self._kind == "classification":
            classes = np.sort(np.asarray(da.unique(y).compute()))   # only the distinct labels
            check_classification_targets(classes)
            if len(classes) < 2:
                raise ValueError("This solver needs samples of at least 2 classes in the "
                                 f"data, but the data contains only one class: {classes[0]!r}")
        data = None

        def label_order():       # only for a warm start: the parts' labels, read once
            nonlocal data
            data = self._dataset(X, y, classes, sample_weight)
            return order_labels(data.class_labels_by_first_appearance())

        params = self._fit_params(n_samples, self.n_features_in_, classes, label_order)
        if self._kind == "classification":
            self.classes_ = classes
            if isinstance(self.class_weight, str) and self.class_weight == "balanced":
                counts = da.bincount(y.map_blocks(_encode_block, classes, dtype=np.float64)
                                     .astype(np.int64), minlength=len(classes)).compute()
                params.class_weights = self._class_weights(np.repeat(np.arange(len(classes)),
                                                                     counts))
            else:
                params.class_weights = self._class_weights(None)
        if data is None:
            data = self._dataset(X, y, classes, sample_weight)
        self._set_model(self._fitted(self._train(data, params), params))
        return self

    def _dataset(self, X, y, classes, sample_weight):
        """The cluster Dataset of dask X and y (classes encoded as their indices)."""
        from .cluster.dataset import Dataset, current_client
        if classes is not None:
            y = y.map_blocks(_encode_block, classes, dtype=np.float64)
        try:
            return Dataset.from_arrays(X, y, self.client or current_client(),
                                       sample_weight=sample_weight)
        except DlinearError as e:
            raise ValueError(str(e)) from e

    def _fitted(self, model, params) -> Model:
        """The model a fit keeps (as trained, here)."""
        return model

    def _fit_params(self, n_samples, n_features, classes, label_order) -> Params:
        """The Params of this fit. classes: the sorted classes of y (None for regression
        and one-class); label_order() gives their indices in the order the binary
        problems will be trained (for a warm start; it may read the data)."""
        return self._params(self._solver_type(n_samples, n_features))

    def _check_classes(self, y_encoded, sample_weight):
        k = len(self.classes_)
        if k < 2:
            raise ValueError("This solver needs samples of at least 2 classes in the data, "
                             f"but the data contains only one class: {self.classes_[0]!r}")
        if sample_weight is not None:
            present = np.bincount(y_encoded[sample_weight > 0], minlength=k) > 0
            if not present.all():
                missing = self.classes_[np.flatnonzero(~present)]
                raise ValueError(f"class(es) {list(missing)} have no sample with a positive "
                                 "sample_weight; every class needs one")

    def _class_weights(self, y_encoded):
        cw = self.class_weight
        if cw is None:
            return []
        if not (isinstance(cw, dict) or (isinstance(cw, str) and cw == "balanced")):
            raise ValueError(f"class_weight must be None, a dict or 'balanced', got {cw!r}")
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
        if _is_dask(X):
            X = _dask_rows(X)
            if X.shape[1] != self.n_features_in_:
                raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} "
                                 f"is expecting {self.n_features_in_} features as input.")
            return X
        return validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False,
                             accept_large_sparse=True)

    def _scores(self, X):
        """(n, rows of coef_) scores; a dask array when X is one."""
        X = self._validated(X)
        coef = self._dense_coef()
        if _is_dask(X):
            return X.map_blocks(_block_decision, coef, self.intercept_, False,
                                chunks=(X.chunks[0], (coef.shape[0],)), dtype=np.float64,
                                meta=np.empty((0, 0)))
        return np.asarray(X @ coef.T, dtype=np.float64) + self.intercept_

    # -- LIBLINEAR model files
    def liblinear_model(self) -> Model:
        """The fitted model as LIBLINEAR sees it: a classifier's labels are its classes_
        (model_ holds their indices), which must be integers, as in LIBLINEAR's files."""
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
                             f"classes_ is {list(classes[:5])}{'...' if len(classes) > 5 else ''}"
                             ": train on integer labels to save the model in LIBLINEAR's "
                             "format (or pickle the estimator)")
        return replace(self.model_, label=classes.astype(np.int64)[self.model_.label])

    def save_liblinear(self, path) -> None:
        """Writes LIBLINEAR's model file with the classes as given to fit (`label -1 1`
        for classes -1 and 1), so LIBLINEAR's predict and dlinear-predict print them.
        ValueError for non-integer classes."""
        save_model(path, self.liblinear_model())

    @classmethod
    def load_liblinear(cls, path):
        """A fitted estimator from a LIBLINEAR model file (written by LIBLINEAR,
        dlinear-train or save_liblinear); its solver, bias and classes come from the
        file."""
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
        """Fit the model to X (n_samples, n_features) and labels y; sample_weight scales
        each instance's C."""
        return self._fit(X, y, sample_weight)

    def decision_function(self, X):
        """Confidence scores: (n_samples,) for two classes (positive: classes_[1]),
        else (n_samples, n_classes)."""
        scores = self._scores(X)
        if scores.shape[1] == 1:
            return scores[:, 0]
        return scores

    def sparsify(self):
        """coef_ as a scipy.sparse CSR array (intercept_ stays dense); predictions are
        unchanged. Worth it when most coefficients are zero (penalty l1)."""
        check_is_fitted(self, msg=f"Estimator, {type(self).__name__}, must be fitted "
                                  "before sparsifying.")
        self.coef_ = sp.csr_array(self.coef_)
        return self

    def densify(self):
        """coef_ back to a numpy array (a no-op unless sparsify() was called)."""
        check_is_fitted(self, msg=f"Estimator, {type(self).__name__}, must be fitted "
                                  "before densifying.")
        if sp.issparse(self.coef_):
            self.coef_ = self.coef_.toarray()
        return self

    def predict(self, X):
        X = self._validated(X)
        coef = self._dense_coef()
        if _is_dask(X):
            return X.map_blocks(_block_labels, coef, self.intercept_, self.classes_,
                                drop_axis=1, dtype=self.classes_.dtype,
                                meta=np.empty((0,), dtype=self.classes_.dtype))
        scores = np.asarray(X @ coef.T, dtype=np.float64) + self.intercept_
        if scores.shape[1] == 1:
            return self.classes_[(scores[:, 0] > 0).astype(np.int64)]
        return self.classes_[np.argmax(scores, axis=1)]


# ----------------------------------------------------------------- the estimators

class LinearSVC(_LiblinearClassifier):
    """Linear support vector classification (LIBLINEAR -s 1, 2, 3, 4, 5).

    loss "squared_hinge" (L2-loss) or "hinge" (L1-loss), penalty "l2" or "l1", dual
    True/False/"auto" choose the solver as in scikit-learn; multi_class="crammer_singer"
    is -s 4; an explicit `solver` (a -s number) overrides the mapping. intercept_scaling
    is LIBLINEAR's -B value (used when fit_intercept), tol its -e (None: the solver's
    default), max_iter the dual solvers' iteration cap, random_state the seed. partition
    (dask input only): True trains -s 1, 3 partitioned (each worker solves its own rows),
    False on a copy per worker, None (default) partitioned when a copy would not fit one
    worker's memory. For the primal Newton solver -s 2 (dual=False): True map-reduces over
    the parts, False fits the classes on a copy per worker, None a copy for 3+ classes
    when it fits one worker (else map-reduced).
    """

    def __init__(self, C=1.0, loss="squared_hinge", penalty="l2", dual=True, tol=None,
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
        if self.multi_class not in ("ovr", "crammer_singer"):
            raise ValueError(f"multi_class must be 'ovr' or 'crammer_singer', "
                             f"got {self.multi_class!r}")
        if self.multi_class == "crammer_singer":
            return 4
        if self.loss not in ("squared_hinge", "hinge"):
            raise ValueError(f"loss must be 'squared_hinge' or 'hinge', got {self.loss!r}")
        return solver_for(self.loss, self.penalty, self.dual, n_samples, n_features)


def _softmax_from_scores(scores):
    """Multinomial probabilities: the softmax of the class scores (two classes: one
    score column, the sigmoid as for one-vs-rest)."""
    if scores.shape[1] == 1:
        return _proba_from_scores(scores)
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


# ----------------------------------------------------------------- LogisticRegression:
# scikit-learn's penalty, l1_ratio and solver names -> the problem dlinear solves. The
# whole mapping is here: resolved_penalty, logistic_problem and _elasticnet_problem.

LIBLINEAR_SOLVER = "liblinear"
# scikit-learn's other solvers all minimize the multinomial loss for three or more
# classes and leave the intercept out of the penalty
MULTINOMIAL_SOLVERS = ("lbfgs", "newton-cg", "newton-cholesky", "sag", "saga")
SKLEARN_LOGISTIC_SOLVERS = (LIBLINEAR_SOLVER,) + MULTINOMIAL_SOLVERS
PENALTIES = ("l2", "l1", "elasticnet", None)


@dataclass(frozen=True)
class LogisticProblem:
    """What a LogisticRegression fit solves: the -s number, the softmax loss over all
    classes (Params.multinomial) instead of one-vs-rest, and the intercept left out of
    the penalty (-B 1 -R)."""
    solver_type: int
    multinomial: bool = False
    unpenalized_intercept: bool = False
    l1_ratio: float | None = None         # -s 6's elastic net (Params.l1_ratio)


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
    has no solver for the problem, a ValueError names the nearest supported choice."""
    several = n_classes is not None and n_classes > 2
    if isinstance(solver, str):
        if solver not in SKLEARN_LOGISTIC_SOLVERS:
            raise ValueError(f"The 'solver' parameter of LogisticRegression must be a str "
                             f"among {set(SKLEARN_LOGISTIC_SOLVERS)}, None or a LIBLINEAR -s "
                             f"number. Got {solver!r} instead.")
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
    if penalty is None:
        raise ValueError("unpenalized logistic regression (C=np.inf or penalty=None) is not "
                         "supported by dlinear's solvers, which need a finite C: use a large "
                         "one, e.g. C=1e6")
    if penalty == "elasticnet":
        return _elasticnet_problem(solver, l1_ratio, multi_class, n_classes)
    if solver in MULTINOMIAL_SOLVERS:
        if multi_class == "ovr" or not (several or multi_class == "multinomial"):
            return LogisticProblem(0 if penalty == "l2" else 6, unpenalized_intercept=True)
        if penalty == "l1":
            raise ValueError(f"solver={solver!r} with l1_ratio=1 (L1) on {n_classes} classes "
                             "is the L1-penalized multinomial model, which dlinear has no "
                             "solver for: multi_class='ovr' trains one-vs-rest L1 (-s 6), "
                             "l1_ratio=0 the L2 multinomial model")
        return LogisticProblem(0, multinomial=True, unpenalized_intercept=True)
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
        if penalty != "l2" or (solver is not None and solver != 0):
            raise ValueError("multi_class='multinomial' is L2-regularized logistic "
                             "regression by Newton (-s 0) only")
        return LogisticProblem(0, multinomial=True)
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
        return LogisticProblem(6, unpenalized_intercept=True, l1_ratio=float(l1_ratio))
    if solver not in (None, 6):
        raise ValueError(f"the elastic net is solved by -s 6 (newGLMNET) only; got "
                         f"solver={solver!r}: use solver='saga', None or 6")
    if multi_class == "multinomial":
        raise ValueError("dlinear has no multinomial elastic net: use multi_class='ovr'")
    return LogisticProblem(6, l1_ratio=float(l1_ratio))


class LogisticRegression(_LiblinearClassifier):
    """Logistic regression with scikit-learn 1.9's parameters.

    solver: scikit-learn's names give scikit-learn's problems (logistic_problem):
    "liblinear" is LIBLINEAR's -s 0 / 7 (L2, by dual) or -s 6 (L1) with the intercept
    penalized; "lbfgs", "newton-cg", "newton-cholesky", "sag" and "saga" the binary or,
    for three or more classes, multinomial loss with the intercept unpenalized, all
    solved by dlinear's Newton (-s 0; saga's L1 by -s 6). None (dlinear's default) is
    LIBLINEAR's way: -s 0, 7 or 6 by penalty and dual, one-vs-rest, the intercept
    penalized; an int is that -s number. l1_ratio 0 / 1 is L2 / L1 (penalty, deprecated
    in scikit-learn 1.8, still works and warns as there). multi_class (dlinear's): "auto"
    (the solver's own way), "ovr" (one-vs-rest with any solver), "multinomial".
    warm_start starts -s 0 (also multinomial) from the previous coef_ and intercept_;
    n_iter_ is (1,), or (n_classes,) for one-vs-rest. partition (dask input only): as
    LinearSVC's, for the dual solver -s 7 (dual=True); for the Newton solver -s 0 True
    map-reduces over the parts, False fits the classes on a copy per worker, None
    (default) a copy for one-vs-rest with 3+ classes when it fits one worker, else
    map-reduced.
    """

    def __init__(self, penalty="deprecated", *, C=1.0, l1_ratio=0.0, dual=False, tol=None,
                 fit_intercept=True, intercept_scaling=1.0, class_weight=None,
                 random_state=None, solver=None, max_iter=300, verbose=0, warm_start=False,
                 n_jobs=None, multi_class="auto", partition=None, client=None):
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

    _C_may_be_inf = True        # C=np.inf is scikit-learn's spelling of no penalty

    def _problem(self, n_samples, n_features, n_classes) -> LogisticProblem:
        if self.penalty != "deprecated" and self.penalty not in PENALTIES:
            raise ValueError(f"The 'penalty' parameter of LogisticRegression must be a str "
                             f"among {{'l1', 'l2', 'elasticnet'}} or None. Got "
                             f"{self.penalty!r} instead.")
        r = self.l1_ratio
        if r is not None and (isinstance(r, bool) or not isinstance(r, Real)
                              or not 0 <= r <= 1):
            raise ValueError(f"The 'l1_ratio' parameter of LogisticRegression must be a "
                             f"float in the range [0.0, 1.0] or None. Got {r!r} instead.")
        if self.multi_class not in ("auto", "ovr", "multinomial"):
            raise ValueError("multi_class must be 'auto', 'ovr' or 'multinomial', got "
                             f"{self.multi_class!r}")
        if not (self.warm_start is True or self.warm_start is False):
            raise ValueError(f"The 'warm_start' parameter of LogisticRegression must be an "
                             f"instance of 'bool'. Got {self.warm_start!r} instead.")
        penalty = resolved_penalty(self.penalty, r, self.C)
        if self.C == np.inf:
            penalty = None
        solver = self.solver if isinstance(self.solver, str) else self._explicit_solver()
        problem = logistic_problem(solver, penalty, self.dual, self.multi_class, n_classes,
                                   n_samples, n_features, r)
        if not SOLVERS[problem.solver_type].probability:
            raise ValueError(f"solver -s {problem.solver_type} is not logistic regression")
        return problem

    def _solver_type(self, n_samples, n_features, n_classes=2):
        return self._problem(n_samples, n_features, n_classes).solver_type

    def _fit_params(self, n_samples, n_features, classes, label_order) -> Params:
        problem = self._problem(n_samples, n_features, len(classes))
        params = self._params(problem.solver_type)
        params.multinomial = problem.multinomial
        params.l1_ratio = problem.l1_ratio
        if problem.unpenalized_intercept and self.fit_intercept:
            params.bias = 1.0       # -R needs -B 1; an unpenalized intercept has no scale
            params.regularize_bias = False
        if self.warm_start and hasattr(self, "coef_") and params.spec.init_sol:
            params.init_sol = self._previous_w(params, classes, n_features, label_order())
        return params

    def _fitted(self, model, params) -> Model:
        """A multinomial model's unpenalized intercepts are unique only up to a common
        constant (the softmax ignores it): they are shifted to sum to 0, scikit-learn's
        symmetric convention. The probabilities do not change."""
        if not (model.multinomial and params.bias >= 0 and not params.regularize_bias):
            return model
        W = np.array(model.w, dtype=np.float64).reshape(model.w_size, model.nr_w)
        W[-1] -= W[-1].mean()
        return replace(model, w=W)

    def _previous_w(self, params, classes, n_features, order):
        """coef_ and intercept_ of the previous fit as Params.init_sol: a column per binary
        problem (or class, multinomial) in the order they are trained."""
        coef = self._dense_coef()
        if coef.shape[1] != n_features or not np.array_equal(self.classes_, classes):
            raise ValueError(f"warm_start=True starts from the previous fit's coef_ "
                             f"{coef.shape} and classes {list(self.classes_)}; this fit has "
                             f"{n_features} features and classes {list(classes)}: fit with "
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

    def predict_proba(self, X):
        """(n_samples, n_classes) probabilities in the order of classes_."""
        scores = self._scores(X)
        to_proba = (_softmax_from_scores if getattr(self.model_, "multinomial", False)
                    else _proba_from_scores)
        if _is_dask(scores):
            k = max(scores.shape[1], 2)
            return scores.map_blocks(to_proba, chunks=(scores.chunks[0], (k,)),
                                     dtype=np.float64)
        return to_proba(scores)

    def predict_log_proba(self, X):
        proba = self.predict_proba(X)
        if _is_dask(proba):
            return proba.map_blocks(np.log, dtype=np.float64)
        return np.log(proba)


class LinearSVR(RegressorMixin, _LiblinearEstimator):
    """Linear support vector regression (LIBLINEAR -s 11, 12, 13); epsilon is -p.
    partition (dask input only): as LinearSVC's, for the dual solvers -s 12, 13
    (dual=True)."""

    _kind = "regression"

    def __init__(self, epsilon=0.1, tol=None, C=1.0, loss="squared_epsilon_insensitive",
                 fit_intercept=True, intercept_scaling=1.0, dual=False, max_iter=300,
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
        e = self.epsilon
        if isinstance(e, bool) or not isinstance(e, Real) or not (e >= 0) or not np.isfinite(e):
            raise ValueError(f"The 'epsilon' parameter of LinearSVR must be a float in the "
                             f"range [0, inf). Got {e!r} instead.")
        explicit = self._explicit_solver()
        if explicit is not None:
            return explicit
        if self.loss not in ("squared_epsilon_insensitive", "epsilon_insensitive"):
            raise ValueError("loss must be 'squared_epsilon_insensitive' or "
                             f"'epsilon_insensitive', got {self.loss!r}")
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

    def __init__(self, nu=0.5, tol=None, n_jobs=None, verbose=0, client=None):
        self.nu = nu
        self.tol = tol
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.client = client

    def _solver_type(self, n_samples, n_features):
        nu = self.nu
        if isinstance(nu, bool) or not isinstance(nu, Real) or not 0 < nu <= 1:
            raise ValueError(f"The 'nu' parameter of OneClassSVM must be a float in the "
                             f"range (0.0, 1.0]. Got {nu!r} instead.")
        return 21

    def fit(self, X, y=None, sample_weight=None):
        """Fit on X (y is ignored); sample_weight scales each instance's bound."""
        return self._fit(X, None, sample_weight)

    def _set_model(self, model):
        super()._set_model(model)
        self.offset_ = float(model.rho)

    def _oneclass(self, X, what):
        X = self._validated(X)
        if _is_dask(X):
            return X.map_blocks(_block_oneclass, self.coef_, self.offset_, what, drop_axis=1,
                                dtype=np.int64 if what == "predict" else np.float64)
        return _block_oneclass(X, self.coef_, self.offset_, what)

    def score_samples(self, X):
        """w.x of each sample."""
        return self._oneclass(X, "score")

    def decision_function(self, X):
        """w.x - rho: negative for outliers."""
        return self._oneclass(X, "decision")

    def predict(self, X):
        """+1 for inliers (decision_function > 0), -1 for outliers (<= 0), as LIBLINEAR."""
        return self._oneclass(X, "predict")
