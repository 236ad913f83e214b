"""What the estimators tell the user: ConvergenceWarnings only for models that did not
converge, pointing at the user's line (dask fits:
tests/cluster/test_estimator_messages_cluster.py), and labels shown as Python
values, not numpy's reprs."""
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_iris, make_classification
from sklearn.exceptions import ConvergenceWarning

from dlinear import Params, Problem, train
from dlinear.estimators import LinearSVC, LogisticRegression


@pytest.fixture(scope="module")
def tall():
    return make_classification(5000, 50, random_state=0)


def _convergence_warnings(fit):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = fit()
    return model, [w for w in caught if issubclass(w.category, ConvergenceWarning)]


def test_default_linear_svc_is_primal_on_tall_data_and_does_not_warn(tall):
    X, y = tall
    model, caught = _convergence_warnings(lambda: LinearSVC().fit(X, y))
    assert model.solver_type_ == 2 and caught == []       # dual="auto": -s 2


def test_dual_cap_then_switch_to_the_primal_solver_does_not_warn(tall):
    """dual=True reaches the dual's cap (300 passes) and LIBLINEAR switches to -s 2,
    which converges: the model is at -s 2's optimum, so no warning."""
    X, y = tall
    switched, caught = _convergence_warnings(lambda: LinearSVC(dual=True).fit(X, y))
    assert switched.n_iter_ > switched.max_iter and caught == []
    optimum = _l2_loss_svc_objective(LinearSVC(dual=False, tol=1e-8).fit(X, y), X, y)
    # -s 2 stopped at its tolerance (0.1 x the dual's, as LIBLINEAR): 4.5e-5 above here
    assert _l2_loss_svc_objective(switched, X, y) <= optimum * (1 + 1e-4)


def _l2_loss_svc_objective(svc, X, y):
    """LIBLINEAR's -s 1/2 objective, the intercept a penalized feature of value 1."""
    margin = np.where(y == svc.classes_[1], 1.0, -1.0) * svc.decision_function(X)
    w = np.append(svc.coef_.ravel(), svc.intercept_)
    return 0.5 * w @ w + svc.C * np.sum(np.maximum(0.0, 1.0 - margin) ** 2)


def test_convergence_warning_points_at_the_users_line():
    X, y = make_classification(300, 20, random_state=1)
    _, caught = _convergence_warnings(
        lambda: LinearSVC(loss="hinge", dual=True, max_iter=2, tol=1e-9).fit(X, y))
    assert [w.filename for w in caught] == [__file__]


def test_logistic_regression_cap_in_scikit_learns_words_for_the_solver_named():
    X, y = load_iris(return_X_y=True)
    _, caught = _convergence_warnings(       # a Newton step's CG reaches its cap
        lambda: LogisticRegression(solver="liblinear", tol=1e-15).fit(X, y % 2))
    assert [w.filename for w in caught] == [__file__]
    message = str(caught[0].message)
    assert message.startswith("Liblinear failed to converge, increase the number of "
                              "iterations.") and "-s 0" in message


def test_labels_in_messages_are_python_values(tmp_path):
    X = np.eye(3)
    strings = LinearSVC().fit(X, np.array(["a", "b", "c"]))
    with pytest.raises(ValueError, match=r"classes_ is \['a', 'b', 'c'\]: train on integer"):
        strings.save_liblinear(tmp_path / "m")
    with pytest.raises(ValueError, match=r"only one class: 'a'$"):
        LinearSVC().fit(X, np.array(["a", "a", "a"]))
    warm = LogisticRegression(warm_start=True).fit(X, [0, 1, 1])
    with pytest.raises(ValueError, match=r"classes \['x', 'y'\]: fit with"):
        warm.fit(X, ["x", "y", "y"])


def test_a_non_integer_label_is_named_as_a_number():
    problem = Problem.from_arrays(np.eye(2), np.array([1.0, 2.5]))
    with pytest.raises(Exception, match=r"^label 2.5 of instance 2 is not an integer"):
        train(problem, Params(solver_type=1))
