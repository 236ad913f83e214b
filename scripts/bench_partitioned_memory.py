"""Peak memory per worker of the partitioned dual CD against the copy per worker
(BENCHMARKS.md, "Partitioned dual CD", memory).

    python scripts/bench_partitioned_memory.py /work/data/rcv1_677k.train --workers 2 -s 3

Starts a LocalCluster of single-threaded worker processes, reads the file on the workers
(Dataset.from_libsvm: each worker its byte ranges), then trains twice, partitioned first
and then with a copy of the data per worker (`--no-partition`; the copy is cached, so it
runs last). Before each run every worker's peak RSS (VmHWM) is reset (/proc/self/clear_refs,
Linux); after it, each worker reports its peak, measured in the worker process itself. The
figures: the bytes of the parts each worker holds (dask.sizeof), its RSS before the run, its
peak during the run, and the growth (peak - RSS before), in MB. A run stops at --max-iter
rounds (epochs for the copy); the peak comes in the first round, and -s 3 does not switch
solvers at the cap.
"""
import argparse
import time
import warnings


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
    args = ap.parse_args(argv)

    import logging

    import distributed

    from dlinear import ConvergenceWarning, Params, train
    from dlinear.cluster import Dataset

    mb = 1 << 20
    with distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                  processes=True, dashboard_address=None,
                                  silence_logs=logging.CRITICAL) as cluster, \
            distributed.Client(cluster) as client:
        t = time.perf_counter()
        data = Dataset.from_libsvm(args.path, client)
        print(f"{args.path}: {data.n_samples} rows, {data.n_features} features, "
              f"{data.nnz} nonzeros ({data.nnz * 12 / mb:.0f} MB of CSR), "
              f"{len(data.parts)} parts, read in {time.perf_counter() - t:.0f} s")
        print(f"-s {args.solver}, {args.workers} workers, --max-iter {args.max_iter}")
        print("| mode | worker | its parts (MB) | RSS before (MB) | peak RSS (MB) | "
              "peak - RSS before (MB) | seconds |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for mode, partition in (("partitioned", True), ("copied", False)):
            client.run(reset_peak)
            before = client.run(memory_report)
            params = Params(solver_type=args.solver, max_iter=args.max_iter,
                            partition=partition)
            t = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                train(data, params)
            seconds = time.perf_counter() - t
            after = client.run(memory_report)
            for i, worker in enumerate(sorted(after)):
                parts = before[worker][0]
                print(f"| {mode} | {i} | {parts / mb:.0f} | {before[worker][1] / mb:.0f} | "
                      f"{after[worker][2] / mb:.0f} | "
                      f"{(after[worker][2] - before[worker][1]) / mb:.0f} "
                      f"| {seconds:.0f} |", flush=True)


if __name__ == "__main__":
    main()
