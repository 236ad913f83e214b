"""Where a fit on a Dask worker loses time against the same fit in this process
(BENCHMARKS.md, "Multi-class Newton on a cluster: the classes as tasks").

    python scripts/bench_worker_overhead.py map-reduced --rows 48949 --features 297063 --classes 35
        train(Dataset, Params(solver_type=0, partition=True)) three times on a 1-worker
        LocalCluster (the map-reduced k-column actors); run before and after a change
    python scripts/bench_worker_overhead.py copy-task --rows 48949 --features 297063 --classes 35
        one class-group fit (dlinear.train.fit_class_group, what a copy-mode task runs)
        timed in this process, then inside a worker task and around its round trip
"""
import argparse
import time

from distributed import Client, LocalCluster

from dlinear import Params, train
from dlinear.cluster.dataset import Dataset
from dlinear.datasets import make_rcv1_like
from dlinear.plan import first_appearance, order_labels, weighted_class_C
from dlinear.train import fit_class_group


def timed_group(problem, label, ks, weighted_C, params, return_models):
    from dlinear.cluster.heap import heap_kept
    start = time.perf_counter()
    with heap_kept():
        results = fit_class_group(problem, label, ks, weighted_C, params)
    return time.perf_counter() - start, results if return_models else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=("map-reduced", "copy-task"))
    ap.add_argument("--rows", type=int, default=48949)
    ap.add_argument("--features", type=int, default=297063)
    ap.add_argument("--classes", type=int, default=35)
    ap.add_argument("--nnz", type=int, default=95)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    problem = make_rcv1_like(args.rows, args.features, seed=1, n_classes=args.classes,
                             nnz_per_row=args.nnz)
    params = Params(solver_type=0).resolved()
    label = order_labels(first_appearance(problem.y))
    weighted_C = weighted_class_C(label, params, lambda line: None)
    ks = list(range(len(label)))
    if args.mode == "copy-task":
        for _ in range(args.repeat):
            start = time.perf_counter()
            fit_class_group(problem, label, ks, weighted_C, params)
            print(f"in process: {time.perf_counter() - start:.2f} s", flush=True)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True) as cluster, \
            Client(cluster) as client:
        dataset = Dataset.from_arrays(problem, None, client)
        worker = list(client.scheduler_info()["workers"])[0]
        copy = dataset.local_copy(worker)
        for _ in range(args.repeat):
            start = time.perf_counter()
            if args.mode == "map-reduced":
                train(dataset, Params(solver_type=0, partition=True), client=client)
                print(f"1 worker, map-reduced: {time.perf_counter() - start:.2f} s",
                      flush=True)
            else:
                inside, _ = client.submit(timed_group, copy, label, ks, weighted_C, params,
                                          True, workers=[worker], pure=False).result()
                print(f"worker task: inside {inside:.2f} s, round trip with the models "
                      f"{time.perf_counter() - start:.2f} s", flush=True)


if __name__ == "__main__":
    main()
