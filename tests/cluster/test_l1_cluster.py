"""-s 5 and -s 6 (and --l1-ratio) on partitioned rows: OWL-QN on the client, each
evaluation one round of the loss and gradient over the workers' parts
(dlinear.solvers.owlqn, cluster/objective.py). The in-process optimum and LIBLINEAR's at
-e 1e-4, rounds that carry each worker's occurring columns only, the chooser's pick on
workers that cannot hold a copy, and the one-line refusal of a solver with no method on
partitioned rows."""
import logging
from dataclasses import replace

import dask
import numpy as np
import pytest

import dlinear
from dlinear import DlinearError, Params, train
from dlinear.cluster import Dataset
from dlinear.cluster.engine import train_on_cluster
from dlinear.cluster.objective import TreeLossTerm
from dlinear.cluster.session import worker_addresses
from dlinear.datasets.click_like import make_click_like
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.solvers import owlqn
from dlinear.solvers.primal_objective_values import primal_objective
from tests.cluster.test_wide_columns import wide_problem
from tests.support.clusters import SMALL_WORKER_LIMIT as LIMIT, SPILL_ONLY
from tests.support.liblinear_oracle import assert_near_optimum, f_star
from tests.support.problems import same_bits

distributed = pytest.importorskip("distributed")

# the goal: within 1e-3 of the in-process optimum at -e 1e-4. Against
# liblinear-official's optimum the gaps measured at -e 1e-4 are 1.3e-8 to 2.2e-7, at
# -e 1e-3 (the 10x-loose mutation) 1.8e-6 to 2.8e-5: PARITY_TOL lies between
EPS = 1e-4
TOL = 1e-3
PARITY_TOL = 1e-6
SUPPORT_TOL = 1e-6      # support-only rounds against all-full ones, both at -e 1e-4


@pytest.fixture(scope="module")
def problems():
    return {"binary": make_rcv1_like(1200, n_features=800, nnz_per_row=20, seed=41),
            "three": make_rcv1_like(900, n_features=600, n_classes=3, nnz_per_row=15,
                                    seed=42)}


CASES = [  # (data, solver, extra params)
    ("binary", 5, {}),
    ("binary", 6, {}),
    ("binary", 6, {"regularize_bias": False}),
    ("binary", 6, {"l1_ratio": 0.5}),
    ("three", 5, {"regularize_bias": False}),
    ("three", 6, {}),
]


@pytest.mark.slow
@pytest.mark.cluster
@pytest.mark.parametrize("name,solver,extra", CASES)
def test_owlqn_on_two_workers_reaches_the_in_process_optimum(client, problems, name,
                                                               solver, extra):
    problem = problems[name]
    data = Dataset.from_arrays(problem, None, client, n_parts=4)
    holders = {w for ws in client.who_has(data.parts).values() for w in ws}
    assert len(holders) == 2                    # the rows really are spread out
    params = Params(solver_type=solver, eps=EPS, bias=1.0, C=2.0, **extra)
    spread = train(data, replace(params, partition=True))
    assert spread.fit_stats["method"] == "owlqn" and spread.fit_stats["workers"] == 2
    local = train(problem, params)
    f_spread = primal_objective(problem, params, spread)
    f_local = primal_objective(problem, params, local)
    assert abs(f_spread - f_local) <= TOL * abs(f_local), (f_spread, f_local)
    if "l1_ratio" not in extra:                 # LIBLINEAR has no elastic net
        assert_near_optimum(f_spread, f_star(problem, params), PARITY_TOL)
    # sparse, as the in-process model: the same weights are zero but for a few
    zero_spread, zero_local = spread.w == 0, local.w == 0
    assert zero_local.sum() > 0.3 * zero_local.size
    assert (zero_spread != zero_local).mean() < 0.02


@pytest.mark.cluster
def test_a_round_carries_each_workers_occurring_columns(client):
    """Wide data (most columns never occur): the fit runs on the occurring columns, each
    round at most 2 x 8 bytes a worker's own column (w down, the gradient up), and the
    model is that of the fit on all columns, bit for bit."""
    problem = wide_problem(l=600, n=6000, used=900, seed=5)
    data = Dataset.from_arrays(problem, None, client, n_parts=4)
    params = Params(solver_type=6, C=2.0, bias=1.0, eps=1e-3, partition=True)
    compacted = train_on_cluster(data, params.resolved())
    full = train_on_cluster(data, params.resolved(), compact=False)
    stats, m = compacted.fit_stats, len(np.unique(problem.indices))
    assert stats["occurring_columns"] == m and "occurring_columns" not in full.fit_stats
    per_round = (stats["bytes_to_workers"] + stats["bytes_from_workers"]) / stats["rounds"]
    assert per_round <= 2 * 2 * 8 * (m + 1)          # 2 workers, each its own columns
    assert per_round < (full.fit_stats["bytes_to_workers"]
                        + full.fit_stats["bytes_from_workers"]) / full.fit_stats["rounds"] / 3
    # OWL-QN walks no columns, and its reductions add in index order: the same steps
    assert same_bits(compacted.w, full.w)


