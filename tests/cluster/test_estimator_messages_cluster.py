"""The ConvergenceWarning of an estimator fitted on a dask collection points at the user's
line, as in process (tests/estimators/test_messages.py)."""
import pytest
from sklearn.datasets import make_classification

from dlinear.estimators import LinearSVC
from tests.estimators.test_messages import _convergence_warnings


def test_convergence_warning_of_a_dask_fit_points_at_the_users_line(client):
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, y = make_classification(300, 20, random_state=1)
    frame = dd.from_pandas(pd.DataFrame(X), npartitions=2)
    _, caught = _convergence_warnings(
        lambda: LinearSVC(loss="hinge", dual=True, max_iter=2, tol=1e-9).fit(frame, y))
    assert caught and {w.filename for w in caught} == {__file__}
