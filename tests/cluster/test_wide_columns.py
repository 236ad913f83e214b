"""Newton map-reduced over wide data on the workers' own columns (dlinear.data.columns,
ColumnCodec): the models of the fit on all columns bit for bit, rounds that carry each
worker's columns only, and workers that hold nothing of the data set's width."""
from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse as sp

from dlinear import Params, Problem
from dlinear.cluster import Dataset
from dlinear.cluster.engine import train_on_cluster
from dlinear.cluster.objective import distributed_objective
from dlinear.model import save_model
from tests.support.problems import same_bits

distributed = pytest.importorskip("distributed")


def wide_problem(l=600, n=6000, used=900, nnz_per_row=10, seed=0, n_classes=2,
                 regression=False):
    """Rows over `used` random columns of n (the others never occur); the first half of
    the rows and the second use different (overlapping) halves of those columns, as the
    parts of a click log do."""
    rng = np.random.default_rng(seed)
    columns = np.sort(rng.choice(n, used, replace=False))
    halves = [columns[: 2 * used // 3], columns[used // 3:]]
    rows = [np.sort(rng.choice(halves[i * 2 // l], nnz_per_row, replace=False))
            for i in range(l)]
    indices = np.concatenate(rows).astype(np.int32)
    X = sp.csr_matrix((rng.normal(size=len(indices)), indices,
                       np.arange(l + 1) * nnz_per_row), shape=(l, n))
    if regression:
        y = X @ rng.normal(size=n) + 0.1 * rng.normal(size=l)
    else:
        y = (X @ rng.normal(size=(n, n_classes))).argmax(axis=1).astype(float) + 1
    return Problem.from_arrays(X, y)


def _same_model_files(a, b, tmp_path):
    assert same_bits(a.w, b.w)
    save_model(tmp_path / "a", a)
    save_model(tmp_path / "b", b)
    assert (tmp_path / "a").read_bytes() == (tmp_path / "b").read_bytes()


CASES = [  # (solver, extra params, classes)
    (0, {}, 2), (2, {"newton": "tron", "regularize_bias": False}, 2), (11, {}, None),
    (0, {"kcolumn": True}, 3), (2, {"kcolumn": False}, 3), (0, {"multinomial": True}, 3),
]


@pytest.mark.cluster
@pytest.mark.parametrize("solver,extra,classes", CASES)
def test_same_model_as_on_all_columns(client, solver, extra, classes, tmp_path):
    problem = wide_problem(n_classes=classes or 2, regression=classes is None, seed=solver)
    data = Dataset.from_arrays(problem, None, client, n_parts=4)
    params = Params(solver_type=solver, C=2.0, bias=1.0, partition=True, **extra)
    compacted = train_on_cluster(data, params)
    full = train_on_cluster(data, params, compact=False)
    assert compacted.fit_stats["occurring_columns"] == len(np.unique(problem.indices))
    assert "occurring_columns" not in full.fit_stats
    _same_model_files(compacted, full, tmp_path)
    # each round carried to each worker at most the occurring columns (k vectors of a
    # k-column round), not all n
    stats, k = compacted.fit_stats, (classes if classes and classes > 2 else 1)
    m = stats["occurring_columns"] + 1
    assert stats["bytes_to_workers"] <= stats["rounds"] * 8 * 2 * k * m
    assert stats["bytes_to_workers"] < full.fit_stats["bytes_to_workers"] / 3


@pytest.mark.cluster
def test_data_most_of_whose_columns_occur_keeps_the_tree_on_all_columns(client):
    """Where each worker's own columns would add up to more than n, the client's traffic
    of a tree on all columns is the smaller (columns.worth_compacting)."""
    problem = wide_problem(n=1200, used=900, seed=2)
    data = Dataset.from_arrays(problem, None, client, n_parts=2)
    model = train_on_cluster(data, Params(solver_type=0, partition=True).resolved())
    assert model.fit_stats["mode"] == "map-reduce"
    assert "occurring_columns" not in model.fit_stats


@pytest.mark.cluster
def test_a_warm_start_on_other_columns_fits_on_all_columns(client, tmp_path):
    problem = wide_problem(seed=9)
    data = Dataset.from_arrays(problem, None, client, n_parts=2)
    used = data.occurring_columns()
    w0 = np.zeros(problem.n_features + 1)
    w0[used[:20]] = 0.1
    params = Params(solver_type=0, bias=1.0, partition=True, init_sol=w0)
    compacted = train_on_cluster(data, params)
    assert compacted.fit_stats["occurring_columns"] == len(used)
    _same_model_files(compacted, train_on_cluster(data, params, compact=False), tmp_path)
    w0[np.setdiff1d(np.arange(problem.n_features), used)[:3]] = 0.2
    moved = train_on_cluster(data, replace(params, init_sol=w0))
    assert "occurring_columns" not in moved.fit_stats


def _rounds(objective):
    """The calls a Newton iteration makes, one round each."""
    w = np.full(objective.n_variables, 0.01)
    yield lambda: objective.fun(w)
    yield lambda: objective.grad(w)
    yield lambda: objective.hv(w)
    yield lambda: objective.linesearch_and_update(w.copy(), -0.5 * w, objective.fun(w),
                                                  objective.grad(w), 1.0)


@pytest.mark.cluster
def test_a_round_carries_each_workers_columns_only(client):
    """Bytes per round per worker <= 2 x 8 x (its columns + the bias), counted by the
    actors themselves (what they received and sent)."""
    problem = wide_problem(seed=4)
    data = Dataset.from_arrays(problem, None, client, n_parts=4)
    params = Params(solver_type=0, bias=1.0).resolved()
    objective, _ = distributed_objective(data, np.array([1, 2]), 0, np.array([1.0, 1.0]),
                                         params, columns=data.occurring_columns())
    tree = objective.loss_term.tree
    assert objective.n_variables == len(data.occurring_columns()) + 1
    own = [len(a.used_columns().result()) + 1 for a in tree.actors]
    assert len(own) == 2 and max(own) < objective.n_variables      # each its own share
    try:
        for call in _rounds(objective):
            before = tree.stats_each()
            rounds_before = tree.n_calls
            call()
            after = tree.stats_each()
            rounds = tree.n_calls - rounds_before
            for (r0, s0, _), (r1, s1, _), m in zip(before, after, own):
                assert (r1 - r0) + (s1 - s0) <= rounds * 2 * 8 * m
    finally:
        objective.loss_term.close()


@pytest.mark.cluster
def test_workers_hold_nothing_of_the_width_of_2_to_the_24_columns(client, tmp_path):
    """n = 2^24 (the last column occurs): the actors' arrays are of their rows and their
    columns; the model has all 2^24 (+ bias) weights."""
    n = 1 << 24
    problem = wide_problem(l=400, n=n, used=500, seed=6)
    problem = replace(problem, n_features=n)
    X = problem.to_scipy().tolil()
    X[0, n - 1] = 1.0                              # the largest column index occurs
    problem = Problem.from_arrays(X.tocsr(), problem.y)
    data = Dataset.from_arrays(problem, None, client, n_parts=2)
    assert data.n_features == n and data.occurring_columns()[-1] == n - 1
    params = Params(solver_type=0, bias=1.0).resolved()
    objective, _ = distributed_objective(data, np.array([1, 2]), 0, np.array([1.0, 1.0]),
                                         params, columns=data.occurring_columns())
    try:
        w = np.zeros(objective.n_variables)
        objective.fun(w)
        objective.grad(w)
        objective.hv(np.ones(objective.n_variables))
        for actor in objective.loss_term.tree.actors:
            sizes = actor.holdings().result()
            assert sizes and max(sizes.values()) < 10_000, sizes
    finally:
        objective.loss_term.close()
    model = train_on_cluster(data, replace(params, partition=True))
    assert model.w.shape == (n + 1, 1)
    assert model.fit_stats["occurring_columns"] == len(np.unique(problem.indices))


@pytest.mark.slow
@pytest.mark.cluster
@pytest.mark.parametrize("kcolumn", [False, True])
def test_a_worker_killed_mid_newton_on_own_columns(tmp_path, monkeypatch, kcolumn):
    """The actors rebuilt on the surviving workers hold other columns than the lost
    ones: the client learns their columns again, replays the state, and the fit reaches
    the optimum of the fit on all columns."""
    import os
    import signal
    from dlinear.cluster import tree
    from dlinear.data.libsvm_reader import read_libsvm, write_libsvm
    from dlinear.solvers.primal_objective_values import primal_objective
    from tests.support.clusters import start_cluster, stop_cluster, wait_for_workers
    path = tmp_path / "wide.train"
    write_libsvm(path, wide_problem(l=3000, n=30000, used=3000, n_classes=3 if kcolumn
                                    else 2, seed=12))
    params = Params(solver_type=0, eps=1e-4, partition=True, kcolumn=kcolumn)
    problem = read_libsvm(path)
    address, procs = start_cluster(tmp_path, n_workers=3)
    try:
        with distributed.Client(address, timeout=30) as c:
            by_name = wait_for_workers(c, 3)
            dataset = Dataset.from_libsvm(path, c, block_bytes=32 << 10)
            expected = train_on_cluster(dataset, params, compact=False)
            real_round = tree.ActorTree.round
            killed = []

            def round_after_a_kill(self, method, *args, **kwargs):
                if self.codec is not None and self.n_calls == 8 and not killed:
                    worker = self.workers[0]
                    name = next(n for n, a in by_name.items() if a == worker)
                    os.killpg(procs[name].pid, signal.SIGKILL)
                    procs[name].wait()
                    killed.append(worker)
                return real_round(self, method, *args, **kwargs)

            monkeypatch.setattr(tree.ActorTree, "round", round_after_a_kill)
            model = train_on_cluster(dataset, params)
            assert killed and killed[0] not in c.nthreads()
            assert model.fit_stats["occurring_columns"] == len(np.unique(problem.indices))
        f, f_expected = (primal_objective(problem, params, model),
                         primal_objective(problem, params, expected))
        assert abs(f - f_expected) <= 1e-8 * f_expected
    finally:
        stop_cluster(procs)


@pytest.mark.cluster
@pytest.mark.parametrize("solver,extra,classes", [
    (1, {}, 3), (3, {"partition_rule": "linesearch"}, 2), (7, {}, 2), (12, {}, None),
    (1, {"max_iter": 3}, 2),            # the cap: the switch to the distributed -s 2
])
def test_partitioned_dual_cd_same_model_as_on_all_columns(client, solver, extra, classes,
                                                          tmp_path):
    """The partitioned dual CD's W and its steps on the workers' own columns: the model
    of the fit on all columns, bit for bit (and its fallback to Newton at the cap)."""
    problem = wide_problem(n_classes=classes or 2, regression=classes is None,
                           seed=20 + solver)
    data = Dataset.from_arrays(problem, None, client, n_parts=4)
    params = Params(solver_type=solver, C=2.0, bias=1.0, partition=True, **extra).resolved()
    log_c, log_f = [], []
    compacted = train_on_cluster(data, params, log=log_c.append)
    full = train_on_cluster(data, params, compact=False, log=log_f.append)
    assert compacted.fit_stats["mode"] == "partitioned"
    _same_model_files(compacted, full, tmp_path)
    assert log_c == log_f
    if "max_iter" in extra:
        assert any(line.startswith("Switching to use -s 2") for line in log_c)


@pytest.mark.cluster
def test_partitioned_rounds_carry_each_workers_columns_only(client):
    from dlinear.cluster.partitioned_cd import PartitionedBlocks
    from dlinear.cluster.tree import Placement
    from dlinear.solvers.partitioned_dual_cd import fit_partitioned_dual_cd
    problem = wide_problem(n_classes=3, seed=8)
    data = Dataset.from_arrays(problem, None, client, n_parts=4)
    params = Params(solver_type=1, bias=1.0).resolved()
    label = np.array([1, 2, 3])
    blocks = PartitionedBlocks(Placement(data), label, np.ones(3), params,
                               data.occurring_columns())
    try:
        assert blocks.columns is not None
        assert blocks.w_size == len(data.occurring_columns()) + 1
        own = [len(a.used_columns().result()) + 1 for a in blocks.tree.actors]
        fit_partitioned_dual_cd(blocks, 3, blocks.w_size, replace(params, max_iter=4),
                                "cocoa", 1)
        rounds = blocks.tree.n_calls
        for (received, sent, _), m in zip(blocks.tree.stats_each(), own):
            # W of the 3 classes down, their steps up; a few numbers per class (O(k))
            assert received + sent <= rounds * (2 * 8 * 3 * m + 8 * 3 * 20)
    finally:
        blocks.close()
