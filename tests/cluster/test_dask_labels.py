"""A dask DataFrame or array X with every y scikit-learn accepts: dask Series / arrays
partitioned as X, or numpy, lists and pandas (string dtypes too) in memory, split as X's
partitions (their lengths computed once, as xgboost.dask and lightgbm.dask do)."""
import warnings

import numpy as np
import pytest

from dlinear.estimators import LinearSVC, LinearSVR, LogisticRegression

pd = pytest.importorskip("pandas")
dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")

NAMES = np.array(["ant", "bee", "cat"])


@pytest.fixture(scope="module")
def rows():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 6))
    y = np.argmax(X[:, :3] + 0.3 * rng.normal(size=(300, 3)), axis=1)
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    return X, y, dd.from_pandas(frame, npartitions=4)


def _same_model(remote, local):
    np.testing.assert_array_equal(remote.classes_, local.classes_)
    np.testing.assert_allclose(remote.coef_, local.coef_, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("kind", ["numpy", "list", "pandas", "pandas-string",
                                  "numpy-object-strings"])
def test_in_memory_labels_with_a_dask_dataframe(client, rows, kind):
    X, y, ddf = rows
    labels = {"numpy": lambda: y, "list": lambda: list(y), "pandas": lambda: pd.Series(y),
              "pandas-string": lambda: pd.Series(NAMES[y], dtype="string"),
              "numpy-object-strings": lambda: NAMES[y].astype(object)}[kind]()
    expected = NAMES[y] if "string" in kind else y
    local = LinearSVC().fit(X, expected)
    remote = LinearSVC().fit(ddf, labels)
    _same_model(remote, local)
    np.testing.assert_array_equal(remote.predict(ddf).compute(), local.predict(X))


def test_in_memory_sample_weight_with_dask_labels(client, rows):
    X, y, ddf = rows
    weights = np.linspace(0.5, 2.0, len(y))
    labels = dd.from_pandas(pd.Series(y), npartitions=4)
    local = LogisticRegression().fit(X, y, sample_weight=weights)
    remote = LogisticRegression().fit(ddf, labels, sample_weight=weights)
    _same_model(remote, local)


def test_string_labels_of_a_dask_dataframe_are_not_converted_by_dask(client, rows):
    """Dask's "Converting string to object dtype" warning came from dlinear making the
    string column a dask array; the column is now encoded partition by partition."""
    X, y, ddf = rows
    frame = ddf.assign(label=dd.from_pandas(pd.Series(NAMES[y], dtype="string"),
                                            npartitions=4))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        remote = LinearSVC().fit(frame[list(ddf.columns)], frame["label"])
    _same_model(remote, LinearSVC().fit(X, NAMES[y]))


def test_in_memory_targets_with_a_dask_array_and_regression(client, rows):
    X, y, ddf = rows
    target = X @ np.arange(1.0, 7.0)
    local = LinearSVR().fit(X, target)
    remote = LinearSVR().fit(ddf, pd.Series(target))
    np.testing.assert_allclose(remote.coef_, local.coef_, rtol=1e-6, atol=1e-8)


def test_in_memory_labels_of_another_length_are_refused(client, rows):
    _, y, ddf = rows
    with pytest.raises(ValueError, match="X has 300 rows but y has 299 values"):
        LinearSVC().fit(ddf, y[:-1])


def test_the_classes_of_dask_labels_are_found_without_a_shuffle(client, rows, caplog):
    """The distinct labels of a dask Series are each partition's, merged: Dask's unique()
    shuffled the labels between the workers and its scheduler logged two shuffle warnings
    a fit. No warning, no shuffle, the same classes as in memory."""
    import logging
    X, y, ddf = rows
    labels = dd.from_pandas(pd.Series(NAMES[y]), npartitions=4)
    with warnings.catch_warnings(), caplog.at_level(logging.WARNING, logger="distributed"):
        warnings.simplefilter("error")
        remote = LinearSVC().fit(ddf, labels)
    assert [r for r in caplog.records if "huffle" in r.getMessage()] == []
    _same_model(remote, LinearSVC().fit(X, NAMES[y]))
