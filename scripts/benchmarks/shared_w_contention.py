"""Why PASSCoDe on a shared w is slow where both cores run at once: one first sweep of
-s 1 (from alpha = 0, every row stepped) over the whole set, on 1 thread and on 2 threads
each taking half of the rows, with w shared (additions atomic, or wild) or each thread
writing its own copy of w (additions plain, or atomic on the private copy), and the
local scheme's part (its own copy, CoCoA+'s sigma = 2). Wall and process CPU seconds,
best of --repeat.

    python -m scripts.benchmarks.shared_w_contention [--file /work/data/rcv1_542k.train]
        [--lock /work/bench.lock] [--repeat 3]

Same CPU on 2 threads as on 1 means the threads do not slow each other; more CPU is
time spent waiting on cache lines that the other core wrote.
"""
from __future__ import annotations

import argparse
import threading

import numpy as np

from dlinear.kernels.local_dual_cd import local_sweep_part
from dlinear.kernels.parallel_dual_cd_svc import async_sweep_part, dual_state, shuffle_active
from dlinear.threads import stop_flag
from dlinear.kernels.rng import seed_state

from . import harness
from .threads import load

INF = np.inf


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--file", default="/work/data/rcv1_542k.train")
    parser.add_argument("--repeat", type=int, default=3)
    harness.add_output_arguments(parser)
    args = parser.parse_args(argv)
    report = harness.Report("shared_w_contention", args)
    p = load(args.file)
    y = np.where(p.y == p.y[0], 1.0, -1.0)
    C = np.ones(len(y))
    n = p.n_features
    report.note(f"{args.file}: {p.n_samples} x {n}, {p.nnz} nonzeros; -s 1, C = 1, the "
                "first sweep from alpha = 0")

    def fresh():
        w = np.zeros(n)
        inst, index, l = dual_state(p.indptr, p.indices, p.data, n, -1.0, y, C, True,
                                    np.zeros(len(y)), w)
        shuffle_active(seed_state(1), index, l)
        return inst, index, l, w

    def shared(inst, index, lo, hi, w, own, atomic):
        async_sweep_part(p.indptr, p.indices, p.data, n, -1.0, True, inst, index, lo, hi,
                         INF, -INF, own if own is not None else w, atomic, stop_flag())

    def local(inst, index, lo, hi, w, own, atomic):
        local_sweep_part(p.indptr, p.indices, p.data, n, -1.0, True, inst, index, lo, hi,
                         INF, -INF, w, own, 2.0, np.empty(len(y)), stop_flag())

    def run(part, n_threads, private, atomic):
        inst, index, l, w = fresh()
        edges = np.linspace(0, l, n_threads + 1).astype(np.int64)
        owns = [w.copy() if private else None for _ in range(n_threads)]
        threads = [threading.Thread(target=part, args=(inst, index, edges[k], edges[k + 1],
                                                       w, owns[k], atomic))
                   for k in range(n_threads)]

        def go():
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        return harness.timed(go)

    cases = [("1 thread, plain", shared, 1, False, False),
             ("1 thread, atomic", shared, 1, False, True),
             ("2 threads, shared w, atomic", shared, 2, False, True),
             ("2 threads, shared w, wild", shared, 2, False, False),
             ("2 threads, own copies, plain", shared, 2, True, False),
             ("2 threads, own copies, atomic", shared, 2, True, True),
             ("2 threads, local scheme's parts", local, 2, True, False)]
    inst, index, l, w = fresh()
    for _, part, _, private, atomic in cases:                      # compiled
        part(inst, index, 0, 100, w, w.copy() if private else None, atomic)
    with harness.benchmark_lock(args.lock):
        for name, part, n_threads, private, atomic in cases:
            best = min((run(part, n_threads, private, atomic) for _ in range(args.repeat)),
                       key=lambda t: t.wall)
            report.add(case=name, wall=best.wall, cpu=best.cpu)
    report.finish(["case", "wall", "cpu"])


if __name__ == "__main__":
    main()
