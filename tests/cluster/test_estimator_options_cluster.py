"""The estimators' client argument and dask DataFrames (in process:
tests/estimators/test_estimator_options.py)."""
import pickle
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from dlinear.estimators import LinearSVC
from tests.estimators.test_estimator_options import distributed, rows  # noqa: F401


@pytest.mark.slow
def test_client_argument_trains_on_that_cluster(client, rows):
    X, y = rows
    local = LinearSVC().fit(X, y)
    with distributed.get_task_stream(client) as tasks:
        remote = LinearSVC(client=client).fit(X, y)
    assert any("fit_class" in t["key"] for t in tasks.data)
    np.testing.assert_array_equal(remote.coef_, local.coef_)
    # clone shares the client (it cannot be copied); pickling leaves it out
    copy = clone(remote)
    assert copy.client is client and not hasattr(copy, "coef_")
    restored = pickle.loads(pickle.dumps(remote))
    assert restored.client is None
    np.testing.assert_array_equal(restored.predict(X), remote.predict(X))
    search = GridSearchCV(LinearSVC(client=client), {"C": [1.0]}, cv=2).fit(X, y)
    assert search.best_estimator_.client is client


@pytest.mark.slow
def test_dask_dataframe_into_the_estimators(client, rows):
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    X, y = rows
    frame = pd.DataFrame(X.toarray(), columns=[f"f{j}" for j in range(X.shape[1])])
    ddf = dd.from_pandas(frame, npartitions=4)
    labels = dd.from_pandas(pd.Series(y), npartitions=4)
    local = LinearSVC(dual=True).fit(X, y)
    remote = LinearSVC(dual=True).fit(ddf, labels)  # dual CD: the same model as here, exactly
    np.testing.assert_array_equal(remote.coef_, local.coef_)
    np.testing.assert_array_equal(remote.predict(ddf).compute(), local.predict(X))
    # dense blocks against a sparse product: the last bit may differ
    np.testing.assert_allclose(remote.decision_function(ddf).compute(),
                               local.decision_function(X), rtol=1e-12, atol=1e-14)
