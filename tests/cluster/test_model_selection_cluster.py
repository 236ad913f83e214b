"""The -C search on a cluster: the same result as in process, and its progress bar (in
process: tests/parity/test_model_selection.py)."""
import sys
import numpy as np
import pytest
from dlinear import Params
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear import find_parameters
from dlinear.in_process.model_selection import calc_max_p
from tests.parity.test_model_selection import FakeTerminal, classification, regression  # noqa: F401


@pytest.mark.slow
def test_cluster_search_equals_in_process(client, classification, regression):
    part = classification.subset(np.arange(2000))
    local_lines, cluster_lines = [], []
    local = find_parameters(part, Params(solver_type=0, seed=3), 5, log=local_lines.append)
    remote = find_parameters(part, Params(solver_type=0, seed=3), 5, client=client,
                             log=cluster_lines.append)
    assert remote == local and cluster_lines == local_lines
    # -s 11, several p's (each its own warm-started paths), from a cluster Dataset
    from dlinear.cluster import Dataset
    start_p = 2.5 * calc_max_p(regression) / 20
    params = Params(solver_type=11, eps=0.01)
    local_lines, cluster_lines = [], []
    local = find_parameters(regression, params, 3, start_p=start_p, log=local_lines.append)
    remote = find_parameters(Dataset.from_arrays(regression, None, client), params, 3,
                             start_p=start_p, log=cluster_lines.append)
    assert remote == local and cluster_lines == local_lines


@pytest.mark.slow
def test_cluster_gather_shows_the_bar(monkeypatch, client):
    from dlinear import cross_validation
    data = make_rcv1_like(400, n_features=200, nnz_per_row=10, seed=8)
    plain = cross_validation(data, Params(solver_type=1), 3, client=client)
    tty = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", tty)
    with_bar = cross_validation(data, Params(solver_type=1), 3, client=client)
    assert "CV folds |" in tty.getvalue() and "3/3" in tty.getvalue()
    np.testing.assert_array_equal(with_bar, plain)
