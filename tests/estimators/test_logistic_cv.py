"""dlinear.LogisticRegressionCV: scikit-learn's attribute shapes, the C a brute-force loop
over LogisticRegression fits chooses, the warm-started path equal to fresh fits, and the
L1 path starting at the first C with a nonzero weight."""
import numpy as np
import pytest
from sklearn.datasets import load_iris, make_classification
from sklearn.model_selection import StratifiedKFold

import dlinear
from dlinear.estimators.logistic_cv import fold_path, l1_path_start


@pytest.fixture(scope="module")
def binary():
    return make_classification(200, 8, n_informative=4, random_state=3)


@pytest.fixture(scope="module")
def iris():
    return load_iris(return_X_y=True)


@pytest.mark.parametrize("legacy", [True, False])
@pytest.mark.parametrize("data", ["binary", "iris"])
@pytest.mark.parametrize("l1_ratios", [None, [0.3, 1.0]])
def test_fitted_attribute_shapes_are_scikit_learns(request, legacy, data, l1_ratios):
    X, y = request.getfixturevalue(data)
    n_classes = len(np.unique(y))
    rows = 1 if n_classes == 2 else n_classes
    cv = dlinear.LogisticRegressionCV(Cs=4, cv=3, l1_ratios=l1_ratios, multi_class="ovr",
                                      use_legacy_attributes=legacy).fit(X, y)
    n_dof = X.shape[1] + 1
    n_l1 = 1 if l1_ratios is None else len(l1_ratios)
    assert cv.Cs_.shape == (4,)
    assert cv.coef_.shape == (rows, X.shape[1]) and cv.intercept_.shape == (rows,)
    if legacy:
        keys = cv.classes_[1:] if n_classes == 2 else cv.classes_
        assert list(cv.coefs_paths_) == list(keys) and list(cv.scores_) == list(keys)
        extra = () if l1_ratios is None else (n_l1,)
        for path in cv.coefs_paths_.values():
            assert path.shape == (3, 4, *extra, n_dof)
        for scores in cv.scores_.values():
            assert scores.shape == (3, 4, *extra)
        assert cv.n_iter_.shape == (1, 3, 4, *extra)
        assert cv.C_.shape == (rows,) and cv.l1_ratio_.shape == (rows,)
    else:
        assert cv.coefs_paths_.shape == (3, n_l1, 4, rows, n_dof)
        assert cv.scores_.shape == cv.n_iter_.shape == (3, n_l1, 4)
        assert isinstance(cv.C_, float) and isinstance(cv.l1_ratio_, float)
    assert cv.l1_ratios_.shape == (n_l1,)
    assert cv.predict_proba(X).shape == (len(y), n_classes)


@pytest.mark.parametrize("solver, l1_ratio", [(None, 0.0), ("lbfgs", 0.0), (None, 1.0)])
def test_chosen_C_equals_a_brute_force_loop_over_logistic_regression(binary, solver,
                                                                     l1_ratio):
    X, y = binary
    Cs = [0.01, 0.1, 1.0, 10.0]
    cv = StratifiedKFold(4)
    est = dlinear.LogisticRegressionCV(Cs=Cs, cv=cv, solver=solver, l1_ratios=[l1_ratio],
                                       tol=1e-9, use_legacy_attributes=False).fit(X, y)
    mean_scores = []
    for C in Cs:
        fold_scores = [dlinear.LogisticRegression(C=C, l1_ratio=l1_ratio, solver=solver,
                                                  tol=1e-9).fit(X[tr], y[tr])
                       .score(X[te], y[te]) for tr, te in cv.split(X, y)]
        mean_scores.append(np.mean(fold_scores))
    np.testing.assert_allclose(est.scores_[:, 0].mean(axis=0), mean_scores)
    assert est.C_ == Cs[int(np.argmax(mean_scores))]
    refit = dlinear.LogisticRegression(C=est.C_, l1_ratio=l1_ratio, solver=solver,
                                       tol=1e-9).fit(X, y)
    np.testing.assert_array_equal(est.coef_, refit.coef_)        # refit from zero
    np.testing.assert_array_equal(est.intercept_, refit.intercept_)


@pytest.mark.parametrize("kw", [dict(), dict(solver="lbfgs"), dict(l1_ratio=1.0),
                                dict(l1_ratio=0.5), dict(dual=True)])
