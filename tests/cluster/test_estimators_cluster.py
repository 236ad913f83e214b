"""The estimators on dask arrays trained on the cluster, and their warm start there (in
process: tests/parity/test_estimators.py)."""
import numpy as np
import pytest
from dlinear.estimators import LinearSVC, LinearSVR, LogisticRegression
from tests.parity.test_estimators import sets  # noqa: F401


@pytest.mark.slow
@pytest.mark.parametrize("make", [lambda: LinearSVC(), lambda: LogisticRegression(tol=1e-9),
                                  lambda: LinearSVR()], ids=["s1", "s0", "s11"])
def test_dask_arrays_train_on_the_cluster(client, sets, make):
    import dask.array as da
    kind = "regression" if isinstance(make(), LinearSVR) else "multi"
    X, y = sets[kind]
    X = X.toarray()
    weights = 1.0 + (np.arange(len(y)) % 3)
    if kind == "multi":
        y = np.array(["ant", "bee", "cat"])[np.searchsorted(np.unique(y), y)]
    dX = da.from_array(X, chunks=(150, X.shape[1]))
    dy = da.from_array(y, chunks=150)
    dw = da.from_array(weights, chunks=150)
    local = make().fit(X, y, sample_weight=weights)
    remote = make().fit(dX, dy, sample_weight=dw)
    np.testing.assert_allclose(remote.coef_, local.coef_, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(remote.intercept_, local.intercept_, rtol=1e-6, atol=1e-9)
    assert remote.n_features_in_ == X.shape[1]
    predicted = remote.predict(dX)
    assert isinstance(predicted, da.Array)           # lazy, computed by map_blocks
    if kind == "multi":
        np.testing.assert_array_equal(predicted.compute(), remote.predict(X))
    else:   # blockwise products may differ from one product in the last bit
        np.testing.assert_allclose(predicted.compute(), remote.predict(X), rtol=1e-12)
    dec = remote.decision_function(dX) if kind == "multi" else remote.predict(dX)
    assert isinstance(dec, da.Array)
    if kind == "multi":
        np.testing.assert_allclose(dec.compute(), remote.decision_function(X))
    if isinstance(remote, LogisticRegression):
        np.testing.assert_allclose(remote.predict_proba(dX).compute(), remote.predict_proba(X))


@pytest.mark.slow
def test_warm_start_on_the_cluster(client, sets):
    """warm_start with dask arrays: the previous coef_ in the order of the parts' labels
    (first appearance), so a second fit at the same C takes no Newton step."""
    import dask.array as da
    X, y = sets["multi"]
    X = X.toarray()
    order = np.argsort(-y, kind="stable")                 # classes appear in reverse
    dX = da.from_array(X[order], chunks=(150, X.shape[1]))
    dy = da.from_array(y[order], chunks=150)
    for params in (dict(solver="lbfgs"), dict(solver="newton-cg", multi_class="ovr")):
        est = LogisticRegression(**params, tol=1e-6, warm_start=True).fit(dX, dy)
        assert np.all(est.n_iter_ > 0)
        local = LogisticRegression(**params, tol=1e-6).fit(X[order], y[order])
        np.testing.assert_allclose(est.coef_, local.coef_, rtol=1e-6, atol=1e-9)
        est.fit(dX, dy)
        assert np.all(est.n_iter_ == 0)
