"""Where a fit on a Dask worker loses time against the same fit in this process: timings
taken inside a worker task and around its round trip, which asv cannot take.

    python -m scripts.benchmarks.worker_overhead map-reduced --rows 48949 --features 297063 --classes 35
        train(Dataset, Params(solver_type=0, partition=True)) --repeat times on a 1-worker
        LocalCluster (the map-reduced k-column actors)
    python -m scripts.benchmarks.worker_overhead copy-task --rows 48949 --features 297063 --classes 35
        one class-group fit (what a copy-mode task runs) timed in this process, then inside
        a worker task and around its round trip
"""
from __future__ import annotations

import argparse
import time

from dlinear import Params, train
from dlinear.cluster.session import worker_addresses
from dlinear.datasets.rcv1_like import make_rcv1_like

from . import harness


def timed_group(problem, label, ks, weighted_C, params):
    """(seconds of the class-group fit inside the task, the fits: they travel back as a
    copy-mode task's do), the Python heap kept as a copy-mode task keeps it."""
    from dlinear.cluster.heap import heap_kept
    start = time.perf_counter()
    with heap_kept():
        results = harness.fit_class_group(problem, label, ks, weighted_C, params)
    return time.perf_counter() - start, results


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=("map-reduced", "copy-task"))
    ap.add_argument("--rows", type=int, default=48949)
    ap.add_argument("--features", type=int, default=297063)
    ap.add_argument("--classes", type=int, default=35)
    ap.add_argument("--nnz", type=int, default=95)
    ap.add_argument("--repeat", type=int, default=3)
    harness.add_output_arguments(ap)
    args = ap.parse_args(argv)
    report = harness.Report(f"worker_overhead-{args.mode}", args)
    problem = make_rcv1_like(args.rows, args.features, seed=1, n_classes=args.classes,
                             nnz_per_row=args.nnz)
    params = Params(solver_type=0)
    label, weighted_C = harness.class_plan(problem, params)
    ks = list(range(len(label)))
    from dlinear.cluster import Dataset
    cluster, client = harness.local_cluster(1)
    try:
        dataset = Dataset.from_arrays(problem, None, client)
        worker = worker_addresses(client)[0]
        copy = dataset.local_copy(worker)
        with harness.benchmark_lock(args.lock):
            for _ in range(args.repeat):
                if args.mode == "map-reduced":
                    t = harness.timed(lambda: train(dataset, Params(solver_type=0,
                                                                    partition=True)))
                    report.add(run="1 worker, map-reduced", seconds=t.wall)
                    continue
                t = harness.timed(lambda: harness.fit_class_group(problem, label, ks,
                                                                  weighted_C, params))
                report.add(run="in process", seconds=t.wall)
                t = harness.timed(lambda: client.submit(
                    timed_group, copy, label, ks, weighted_C, params, workers=[worker],
                    pure=False).result())
                report.add(run="worker task, inside", seconds=t.value[0])
                report.add(run="worker task, round trip", seconds=t.wall)
    finally:
        client.close()
        cluster.close()
    report.finish(["run", "seconds"])


if __name__ == "__main__":
    main()
