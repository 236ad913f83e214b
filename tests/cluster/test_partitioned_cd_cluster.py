"""Partitioned dual CD (-s 1, 3, 7, 12, 13) on Dask workers, one actor per worker: it reaches
LIBLINEAR's objective, only n-vectors move, a killed worker's rows restart and the run
still reaches the optimum (in process, simulated: tests/parity/test_partitioned_cd.py)."""
import os
import re
import signal
import warnings

import numpy as np
import pytest

from dlinear import ConvergenceWarning, Params, train
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.solvers.primal_objective_values import primal_objective
from dlinear.solvers import partitioned_dual_cd as P
from tests.support.clusters import local_cluster, scale_to
from tests.support.liblinear_oracle import liblinear_train
from tests.parity.test_partitioned_cd import TIGHT_EPS_TOL, assert_tight_parity, default_eps_gap
from tests.parity.test_partitioned_cd import regression  # noqa: F401  (a fixture used here)

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def cluster():
    with local_cluster(1) as pair:
        yield pair


@pytest.mark.slow
@pytest.mark.cluster
@pytest.mark.parametrize("n_workers", [1, 2, 3])
def test_partitioned_on_workers_reaches_liblinear(cluster, binary_split, multiclass_split,
                                                  regression, n_workers):
    from dlinear.cluster import Dataset
    local_cluster_, client = cluster
    scale_to(local_cluster_, client, n_workers)
    # (data, solver, rule, also at eps 1e-5): the simulated tests cover every rule at both
    # tolerances; here each solver runs on real workers
    for split, solver, rule, tight in [(binary_split, 1, "cocoa", True),
                                       (binary_split, 3, "linesearch", False),
                                       (multiclass_split, 1, "cocoa", False),
                                       (regression, 12, "cocoa", False),
                                       (multiclass_split, 7, "linesearch", False)]:
        train_set = split if solver == 12 else split[0]
        data = Dataset.from_arrays(train_set, None, client, n_parts=2 * n_workers)
        if tight:
            params = Params(solver_type=solver, eps=1e-5, max_iter=3000,
                            partition_rule=rule)
            with warnings.catch_warnings():
                warnings.simplefilter("error", ConvergenceWarning)
                model = train(data, params, partition=True)
            assert_tight_parity(train_set, params, model)
        default = Params(solver_type=solver, partition_rule=rule)
        model = train(data, default, partition=True)
        gap, bound = default_eps_gap(train_set, default, model)
        assert abs(gap) <= bound, (solver, rule, gap)


@pytest.mark.slow
@pytest.mark.cluster
def test_only_n_vectors_reach_the_workers(cluster):
    """Each worker receives one (classes x n) array (and k scalars) per round, never a
    part; the parts stay where they were."""
    from dlinear.cluster import Dataset
    from dlinear.cluster.objective import Placement
    from dlinear.cluster.partitioned_cd import PartitionedBlocks
    local_cluster_, client = cluster
    scale_to(local_cluster_, client, 2)
    problem = make_rcv1_like(4000, n_features=1000, n_classes=3, nnz_per_row=30, seed=3)
    data = Dataset.from_arrays(problem, None, client, n_parts=4)
    before = client.who_has(data.parts)
    params = Params(solver_type=1).resolved()
    label = np.unique(problem.y).astype(np.int64)
    blocks = PartitionedBlocks(Placement(data), label, np.ones(3), params)
    try:
        results = P.fit_partitioned_dual_cd(blocks, 3, problem.n_features, params)
        received, sent, _ = blocks.stats()
        rounds = blocks.n_calls
        assert rounds == max(r.n_iter for r in results)
        n_actors = len(blocks.actors)
        assert n_actors == 2
        vector = 8 * problem.n_features
        # per round and actor: W (active classes x n), the class ids, the k step sizes
        per_round = 3 * vector + 3 * 8 + 3 * 8
        assert received <= n_actors * rounds * per_round
        assert received >= n_actors * vector          # something was measured
        part_bytes = problem.nnz * 12 // 4
        assert per_round < part_bytes / 10            # so a part would not go unnoticed
        assert client.who_has(data.parts) == before
    finally:
        blocks.close()


