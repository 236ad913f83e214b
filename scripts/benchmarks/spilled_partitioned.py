"""Partitioned -s 1 / -s 3 with each worker's share in memory against the same fit with
the shares on the workers' local disks (dlinear.in_process.spilled_block), on two local
Dask clusters of the same size: one without a memory limit, one whose workers' limit the
shares exceed half of (so the workers spill by the rule the fit uses).

    python -m scripts.benchmarks.spilled_partitioned --rows 200000 --workers 2 -s 1

Prints, per run, the wall time of dlinear.train, its rounds and the primal objective.
Dask's process-memory rules are off in the limited cluster (a worker process takes
~200 MiB before any data, which the limit of a small case would not leave).
"""
from __future__ import annotations

import argparse
import logging
import time

import dask

import dlinear
from dlinear import Params
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.solvers.primal_objective_values import primal_objective

MB = 1 << 20
MEMORY_RULES_OFF = {"distributed.worker.memory.target": False,
                    "distributed.worker.memory.spill": False,
                    "distributed.worker.memory.pause": False,
                    "distributed.worker.memory.terminate": False}


def run(problem, params, workers, memory_limit):
    from distributed import Client, LocalCluster
    from dlinear.cluster import Dataset
    with dask.config.set(MEMORY_RULES_OFF), \
            LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                         memory_limit=memory_limit, dashboard_address=":0",
                         silence_logs=logging.CRITICAL) as cluster, Client(cluster) as client:
        dataset = Dataset.from_arrays(problem, None, client, n_parts=4 * workers)
        log = []
        start = time.perf_counter()
        model = dlinear.train(dataset, params, client=client, partition=True,
                              log=log.append)
        seconds = time.perf_counter() - start
    rounds = next(line for line in log if "rounds of" in line)
    return seconds, rounds, model


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("-s", dest="solver", type=int, default=1)
    parser.add_argument("-e", dest="eps", type=float, default=0.1)
    args = parser.parse_args(argv)
    problem = make_rcv1_like(args.rows, seed=1)
    params = Params(solver_type=args.solver, eps=args.eps)
    share = (problem.indptr.nbytes + problem.indices.nbytes + problem.data.nbytes
             + problem.y.nbytes) / args.workers
    # a limit the share exceeds half of by a fifth: the share spills, with a budget of
    # half the limit (partitioned_cd.SPILL_SHARE)
    limit = int(share / 0.6)
    print(f"{args.rows} rows, {problem.nnz} nonzeros, {args.workers} workers, "
          f"{share / MB:.0f} MiB a worker; the limited cluster's limit {limit / MB:.0f} MiB")
    results = {}
    for name, memory_limit in (("in memory", 0), ("on disk", limit)):
        seconds, rounds, model = run(problem, params, args.workers, memory_limit)
        f = primal_objective(problem, params, model)
        results[name] = seconds
        print(f"{name:10s} {seconds:7.2f} s  {rounds}  objective {f:.6f}  "
              f"{model.fit_stats}")
    print(f"on disk / in memory: {results['on disk'] / results['in memory']:.2f}x")


if __name__ == "__main__":
    main()
