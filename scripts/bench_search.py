"""-C (warm-start parameter search): dlinear on 2 Dask workers and on 2 threads vs
liblinear-official, one run.

Runs `train -C -s 0 -v 5` on a generated rcv1-shaped set: LIBLINEAR 2.50 (one thread,
its folds sequential), dlinear in this process with 2 threads (folds in parallel), and
dlinear on a local Dask cluster of 2 single-threaded worker processes (the data made a
Dataset on the workers first; the first search includes making each worker's local copy,
the second reuses them). Prints wall time, the ratio to LIBLINEAR, best C, CV accuracy and
the number of C's tried.

With --dual, also measures whether warm-starting alpha helps the dual CD solver -s 1 over
the same C grid (on the whole set, no folds): total CD epochs and seconds, cold vs warm.

    python scripts/bench_search.py --rows 100000
"""
import argparse
import logging
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from dlinear import Params, find_parameters                     # noqa: E402
from dlinear.datasets import make_rcv1_like                    # noqa: E402
from dlinear.model_selection import search_plan                 # noqa: E402


def timed(fn):
    t = time.perf_counter()
    cpu = time.process_time()
    out = fn()
    return time.perf_counter() - t, time.process_time() - cpu, out


def liblinear_search(problem, options):
    from liblinear import liblinear, liblinearutil
    lines = []
    callback = liblinear.PRINT_STRING_FUN(lambda s: lines.append(s.decode()))
    prob = liblinear.problem(problem.y, problem.to_scipy())
    param = liblinear.parameter(options)
    param.print_func = callback

    def run():
        return liblinearutil.train(prob, param)
    t, cpu, result = timed(run)
    return t, cpu, result, "".join(lines).splitlines()


def dual_warm_start(problem, eps, seed=1):
    """-s 1 over the -s 2 C grid on the whole set: cold start at every C vs alpha of the
    previous C (feasible: the L2-loss dual has no upper bound)."""
    from dlinear.kernels.dual_cd_svc import dual_cd_svc
    Cs = search_plan(problem, Params(solver_type=2))[0][1]
    y = problem.y
    out = {}
    for mode in ("cold", "warm"):
        alpha = np.zeros(problem.n_samples)
        epochs = 0
        t0 = time.perf_counter()
        objectives = []
        for C in Cs:
            if mode == "cold":
                alpha = np.zeros(problem.n_samples)
            w = np.zeros(problem.n_features)
            n_iter, _, _, obj = dual_cd_svc(problem.indptr, problem.indices, problem.data,
                                            problem.n_features, -1.0, y,
                                            np.full(problem.n_samples, C), True, eps, 300,
                                            seed, alpha, w)
            epochs += int(n_iter)
            objectives.append(obj)
        out[mode] = (time.perf_counter() - t0, epochs, objectives, len(Cs))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--features", type=int, default=47236)
    ap.add_argument("--nnz-per-row", type=float, default=75)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("-s", type=int, default=0, dest="solver")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--skip-cluster", action="store_true")
    ap.add_argument("--dual", action="store_true", help="also measure warm-started alpha")
    args = ap.parse_args(argv)

    t, _, problem = timed(lambda: make_rcv1_like(args.rows, n_features=args.features,
                                                 nnz_per_row=args.nnz_per_row,
                                                 seed=args.seed))
    print(f"data: {problem.n_samples} x {problem.n_features}, nnz {problem.nnz} "
          f"(generated in {t:.1f} s); -C -s {args.solver} -v {args.folds}")
    params = Params(solver_type=args.solver)
    warm = problem.subset(np.arange(300))
    find_parameters(warm, params, 3, n_threads=2)                # Numba warm-up
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = float("nan")
    print(f"load average before: {load:.2f} on {os.cpu_count()} cores")

    rows = []
    t, cpu, (C, p, score), lines = liblinear_search(problem,
                                                   f"-C -s {args.solver} -v {args.folds}")
    rows.append(("liblinear-official 2.50, 1 thread", t, cpu, C, score, lines))
    lib_t = t

    lines = []
    t, cpu, (C, p, score) = timed(lambda: find_parameters(problem, params, args.folds,
                                                          log=lines.append, n_threads=2))
    rows.append(("dlinear in-process, 2 threads", t, cpu, C, score, lines))

    if not args.skip_cluster:
        from distributed import Client, LocalCluster

        from dlinear.cluster import Dataset
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                               dashboard_address=":0", silence_logs=logging.CRITICAL)
        with Client(cluster) as client:
            client.run(lambda: find_parameters(warm, params, 3, n_threads=1))
            t_scatter, _, data = timed(lambda: Dataset.from_arrays(problem, None, client))
            for label in ("dlinear Dask, 2 workers (1st: copies made)",
                          "dlinear Dask, 2 workers (2nd: copies reused)"):
                lines = []
                t, cpu, (C, p, score) = timed(lambda: find_parameters(
                    data, params, args.folds, log=lines.append))
                rows.append((label, t, cpu, C, score, lines))
        cluster.close()
        print(f"(making the Dataset on the workers: {t_scatter:.2f} s, not in the times)")

    try:
        load = os.getloadavg()[0]
    except OSError:
        load = float("nan")
    print(f"load average after: {load:.2f}")
    print()
    print("| method | wall s | speed-up vs LIBLINEAR | client cpu s | best C | CV accuracy "
          "| C's tried |")
    print("|---|---|---|---|---|---|---|")
    for name, t, cpu, C, score, lines in rows:
        n_C = sum(1 for line in lines if line.startswith("log2c="))
        print(f"| {name} | {t:.2f} | {lib_t / t:.2f}x | {cpu:.2f} | 2^{math.log2(C):g} | "
              f"{100 * score:.4g}% | {n_C} |")

    print()
    print("CV accuracy (%) at each log2(C), LIBLINEAR / dlinear in-process:")
    curves = [[line.split("rate=")[1] for line in r[5] if "rate=" in line] for r in rows[:2]]
    starts = [float(r[5][0][6:13]) for r in rows[:2]]
    for k, (a, b) in enumerate(zip(*curves)):
        print(f"  {starts[0] + k:g}: {a} / {b}")

    if args.dual:
        out = dual_warm_start(problem, eps=0.1)
        print()
        print("-s 1 (dual CD, -e 0.1) over the same C grid on the whole set:")
        for mode, (t, epochs, objectives, n_C) in out.items():
            print(f"  {mode}: {t:.2f} s, {epochs} epochs over {n_C} C's")
        cold, warm_ = out["cold"][2], out["warm"][2]
        rel = max(abs(a - b) / abs(a) for a, b in zip(cold, warm_))
        print(f"  largest relative difference of the dual objectives: {rel:.2e}")


if __name__ == "__main__":
    main()
