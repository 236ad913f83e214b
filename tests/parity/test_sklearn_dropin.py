"""Code written for scikit-learn's linear models runs on dlinear by changing the import.

Over scikit-learn's documented parameter grid of LogisticRegression, LinearSVC and
LinearSVR, each combination either fits in both and dlinear's model reaches scikit-learn's
objective (the problem scikit-learn's parameters define, evaluated on both coef_ and
intercept_) within 1e-6, or raises the error scikit-learn raises for it; the few problems
dlinear has no solver for raise scikit-learn's error type naming the nearest choice.
Then warm_start, n_iter_, sparsify/densify, predict_log_proba, the warnings.
"""
import itertools
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import logsumexp
from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning
from sklearn import linear_model, svm

from dlinear.estimators import LinearSVC, LinearSVR, LogisticRegression

REL = 1e-6          # the bar: objectives within 1e-6 of scikit-learn's


def make_data(seed, n_classes, n=60, d=6):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[:, -1] *= 3.0
    scores = X @ rng.normal(size=(d, n_classes)) + 0.8 * rng.normal(size=(n, n_classes))
    y = np.argmax(scores, axis=1) if n_classes > 2 else (scores[:, 0] > 0.3).astype(int)
    return X, np.array(["ant", "bee", "cat"])[y] if n_classes > 2 else y


DATA = {2: make_data(1, 2), 3: make_data(2, 3)}
WEIGHTS = np.random.default_rng(3).uniform(0.5, 2.0, 60)


def outcome(fit):
    """(fitted estimator, None) or (None, the exception), warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fit(), None
        except Exception as e:       # noqa: BLE001 - the error is what is compared
            return None, e


def assert_same_error(ours, theirs):
    assert ours is not None, f"scikit-learn raised {theirs!r}, dlinear fitted"
    expected = ValueError if isinstance(theirs, ValueError) else type(theirs)
    assert isinstance(ours, expected), (ours, theirs)
    # the combination errors keep scikit-learn's words (dlinear may add a hint)
    assert str(ours).startswith(str(theirs).rstrip(".")), (str(ours), str(theirs))


def class_weights(classes, y, class_weight):
    """The weight of each class (1 where class_weight says nothing)."""
    if class_weight == "balanced":
        return len(y) / (len(classes) * np.array([np.sum(y == k) for k in classes]))
    return np.array([(class_weight or {}).get(k, 1.0) for k in classes])


def row_weights(classes, y, class_weight, sample_weight):
    """Each row's factor on C: its class's weight times its sample weight."""
    c = np.ones(len(y)) if sample_weight is None else sample_weight.copy()
    return c * class_weights(classes, y, class_weight)[np.searchsorted(classes, y)]


# ------------------------------------------------------------------ objectives

def penalty_value(W, kind):
    """kind "l1", "l2", or the elastic net's l1_ratio r: r |W|_1 + (1 - r)/2 |W|^2;
    None: 0 (no penalty)."""
    if kind is None:
        return 0.0
    r = {"l1": 1.0, "l2": 0.0}.get(kind, kind)
    return r * float(np.abs(W).sum()) + (1.0 - r) * 0.5 * float((W * W).sum())


def logistic_objective(est, X, y, C, penalty, intercept_penalized, weights):
    """scikit-learn's LogisticRegression problem at est's coef_, intercept_: binary, or
    multinomial for 3+ classes; the intercept penalized (liblinear: as a feature of value
    intercept_scaling) or not."""
    coef = np.atleast_2d(np.asarray(est.coef_.todense() if sp.issparse(est.coef_)
                                    else est.coef_))
    b = np.broadcast_to(np.asarray(est.intercept_, dtype=float), (coef.shape[0],))
    Z = X @ coef.T + b
    classes = np.unique(y)
    if len(classes) == 2:
        t = np.where(y == classes[1], 1.0, -1.0)
        loss = np.logaddexp(0.0, -t * Z[:, 0])
    else:
        loss = logsumexp(Z, axis=1) - Z[np.arange(len(y)), np.searchsorted(classes, y)]
    reg = coef
    if intercept_penalized and est.fit_intercept:
        reg = np.column_stack([coef, b / est.intercept_scaling])
    return penalty_value(reg, penalty) + C * float(weights @ loss)


def svc_objective(est, X, y, C, class_weight, sample_weight):
    """LinearSVC's problem (LIBLINEAR's: the intercept a penalized feature of value
    intercept_scaling): Crammer and Singer's, or one-vs-rest binary problems summed, where
    as in LIBLINEAR a class weight scales its rows' C in its own problem only (both
    classes' in a binary one)."""
    coef = np.atleast_2d(est.coef_)
    b = np.broadcast_to(np.asarray(est.intercept_, dtype=float), (coef.shape[0],))
    W = np.column_stack([coef, b / est.intercept_scaling]) if est.fit_intercept else coef
    Z = X @ coef.T + b
    classes = np.unique(y)
    sw = np.ones(len(y)) if sample_weight is None else sample_weight
    if est.multi_class == "crammer_singer":
        k = np.searchsorted(classes, y)
        margin = 1.0 - (Z[np.arange(len(y)), k][:, None] - Z)
        margin[np.arange(len(y)), k] = 0.0
        weights = row_weights(classes, y, class_weight, sample_weight)
        return penalty_value(W, "l2") + C * float(weights @ margin.max(axis=1))
    if len(classes) == 2:
        columns = [(classes[1], 0, row_weights(classes, y, class_weight, sample_weight))]
    else:
        cw = class_weights(classes, y, class_weight)
        columns = [(c, j, np.where(y == c, cw[j], 1.0) * sw) for j, c in enumerate(classes)]
    total = 0.0
    for positive, j, weights in columns:
        t = np.where(y == positive, 1.0, -1.0)
        hinge = np.maximum(0.0, 1.0 - t * Z[:, j])
        loss = hinge ** 2 if est.loss == "squared_hinge" else hinge
        total += penalty_value(W[j], est.penalty) + C * float(weights @ loss)
    return total


