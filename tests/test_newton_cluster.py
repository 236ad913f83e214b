"""Newton/TRON map-reduced over blocks on 1, 2 and 3 worker processes: the local optimum."""

import numpy as np
import pytest

from conftest import local_cluster
from dlinear import Params, train
from dlinear.cluster import Dataset
from dlinear.datasets import make_rcv1_like
from dlinear.solvers.primal_objective_values import primal_objective
from dlinear.solvers.primal_objectives import LOSS_OF_SOLVER, PrimalObjective

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def cluster():
    """(cluster, client) starting with 1 worker; the tests scale it."""
    with local_cluster(1) as pair:
        yield pair


def scale_to(local_cluster, client, n):
    """Exactly n workers: wait_for_workers alone returns while extra ones are still
    retiring, and data scattered onto those is lost."""
    import time
    local_cluster.scale(n)
    client.wait_for_workers(n, timeout=60)
    deadline = time.time() + 60
    while len(client.scheduler_info(n_workers=-1)["workers"]) != n:
        assert time.time() < deadline, "the cluster did not scale"
        time.sleep(0.05)


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
    scale_to(local_cluster, client, n_workers)
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


@pytest.mark.parametrize("n_workers", [1, 3])
def test_only_vectors_cross_and_are_summed_on_workers(cluster, problems, n_workers):
    from dlinear.cluster.objective import distributed_objective
    local_cluster, client = cluster
    scale_to(local_cluster, client, n_workers)
    problem = problems["binary"]
    data = Dataset.from_arrays(problem, None, client, n_parts=n_workers)
    params = Params(solver_type=2).resolved()
    objective, counts = distributed_objective(data, np.array([1, -1]), 0,
                                              np.array([1.0, 1.0]), params)
    term = objective.loss_term
    assert len(term.actors) == n_workers
    assert counts == (int(np.sum(problem.y == 1)), problem.n_samples)
    w = np.full(objective.n_variables, 0.01)
    objective.fun(w)
    objective.grad(w)
    received, sent, _ = term.stats()
    to_workers, from_workers = term.bytes_to_workers, term.bytes_from_workers
    hv = objective.hv(w)
    vector = 8 * objective.n_variables
    # the direction reaches each worker once and each worker sends one n-vector up the
    # tree (its subtree's sum); the client sends one vector and gets one back
    received2, sent2, _ = term.stats()
    assert received2 - received == vector * n_workers
    assert sent2 - sent == vector * n_workers
    assert term.bytes_to_workers - to_workers == vector
    assert term.bytes_from_workers - from_workers == vector
    local = PrimalObjective(problem, np.where(problem.y == 1, 1.0, -1.0),
                            np.ones(problem.n_samples), -1.0, LOSS_OF_SOLVER[2])
    local.fun(w)
    local.grad(w)
    np.testing.assert_allclose(hv, local.hv(w), rtol=1e-12)
    term.close()


def test_parts_are_a_multiple_of_the_workers(cluster, problems, monkeypatch):
    """A map-reduce round waits for the slowest worker: each gets as many parts."""
    from dlinear.cluster import dataset as dataset_module
    local_cluster, client = cluster
    scale_to(local_cluster, client, 3)
    problem = problems["binary"]
    # blocks small enough for 7 parts, which 3 workers cannot share evenly
    monkeypatch.setattr(dataset_module, "DEFAULT_BLOCK_BYTES", problem.nnz * 12 // 7 + 1)
    data = Dataset.from_arrays(problem, None, client)
    assert len(data.parts) == 9
    per_worker = {}
    for part, workers in client.who_has(data.parts).items():
        per_worker[min(workers)] = per_worker.get(min(workers), 0) + 1
    assert sorted(per_worker.values()) == [3, 3, 3]