@pytest.mark.cluster
@pytest.mark.parametrize("solver", [1, 7])
def test_rebuilt_actors_take_over_the_dual_variables(cluster, solver):
    """When the tree makes new actors (as after losing a worker), each takes over the dual
    variables of the actor it replaces on its worker: w of alpha is the same after."""
    from dlinear.cluster import Dataset
    from dlinear.cluster.partitioned_cd import PartitionedBlocks
    from dlinear.cluster.tree import Placement
    local_cluster_, client = cluster
    scale_to(local_cluster_, client, 2)
    problem = make_rcv1_like(2000, n_features=500, n_classes=3, nnz_per_row=20, seed=4)
    data = Dataset.from_arrays(problem, None, client, n_parts=4)
    params = Params(solver_type=solver).resolved()
    label = np.unique(problem.y).astype(np.int64)
    blocks = PartitionedBlocks(Placement(data), label, np.ones(3), params)
    try:
        classes = np.arange(3)
        W = np.zeros((3, problem.n_features))
        for applied in (np.zeros(3), np.ones(3)):       # the second applies the first's steps
            dW, _ = blocks.round(W, classes, applied, np.ones(3), 1)
            W += dW
        before, keys = blocks.w_of_alpha(), blocks.tree.actor_keys()
        assert np.abs(before).max() > 0
        blocks.tree._recover()
        assert len(blocks.actors) == 2 and not set(keys) & set(blocks.tree.actor_keys())
        np.testing.assert_array_equal(blocks.restarted_w, before)
        np.testing.assert_array_equal(blocks.w_of_alpha(), before)
    finally:
        blocks.close()


@pytest.mark.cluster
def test_mode_is_chosen_from_worker_memory(cluster, binary_split, monkeypatch):
    from dlinear.cluster import Dataset, engine
    local_cluster_, client = cluster
    scale_to(local_cluster_, client, 2)
    data = Dataset.from_arrays(binary_split[0], None, client, n_parts=2)
    size = engine.dataset_bytes(data)
    monkeypatch.setattr(engine, "smallest_worker_memory", lambda c: size)   # copy > half
    assert engine.choose_partitioned(data, Params(solver_type=1))
    assert not engine.choose_partitioned(data, Params(solver_type=1, partition=False))
    assert engine.choose_mode(data, Params(solver_type=5)).mode.name == "L1_MAP_REDUCED"
    _, text = engine.training_mode(data, Params(solver_type=3))
    assert "partitioned" in text
    # no -s named (the CLI's default): the distributed -s 2 instead of partitioned -s 1
    params, text = engine.training_mode(data, Params(), solver_named=False)
    assert params.solver_type == 2 and params.eps == 0.01 and text.startswith("-s 2 ")
    params, text = engine.training_mode(data, Params(solver_type=1))
    assert params.solver_type == 1 and params.partition and "partitioned" in text
    params, _ = engine.training_mode(data, Params(partition=True), solver_named=False)
    assert params.solver_type == 1 and params.partition
    params, _ = engine.training_mode(data, Params(solver_type=3), solver_named=False)
    assert params.solver_type == 3 and params.partition
    monkeypatch.setattr(engine, "smallest_worker_memory", lambda c: 4 * size)
    assert not engine.choose_partitioned(data, Params(solver_type=1))
    params, _ = engine.training_mode(data, Params(), solver_named=False)
    assert params.solver_type == 1 and not params.partition      # fits: the copy path
    assert engine.choose_partitioned(data, Params(solver_type=1, partition=True))
    _, text = engine.training_mode(data, Params(solver_type=1))
    assert "copy of the data per worker" in text