def svr_objective(est, X, y, C, weights):
    coef = np.asarray(est.coef_)
    b = float(np.asarray(est.intercept_).reshape(-1)[0])
    w = np.append(coef, b / est.intercept_scaling) if est.fit_intercept else coef
    r = np.maximum(0.0, np.abs(y - X @ coef - b) - est.epsilon)
    loss = r ** 2 if est.loss == "squared_epsilon_insensitive" else r
    return penalty_value(w, "l2") + C * float(weights @ loss)


def assert_objectives_match(f_ours, f_theirs):
    assert abs(f_ours - f_theirs) <= REL * f_theirs, \
        f"dlinear {f_ours!r} vs scikit-learn {f_theirs!r}: {abs(f_ours - f_theirs) / f_theirs:.2e}"


# ------------------------------------------------------------------ LogisticRegression

SOLVERS = ["liblinear", "lbfgs", "newton-cg", "newton-cholesky", "sag", "saga"]
LOGISTIC_GRID = [
    dict(solver=s, l1_ratio=r, dual=d, fit_intercept=f, n_classes=k)
    for s, r, d, f, k in itertools.product(SOLVERS, [0.0, 1.0], [False, True],
                                           [True, False], [2, 3])]
# scikit-learn's older spellings and the rest of its parameters, on a few combinations
LOGISTIC_GRID += [
    dict(solver="lbfgs", penalty="l2", n_classes=3),
    dict(solver="liblinear", penalty="l1", n_classes=2),
    dict(solver="saga", penalty="l1", l1_ratio=1.0, n_classes=2),
    dict(solver="liblinear", penalty="l2", l1_ratio=1.0, n_classes=2),   # inconsistent
    dict(solver="lbfgs", penalty=None, n_classes=2),
    dict(solver="lbfgs", C=np.inf, n_classes=3),
    dict(solver="liblinear", C=np.inf, n_classes=2),
    dict(solver="saga", l1_ratio=0.5, n_classes=2),                  # elastic net
    dict(solver="saga", l1_ratio=0.3, fit_intercept=False, sample_weight=True, n_classes=2),
    dict(solver="saga", penalty="elasticnet", l1_ratio=0.7, n_classes=2),
    dict(solver="saga", l1_ratio=0.5, n_classes=3),      # saga's: multinomial, refused
    dict(solver="lbfgs", l1_ratio=0.5, n_classes=2),
    dict(solver="saga", penalty="elasticnet", l1_ratio=None, n_classes=2),
    dict(solver="liblinear", dual=True, intercept_scaling=3.0, C=0.3, n_classes=2),
    dict(solver="liblinear", l1_ratio=1.0, class_weight="balanced", n_classes=2),
    dict(solver="lbfgs", class_weight={"bee": 3.0}, C=4.0, n_classes=3),
    dict(solver="newton-cholesky", class_weight="balanced", sample_weight=True, n_classes=2),
    dict(solver="saga", l1_ratio=1.0, C=0.5, sample_weight=True, n_classes=2),
    dict(solver="lbfgs", sample_weight=True, intercept_scaling=5.0, n_classes=3),
]

