"""Round-trip costs on a local Dask cluster of 2 single-threaded worker processes: a task
through the scheduler against a call to an actor, and a call down a 2-actor tree (the
shape of dlinear's map-reduce rounds), with an n-vector of rcv1's size and a method that
sleeps d ms (idle cores: the figures are messaging and wake-up only). Latencies of a
cluster's machinery, not of a fit, so not an asv benchmark.

    python -m scripts.benchmarks.dask_latency
"""
from __future__ import annotations

import argparse
import asyncio
import time

import numpy as np

from . import harness

N_VECTOR = 47_237


def identity(x):
    return x


def add(a, b):
    return a + b


class Node:
    """An actor that sleeps d ms and returns the vector, summed with its children's."""

    def __init__(self):
        from distributed import get_worker
        self.children = []
        self._executor = get_worker().executors["default"]

    def set_children(self, children):
        self.children = list(children)
        return len(self.children)

    def plain(self, s, d):
        time.sleep(d)
        return s

    def _own(self, s, d):
        time.sleep(d)
        return s

    async def tree(self, s, d):
        pending = [c.tree(s, d) for c in self.children]
        own = await asyncio.get_running_loop().run_in_executor(self._executor, self._own,
                                                               s, d)
        for p in pending:
            own = own + await p
        return own


def per_call(fn, n=30):
    fn()
    return harness.timed(lambda: [fn() for _ in range(n)]).wall / n


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    harness.add_output_arguments(ap)
    args = ap.parse_args(argv)
    report = harness.Report("dask_latency", args)
    cluster, client = harness.local_cluster(2)
    try:
        w0, w1 = list(client.nthreads())
        s = np.random.default_rng(0).normal(size=N_VECTOR)

        def task():
            return client.submit(identity, s, workers=[w0], pure=False).result()

        def two_tasks_and_sum():
            a = client.submit(identity, s, workers=[w0], pure=False)
            b = client.submit(identity, s, workers=[w1], pure=False)
            return client.submit(add, a, b, workers=[w0], pure=False).result()

        with harness.benchmark_lock(args.lock):
            report.add(call="task round trip", sleep_ms=0, ms=per_call(task) * 1e3)
            report.add(call="two tasks and their sum", sleep_ms=0,
                       ms=per_call(two_tasks_and_sum) * 1e3)
            root = client.submit(Node, actor=True, workers=[w0], pure=False).result()
            leaf = client.submit(Node, actor=True, workers=[w1], pure=False).result()
            root.set_children([leaf]).result()
            for d in (0.0, 0.001, 0.01, 0.04):
                report.add(call="actor call (beyond d)", sleep_ms=d * 1e3,
                           ms=(per_call(lambda: leaf.plain(s, d).result()) - d) * 1e3)
                report.add(call="2-actor tree (beyond d)", sleep_ms=d * 1e3,
                           ms=(per_call(lambda: root.tree(s, d).result()) - d) * 1e3)
    finally:
        client.close()
        cluster.close()
    report.finish(["call", "sleep_ms", "ms"])


if __name__ == "__main__":
    main()
