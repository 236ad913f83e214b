"""Round-trip costs on a local Dask cluster of 2 single-threaded worker processes: a task
through the scheduler against a call to an actor, and a call down a 2-actor tree (the
shape of dlinear's distributed Newton rounds), with an n-vector of rcv1's size and a
method that sleeps d ms (idle cores, so the figures are messaging and wake-up only).

    python scripts/bench_dask_latency.py
"""
import asyncio
import logging
import time

import numpy as np

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
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n


def main():
    from distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=None, silence_logs=logging.CRITICAL)
    client = Client(cluster)
    w0, w1 = list(client.nthreads())
    s = np.random.default_rng(0).normal(size=N_VECTOR)

    def task():
        return client.submit(identity, s, workers=[w0], pure=False).result()

    def two_tasks_and_sum():
        a = client.submit(identity, s, workers=[w0], pure=False)
        b = client.submit(identity, s, workers=[w1], pure=False)
        return client.submit(add, a, b, workers=[w0], pure=False).result()

    print(f"task round trip with a {N_VECTOR}-vector: {per_call(task) * 1e3:.1f} ms")
    print(f"two tasks and their sum on a worker: {per_call(two_tasks_and_sum) * 1e3:.1f} ms")
    root = client.submit(Node, actor=True, workers=[w0], pure=False).result()
    leaf = client.submit(Node, actor=True, workers=[w1], pure=False).result()
    root.set_children([leaf]).result()
    print(f"{'d (ms)':>7} {'actor call':>11} {'2-actor tree':>13}   (time beyond d)")
    for d in (0.0, 0.001, 0.01, 0.04):
        plain = per_call(lambda: leaf.plain(s, d).result()) - d
        tree = per_call(lambda: root.tree(s, d).result()) - d
        print(f"{d * 1e3:7.0f} {plain * 1e3:9.1f}ms {tree * 1e3:11.1f}ms")
    client.close()
    cluster.close()


if __name__ == "__main__":
    main()
