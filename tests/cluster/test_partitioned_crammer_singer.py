"""Partitioned Crammer-Singer (-s 4): K blocks simulated in one process and one actor per
Dask worker reach LIBLINEAR's objective and predictions; a worker too small for a copy
trains it partitioned with no mode option; rebuilt actors keep the rows' dual variables."""
import logging
import warnings

import numpy as np
import pytest

from dlinear import ConvergenceWarning, Params, predict, train
from dlinear.in_process.simulated import train_partitioned_in_process
from dlinear.solvers.primal_objective_values import primal_objective
from tests.support.liblinear_oracle import f_star, liblinear_train

# At -e 1e-5 against liblinear-official at -e 1e-5: measured up to 2.2e-6 (K = 1, 2, 3,
# each rule) on the 3000 rows, 4.2e-6 on their first 1000 (2 workers, the estimator
# test). At the default -e 0.1 LIBLINEAR's -s 4 rule is loose: liblinear-official
# stops 1.04% above the optimum f*, the partitioned runs 1.3% (K = 1) to 2.6% (K = 2,
# cocoa), so those are held against f*.
TIGHT_TOL = 6e-6
DEFAULT_EPS_TOL = 3e-2
ACCURACY_POINTS = 0.5      # test-set accuracy against liblinear-official's, in points


def relative_to(problem, params, model, f_ref):
    return (primal_objective(problem, params, model) - f_ref) / abs(f_ref)


def accuracy(model, problem):
    return 100.0 * float(np.mean(predict(model, problem) == problem.y))


@pytest.mark.slow
@pytest.mark.parametrize("rule", ["adaptive", "cocoa"])
@pytest.mark.parametrize("n_blocks", [1, 2, 3])
def test_simulated_blocks_reach_liblinear(multiclass_split, rule, n_blocks):
    train_set, test_set = multiclass_split
    _, theirs = liblinear_train(train_set, "-s 4 -e 1e-5")
    tight = Params(solver_type=4, eps=1e-5, max_iter=3000)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = train_partitioned_in_process(train_set, tight, n_blocks, rule=rule)
    f_theirs = primal_objective(train_set, tight, theirs)
    assert abs(relative_to(train_set, tight, model, f_theirs)) <= TIGHT_TOL
    default = Params(solver_type=4)
    model = train_partitioned_in_process(train_set, default, n_blocks, rule=rule)
    gap = relative_to(train_set, default, model, f_star(train_set, default))
    assert 0 <= gap <= DEFAULT_EPS_TOL, gap
    _, theirs = liblinear_train(train_set, "-s 4")
    assert abs(accuracy(model, test_set) - accuracy(theirs, test_set)) <= ACCURACY_POINTS


def test_one_round_moves_every_class_and_keeps_each_row_feasible(multiclass_split):
    """A block's step keeps sum_m alpha_i^m = 0 and alpha_i^m <= C_i^m on every row, and
    its dW is sum_i d_i x_i^T."""
    from dlinear.planning.class_plan import first_appearance, group_rows
    from dlinear.solvers.partitioned_crammer_singer import CrammerSingerBlock
    train_set, _ = multiclass_split
    rows = train_set.subset(np.arange(1000))
    label = first_appearance(train_set.y)
    y = group_rows(label, rows.y)
    C = np.full(rows.n_samples, 2.0)
    block = CrammerSingerBlock([rows], y, C, len(label), 1.0, rows.n_features, 7)
    W = np.zeros((len(label), rows.n_features + 1))
    dW, stats = block.round(W, np.arange(len(label)), np.zeros(len(label)),
                            np.full(len(label), 2.0), 2)
    d = block.trial - block.alpha
    assert np.allclose(block.trial.sum(axis=1), 0.0, atol=1e-12)
    bound = np.zeros_like(block.trial)
    bound[np.arange(rows.n_samples), y] = C
    assert (block.trial <= bound + 1e-15).all()
    assert (np.abs(dW).sum(axis=1) > 0).all()
    block.apply(1.0)
    assert np.allclose(block.w_of_alpha(), dW, atol=1e-10)
    assert stats[0, 0] > 0          # LIBLINEAR's S_i at alpha = 0: violated
    assert np.abs(d).sum() > 0