# where scikit-learn fits and dlinear has no solver: the ValueError names the way out
DLINEAR_REFUSES = {
    "elasticnet multinomial": "multi_class='ovr' trains it one-vs-rest",
    "l1 multinomial": "multi_class='ovr' trains one-vs-rest L1",
}

# dlinear's tol per -s: the loosest of 1e-1, 1e-2, ... that reaches 1e-6 of scikit-learn's
# objective on this grid (largest relative gap at it, then at 10x it)
TOL = {0: 1e-3,              # 2.4e-7, 1.1e-4
       "multinomial": 1e-4,  # 6.4e-8, 1.6e-6
       6: 1e-4,              # 1.5e-7, 3.3e-5
       7: 1e-3,              # 2.2e-9, 1.1e-6
       1: 1e-3,              # 3.6e-8, 3.0e-6
       2: 1e-4,              # 1.3e-7, 2.3e-5
       3: 1e-6,              # 3.9e-7, 3.0e-6
       4: 1e-6,              # 1.5e-7, 1.4e-6
       5: 1e-4,              # 3.0e-7, 1.4e-5
       11: 1e-5,             # 2.1e-8, 1.0e-5
       12: 1e-4,             # 5.1e-7, 9.4e-5
       13: 1e-7}             # 2.0e-7, 5.2e-6


def tol_for(probe):
    """TOL of the solver a fit at the default tol used."""
    return TOL["multinomial" if probe.model_.multinomial else probe.solver_type_]


def fit_both(ours_class, theirs_class, params, X, y, sw):
    """scikit-learn's fit at a tight tol and dlinear's at the TOL of the solver it picks:
    (ours, theirs), or None when both raised, the same error (asserted)."""
    theirs, their_error = outcome(lambda: theirs_class(
        **params, tol=1e-10, max_iter=1000000, random_state=0).fit(X, y, sample_weight=sw))
    probe, error = outcome(lambda: ours_class(**params).fit(X, y, sample_weight=sw))
    if their_error is not None:
        assert_same_error(error, their_error)
        return None
    assert error is None, error
    ours, _ = outcome(lambda: ours_class(**params, tol=tol_for(probe), max_iter=1000000)
                      .fit(X, y, sample_weight=sw))
    return ours, theirs


def grid_case(case):
    case = dict(case)
    k = case.pop("n_classes")
    use_weights = case.pop("sample_weight", False)
    X, y = DATA[k]
    sw = WEIGHTS if use_weights else None
    return case, X, y, sw


def refusal(case, k):
    """Which of DLINEAR_REFUSES applies (where scikit-learn fits: these cases are
    checked to fit there), or None."""
    solver = case["solver"]
    penalty, ratio = case.get("penalty", "deprecated"), case.get("l1_ratio", 0.0)
    if solver != "liblinear" and case.get("dual"):
        return None                 # scikit-learn's error: only liblinear has a dual
    if solver == "saga" and k > 2 and ratio is not None and (
            penalty == "elasticnet" or (penalty == "deprecated" and ratio not in (0, 1))):
        return "elasticnet multinomial"
    if solver == "saga" and k > 2 and (penalty == "l1" or (penalty == "deprecated"
                                                           and ratio == 1)):
        return "l1 multinomial"
    return None


@pytest.mark.parametrize("case", LOGISTIC_GRID, ids=lambda c: "-".join(
    f"{k}={v}" for k, v in c.items()))
