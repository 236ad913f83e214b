"""Newton/TRON map-reduced over blocks on 1, 2 and 3 worker processes: the local optimum."""
import logging

import numpy as np
import pytest

from dlinear import Params, train
from dlinear.cluster import Dataset
from dlinear.datasets import make_rcv1_like
from dlinear.solvers.objectives import primal_objective

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def cluster():
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=logging.CRITICAL)
    with distributed.Client(cluster) as client:
        yield cluster, client
    cluster.close()


@pytest.fixture(scope="module")
def problems():
    binary = make_rcv1_like(3000, n_features=1500, nnz_per_row=25, seed=31)
    multi = make_rcv1_like(3000, n_features=1500, n_classes=3, nnz_per_row=25, seed=32)
    regression = make_rcv1_like(3000, n_features=1500, nnz_per_row=25, seed=33)
    regression.y = regression.to_scipy() @ np.random.default_rng(0).normal(size=1500)
    return {"binary": binary, "multi": multi, "regression": regression}


CASES = [  # (data, solver, bias, regularize_bias, driver)
    ("binary", 0, -1.0, True, "linesearch"),
    ("binary", 2, 1.0, False, "linesearch"),
    ("binary", 2, 1.0, True, "tron"),
    ("multi", 0, 1.0, True, "linesearch"),
    ("regression", 11, 1.0, True, "linesearch"),
]


@pytest.mark.parametrize("n_workers", [1, 2, 3])
def test_distributed_newton_reaches_the_local_objective(cluster, problems, n_workers):
    local_cluster, client = cluster
    local_cluster.scale(n_workers)
    client.wait_for_workers(n_workers, timeout=60)
    for name, solver, bias, reg, driver in CASES:
        problem = problems[name]
        data = Dataset.from_arrays(problem, None, client, n_parts=2 * n_workers)
        holders = {w for ws in client.who_has(data.parts).values() for w in ws}
        assert len(holders) == n_workers           # the data really is spread out
        params = Params(solver_type=solver, eps=1e-4, bias=bias, regularize_bias=reg,
                        newton=driver)
        local = train(problem, params)
        spread = train(data, params)
        f_local = primal_objective(problem, params, local)
        f_spread = primal_objective(problem, params, spread)
        assert abs(f_spread - f_local) <= 1e-8 * abs(f_local), (name, solver, f_local, f_spread)
        np.testing.assert_allclose(spread.w, local.w, atol=1e-6)


def test_only_vectors_cross_and_are_summed_on_workers(cluster, problems):
    from dlinear.cluster.objective import distributed_objective
    _, client = cluster
    client.wait_for_workers(1, timeout=60)
    problem = problems["binary"]
    data = Dataset.from_arrays(problem, None, client)
    params = Params(solver_type=2).resolved()
    objective, counts = distributed_objective(data, np.array([1, -1]), 0,
                                              np.array([1.0, 1.0]), params)
    assert counts == (int(np.sum(problem.y == 1)), problem.n_samples)
    w = np.full(objective.n_variables, 0.01)
    objective.fun(w)
    objective.grad(w)
    before_in, before_out = objective.bytes_in, objective.bytes_out
    hv = objective.hv(w)
    n_blocks = len(objective.blocks)
    # one n-vector per worker goes out, one summed n-vector comes back
    assert objective.bytes_out - before_out == 8 * objective.n_variables * n_blocks
    assert objective.bytes_in - before_in == 8 * objective.n_variables
    assert hv.shape == (objective.n_variables,)
