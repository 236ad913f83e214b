"""Newton/TRON map-reduced over blocks on 1, 2 and 3 worker processes: the local optimum."""

from collections import Counter

import numpy as np
import pytest

from dlinear import Params, train
from dlinear.cluster import Dataset
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.solvers.primal_objective_values import primal_objective
from dlinear.solvers.primal_objectives import LOSS_OF_SOLVER, PrimalObjective
from tests.support.clusters import local_cluster, scale_to

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def cluster():
    """(cluster, client) starting with 1 worker; the tests scale it."""
    with local_cluster(1) as pair:
        yield pair


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


@pytest.mark.slow
@pytest.mark.cluster
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


def tasks_run(task_stream, name):
    """Per worker, how many tasks whose key contains `name` it ran while the task stream
    recorded (not counted from the workers' transition logs: those keep only their last
    1000 entries, so after enough earlier tests an old entry leaves as a new one comes)."""
    return Counter(task["worker"] for task in task_stream.data if name in str(task["key"]))


@pytest.mark.slow
@pytest.mark.cluster
@pytest.mark.parametrize("solver,kcolumn", [(0, None), (0, True), (2, None)])
def test_classes_run_as_tasks_on_copies_and_equal_in_process(cluster, problems, solver,
                                                             kcolumn):
    """One-vs-rest Newton on 2 workers, the data fitting one: the copy mode by default,
    the classes in one group per worker (each group one task on the worker's copy, no
    actor rounds), the model and log those of train_in_process, bit for bit."""
    from dlinear.cluster import engine
    from dlinear.in_process.train import train_in_process
    local_cluster, client = cluster
    scale_to(local_cluster, client, 2)
    problem = problems["multi"]
    data = Dataset.from_arrays(problem, None, client, n_parts=4)
    params = Params(solver_type=solver, eps=1e-4, bias=1.0, kcolumn=kcolumn)
    _, mode = engine.training_mode(data, params)
    assert "copy of the data per worker" in mode and "classes in groups" in mode
    local_log, cluster_log = [], []
    local = train_in_process(problem, params, log=local_log.append)
    with distributed.get_task_stream(client) as task_stream:
        spread = train(data, params, log=cluster_log.append)
    stats = spread.fit_stats
    assert stats["mode"] == "copy" and stats["groups"] == [2, 1] and stats["workers"] == 2
    ran = tasks_run(task_stream, "fit_class_group")
    assert sorted(ran.values()) == [1, 1], ran
    np.testing.assert_array_equal(spread.w, local.w)
    assert cluster_log == local_log


@pytest.mark.cluster
def test_map_reduce_when_asked_or_when_a_copy_does_not_fit(cluster, problems, monkeypatch):
    """partition=True, or a copy larger than COPY_MEMORY_SHARE of a worker's memory
    limit, keeps one-vs-rest Newton map-reduced over the parts (k-column actor rounds);
    partition=False puts even one binary problem on one worker's copy."""
    from dlinear.cluster import engine
    from dlinear.in_process.train import train_in_process
    local_cluster, client = cluster
    scale_to(local_cluster, client, 2)
    problem = problems["multi"]
    data = Dataset.from_arrays(problem, None, client, n_parts=4)
    params = Params(solver_type=0, eps=1e-4, bias=1.0)
    local = train_in_process(problem, params)
    f_local = primal_objective(problem, params, local)

    asked = train(data, params, partition=True)
    assert asked.fit_stats["mode"] == "map-reduce"
    assert asked.fit_stats["rounds"] > 0
    assert abs(primal_objective(problem, params, asked) - f_local) <= 1e-8 * f_local

    assert engine.copy_fits(data)
    monkeypatch.setattr(engine, "smallest_worker_memory",
                        lambda client: 2 * engine.dataset_bytes(data) - 1)
    assert not engine.copy_fits(data)
    resolved, mode = engine.training_mode(data, params)
    assert resolved.partition is True and "map-reduced over the parts" in mode
    too_big = train(data, params)
    assert too_big.fit_stats["mode"] == "map-reduce"
    np.testing.assert_array_equal(too_big.w, asked.w)
    monkeypatch.undo()

    binary = problems["binary"]
    bdata = Dataset.from_arrays(binary, None, client, n_parts=4)
    bparams = Params(solver_type=2, eps=1e-4)
    _, mode = engine.training_mode(bdata, bparams)
    assert "map-reduced" in mode                   # one problem: split by rows by default
    on_copy = train(bdata, bparams, partition=False)
    assert on_copy.fit_stats == {"mode": "copy", "groups": [1], "workers": 1}
    np.testing.assert_array_equal(on_copy.w, train_in_process(binary, bparams).w)


@pytest.mark.slow
@pytest.mark.cluster
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


@pytest.mark.cluster
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


