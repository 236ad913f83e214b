"""Partitioned dual CD (-s 1, -s 3) on workers whose share of the parts exceeds what their
memory limit leaves (issue #34): each worker keeps its share on its local disk in the
binary format and trains from it (dlinear.in_process.spilled_block); the model reaches
the in-memory partitioned fit's objective, the spill file lives as long as the fit (a
killed worker's survivors' too), and the solvers that cannot spill refuse in one line."""
import glob
import logging
import os
import signal
import warnings

import dask
import numpy as np
import pytest

import dlinear
from dlinear import ConvergenceWarning, Params
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.errors import DlinearError
from dlinear.in_process.simulated import train_partitioned_in_process
from dlinear.solvers.primal_objective_values import primal_objective

from tests.support.clusters import SMALL_WORKER_LIMIT as LIMIT, SPILL_ONLY

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def problem():
    return make_rcv1_like(6000, n_features=3000, nnz_per_row=40, seed=7)


@pytest.fixture(scope="module")
def client():
    """2 worker processes with LIMIT bytes each: the tests' parts (about 2.9 MB, 1.45 MB a
    worker) are over half of both workers' limits."""
    from distributed import Client, LocalCluster
    with dask.config.set(SPILL_ONLY), \
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True, memory_limit=LIMIT,
                         dashboard_address=":0", silence_logs=logging.CRITICAL) as cluster, \
            Client(cluster) as client:
        yield client


def _spill_files(client) -> dict:
    """{worker: [(spill directory, bytes of its values file or -1 without a dataset
    header)] in its local directory}."""
    def on_worker(dask_worker):
        found = []
        for path in sorted(glob.glob(os.path.join(dask_worker.local_directory,
                                                  "dlinear-spill-*"))):
            whole = os.path.isfile(os.path.join(path, "dlinear-dataset.json"))
            found.append((path, os.path.getsize(os.path.join(path, "data.npy"))
                          if whole else -1))
        return found
    return client.run(on_worker)


@pytest.mark.slow
@pytest.mark.cluster
@pytest.mark.parametrize("solver", [1, 3])
def test_workers_over_their_limit_reach_the_in_memory_objective(problem, client, solver):
    from dlinear.cluster import Dataset
    params = Params(solver_type=solver, eps=0.01, max_iter=1000)
    dataset = Dataset.from_arrays(problem, None, client, n_parts=6)
    log = []
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)     # the dual's own optimum
        model = dlinear.train(dataset, params, client=client, partition=True,
                              log=log.append)
    assert model.fit_stats["mode"] == "partitioned"
    assert model.fit_stats["spilled_workers"] == 2, model.fit_stats
    assert any("keep their share of the data on their local disks" in line for line in log)
    # the in-memory partitioned fit of 2 workers (its rounds, simulated in this process)
    reference = train_partitioned_in_process(problem, params, 2)
    f = primal_objective(problem, params, model)
    f_ref = primal_objective(problem, params, reference)
    # both stop at LIBLINEAR's projected-gradient test with eps 0.01, by different paths
    # (the rows on disk visited a sub-block at a time): each that near the optimum
    f_star = primal_objective(problem, params, train_partitioned_in_process(
        problem, Params(solver_type=solver, eps=1e-5, max_iter=5000), 2))
    assert min(f, f_ref) >= f_star * (1 - 1e-12), (f, f_ref, f_star)
    assert abs(f - f_ref) <= 3 * (f_ref - f_star), (f, f_ref, f_star)
    left = _spill_files(client)
    assert len(left) == 2 and all(files == [] for files in left.values()), left


