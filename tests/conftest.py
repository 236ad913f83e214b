"""Shared fixtures: generated data and local Dask clusters; the helpers the test files
share. LIBLINEAR (liblinear-official 2.50), the reference, is reached through
liblinear_oracle.py."""
import contextlib
import logging

import numpy as np
import pytest

from dlinear import predict
from dlinear.datasets import make_rcv1_like_split


def pytest_addoption(parser):
    parser.addoption(
        "--solver-eps-scale", type=float, default=None, metavar="FACTOR",
        help="mutation check (scripts/mutation_check.py): every dlinear solver "
             "runs at FACTOR times the eps it is asked for; LIBLINEAR is "
             "untouched. The parity tests must then fail.")


def pytest_configure(config):
    factor = config.getoption("--solver-eps-scale")
    if factor:
        scale_solver_eps(factor)


def scale_solver_eps(factor):
    """Wraps dlinear's fit functions (dlinear.solvers.FIT_ONE_TASK and FIT_ALL_CLASSES, the
    one way train, the CV and the -C search reach a solver in this process) so each gets
    eps x factor."""
    from dataclasses import replace

    from dlinear import solvers

    def scaled(fit, params_at):
        def fit_with_scaled_eps(*args):
            args = list(args)
            args[params_at] = replace(args[params_at], eps=args[params_at].eps * factor)
            return fit(*args)
        return fit_with_scaled_eps

    # fit(task, params); fit_all_classes(problem, class_of_row, weighted_C, params, seed)
    for table, params_at in ((solvers.FIT_ONE_TASK, 1), (solvers.FIT_ALL_CLASSES, 3)):
        for sid, fit in list(table.items()):
            table[sid] = scaled(fit, params_at)


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
