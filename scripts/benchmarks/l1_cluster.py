"""-s 5 and -s 6 on partitioned rows (OWL-QN, its loss and gradient map-reduced over the
workers' parts) against the in-process solvers on the same rcv1-shaped rows.

    python -m scripts.benchmarks.l1_cluster [--rows 100000] [--workers 2] [--eps 1e-4]

For each solver: the in-process fit (one thread: its iterations, wall time, objective)
and the map-reduced fit on a LocalCluster of --workers single-threaded processes (OWL-QN
iterations, rounds, bytes per round, wall time), the objectives' relative gap and the
time ratio, both measured in this run; then the rounds that carried the support only
(once it settled) and the bytes against the same fit with every round full.
"""
from __future__ import annotations

import argparse
import logging
import re
import time
from dataclasses import replace

from dlinear import Params, train
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.solvers import owlqn
from dlinear.solvers.primal_objective_values import primal_objective


def _iterations(lines) -> int:
    found = [int(m.group(1)) for line in lines for m in [re.search(r"#iter = (\d+)", line)]
             if m]
    return found[-1] if found else -1


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--eps", type=float, default=1e-4)
    parser.add_argument("--solvers", default="6,5")
    args = parser.parse_args(argv)
    from distributed import Client, LocalCluster

    from dlinear.cluster import Dataset

    problem = make_rcv1_like(args.rows, seed=7)
    print(f"rcv1-shaped: {problem.n_samples} rows, {problem.n_features} features, "
          f"{problem.nnz} nonzeros; eps {args.eps:g}; {args.workers} workers")
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      dashboard_address=None, silence_logs=logging.CRITICAL) as cluster, \
            Client(cluster) as client:
        data = Dataset.from_arrays(problem, None, client, n_parts=2 * args.workers)
        for solver in (int(s) for s in args.solvers.split(",")):
            params = Params(solver_type=solver, eps=args.eps)
            train(make_rcv1_like(500, seed=8), params, n_threads=1)   # compiled before timing
            lines = []
            start = time.perf_counter()
            local = train(problem, params, log=lines.append, n_threads=1)
            local_s = time.perf_counter() - start
            train(data, replace(params, partition=True))       # warm the workers
            start = time.perf_counter()
            spread = train(data, replace(params, partition=True))
            spread_s = time.perf_counter() - start
            f_local = primal_objective(problem, params, local)
            f_spread = primal_objective(problem, params, spread)
            stats = spread.fit_stats
            per_round = (stats["bytes_to_workers"] + stats["bytes_from_workers"]) \
                / stats["rounds"]
            print(f"-s {solver}: in process {_iterations(lines)} iterations, "
                  f"{local_s:.2f} s; OWL-QN {stats['rounds']} rounds "
                  f"({per_round / 1e3:.0f} kB a round), {spread_s:.2f} s "
                  f"({spread_s / local_s:.2f}x); objective gap "
                  f"{(f_spread - f_local) / abs(f_local):.1e}")
            settled, owlqn.SUPPORT_SETTLED = owlqn.SUPPORT_SETTLED, 10**9
            try:
                full = train(data, replace(params, partition=True)).fit_stats
            finally:
                owlqn.SUPPORT_SETTLED = settled
            total = stats["bytes_to_workers"] + stats["bytes_from_workers"]
            full_total = full["bytes_to_workers"] + full["bytes_from_workers"]
            support = stats["support_rounds"]
            print(f"       {support} rounds on the support "
                  f"({stats['support_bytes'] / max(support, 1) / 1e3:.1f} kB a round), "
                  f"{total / 1e6:.1f} MB in all; every round full: {full['rounds']} rounds, "
                  f"{full_total / 1e6:.1f} MB ({total / full_total:.2f}x the bytes)")


if __name__ == "__main__":
    main()