@pytest.mark.slow
@pytest.mark.cluster
def test_the_spill_file_lives_as_long_as_the_fit(problem, client):
    """Each worker's share is in its local directory while the fit runs, and gone after;
    the parts stay where they were (the client holds none)."""
    from dlinear.cluster import Dataset
    from dlinear.cluster.partitioned_cd import train_partitioned
    dataset = Dataset.from_arrays(problem, None, client, n_parts=4)
    holders = client.who_has(dataset.parts)
    params = Params(solver_type=1, max_iter=5).resolved()
    seen = []

    def on_round(r, c, primal, dual):
        if r == 1:
            seen.append(_spill_files(client))

    label = np.array([1, -1])
    stats = {}
    train_partitioned(dataset, params, label, np.ones(2), "adaptive", 1, on_round,
                      fit_stats=stats)
    assert stats["spilled_workers"] == 2
    assert len(seen) == 1
    # each worker's share: its rows' values (8 bytes a nonzero) in one binary dataset
    assert sum(size for files in seen[0].values() for _, size in files) >= 8 * problem.nnz
    for worker, files in seen[0].items():
        assert len(files) == 1, seen
    assert all(not files for files in _spill_files(client).values())
    assert client.who_has(dataset.parts) == holders     # no part moved


@pytest.mark.slow
@pytest.mark.cluster
@pytest.mark.parametrize("solver", [4, 13])
def test_solvers_that_cannot_spill_refuse_in_one_line(client, solver):
    from dlinear.cluster import Dataset
    # a share over the whole limit (2.9 MB a worker)
    larger = make_rcv1_like(12000, n_features=3000, nnz_per_row=40, seed=7)
    dataset = Dataset.from_arrays(larger, None, client, n_parts=4)
    with pytest.raises(DlinearError) as caught:
        dlinear.train(dataset, Params(solver_type=solver), client=client, partition=True)
    message = str(caught.value)
    assert "\n" not in message
    assert f"partitioned -s {solver} keeps each worker's share" in message
    assert "-s 1 or 3, whose workers keep their share on their local disks" in message


@pytest.mark.slow
@pytest.mark.cluster
def test_a_killed_worker_s_survivors_keep_their_rows_on_disk(tmp_path, monkeypatch):
    """A worker dies during the rounds of a fit whose blocks are on disk: the survivors'
    new actors write their (new) shares again, take over the dual variables the old ones
    had, the lost rows restart, and the rounds reach -e 1e-5 and LIBLINEAR's optimum;
    no spill file outlives the fit."""
    from tests.parity.test_partitioned_cd import assert_tight_parity
    from tests.support.clusters import start_cluster, stop_cluster, wait_for_workers

    from dlinear.cluster import Dataset, tree
    from dlinear.cluster.partitioned_cd import train_partitioned
    from dlinear.data.libsvm_reader import write_libsvm
    from dlinear.planning.class_plan import assemble_model

    problem = make_rcv1_like(6000, n_features=2000, nnz_per_row=30, seed=8)
    path = tmp_path / "data.train"
    write_libsvm(path, problem)
    params = Params(solver_type=1, C=0.1, eps=1e-5, max_iter=3000).resolved()
    address, procs = start_cluster(tmp_path, n_workers=3)
    try:
        with distributed.Client(address, timeout=30) as c:
            by_name = wait_for_workers(c, 3)
            dataset = Dataset.from_libsvm(path, c, block_bytes=64 << 10)
            real_round = tree.ActorTree.round
            killed, spilled = [], []

            def round_after_a_kill(self, method, *args, **kwargs):
                if method == "round" and self.n_calls == 30 and not killed:
                    worker = self.workers[-1]
                    name = next(n for n, a in by_name.items() if a == worker)
                    os.killpg(procs[name].pid, signal.SIGKILL)
                    procs[name].wait()
                    killed.append(worker)
                if method == "round" and self.n_calls == 40:
                    spilled.append(self.call("spilled")[0])
                return real_round(self, method, *args, **kwargs)

            monkeypatch.setattr(tree.ActorTree, "round", round_after_a_kill)
            label = np.array(dataset.class_labels_by_first_appearance())
            with warnings.catch_warnings():
                warnings.simplefilter("error", ConvergenceWarning)
                stats = {}
                [result] = train_partitioned(dataset, params, label, np.full(2, params.C),
                                             "adaptive", 1, spill_budget=600_000,
                                             fit_stats=stats)
            assert stats["spilled_workers"] == 3 and spilled == [2] and killed
            assert not result.hit_max_iter
            left = _spill_files(c)
            assert all(not files for files in left.values()), left
        model = assemble_model(params, dataset.n_features, label, [result], lambda _: None)
        assert_tight_parity(problem, params, model)
    finally:
        stop_cluster(procs)
