"""Probabilities, written once (dlinear.predict.probabilities): LIBLINEAR's -b 1 output to
the bit, and the estimators' predict_proba the same formulas in classes_ order."""
import numpy as np
import pytest
from liblinear import liblinearutil

from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.estimators import LogisticRegression
from dlinear.predict import decision_values, predict_probability, probabilities
from tests.support.liblinear_oracle import liblinear_train


@pytest.fixture(scope="module")
def sets():
    return {k: make_rcv1_like(300, n_features=120, n_classes=k, nnz_per_row=12, seed=60 + k)
            for k in (2, 3)}


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("options", ["-s 0 -B 1 -c 20", "-s 6 -B 1", "-s 7 -c 5"])
def test_probabilities_are_liblinears_to_the_bit(sets, k, options):
    """On LIBLINEAR's own model, the decision values are LIBLINEAR's bits, and so are the
    probabilities (numpy's exp differs from the C library's in the last bit; expit's
    does not)."""
    problem = sets[k]
    lib, model = liblinear_train(problem, options)
    X = problem.to_scipy()
    _, _, dec = liblinearutil.predict(problem.y, X, lib, "-q")
    _, _, proba = liblinearutil.predict(problem.y, X, lib, "-b 1 -q")
    np.testing.assert_array_equal(decision_values(model, problem), np.asarray(dec))
    np.testing.assert_array_equal(predict_probability(model, problem), np.asarray(proba))


def test_one_column_is_the_second_class():
    scores = np.array([[-3.0], [0.0], [2.0]])
    p = probabilities(scores)
    assert p.shape == (3, 2)
    np.testing.assert_allclose(p[:, 1], 1 / (1 + np.exp(-scores[:, 0])), rtol=1e-15)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-15)
    # multinomial or not, one column is the binary model's sigmoid
    np.testing.assert_array_equal(probabilities(scores, multinomial=True), p)


def test_multinomial_is_the_softmax():
    scores = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
    e = np.exp(scores)
    np.testing.assert_allclose(probabilities(scores, multinomial=True),
                               e / e.sum(axis=1, keepdims=True), rtol=1e-15)
    sig = 1 / (1 + np.exp(-scores))
    np.testing.assert_allclose(probabilities(scores), sig / sig.sum(axis=1, keepdims=True),
                               rtol=1e-15)


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("kwargs", [{}, {"multi_class": "multinomial"}, {"dual": True}])
def test_estimator_probabilities_are_the_models(sets, k, kwargs):
    """predict_proba in classes_ order equals dlinear.predict_probability of the same
    model in LIBLINEAR's label order (the scores differ only in summation order)."""
    problem = sets[k]
    labels = np.array([-7, 4, 9])[:k]
    y = labels[problem.y.astype(np.int64) - problem.y.min().astype(np.int64)] \
        if k == 3 else np.where(problem.y > 0, labels[1], labels[0])
    est = LogisticRegression(C=3.0, **kwargs).fit(problem.to_scipy(), y)
    ours = est.predict_proba(problem.to_scipy())
    by_label = predict_probability(est.model_, problem)      # model_.label: class indices
    order = np.argsort(est.model_.label)
    np.testing.assert_allclose(ours, by_label[:, order], rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(est.classes_, labels)
