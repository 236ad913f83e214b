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
