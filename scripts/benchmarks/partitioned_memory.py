"""Peak memory per worker of the partitioned dual CD against a copy of the data per worker,
measured inside the worker processes (asv measures its own process only).

    python -m scripts.benchmarks.partitioned_memory /work/data/rcv1_677k.train --workers 2 -s 3

Reads the file on the workers (Dataset.from_libsvm: each worker its byte ranges), then
trains twice, partitioned first and then with a copy per worker (cached, so it runs last).
Before each run every worker's peak RSS (VmHWM) is reset (/proc/self/clear_refs, Linux);
after it each worker reports its peak. Per worker: the bytes of the parts it holds
(dask.sizeof), its RSS before the run, its peak during it, the growth. A run stops at
--max-iter rounds (epochs for the copy): the peak comes in the first round.
"""
from __future__ import annotations

import argparse
import warnings

from dlinear import ConvergenceWarning, Params, train

from . import harness

MB = 1 << 20


def reset_peak():
    """Resets this process's peak RSS to its current RSS (Linux >= 4.0)."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def memory_report(dask_worker):
    """(bytes of the worker's stored data, current RSS, peak RSS since the last reset)."""
    from dask.sizeof import sizeof
    fields = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                fields[key] = int(value.split()[0]) * 1024
    held = sum(sizeof(value) for value in dask_worker.data.values())
    return held, fields["VmRSS"], fields["VmHWM"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("-s", dest="solver", type=int, default=3)
    ap.add_argument("--max-iter", type=int, default=10)
    harness.add_output_arguments(ap)
    args = ap.parse_args(argv)
    from dlinear.cluster import Dataset
    report = harness.Report("partitioned_memory", args)
    cluster, client = harness.local_cluster(args.workers)
    try:
        t = harness.timed(lambda: Dataset.from_libsvm(args.path, client))
        data = t.value
        report.note(f"{args.path}: {data.n_samples} rows, {data.n_features} features, "
                    f"{data.nnz} nonzeros, {len(data.parts)} parts, read in {t.wall:.0f} s; "
                    f"-s {args.solver}, {args.workers} workers, --max-iter {args.max_iter}")
        for mode, partition in (("partitioned", True), ("copied", False)):
            client.run(reset_peak)
            before = client.run(memory_report)
            params = Params(solver_type=args.solver, max_iter=args.max_iter,
                            partition=partition)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                with harness.benchmark_lock(args.lock):
                    seconds = harness.timed(lambda: train(data, params)).wall
            after = client.run(memory_report)
            for i, worker in enumerate(sorted(after)):
                report.add(mode=mode, worker=i, parts_mb=before[worker][0] / MB,
                           rss_before_mb=before[worker][1] / MB, peak_mb=after[worker][2] / MB,
                           growth_mb=(after[worker][2] - before[worker][1]) / MB,
                           seconds=seconds)
    finally:
        client.close()
        cluster.close()
    report.finish(["mode", "worker", "parts_mb", "rss_before_mb", "peak_mb", "growth_mb",
                   "seconds"])


if __name__ == "__main__":
    main()
