"""The Dask clusters the tests start: a LocalCluster of worker processes; a scheduler and
workers each a process of its own on loopback, so that a worker can be killed (forked,
or `dask scheduler` / `dask worker` started as a user starts them)."""
import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest


# A worker memory limit that no copy of the tests' data fits in, and Dask's managed-memory
# target at a quarter of it: past 0.5 MiB of parts a worker spills to disk. Dask's
# process-memory rules (spill, pause, terminate at 70, 80, 95% of the process's RSS) are
# off: a worker process takes ~200 MiB before any data.
SMALL_WORKER_LIMIT = 2 * 2**20
SPILL_ONLY = {"distributed.worker.memory.target": 0.25,
              "distributed.worker.memory.spill": False,
              "distributed.worker.memory.pause": False,
              "distributed.worker.memory.terminate": False}


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


@contextlib.contextmanager
def dask_processes(directory, n_workers=2, extra_env=None):
    """The address of a `dask scheduler` and n_workers `dask worker --nthreads 1` processes
    on 127.0.0.1, each its own process (extra_env: variables only they see), logs in
    directory."""
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


class ForkedProcess:
    """A scheduler or worker process forked from the suite's server of preloaded modules
    (tests/conftest.py), with the part of Popen the tests use (pid, poll, wait). It leads
    a session of its own, so os.killpg(pid, ...) kills it as it kills a process started
    with start_new_session."""

    def __init__(self, main, *args):
        from distributed.utils import get_mp_context
        self._process = get_mp_context().Process(target=_in_own_session, args=(main, *args),
                                                 daemon=True)
        self._process.start()
        self.pid = self._process.pid

    def poll(self):
        return self._process.exitcode

    def wait(self, timeout=None):
        self._process.join(timeout)
        if self._process.exitcode is None:
            raise subprocess.TimeoutExpired(f"forked process {self.pid}", timeout)
        return self._process.exitcode


def _in_own_session(main, *args):
    os.setsid()
    logging.getLogger("distributed").setLevel(logging.CRITICAL)
    import asyncio
    asyncio.run(main(*args))


async def _scheduler(scheduler_file):
    from distributed import Scheduler
    async with Scheduler(host="127.0.0.1", port=0, dashboard=False,
                         scheduler_file=scheduler_file) as scheduler:
        await scheduler.finished()


async def _worker(address, name):
    from distributed import Worker
    async with Worker(address, nthreads=1, name=name, host="127.0.0.1",
                      dashboard=False) as worker:
        await worker.finished()


def start_cluster(tmp_path, n_workers=2, tls_args=()):
    """A scheduler and n_workers single-threaded workers (no nanny), each a process of
    its own on loopback; returns (address, procs: {"scheduler", "w0", ...}). They are
    forked (ForkedProcess), a process start that skips the interpreter's and the imports'
    seconds; with tls_args, `dask scheduler` and `dask worker` processes."""
    if not tls_args:
        scheduler_file = str(tmp_path / "scheduler.json")
        procs = {"scheduler": ForkedProcess(_scheduler, scheduler_file)}
        address = _address_in(scheduler_file)
        for i in range(n_workers):
            procs[f"w{i}"] = ForkedProcess(_worker, address, f"w{i}")
        return address, procs
    tls_args = [str(a) for a in tls_args]
    scheduler_file = tmp_path / "scheduler.json"
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    common = dict(env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                  start_new_session=True)
    procs = {"scheduler": subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
         "--port", "0", "--no-dashboard", "--scheduler-file", str(scheduler_file),
         *(["--protocol", "tls"] if tls_args else []), *tls_args], **common)}
    address = _address_in(scheduler_file)
    for i in range(n_workers):
        procs[f"w{i}"] = subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1",
             "--no-nanny", "--no-dashboard", "--name", f"w{i}", *tls_args], **common)
    return address, procs


def _address_in(scheduler_file):
    deadline = time.time() + 60
    while time.time() < deadline:
        try:   # the file may exist before it is completely written
            return json.loads(Path(scheduler_file).read_text())["address"]
        except (OSError, ValueError, KeyError):
            time.sleep(0.05)
    raise AssertionError("the scheduler did not start")


def held_until_released(name, timeout):
    """A task that holds its worker thread until release(client, name) or `timeout` s.
    A cancelled task goes on running in its thread, so a time.sleep would keep a shared
    cluster's workers busy, and the tests after it waiting, for the whole sleep."""
    from distributed import Event
    Event(name).wait(timeout)


def release(client, name):
    from distributed import Event
    Event(name, client=client).set()


def stop_cluster(procs):
    for p in procs.values():
        if p.poll() is None:
            with contextlib.suppress(ProcessLookupError):     # it ended since the poll
                os.killpg(p.pid, signal.SIGKILL)
        p.wait()


def scheduler_workers(client):
    """The scheduler's workers now, by address. (client.scheduler_info() returns the client's
    cached identity, which its periodic refresh can replace, between the fetch and the
    return, with one that lists no workers.)"""
    return client.sync(client.scheduler.identity, n_workers=-1)["workers"]


def wait_for_workers(client, n):
    client.wait_for_workers(n, timeout=60)
    return {info["name"]: addr for addr, info in scheduler_workers(client).items()}


def scale_to(cluster, client, n, timeout=60):
    """Scales a LocalCluster to exactly n workers and waits until the scheduler has n, all
    running (not while extra ones are still retiring: data scattered onto those is lost).

    It asks the scheduler (client.scheduler_info), never client.wait_for_workers: on a
    client of a LocalCluster that is the cluster's wait_for_workers, which replaces the
    cluster's copy of the scheduler's worker table. A worker retired meanwhile is then
    missing from that copy when its "remove" message reaches the cluster's watcher, which
    dies of a KeyError (SpecCluster._update_worker_status) that LocalCluster.close raises
    when the cluster closes (distributed 2026.8)."""
    cluster.scale(n)
    deadline = time.monotonic() + timeout
    while True:
        workers = client.scheduler_info(n_workers=-1)["workers"].values()
        if len(workers) == n and all(w["status"] == "running" for w in workers):
            return
        assert time.monotonic() < deadline, f"the cluster did not scale to {n} workers"
        time.sleep(0.05)