def test_logistic_regression_grid(case):
    params, X, y, sw = grid_case(case)
    why = refusal(params, len(np.unique(y)))
    if why:
        sk, sk_error = outcome(lambda: linear_model.LogisticRegression(**params).fit(
            X, y, sample_weight=sw))
        assert sk_error is None, sk_error
        with pytest.raises(ValueError, match=DLINEAR_REFUSES[why].replace("(", r"\(")
                           .replace(")", r"\)")):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                LogisticRegression(**params).fit(X, y, sample_weight=sw)
        return
    fitted = fit_both(LogisticRegression, linear_model.LogisticRegression, params, X, y, sw)
    if fitted is None:
        return
    ours, sk = fitted
    ratio = params.get("l1_ratio", 0.0)
    penalty = {0.0: "l2", 1.0: "l1"}.get(ratio, ratio) \
        if params.get("penalty", "deprecated") == "deprecated" else params["penalty"]
    if penalty == "elasticnet":
        penalty = ratio
    weights = row_weights(np.unique(y), y, params.get("class_weight"), sw)
    C = params.get("C", 1.0)
    penalized = params["solver"] == "liblinear"
    if C == np.inf or ("penalty" in params and params["penalty"] is None):
        # no penalty: on separable data (the binary set) no optimum, only the predictions
        # compare; else the loss alone
        if len(np.unique(y)) == 2:
            np.testing.assert_array_equal(ours.predict(X), sk.predict(X))
            return
        else:
            assert_objectives_match(logistic_objective(ours, X, y, 1.0, None, False, weights),
                                    logistic_objective(sk, X, y, 1.0, None, False, weights))
    else:
        assert_objectives_match(logistic_objective(ours, X, y, C, penalty, penalized, weights),
                                logistic_objective(sk, X, y, C, penalty, penalized, weights))
    assert ours.coef_.shape == sk.coef_.shape
    assert ours.intercept_.shape == (np.shape(sk.intercept_) or (1,))   # 0.0: liblinear's
    assert ours.n_iter_.shape == sk.n_iter_.shape
    np.testing.assert_allclose(ours.predict_proba(X), sk.predict_proba(X), atol=2e-3)
    assert list(ours.classes_) == list(sk.classes_)


# ------------------------------------------------------------------ LinearSVC, LinearSVR

SVC_GRID = [dict(penalty=p, loss=l, dual=d, fit_intercept=f, n_classes=k)
            for p, l, d, f, k in itertools.product(["l1", "l2"], ["hinge", "squared_hinge"],
                                                   [True, False, "auto"], [True, False],
                                                   [2, 3])]
SVC_GRID += [dict(multi_class="crammer_singer", fit_intercept=f, n_classes=3)
             for f in (True, False)]
SVC_GRID += [dict(multi_class="crammer_singer", n_classes=2),
             dict(C=0.2, intercept_scaling=4.0, class_weight="balanced", n_classes=3),
             dict(C=3.0, loss="hinge", sample_weight=True, n_classes=2),
             dict(penalty="l1", dual=False, class_weight={"cat": 0.4}, n_classes=3)]


@pytest.mark.parametrize("case", SVC_GRID, ids=lambda c: "-".join(
    f"{k}={v}" for k, v in c.items()))
def test_linear_svc_grid(case):
    params, X, y, sw = grid_case(case)
    fitted = fit_both(LinearSVC, svm.LinearSVC, params, X, y, sw)
    if fitted is None:
        return
    ours, sk = fitted
    assert ours.coef_.shape == sk.coef_.shape and isinstance(ours.n_iter_, int)
    if params.get("multi_class") == "crammer_singer" and len(np.unique(y)) == 2:
        # scikit-learn keeps w_1 - w_0 only, which the objective cannot be read from;
        # the optimum is unique, so the difference is
        np.testing.assert_allclose(ours.coef_, sk.coef_, atol=1e-4)
        return
    C, class_weight = params.get("C", 1.0), params.get("class_weight")
    assert_objectives_match(svc_objective(ours, X, y, C, class_weight, sw),
                            svc_objective(sk, X, y, C, class_weight, sw))


SVR_GRID = [dict(loss=l, dual=d, fit_intercept=f, epsilon=e)
            for l, d, f, e in itertools.product(
                ["epsilon_insensitive", "squared_epsilon_insensitive"], [True, False, "auto"],
                [True, False], [0.0, 0.3])]
SVR_GRID += [dict(loss="epsilon_insensitive", dual=True, C=5.0, intercept_scaling=2.0,
                  epsilon=0.2, sample_weight=True)]


@pytest.mark.parametrize("case", SVR_GRID, ids=lambda c: "-".join(
    f"{k}={v}" for k, v in c.items()))