@pytest.mark.parametrize("data", ["binary", "iris"])
def test_warm_started_path_equals_fresh_fits(request, kw, data):
    X, y = request.getfixturevalue(data)
    Cs = np.array([3.0, 0.05, 0.5, 30.0])          # any order: trained ascending
    classes = np.unique(y)
    train, test = np.arange(0, len(y), 2), np.arange(1, len(y), 2)
    path_estimator = dlinear.LogisticRegression(warm_start=True, multi_class="ovr",
                                                tol=1e-9, **kw)
    coefs, scores, n_iter = fold_path(path_estimator, X, y, None, train, test, Cs, classes,
                                      None)
    for j, C in enumerate(Cs):
        fresh = dlinear.LogisticRegression(C=C, multi_class="ovr", tol=1e-9,
                                           **kw).fit(X[train], y[train])
        # newGLMNET's elastic net stops by its own rule and iteration cap (not tol alone)
        tolerance = 1e-2 if 0 < kw.get("l1_ratio", 0) < 1 else 1e-3
        np.testing.assert_allclose(coefs[j, :, :-1], fresh.coef_, rtol=tolerance,
                                   atol=tolerance)
        np.testing.assert_allclose(coefs[j, :, -1], fresh.intercept_, rtol=tolerance,
                                   atol=tolerance)
        assert scores[j] == fresh.score(X[test], y[test])
    assert n_iter.shape == (4,)


@pytest.mark.parametrize("solver, l1_ratio", [(None, 1.0), (None, 0.4), ("saga", 1.0)])
@pytest.mark.parametrize("data", ["binary", "iris"])
def test_l1_path_starts_at_the_first_nonzero_weight(request, solver, l1_ratio, data):
    X, y = request.getfixturevalue(data)
    classes, y_encoded = np.unique(y, return_inverse=True)
    saga = solver == "saga"
    C_min = l1_path_start(X, y_encoded, len(classes), None, np.ones(len(classes)), 1.0,
                          saga, l1_ratio)

    def nonzero(C):
        m = dlinear.LogisticRegression(C=C, l1_ratio=l1_ratio, solver=solver,
                                       multi_class="ovr", tol=1e-8).fit(X, y)
        return np.count_nonzero(m.coef_) + (0 if saga else np.count_nonzero(m.intercept_))

    assert nonzero(0.98 * C_min) == 0
    assert nonzero(1.05 * C_min) > 0
    cv = dlinear.LogisticRegressionCV(Cs=5, cv=3, l1_ratios=[l1_ratio], solver=solver,
                                      multi_class="ovr").fit(X, y)
    np.testing.assert_allclose(cv.Cs_, np.logspace(np.log10(C_min), 4, 5))


def test_l2_grid_is_scikit_learns(binary):
    X, y = binary
    cv = dlinear.LogisticRegressionCV(Cs=6, cv=3).fit(X, y)
    np.testing.assert_allclose(cv.Cs_, np.logspace(-4, 4, 6))


def test_refit_false_averages_each_folds_best(binary):
    X, y = binary
    cv = dlinear.LogisticRegressionCV(Cs=[0.01, 1.0, 100.0], cv=3, refit=False,
                                      use_legacy_attributes=False).fit(X, y)
    best = np.argmax(cv.scores_[:, 0], axis=1)
    np.testing.assert_allclose(cv.C_, np.mean(cv.Cs_[best]))
    mean = np.mean([cv.coefs_paths_[f, 0, c, 0] for f, c in enumerate(best)], axis=0)
    np.testing.assert_allclose(cv.coef_[0], mean[:-1])
    assert not hasattr(cv, "model_")


def test_scikit_learns_future_warnings_for_its_changing_defaults(binary):
    X, y = binary
    with pytest.warns(FutureWarning) as caught:
        cv = dlinear.LogisticRegressionCV(Cs=2, cv=2).fit(X, y)
    messages = " ".join(str(w.message) for w in caught)
    assert "l1_ratios" in messages and "scoring" in messages and "legacy" in messages
    assert isinstance(cv.scores_, dict)


def test_scoring_and_bad_l1_ratios(binary):
    X, y = binary
    cv = dlinear.LogisticRegressionCV(Cs=3, cv=3, scoring="neg_log_loss").fit(X, y)
    assert np.all(cv.scores_[1] < 0)
    assert cv.score(X, y) < 0
    with pytest.raises(ValueError, match="l1_ratios must be an array-like"):
        dlinear.LogisticRegressionCV(l1_ratios=[1.5]).fit(X, y)


def test_folds_run_as_tasks_on_a_dask_cluster(binary):
    distributed = pytest.importorskip("distributed")
    X, y = binary
    local = dlinear.LogisticRegressionCV(Cs=4, cv=3).fit(X, y)
    with distributed.Client(n_workers=1, threads_per_worker=2, processes=False,
                            dashboard_address=None) as client:
        remote = dlinear.LogisticRegressionCV(Cs=4, cv=3, client=client).fit(X, y)
        import dask.array as da
        lazy = dlinear.LogisticRegressionCV(Cs=4, cv=3).fit(da.from_array(X, chunks=50),
                                                           da.from_array(y, chunks=50))
    for other in (remote, lazy):
        np.testing.assert_array_equal(other.scores_[1], local.scores_[1])
        np.testing.assert_allclose(other.coef_, local.coef_)
