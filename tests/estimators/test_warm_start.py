"""warm_start=True in LinearSVC, LinearSVR and OneClassSVM (scikit-learn's meaning: fit
starts from the previous coef_ and intercept_): the optimum of a fresh fit, in fewer
iterations after 10% more rows."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone

from dlinear import Params, Problem
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.solver_table import SOLVERS
from dlinear.solvers.primal_objective_values import primal_objective
from dlinear.estimators import LinearSVC, LinearSVR, LogisticRegression, OneClassSVM


@pytest.fixture(scope="module")
def data():
    problem = make_rcv1_like(3000, n_features=1500, n_classes=3, nnz_per_row=30, seed=5)
    return problem.to_scipy(), problem.y


def _grow(estimator, X, y):
    """(fresh fit on all rows, warm fit on all rows after a fit on the first 90%)."""
    fresh = clone(estimator).fit(X, y)
    warm = clone(estimator).set_params(warm_start=True).fit(X[:2700], None if y is None else y[:2700])
    first_coef = warm.coef_.copy()
    warm.fit(X, y)
    assert not np.array_equal(warm.coef_, first_coef)
    return fresh, warm


@pytest.mark.parametrize("estimator", [
    LinearSVC(), LinearSVC(dual=False), LinearSVC(loss="hinge"),
    LinearSVC(multi_class="crammer_singer", tol=1e-3)])
def test_linear_svc(estimator, data):
    X, y = data
    fresh, warm = _grow(estimator, X, y)
    assert np.array_equal(warm.classes_, fresh.classes_)
    np.testing.assert_allclose(warm.coef_, fresh.coef_, atol=0.05 * np.abs(fresh.coef_).max())
    assert (warm.predict(X) == fresh.predict(X)).mean() > 0.98
    if estimator.multi_class == "ovr" and not SOLVERS[fresh.solver_type_].dual_cd:
        assert warm.n_iter_ < fresh.n_iter_
    elif estimator.multi_class == "ovr":    # LinearSVC() trains the dual here (by scale)
        assert warm.n_iter_ <= fresh.n_iter_


@pytest.mark.parametrize("estimator", [LinearSVR(), LinearSVR(dual=True)])
def test_linear_svr(estimator, data):
    X, y = data
    y = y + np.random.default_rng(1).normal(size=len(y)) * 0.1
    fresh, warm = _grow(estimator, X, y)
    problem = Problem.from_arrays(X, y)

    def objective(fitted):
        params = Params(solver_type=fitted.solver_type_, bias=1.0, p=0.1)
        return primal_objective(problem, params, fitted.model_)
    optimum = objective(LinearSVR(dual=False, tol=1e-10).fit(X, y))

    def gap(fitted):
        return abs(objective(fitted) - optimum) / optimum
    # the same optimum, to the solver's tolerance: the fresh fit's own distance to it,
    # or the 1e-3 relative
    assert gap(warm) <= max(3 * gap(fresh), 1e-3), (gap(warm), gap(fresh))
    assert warm.n_iter_ < fresh.n_iter_


def test_one_class_svm(data):
    X, _ = data
    fresh, warm = _grow(OneClassSVM(nu=0.2), X, None)
    np.testing.assert_allclose(warm.coef_, fresh.coef_, atol=1e-3 * np.abs(fresh.coef_).max()
                               + 1e-6)
    assert warm.n_iter_ < fresh.n_iter_


def test_a_solver_without_a_warm_start_ignores_it(data):
    """-s 13 (L1-loss SVR) has none (dlinear.solvers.dual_start): as scikit-learn's
    solvers without one, warm_start=True fits from zero."""
    X, y = data
    estimator = LinearSVR(loss="epsilon_insensitive")
    fresh, warm = _grow(estimator, X, y)
    assert warm.solver_type_ == 13
    np.testing.assert_array_equal(warm.coef_, fresh.coef_)


def test_other_classes_are_refused(data):
    X, y = data
    model = LinearSVC(warm_start=True).fit(X, y)
    with pytest.raises(ValueError, match="previous fit's classes"):
        model.fit(X, np.where(y == y[0], 7, y))


@pytest.mark.parametrize("params", [dict(solver="liblinear", dual=True),       # -s 7
                                    dict(solver="liblinear", l1_ratio=1.0)])   # -s 6
def test_logistic_regression_dual_and_l1_warm_start_too(params, data):
    X, y = data
    binary = y == y[0]
    fresh, warm = _grow(LogisticRegression(**params), X, binary)
    assert warm.solver_type_ == fresh.solver_type_ in (6, 7)
    np.testing.assert_allclose(warm.coef_, fresh.coef_, atol=0.05 * np.abs(fresh.coef_).max())
    assert warm.n_iter_.sum() < fresh.n_iter_.sum()
