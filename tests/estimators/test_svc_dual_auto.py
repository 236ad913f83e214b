"""LinearSVC(dual="auto") on in-memory X: the squared hinge as dual CD (-s 1) or its
Newton primal (-s 2) by the data's scale, as dlinear-train without -s."""
import numpy as np
import pytest

from dlinear.datasets.click_like import make_click_like
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.estimators import LinearSVC


def test_click_shaped_rows_fewer_than_columns_train_the_primal():
    p = make_click_like(2000, hash_bits=16)
    X = p.to_scipy()
    assert X.shape[0] < X.shape[1]             # scikit-learn's rule would take the dual
    model = LinearSVC().fit(X, p.y)
    assert model.solver_type_ == 2
    np.testing.assert_array_equal(model.coef_, LinearSVC(dual=False).fit(X, p.y).coef_)


@pytest.mark.parametrize("dense", [False, True])
def test_text_rows_more_than_columns_keep_the_dual(dense):
    p = make_rcv1_like(3000, n_features=1000, nnz_per_row=20, seed=3)
    X = p.to_scipy()
    X = X.toarray() if dense else X
    assert X.shape[0] > X.shape[1]             # scikit-learn's rule would take the primal
    model = LinearSVC().fit(X, p.y)
    assert model.solver_type_ == 1
    np.testing.assert_array_equal(model.coef_, LinearSVC(dual=True).fit(X, p.y).coef_)


def test_large_sample_weights_move_the_choice_to_the_primal():
    p = make_rcv1_like(3000, n_features=1000, nnz_per_row=20, seed=3)
    X = p.to_scipy()
    model = LinearSVC().fit(X, p.y, sample_weight=np.full(3000, 1000.0))
    assert model.solver_type_ == 2
