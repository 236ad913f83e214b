"""Shared fixtures: generated data, LIBLINEAR (liblinear-official 2.50) as the reference,
and local Dask clusters."""
import contextlib
import logging

import numpy as np
import pytest

from dlinear.datasets import make_rcv1_like_split
from dlinear.solvers.objectives import liblinear_model_to_dlinear


def liblinear_train(problem, options: str):
    """Trains liblinear-official on the same rows; returns it as a dlinear Model too."""
    from liblinear import liblinearutil
    lib = liblinearutil.train(problem.y, problem.to_scipy(), options + " -q")
    return lib, liblinear_model_to_dlinear(lib)


def liblinear_decision_values(lib_model, problem):
    from liblinear import liblinearutil
    labels, _, values = liblinearutil.predict(problem.y, problem.to_scipy(), lib_model, "-q")
    return np.asarray(labels), np.asarray(values)


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