def test_linear_svr_grid(case):
    case = dict(case)
    sw = WEIGHTS if case.pop("sample_weight", False) else None
    X, _ = DATA[2]
    y = X @ np.linspace(-1, 1, X.shape[1]) + 0.5 + 0.3 * np.random.default_rng(4).normal(
        size=len(X))
    fitted = fit_both(LinearSVR, svm.LinearSVR, case, X, y, sw)
    if fitted is None:
        return
    ours, sk = fitted
    weights = np.ones(len(y)) if sw is None else sw
    C = case.get("C", 1.0)
    assert_objectives_match(svr_objective(ours, X, y, C, weights),
                            svr_objective(sk, X, y, C, weights))


# ------------------------------------------------------------------ warm_start

@pytest.mark.parametrize("params,n_classes", [
    (dict(solver="lbfgs"), 3),                              # multinomial, -R
    (dict(solver="lbfgs"), 2),                              # binary -s 0 -R
    (dict(solver="liblinear"), 2),                          # -s 0, the bias penalized
    (dict(solver="newton-cg", multi_class="ovr"), 3),       # one-vs-rest -s 0 -R
    (dict(solver="lbfgs", multi_class="multinomial"), 2),   # two-column softmax
    (dict(fit_intercept=False), 3),                         # dlinear's default, OvR
])
def test_warm_start_continues_from_coef(params, n_classes):
    """A second fit with the same data and C starts at the optimum (no Newton step), and
    at another C it takes fewer steps than a cold start to the same model. Labels whose
    first row is not classes_[1] check the columns' order and sign."""
    X, y = DATA[n_classes]
    y = y[::-1].copy() if n_classes == 2 else y            # first row: class 0 / "bee"
    X = X[::-1].copy() if n_classes == 2 else X
    est = LogisticRegression(**params, tol=1e-6, warm_start=True).fit(X, y)
    first = est.n_iter_.copy()
    assert np.all(first > 0)
    est.fit(X, y)
    assert np.all(est.n_iter_ == 0)
    est.set_params(C=1.5).fit(X, y)
    cold = LogisticRegression(**params, tol=1e-6, C=1.5).fit(X, y)
    assert est.n_iter_.sum() < cold.n_iter_.sum()
    np.testing.assert_allclose(est.coef_, cold.coef_, atol=1e-4)
    np.testing.assert_allclose(est.intercept_, cold.intercept_, atol=1e-4)


def test_warm_start_needs_the_same_classes_and_features():
    X, y = DATA[3]
    est = LogisticRegression(solver="lbfgs", warm_start=True).fit(X, y)
    with pytest.raises(ValueError, match="warm_start=True starts from the previous fit"):
        est.fit(X[:, :4], y)
    with pytest.raises(ValueError, match="warm_start=True starts from the previous fit"):
        est.fit(X, np.where(y == "cat", "bee", y))
    LogisticRegression(solver="lbfgs", warm_start=False).fit(X[:, :4], y)


# ------------------------------------------------------------------ attributes and methods

def test_n_iter_has_scikit_learns_shape():
    """LogisticRegression: (1,) for binary and multinomial fits, one count per class (in
    classes_ order) for one-vs-rest; LinearSVC and LinearSVR: the largest count, an int."""
    X3, y3 = DATA[3]
    assert LogisticRegression(solver="lbfgs").fit(X3, y3).n_iter_.shape == (1,)
    assert LogisticRegression(solver="liblinear").fit(*DATA[2]).n_iter_.shape == (1,)
    ovr = LogisticRegression(solver="lbfgs", multi_class="ovr", tol=1e-8).fit(X3, y3)
    assert ovr.n_iter_.shape == (3,) and ovr.n_iter_.dtype == np.int32
    for k, name in enumerate(ovr.classes_):
        alone = LogisticRegression(solver="lbfgs", tol=1e-8).fit(X3, y3 == name)
        assert ovr.n_iter_[k] == alone.n_iter_[0]
    svc = LinearSVC().fit(X3, y3)
    assert isinstance(svc.n_iter_, int) and svc.n_iter_ == max(svc.model_.n_iter)
    assert isinstance(LinearSVR().fit(X3, np.arange(60.0)).n_iter_, int)


@pytest.mark.parametrize("make", [lambda: LogisticRegression(solver="saga", l1_ratio=1.0,
                                                             C=0.05),
                                  lambda: LinearSVC(penalty="l1", dual=False, C=0.05)])
