"""Partitioned one-class SVM (-s 21): K blocks simulated in one process and one actor per
Dask worker reach LIBLINEAR's objective and rho; sum(alpha) stays nu l exactly through
the shifts between blocks; a worker too small for a copy trains it partitioned with no
mode option."""
import logging
import warnings

import numpy as np
import pytest

from dlinear import ConvergenceWarning, Params, predict, train
from dlinear.in_process.simulated import train_partitioned_in_process
from dlinear.solvers import partitioned_oneclass as POC
from dlinear.solvers.oneclass import oneclass_objectives
from tests.support.liblinear_oracle import liblinear_train

# Measured on binary_split's rows, K = 1, 2, 3, 5: at -e 1e-5 the dual within 2e-14 and
# rho within 8e-9 (relative) of the in-process -s 21 at -e 1e-5; at the default -e 0.01
# within 2e-8 and 8e-6.
TIGHT_OBJECTIVE_TOL = 1e-10
TIGHT_RHO_TOL = 1e-7
DEFAULT_OBJECTIVE_TOL = 1e-6
DEFAULT_RHO_TOL = 1e-4
AGREEMENT = 0.995          # share of test rows predicted as liblinear-official predicts


def objective_and_rho(problem, model, nu=0.5):
    return oneclass_objectives(problem, model, nu)[0], model.rho


def assert_near(problem, model, theirs, objective_tol, rho_tol):
    f, rho = objective_and_rho(problem, model)
    f_ref, rho_ref = objective_and_rho(problem, theirs)
    assert abs(f - f_ref) <= objective_tol * abs(f_ref), (f, f_ref)
    assert abs(rho - rho_ref) <= rho_tol * abs(rho_ref), (rho, rho_ref)


@pytest.mark.slow
@pytest.mark.parametrize("rule", ["adaptive", "cocoa"])
@pytest.mark.parametrize("n_blocks", [1, 2, 3])
def test_simulated_blocks_reach_liblinear(binary_split, rule, n_blocks):
    train_set, test_set = binary_split
    tight = Params(solver_type=21, eps=1e-5, max_iter=3000)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = train_partitioned_in_process(train_set, tight, n_blocks, rule=rule)
    _, theirs = liblinear_train(train_set, "-s 21 -e 1e-5")
    assert_near(train_set, model, theirs, TIGHT_OBJECTIVE_TOL, TIGHT_RHO_TOL)
    model = train_partitioned_in_process(train_set, Params(solver_type=21, max_iter=3000),
                                         n_blocks, rule=rule)
    _, theirs = liblinear_train(train_set, "-s 21")
    assert_near(train_set, model, theirs, DEFAULT_OBJECTIVE_TOL, DEFAULT_RHO_TOL)
    assert np.mean(predict(model, test_set) == predict(theirs, test_set)) >= AGREEMENT


def test_shifts_between_blocks_keep_the_sum_exact(binary_split):
    """Every round's trial alpha (whatever eta the driver takes) stays in its box with
    sum nu l: the blocks' shares move only by the shifts, +t on one and -t on another."""
    train_set, _ = binary_split
    rows = [train_set.subset(np.arange(s, s + 500)) for s in (0, 500, 1000)]
    blocks = [POC.OneClassBlock([r], np.ones(500), 1.0, train_set.n_features, b)
              for b, r in enumerate(rows)]
    seen = []

    class Recording(POC.SimulatedOneClassBlocks):
        def call(self, method, *args):
            result = super().call(method, *args)
            if method == "round":
                seen.append((sum(b.trial.sum() for b in self.blocks),
                             min(b.trial.min() for b in self.blocks),
                             max(b.trial.max() for b in self.blocks), any(args[1])))
            return result

    result = POC.fit_partitioned_oneclass(Recording(blocks), train_set.n_features + 1,
                                          Params(solver_type=21, eps=1e-3, max_iter=3000))
    assert not result.hit_max_iter
    sums, lows, highs, shifted = map(np.array, zip(*seen))
    assert np.allclose(sums, 0.5 * 1500, rtol=0, atol=1e-9)
    assert lows.min() >= 0.0 and highs.max() <= 1.0
    assert shifted.sum() > 0             # mass did move between blocks
    assert abs(sum(b.alpha.sum() for b in blocks) - 750.0) <= 1e-9