@pytest.mark.slow
@pytest.mark.cluster
@pytest.mark.parametrize("solver,driver", [(0, "linesearch"), (2, "tron")])
def test_classes_share_each_round_and_equal_one_driver_per_class(cluster, problems, solver,
                                                                  driver):
    """k-column Newton on the cluster: the per-class drivers' models and logs
    (bit-identical: the same sums in the same order), one actor round per lockstep round
    for all classes, at most k n-vectors each way per round."""
    from dataclasses import replace

    local_cluster, client = cluster
    scale_to(local_cluster, client, 3)
    problem = problems["multi"]
    data = Dataset.from_arrays(problem, None, client, n_parts=6)
    # partition=True: map-reduced over the parts (the data would fit a worker's copy)
    params = Params(solver_type=solver, eps=1e-4, bias=1.0, newton=driver, partition=True)
    per_class_log, together_log = [], []
    per_class = train(data, replace(params, kcolumn=False), log=per_class_log.append)
    together = train(data, replace(params, kcolumn=True), log=together_log.append)
    np.testing.assert_array_equal(together.w, per_class.w)
    assert together_log == per_class_log
    stats = together.fit_stats
    assert stats["workers"] == 3
    assert stats["rounds"] == stats["lockstep_rounds"] + 1       # + the label counts
    k, vector = 3, 8 * (problem.n_features + 1)
    assert stats["bytes_to_workers"] <= stats["rounds"] * k * vector
    assert stats["bytes_from_workers"] <= stats["rounds"] * 2 * k * vector   # g and M
    # the rounds are those of the class needing most calls alone, not a sum over classes
    from dlinear.solvers.kcolumn import KColumnLossTerm, fit_newton_in_lockstep
    from dlinear.solvers.primal_objectives import LOSS_OF_SOLVER
    from dlinear.planning.class_plan import first_appearance, order_labels, targets, weighted_class_C
    resolved = params.resolved()
    label = order_labels(first_appearance(problem.y))
    Y, C = targets(problem.y, None, label,
                   weighted_class_C(label, resolved, lambda line: None), resolved)
    alone = []
    for c in range(k):
        term = KColumnLossTerm(problem, Y[:, [c]], C[:, [c]], 1.0, LOSS_OF_SOLVER[solver])
        _, rounds = fit_newton_in_lockstep(term.execute, term.n_variables, term.counts(),
                                           resolved, [None])
        alone.append(rounds.n_rounds)
    assert stats["lockstep_rounds"] == max(alone) < sum(alone)


@pytest.fixture
def glibc_calls(monkeypatch):
    """The mallopt / malloc_trim calls dlinear.cluster.heap makes, recorded by a fake
    glibc instead of made (the environment's thresholds are cleared). The holder count is
    per process, as glibc's thresholds are: the actors and fit tasks that hold the heap
    live in worker processes, so no holder may be alive in this one, before or after."""
    from dlinear.cluster import heap

    assert heap._depth == 0, "a holder of glibc's heap is alive in the test process"
    calls = []

    class FakeLibc:
        def mallopt(self, option, value):
            calls.append((option, value))

        def malloc_trim(self, pad):
            calls.append(("trim", pad))

    monkeypatch.setattr(heap, "_glibc", lambda: FakeLibc())
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    yield calls
    assert heap._depth == 0, "the test left a holder of glibc's heap alive"


def test_heap_kept_only_where_the_environment_fixed_glibcs_thresholds(monkeypatch,
                                                                       glibc_calls):
    """On a Dask worker (MALLOC_TRIM_THRESHOLD_ set by the nanny) a fit raises glibc's
    thresholds, and the last of nested fits puts the environment's back and trims;
    elsewhere nothing is called."""
    from dlinear.cluster import heap

    calls = glibc_calls
    with heap.heap_kept():
        pass
    assert calls == []
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "65536")
    with heap.heap_kept():
        with heap.heap_kept():
            assert calls == [(heap.M_MMAP_THRESHOLD, 32 << 20),
                             (heap.M_TRIM_THRESHOLD, 1 << 30)]
        assert len(calls) == 2
    assert calls[2:] == [(heap.M_MMAP_THRESHOLD, 128 << 10),
                         (heap.M_TRIM_THRESHOLD, 65536), ("trim", 0)]


def test_actors_hold_the_heap_until_they_are_released(monkeypatch, glibc_calls):
    """The map-reduce and partitioned-CD actors keep glibc's heap for their whole life
    (their rounds allocate n-vectors), and give it back when they are collected."""
    import gc

    from dlinear.cluster import heap

    calls = glibc_calls

    class Actor:
        pass

    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "65536")
    actor = Actor()
    heap.hold_heap_while_alive(actor)
    with heap.heap_kept():                  # a task beside the actor changes nothing
        pass
    assert calls == [(heap.M_MMAP_THRESHOLD, 32 << 20), (heap.M_TRIM_THRESHOLD, 1 << 30)]
    del actor
    gc.collect()
    assert calls[2:] == [(heap.M_MMAP_THRESHOLD, 128 << 10),
                         (heap.M_TRIM_THRESHOLD, 65536), ("trim", 0)]