def test_sparsify_and_densify(make):
    from sklearn.exceptions import NotFittedError
    X, y = DATA[3]
    y = y if isinstance(make(), LinearSVC) else y == "bee"
    with pytest.raises(NotFittedError, match="must be fitted before sparsifying"):
        make().sparsify()
    est = make().fit(X, y)
    dense = est.coef_.copy()
    assert np.any(dense == 0)
    decision = est.decision_function(X)
    assert est.sparsify() is est and sp.issparse(est.coef_)
    np.testing.assert_array_equal(est.coef_.toarray(), dense)
    np.testing.assert_array_equal(est.decision_function(X), decision)
    np.testing.assert_array_equal(est.predict(X), make().fit(X, y).predict(X))
    if hasattr(est, "predict_proba"):
        np.testing.assert_array_equal(est.predict_proba(X), make().fit(X, y).predict_proba(X))
    assert est.densify() is est and isinstance(est.coef_, np.ndarray)
    np.testing.assert_array_equal(est.coef_, dense)


def test_predict_log_proba_matches_scikit_learn():
    """Also the multinomial intercepts: unique only up to a common shift, they sum to 0 as
    scikit-learn's do, so coef_ and intercept_ are scikit-learn's."""
    X, y = DATA[3]
    ours = LogisticRegression(solver="lbfgs", tol=1e-6).fit(X, y)
    theirs = linear_model.LogisticRegression(tol=1e-10, max_iter=10000).fit(X, y)
    assert abs(ours.intercept_.sum()) < 1e-12
    np.testing.assert_allclose(ours.intercept_, theirs.intercept_, atol=1e-5)
    np.testing.assert_allclose(ours.coef_, theirs.coef_, atol=1e-5)
    np.testing.assert_allclose(ours.predict_log_proba(X), np.log(ours.predict_proba(X)))
    np.testing.assert_allclose(ours.predict_log_proba(X), theirs.predict_log_proba(X),
                               atol=1e-5)


def test_liblinear_one_vs_rest_on_request():
    """scikit-learn 1.9's liblinear refuses 3+ classes; dlinear's multi_class="ovr" is
    OneVsRestClassifier over it."""
    from sklearn.multiclass import OneVsRestClassifier
    X, y = DATA[3]
    ours = LogisticRegression(solver="liblinear", multi_class="ovr", tol=1e-8).fit(X, y)
    theirs = OneVsRestClassifier(linear_model.LogisticRegression(
        solver="liblinear", tol=1e-10, max_iter=10000)).fit(X, y)
    np.testing.assert_allclose(ours.coef_, np.vstack([e.coef_ for e in theirs.estimators_]),
                               atol=1e-5)
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), atol=1e-5)


def test_warnings_are_scikit_learns():
    X, y = DATA[3]
    with warnings.catch_warnings():
        warnings.simplefilter("error", SklearnConvergenceWarning)
        # -s 3: no switch to a primal solver, the dual's cap is the model's
        with pytest.raises(SklearnConvergenceWarning, match="reaching max number of iter"):
            LinearSVC(loss="hinge", dual=True, max_iter=2, tol=1e-9).fit(X, y)
    with pytest.warns(FutureWarning, match="'penalty' was deprecated in version 1.8"):
        LogisticRegression(penalty="l2").fit(X, y)
    with pytest.warns(FutureWarning, match="'l1_ratio=None' was deprecated"):
        LogisticRegression(l1_ratio=None).fit(X, y)
    with pytest.warns(UserWarning, match="Inconsistent values: penalty=l1 with l1_ratio=0"):
        LogisticRegression(penalty="l1", l1_ratio=0.0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # the new spelling, n_jobs, verbose: no warning
        LogisticRegression(l1_ratio=1.0, n_jobs=2, verbose=0, warm_start=True).fit(X, y)


def test_parameters_of_scikit_learn_are_accepted():
    """Every parameter scikit-learn 1.9's classes take is a parameter here too (dlinear
    adds its own: client, solver numbers, multi_class, partition)."""
    for ours, theirs in ((LogisticRegression, linear_model.LogisticRegression),
                         (LinearSVC, svm.LinearSVC), (LinearSVR, svm.LinearSVR)):
        assert set(theirs().get_params()) <= set(ours().get_params()), ours