def test_a_lost_block_restarts_the_rounds_from_liblinears_start(binary_split):
    """A block rebuilt with alpha = 0 (its worker lost) breaks the sum: the driver starts
    again from LIBLINEAR's start and still reaches the in-process optimum."""
    train_set, _ = binary_split
    rows = [train_set.subset(np.arange(s, s + 1000)) for s in (0, 1000, 2000)]
    blocks = [POC.OneClassBlock([r], np.ones(1000), -1.0, train_set.n_features, b)
              for b, r in enumerate(rows)]
    params = Params(solver_type=21, eps=1e-5, max_iter=3000)

    class LosingOne(POC.SimulatedOneClassBlocks):
        rounds = 0
        restarted = False

        def call(self, method, *args):
            result = super().call(method, *args)
            if method == "round":
                self.rounds += 1
                if self.rounds == 20:
                    self.blocks[1] = POC.OneClassBlock([rows[1]], np.ones(1000), -1.0,
                                                       train_set.n_features, 1)
                    self.restarted = True
            return result

    losing = LosingOne(blocks)
    result = POC.fit_partitioned_oneclass(losing, train_set.n_features, params)
    assert losing.rounds > 20 and not losing.restarted and not result.hit_max_iter
    assert abs(sum(b.alpha.sum() for b in losing.blocks) - 1500.0) <= 1e-9
    local = train(train_set, params)
    assert abs(result.rho - local.rho) <= TIGHT_RHO_TOL * abs(local.rho)
    w = result.w
    assert abs(0.5 * w @ w - oneclass_objectives(train_set, local, 0.5)[0]) <= \
        TIGHT_OBJECTIVE_TOL * 0.5 * (w @ w)


# ------------------------------------------------------------------ on Dask workers
distributed = pytest.importorskip("distributed")


@pytest.mark.slow
@pytest.mark.cluster
def test_partitioned_on_workers_reaches_liblinear(client, binary_split):
    from dlinear.cluster import Dataset
    train_set, test_set = binary_split
    data = Dataset.from_arrays(train_set, None, client, n_parts=4)
    tight = Params(solver_type=21, eps=1e-5, max_iter=3000)
    lines = []
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = train(data, tight, partition=True, log=lines.append)
    assert model.fit_stats["mode"] == "partitioned"
    assert any("rounds of 2 blocks (adaptive)" in line for line in lines)
    _, theirs = liblinear_train(train_set, "-s 21 -e 1e-5")
    assert_near(train_set, model, theirs, TIGHT_OBJECTIVE_TOL, TIGHT_RHO_TOL)
    model = train(data, Params(solver_type=21, max_iter=3000), partition=True)
    _, theirs = liblinear_train(train_set, "-s 21")
    assert_near(train_set, model, theirs, DEFAULT_OBJECTIVE_TOL, DEFAULT_RHO_TOL)
    assert np.mean(predict(model, test_set) == predict(theirs, test_set)) >= AGREEMENT


@pytest.mark.slow
@pytest.mark.cluster
def test_workers_too_small_for_a_copy_train_it_partitioned(tmp_path, capsys):
    import dask
    from distributed import Client, LocalCluster

    import dlinear
    from dlinear.cli.train_predict import train_main
    from dlinear.datasets.rcv1_like import make_rcv1_like
    from tests.support.clusters import SMALL_WORKER_LIMIT, SPILL_ONLY
    data = make_rcv1_like(4000, n_features=1500, nnz_per_row=25, seed=45)
    train_file = tmp_path / "train.svm"
    dlinear.write_libsvm(train_file, data)
    with dask.config.set(SPILL_ONLY), \
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                         memory_limit=SMALL_WORKER_LIMIT, dashboard_address=":0",
                         silence_logs=logging.CRITICAL) as cluster, Client(cluster):
        capsys.readouterr()
        assert train_main(["-s", "21", "-e", "1e-5", "--max-iter", "3000", "--scheduler",
                           cluster.scheduler.address, str(train_file),
                           str(tmp_path / "m")]) == 0
    err = capsys.readouterr().err
    assert ("dlinear: -s 21 partitioned: one-class dual CD on each worker's own rows, each "
            "keeping its share of sum(alpha)") in err
    _, theirs = liblinear_train(data, "-s 21 -e 1e-5")
    assert_near(data, dlinear.load_model(tmp_path / "m"), theirs, TIGHT_OBJECTIVE_TOL,
                TIGHT_RHO_TOL)


def test_a_warm_start_is_refused_in_one_line():
    """The partitioned -s 4 and -s 21 start from LIBLINEAR's start only: a warm start
    (-i) is an error naming the solver, not silently dropped."""
    from dlinear.errors import DlinearError
    from dlinear.solvers.partitioned_crammer_singer import fit_partitioned_crammer_singer
    for solver, fit in ((4, lambda p: fit_partitioned_crammer_singer(None, 3, 5, p)),
                        (21, lambda p: POC.fit_partitioned_oneclass(None, 5, p))):
        params = Params(solver_type=solver, init_sol=np.zeros((5, 3 if solver == 4 else 1)))
        with pytest.raises(DlinearError, match=f"-s {solver} on partitioned rows .* no warm"):
            fit(params)