def test_a_rebuilt_block_takes_over_the_parts_it_shares(multiclass_split):
    from dlinear.cluster.partitioned_cd import CrammerSingerPayload
    from dlinear.cluster.tree import Share
    from dlinear.planning.class_plan import first_appearance, weighted_class_C
    train_set, _ = multiclass_split
    parts = [train_set.subset(np.arange(s, s + 100)) for s in (0, 100, 200)]
    label = first_appearance(train_set.y)
    params = Params(solver_type=4)
    C = weighted_class_C(label, params, lambda line: None)
    old = CrammerSingerPayload(Share(0, parts[:2], ["a", "b"], train_set.n_features),
                               label, C, params)
    old.state.alpha[:] = np.arange(old.state.alpha.size).reshape(old.state.alpha.shape)
    new = CrammerSingerPayload(Share(0, [parts[1], parts[2]], ["b", "c"],
                                     train_set.n_features), label, C, params)
    new.take_over(old)
    assert np.array_equal(new.state.alpha[:100], old.state.alpha[100:200])
    assert not new.state.alpha[100:].any()         # a rebuilt part restarts at 0
    assert np.array_equal(new.state.trial, new.state.alpha)


# ------------------------------------------------------------------ on Dask workers
distributed = pytest.importorskip("distributed")


@pytest.mark.slow
@pytest.mark.cluster
def test_partitioned_on_workers_reaches_liblinear(client, multiclass_split):
    from dlinear.cluster import Dataset
    train_set, test_set = multiclass_split
    data = Dataset.from_arrays(train_set, None, client, n_parts=4)
    tight = Params(solver_type=4, eps=1e-5, max_iter=3000)
    lines = []
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = train(data, tight, partition=True, log=lines.append)
    assert model.fit_stats["mode"] == "partitioned"
    assert any("rounds of 2 blocks (adaptive)" in line for line in lines)
    _, theirs = liblinear_train(train_set, "-s 4 -e 1e-5")
    f_theirs = primal_objective(train_set, tight, theirs)
    assert abs(relative_to(train_set, tight, model, f_theirs)) <= TIGHT_TOL
    default = Params(solver_type=4)
    model = train(data, default, partition=True)
    _, theirs = liblinear_train(train_set, "-s 4")
    assert abs(accuracy(model, test_set) - accuracy(theirs, test_set)) <= ACCURACY_POINTS
    gap = relative_to(train_set, default, model, f_star(train_set, default))
    assert 0 <= gap <= DEFAULT_EPS_TOL, gap


@pytest.mark.slow
@pytest.mark.cluster
def test_workers_too_small_for_a_copy_train_it_partitioned(tmp_path, capsys):
    """dlinear-train -s 4 with no mode option on workers whose memory limit no copy fits:
    one stderr line says the method, the model is LIBLINEAR's to the tolerance."""
    import dask
    from distributed import Client, LocalCluster

    import dlinear
    from dlinear.cli.train_predict import train_main
    from dlinear.datasets.rcv1_like import make_rcv1_like
    from tests.support.clusters import SMALL_WORKER_LIMIT, SPILL_ONLY
    data = make_rcv1_like(4000, n_features=1500, nnz_per_row=25, n_classes=3, seed=44)
    train_file = tmp_path / "train.svm"
    dlinear.write_libsvm(train_file, data)
    with dask.config.set(SPILL_ONLY), \
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                         memory_limit=SMALL_WORKER_LIMIT, dashboard_address=":0",
                         silence_logs=logging.CRITICAL) as cluster, Client(cluster):
        capsys.readouterr()
        assert train_main(["-s", "4", "-e", "1e-5", "--scheduler", cluster.scheduler.address,
                           str(train_file), str(tmp_path / "m")]) == 0
    err = capsys.readouterr().err
    assert ("dlinear: -s 4 partitioned: Crammer-Singer's sequential dual CD on each "
            "worker's own rows, their k-column steps of W combined (2 worker(s), rule "
            "adaptive)") in err
    params = Params(solver_type=4, eps=1e-5)
    _, theirs = liblinear_train(data, "-s 4 -e 1e-5")
    f_theirs = primal_objective(data, params, theirs)
    model = dlinear.load_model(tmp_path / "m")
    assert abs(relative_to(data, params, model, f_theirs)) <= TIGHT_TOL