@pytest.mark.slow
@pytest.mark.cluster
@pytest.mark.parametrize("solver", [1, 7, 12])
def test_worker_killed_mid_rounds_still_reaches_the_optimum(tmp_path, monkeypatch, solver):
    """A real worker process dies during the rounds: its parts are read again from their
    lineage onto the survivors (each part once), its rows restart from a feasible alpha,
    w is rebuilt from all dual variables, and the rounds reach -e 1e-5 and the optimum."""
    from tests.support.clusters import start_cluster, stop_cluster, wait_for_workers

    from dlinear.cluster import Dataset, tree
    from dlinear.data.libsvm_reader import read_libsvm, write_libsvm
    problem = make_rcv1_like(6000, n_features=2000, nnz_per_row=30, seed=8)
    if solver == 12:
        problem.y = problem.to_scipy() @ np.random.default_rng(0).normal(size=2000)
    path = tmp_path / "data.train"
    write_libsvm(path, problem)
    # C = 0.1: the rounds to -e 1e-5 are 4-5x fewer than at C = 1 (about 300, 100 and
    # 500 calls of the tree for -s 1, 7, 12)
    params = Params(solver_type=solver, C=0.1, eps=1e-5, max_iter=3000)
    address, procs = start_cluster(tmp_path, n_workers=3)
    try:
        with distributed.Client(address, timeout=30) as c:
            by_name = wait_for_workers(c, 3)
            dataset = Dataset.from_libsvm(path, c, block_bytes=64 << 10)
            real_round = tree.ActorTree.round
            real_recover = tree.ActorTree._recover
            killed, after = [], []

            def round_after_a_kill(self, method, *args, **kwargs):
                # round 30: the dual variables are far from 0 (a tenth to a third of the
                # run)
                if method == "round" and self.n_calls == 30 and not killed:
                    assert len(self.workers) == 3
                    worker = self.workers[-1]
                    name = next(n for n, a in by_name.items() if a == worker)
                    os.killpg(procs[name].pid, signal.SIGKILL)
                    procs[name].wait()
                    killed.append(worker)
                return real_round(self, method, *args, **kwargs)

            def recover_and_look(self):
                real_recover(self)
                parts = [p.key for ps in self.placement.by_worker.values() for p in ps]
                after.append((len(self.actors), sorted(parts), self.call("rows")[0]))

            monkeypatch.setattr(tree.ActorTree, "round", round_after_a_kill)
            monkeypatch.setattr(tree.ActorTree, "_recover", recover_and_look)
            with warnings.catch_warnings():
                warnings.simplefilter("error", ConvergenceWarning)
                model = train(dataset, params, partition=True)
            assert killed and killed[0] not in c.nthreads()
            # one recovery: two actors over every part exactly once, all rows counted once
            assert after == [(2, sorted(p.key for p in dataset.parts), 6000)]
        assert_tight_parity(read_libsvm(path), params, model)
    finally:
        stop_cluster(procs)


