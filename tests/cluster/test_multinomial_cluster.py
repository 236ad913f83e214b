"""Multinomial logistic regression (--multinomial) on data spread over a cluster's workers."""
import numpy as np
import pytest

from dlinear import Params, train
from dlinear.cluster import Dataset
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.in_process.train import train_in_process


@pytest.mark.slow
def test_on_a_cluster_equals_in_process(client):
    problem = make_rcv1_like(2000, n_features=500, n_classes=3, nnz_per_row=20, seed=8)
    params = Params(solver_type=0, C=1.0, multinomial=True, eps=1e-6, bias=1.0)
    local = train_in_process(problem, params)
    data = Dataset.from_arrays(problem, None, client, n_parts=4)
    spread = train(data, params)
    assert spread.multinomial and spread.n_iter == local.n_iter
    np.testing.assert_allclose(spread.w, local.w, atol=1e-10)