@pytest.mark.slow
@pytest.mark.cluster
def test_linear_svc_crammer_singer_partition_on_dask_arrays(client, multiclass_split):
    da = pytest.importorskip("dask.array")
    from dlinear.estimators import LinearSVC
    train_set, test_set = multiclass_split
    train_set = train_set.subset(np.arange(1000))
    X = train_set.to_scipy().toarray()
    dX = da.from_array(X, chunks=(500, X.shape[1]))
    dy = da.from_array(train_set.y, chunks=500)
    est = LinearSVC(multi_class="crammer_singer", partition=True, fit_intercept=False,
                    tol=1e-5, max_iter=3000).fit(dX, dy)
    _, theirs = liblinear_train(train_set, "-s 4 -e 1e-5")
    params = Params(solver_type=4, eps=1e-5)
    f_theirs = primal_objective(train_set, params, theirs)
    W = est.coef_.T                          # (features, classes) in est.classes_ order
    Z = X @ W
    rows = np.arange(train_set.n_samples)
    y = np.searchsorted(est.classes_, train_set.y)
    margins = 1.0 + Z - Z[rows, y][:, None]
    margins[rows, y] = 0.0
    f = 0.5 * (W * W).sum() + margins.max(axis=1).sum()
    assert abs(f - f_theirs) <= TIGHT_TOL * abs(f_theirs)


@pytest.mark.slow
@pytest.mark.cluster
def test_only_k_column_steps_and_n_vectors_reach_the_workers(client):
    """Per round each worker receives W (k x n) and a few k-vectors (-s 4), or w and
    scalars (-s 21): never a part; the parts stay where they were."""
    from dlinear.cluster import Dataset
    from dlinear.cluster.objective import Placement
    from dlinear.cluster.partitioned_cd import (CrammerSingerPayload, OneClassBlocks,
                                                PartitionedBlocks)
    from dlinear.datasets.rcv1_like import make_rcv1_like
    from dlinear.solvers.partitioned_crammer_singer import fit_partitioned_crammer_singer
    from dlinear.solvers.partitioned_oneclass import fit_partitioned_oneclass
    problem = make_rcv1_like(4000, n_features=1000, n_classes=3, nnz_per_row=30, seed=3)
    data = Dataset.from_arrays(problem, None, client, n_parts=4)
    before = client.who_has(data.parts)
    vector = 8 * problem.n_features
    part_bytes = problem.nnz * 12 // 4
    label = np.unique(problem.y).astype(np.int64)
    params = Params(solver_type=4).resolved()
    blocks = PartitionedBlocks(Placement(data), label, np.ones(3), params,
                               payload=CrammerSingerPayload)
    try:
        result = fit_partitioned_crammer_singer(blocks, 3, problem.n_features, params)
        received, _, _ = blocks.stats()
        assert blocks.n_calls == result.n_iter and len(blocks.actors) == 2
        # per round and actor: W (k x n), and k class ids, step sizes, sigma', the binary
        # duals' unused inner tolerances and (k x 2) bounds
        per_round = 3 * vector + 6 * 3 * 8
        assert 2 * 3 * vector <= received <= 2 * result.n_iter * per_round
        assert per_round < part_bytes / 10
    finally:
        blocks.close()
    params = Params(solver_type=21).resolved()
    blocks = OneClassBlocks(Placement(data), params)
    try:
        result = fit_partitioned_oneclass(blocks, problem.n_features, params)
        received, _, _ = blocks.stats()
        # the rounds, and the sizes, the start and rho's statistics
        assert blocks.n_calls == result.n_iter + 3
        assert 2 * vector <= received <= 2 * (result.n_iter + 1) * vector
    finally:
        blocks.close()
    assert client.who_has(data.parts) == before