@pytest.mark.slow
def test_cli_partition_says_the_mode_and_matches_liblinear(multiclass_split, tmp_path,
                                                           client, capsys):
    """dlinear-train in this process on the session's 2 workers (--scheduler)."""
    from dlinear import load_model
    from dlinear.data.libsvm_reader import write_libsvm
    from tests.support.cli import run_in_process
    train_set, _ = multiclass_split
    write_libsvm(tmp_path / "data.train", train_set)

    def run(*args):
        return run_in_process(capsys, "train", *args)

    on_workers = ("--scheduler", client.scheduler.address)
    r = run(*on_workers, "--partition", "-e", "1e-5", "--max-iter", "3000",
            tmp_path / "data.train", tmp_path / "m.model")
    assert r.returncode == 0, r.stderr
    assert "dlinear: -s 1 partitioned: dual CD on each worker's own rows (2 worker(s), " \
           "rule adaptive)" in r.stderr
    assert "rounds of 2 blocks (adaptive)" in r.stdout
    assert_tight_parity(train_set, Params(eps=1e-5), load_model(tmp_path / "m.model"))
    r = run(*on_workers, "--no-partition", "-q", tmp_path / "data.train",
            tmp_path / "c.model")
    assert r.returncode == 0 and r.stderr == ""
    # --online has no partitioned method: one line naming the solvers that do
    r = run(*on_workers, "--partition", "-s", "3", "--online", tmp_path / "data.train",
            tmp_path / "x.model")
    assert r.returncode == 1 and "-s 1, 3, 4, 7, 12, 13 and 21" in r.stderr
    assert not (tmp_path / "x.model").exists()
    r = run("--partition-rule", "sum", tmp_path / "data.train", tmp_path / "x.model")
    assert r.returncode == 1 and "adaptive, linesearch or cocoa" in r.stderr


@pytest.mark.slow
@pytest.mark.cluster
def test_linear_svc_partition_on_dask_arrays(cluster, binary_split):
    da = pytest.importorskip("dask.array")
    from dlinear.estimators import LinearSVC
    local_cluster_, client = cluster
    scale_to(local_cluster_, client, 2)
    train_set = binary_split[0].subset(np.arange(1000))
    X = train_set.to_scipy().toarray()
    dX = da.from_array(X, chunks=(500, X.shape[1]))
    dy = da.from_array(train_set.y, chunks=500)
    est = LinearSVC(partition=True, fit_intercept=False, tol=1e-5, max_iter=3000).fit(dX, dy)
    _, theirs = liblinear_train(train_set, "-s 1 -e 1e-5")
    w = est.coef_.ravel()
    f = 0.5 * w @ w + np.sum(np.maximum(0, 1 - train_set.y * (X @ w)) ** 2)
    f_ref = primal_objective(train_set, Params(eps=1e-5), theirs)
    assert abs(f - f_ref) <= TIGHT_EPS_TOL[1] * f_ref
    with pytest.raises(ValueError, match="Dask cluster"):
        LinearSVC(partition=True).fit(X, train_set.y)


@pytest.mark.slow
@pytest.mark.cluster
@pytest.mark.parametrize("solver", [7, 12, 13])
def test_logistic_and_svr_partition_on_dask_arrays(cluster, binary_split, regression, capsys,
                                                   solver):
    """partition=True on LogisticRegression (dual, -s 7) and LinearSVR (-s 12, 13): the
    estimators train partitioned on the workers and reach LIBLINEAR's objective."""
    da = pytest.importorskip("dask.array")
    from dlinear.estimators import LinearSVR, LogisticRegression
    local_cluster_, client = cluster
    scale_to(local_cluster_, client, 2)
    train_set = (regression if solver != 7 else binary_split[0]).subset(np.arange(1000))
    X = train_set.to_scipy().toarray()
    dX = da.from_array(X, chunks=(250, X.shape[1]))
    dy = da.from_array(train_set.y, chunks=250)
    common = dict(partition=True, fit_intercept=False, tol=1e-5, max_iter=3000, verbose=1)
    if solver == 7:
        est = LogisticRegression(dual=True, **common)
    else:
        est = LinearSVR(dual=True, loss="squared_epsilon_insensitive" if solver == 12
                        else "epsilon_insensitive", **common)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est.fit(dX, dy)
    # the partitioned driver's closing line (the chunks may all sit on one worker)
    assert re.search(r"#iter = \d+ rounds of [12] blocks", capsys.readouterr().err)
    assert_tight_parity(train_set, Params(solver_type=solver, eps=1e-5),
                        est.liblinear_model())
    with pytest.raises(ValueError, match="Dask cluster"):
        type(est)(**{**est.get_params(), "client": None}).fit(X, train_set.y)