@pytest.mark.cluster
@pytest.mark.parametrize("solver,extra", [(6, {}), (5, {"regularize_bias": False})])
def test_once_the_support_settles_rounds_carry_its_coordinates_only(client, monkeypatch,
                                                                    solver, extra):
    """Hashed rows over n = 2^24 columns: once the orthant settles, a round carries w's
    nonzeros only, at most 2 x 8 bytes each per worker (w down, the gradient up; the
    loss is a scalar), and the model is the one all-full rounds reach."""
    problem = make_click_like(1000, hash_bits=24)
    assert problem.n_features == 2**24
    data = Dataset.from_arrays(problem, None, client, n_parts=4)
    params = Params(solver_type=solver, C=0.5, bias=1.0, eps=EPS, partition=True,
                    **extra).resolved()
    carried = []     # per support-only round: (coordinates, the most bytes of one worker)
    on_support = TreeLossTerm.loss_gradient_on_support

    def counted(term, w_support):
        result = on_support(term, w_support)
        carried.append((len(w_support), max(term.tree.round_bytes_each)))
        return result

    monkeypatch.setattr(TreeLossTerm, "loss_gradient_on_support", counted)
    model = train_on_cluster(data, params)
    stats = model.fit_stats
    assert stats["support_rounds"] == len(carried) > 0
    assert all(worst <= 2 * 8 * n for n, worst in carried)
    assert stats["support_bytes"] <= 2 * 2 * 8 * sum(n for n, _ in carried)   # 2 workers
    # the last support carried is the model's nonzeros (and, with -R, the bias)
    assert carried[-1][0] == np.count_nonzero(model.w) + (model.w[-1] == 0) * (not
                                                         params.regularize_bias)
    full_round = (stats["bytes_to_workers"] + stats["bytes_from_workers"]
                  - stats["support_bytes"]) / (stats["rounds"] - stats["support_rounds"])
    assert stats["support_bytes"] / stats["support_rounds"] < full_round / 10

    monkeypatch.setattr(owlqn, "SUPPORT_SETTLED", 10**9)       # every round full
    full = train_on_cluster(data, params)
    assert full.fit_stats["support_rounds"] == 0
    f, f_full = (primal_objective(problem, params, m) for m in (model, full))
    assert abs(f - f_full) <= SUPPORT_TOL * f_full, (f, f_full)
    assert ((model.w != 0) != (full.w != 0)).sum() <= 0.02 * np.count_nonzero(full.w)


# small_workers: no copy of the data below fits in one (LIMIT); the parts spill instead


@pytest.fixture(scope="module")
def small_workers():
    from distributed import Client, LocalCluster
    with dask.config.set(SPILL_ONLY), \
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                         memory_limit=LIMIT, dashboard_address=":0",
                         silence_logs=logging.CRITICAL) as cluster, \
            Client(cluster) as client:
        yield client


@pytest.fixture(scope="module")
def over_a_worker():
    """A set whose CSR (~1.3 MiB) is more than half a worker's LIMIT."""
    return make_rcv1_like(4000, n_features=1500, nnz_per_row=25, seed=43)


@pytest.mark.slow
@pytest.mark.cluster
def test_l1_over_a_worker_trains_map_reduced_with_no_mode_option(small_workers,
                                                                  over_a_worker):
    data = Dataset.from_arrays(over_a_worker, None, small_workers, n_parts=4)
    params = Params(solver_type=6, eps=EPS)
    model = dlinear.train(data, params, client=small_workers)
    assert model.fit_stats["method"] == "owlqn"
    f = primal_objective(over_a_worker, params, model)
    assert_near_optimum(f, f_star(over_a_worker, params), TOL)


@pytest.mark.cluster
@pytest.mark.parametrize("options, name", [(dict(solver_type=3, online=True), "-s 3 --online"),
                                           (dict(solver_type=1, cd_block=2), "-s 1 --cd-block 2")])
def test_a_solver_with_no_partitioned_method_refuses_in_one_line(small_workers,
                                                                 over_a_worker, options, name):
    data = Dataset.from_arrays(over_a_worker, None, small_workers, n_parts=4)
    workers = worker_addresses(small_workers)
    with pytest.raises(DlinearError) as error:
        dlinear.train(data, Params(**options), client=small_workers)
    message = str(error.value)
    assert "\n" not in message and message.startswith(f"{name} needs a copy")
    assert "memory limit (2.0 MiB)" in message
    # said before anything was sent: the same workers, none restarted
    assert worker_addresses(small_workers) == workers


@pytest.mark.slow
@pytest.mark.cluster
def test_the_command_line_says_how_it_trains_or_why_it_cannot(small_workers, over_a_worker,
                                                              tmp_path, capsys):
    """dlinear-train on workers too small for a copy: -s 3 --online ends in one line and exit 1,
    no model file; --primal-cd trains -s 2 by map-reduced Newton and says so; -s 5 by
    OWL-QN."""
    from dlinear.cli.train_predict import train_main
    train_file = tmp_path / "train.svm"
    dlinear.write_libsvm(train_file, over_a_worker)
    address = ["--scheduler", small_workers.scheduler.address]
    capsys.readouterr()
    assert train_main(["-s", "3", "--online", *address, str(train_file),
                       str(tmp_path / "m4")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    # the cluster's line, then the error's: no traceback, no KilledWorker
    assert err[0].startswith("dlinear: using the Dask cluster") and len(err) == 2, err
    assert err[1].startswith("ERROR: -s 3 --online needs a copy of the data on one worker"), err
    assert not (tmp_path / "m4").exists()
    assert train_main(["-s", "2", "--primal-cd", *address, str(train_file),
                       str(tmp_path / "m2")]) == 0
    err = capsys.readouterr().err
    assert "dlinear: -s 2 --primal-cd walks columns" in err and "by Newton map-reduced" in err
    assert (tmp_path / "m2").exists()
    assert train_main(["-s", "5", "-q", *address, str(train_file), str(tmp_path / "m5")]) == 0
    model = dlinear.load_model(tmp_path / "m5")
    f = primal_objective(over_a_worker, Params(solver_type=5), model)
    assert_near_optimum(f, f_star(over_a_worker, Params(solver_type=5)), TOL * 10)
