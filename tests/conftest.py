"""Shared fixtures: generated data and local Dask clusters; the helpers the test files
share. LIBLINEAR (liblinear-official 2.50), the reference, is reached through
liblinear_oracle.py."""
import contextlib
import functools
import logging
from dataclasses import replace

import numpy as np
import pytest

from dlinear import predict
from dlinear.datasets import make_rcv1_like_split
from dlinear.solver_table import SOLVERS, bind_fits
from dlinear.solvers import partitioned_dual_cd


def pytest_addoption(parser):
    parser.addoption(
        "--solver-eps-scale", type=float, default=None, metavar="FACTOR",
        help="mutation check (tools/mutation_check.py): every dlinear solver "
             "runs at FACTOR times the eps it is asked for; LIBLINEAR is "
             "untouched. The parity tests must then fail.")


def pytest_configure(config):
    factor = config.getoption("--solver-eps-scale")
    if factor:
        scale_solver_eps(factor)


def scale_solver_eps(factor):
    """Wraps dlinear's fit functions (SolverSpec.fit, bound by dlinear.solvers: the one way
    train, the CV and the -C search reach a solver in this process, and the partitioned
    dual CD's driver) so each gets eps x factor."""
    def scaled(fit, params_at):
        @functools.wraps(fit)
        def fit_with_scaled_eps(*args, **kwargs):
            args = list(args)
            args[params_at] = replace(args[params_at], eps=args[params_at].eps * factor)
            return fit(*args, **kwargs)
        return fit_with_scaled_eps

    # fit(task, params); all classes: fit(problem, class_of_row, weighted_C, params, seed)
    bind_fits({s.id: scaled(s.fit, 3 if s.all_classes else 1)
               for s in SOLVERS.values() if s.available})
    # the partitioned dual CD's rounds (in process or on workers, the driver runs here):
    # fit_partitioned_dual_cd(blocks, n_problems, w_size, params, ...)
    partitioned_dual_cd.fit_partitioned_dual_cd = scaled(
        partitioned_dual_cd.fit_partitioned_dual_cd, 3)


def accuracy(model, problem):
    """Percent of the problem's rows the model labels right."""
    return 100.0 * np.mean(predict(model, problem) == problem.y)


def rel_diff(a, b):
    """|a - b| relative to b."""
    return abs(a - b) / abs(b)


def jaccard(a, b):
    """Jaccard index of the non-zero patterns of two weight arrays (1 if both are all 0)."""
    nz_a, nz_b = a != 0, b != 0
    union = np.count_nonzero(nz_a | nz_b)
    return 1.0 if union == 0 else np.count_nonzero(nz_a & nz_b) / union


@contextlib.contextmanager
def local_cluster(n_workers=2):
    """(cluster, client) of a local Dask cluster of single-threaded worker processes."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1,
                                       processes=True, dashboard_address=None,
                                       silence_logs=logging.CRITICAL)
    try:
        with distributed.Client(cluster) as client:
            yield cluster, client
    finally:
        cluster.close()


@pytest.fixture(scope="module")
def client():
    """A client of a 2-worker local cluster, one per test module."""
    with local_cluster(2) as (_, c):
        yield c


@pytest.fixture(scope="session")
def binary_split():
    return make_rcv1_like_split(3000, 1500, n_features=2000, nnz_per_row=30, seed=11)


@pytest.fixture(scope="session")
def multiclass_split():
    return make_rcv1_like_split(3000, 1500, n_features=2000, n_classes=4, nnz_per_row=30,
                                seed=12)


@contextlib.contextmanager
def dask_processes(directory, n_workers=2, extra_env=None):
    """The address of a `dask scheduler` and n_workers `dask worker --nthreads 1` processes
    on 127.0.0.1, each its own process (extra_env: variables only they see), logs in
    directory."""
    import json
    import os
    import subprocess
    import sys
    import time
    from pathlib import Path

    directory = Path(directory)
    env = dict(os.environ, **(extra_env or {}))
    env.pop("DLINEAR_SCHEDULER", None)
    scheduler_file = directory / "scheduler.json"
    processes = []

    def start(args, log_name):
        with open(directory / log_name, "w") as log:
            processes.append(subprocess.Popen([sys.executable, "-m", "dask", *args], stdout=log,
                                              stderr=subprocess.STDOUT, env=env, cwd=directory))

    try:
        start(["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
               "--scheduler-file", str(scheduler_file)], "scheduler.log")
        deadline = time.monotonic() + 40
        while not scheduler_file.exists() or not scheduler_file.read_text().strip():
            assert processes[0].poll() is None, (directory / "scheduler.log").read_text()
            assert time.monotonic() < deadline, "the scheduler did not start"
            time.sleep(0.1)
        time.sleep(0.1)      # the file is written in one go, but be sure it is complete
        address = json.loads(scheduler_file.read_text())["address"]
        for i in range(n_workers):
            start(["worker", "--scheduler-file", str(scheduler_file), "--nthreads", "1",
                   "--no-nanny", "--host", "127.0.0.1", "--no-dashboard",
                   "--local-directory", str(directory)], f"worker{i}.log")
        from distributed import Client
        with Client(address, timeout="30s") as client:
            client.wait_for_workers(n_workers, timeout=40)
        yield address
    finally:
        for group in (processes[1:], processes[:1]):      # workers first
            for p in group:
                if p.poll() is None:
                    p.terminate()
            for p in group:
                try:
                    p.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()


def warm_and_cold_fold_paths(data, params, monkeypatch, held=600):
    """The -C path of one fold (the first `held` rows of a fixed permutation held out)
    for a dual solver, each C warm-started from the previous C's alpha, and the same path
    with every C started cold: (Cs, warm, cold, perm). The cold start stays patched in
    for the rest of the test."""
    import dlinear.model_selection as ms
    Cs = ms.c_grid(ms.calc_start_C(data, params), 64.0)
    perm = np.random.default_rng(0).permutation(data.n_samples)
    warm = ms.run_fold_path(data, perm, 0, held, params, Cs, ms.PathRequest(0, 0))
    # the previous C's w, which a dual solver does not read: each C starts from alpha = 0
    monkeypatch.setitem(SOLVERS, params.solver_type, replace(params.spec, search="primal"))
    cold = ms.run_fold_path(data, perm, 0, held, params, Cs, ms.PathRequest(0, 0))
    return Cs, warm, cold, perm