def worker_holdings(actor_keys, dask_worker=None):
    """What one worker holds during partitioned training: {key: bytes} of its data store,
    and for each of the run's actors (`actor_keys`) the bytes of its per-row state (dual
    variables, steps, targets, C, ||x_i||^2), its rows, and whether its parts are the
    stored objects themselves (no copy)."""
    from dask.sizeof import sizeof
    data = {str(key): sizeof(value) for key, value in dask_worker.data.items()}
    stored = [value for value in dask_worker.data.values()]
    actors = []
    for key, actor in dask_worker.state.actors.items():
        if key not in actor_keys:
            continue       # (an earlier test's actor, not yet released)
        state = actor.payload.state
        row_state = sum(a.nbytes for name in ("alpha", "step", "Y", "C")
                        for a in getattr(state, name)) + state.sq_norms.nbytes
        # the kernels read the stored parts' own arrays (by address), not copies
        uncopied = (all(any(part is value for value in stored) for part in state.parts)
                    and all(address == getattr(part, name).ctypes.data
                            for part, addresses in zip(state.parts, state.layout)
                            for address, name in zip(addresses[:3],
                                                     ("indptr", "indices", "data"))))
        actors.append((row_state, state.n_rows, state.k, uncopied))
    return data, actors


@pytest.mark.cluster
def test_each_worker_holds_its_parts_and_per_row_state(cluster):
    """During the rounds each worker's store holds its own parts and nothing of a part's
    size from elsewhere; its actor uses those parts as they are (no copy, no concatenation)
    and adds only its rows' dual state: (4k + 1) floats per row, k classes."""
    from dask.sizeof import sizeof

    from dlinear.cluster import Dataset
    from dlinear.cluster.objective import Placement
    from dlinear.cluster.partitioned_cd import PartitionedBlocks
    local_cluster_, client = cluster
    scale_to(local_cluster_, client, 2)
    problem = make_rcv1_like(4000, n_features=1000, n_classes=3, nnz_per_row=30, seed=3)
    data = Dataset.from_arrays(problem, None, client, n_parts=4)
    params = Params(solver_type=1).resolved()
    label = np.unique(problem.y).astype(np.int64)
    placement = Placement(data)
    mine = {w: {p.key for p in parts} for w, parts in placement.by_worker.items()}
    part_bytes = dict(zip([p.key for p in data.parts],
                          client.gather([client.submit(sizeof, p) for p in data.parts])))
    stored_before = client.run(lambda dask_worker: {str(key) for key in dask_worker.data})
    blocks = PartitionedBlocks(placement, label, np.ones(3), params)
    seen = {}
    real_round = blocks.round

    def round_and_look(*args):
        result = real_round(*args)
        if blocks.n_calls == 3:
            seen.update(client.run(worker_holdings, blocks.tree.actor_keys()))
        return result

    blocks.round = round_and_look
    try:
        P.fit_partitioned_dual_cd(blocks, 3, problem.n_features, params)
    finally:
        blocks.close()
    assert set(seen) == set(mine) and len(mine) == 2
    smallest_part = min(part_bytes.values())
    all_parts = {str(p.key) for p in data.parts}
    for worker, (stored, actors) in seen.items():
        # of this dataset's parts, the worker holds its own and no other
        assert {key for key in stored if key in all_parts} == {str(k) for k in mine[worker]}
        # whatever arrived since the training started (the actor, small arrays; other
        # tests' data may be stored too, from before) is far smaller than a part
        arrived = [size for key, size in stored.items() if key not in stored_before[worker]]
        assert all(size < smallest_part / 10 for size in arrived), stored
        [(row_state, rows, k, uncopied)] = actors
        assert uncopied and k == 3
        assert rows == sum(r for p, r in zip(data.parts, data.rows) if p.key in mine[worker])
        assert row_state == 8 * rows * (4 * k + 1)
        assert row_state < sum(part_bytes[key] for key in mine[worker]) / 2
