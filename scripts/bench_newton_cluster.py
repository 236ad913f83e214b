"""Newton (-s 0, -s 2) local vs map-reduced on 2 Dask workers vs LIBLINEAR, one run.

Same generated rcv1-shaped data for all: dlinear in this process (1 thread), dlinear on a
local cluster of 2 single-threaded worker processes (data spread over them first, not
timed), liblinear-official single-threaded, and liblinear-multicore with `-n 2` (a
separate package with the same import name: give its install directory with
--multicore-path, e.g. after `pip install --target /tmp/llmc liblinear-multicore`; it
runs in a subprocess that regenerates the same data). Then the constants of the
distributed backend: map-reduce rounds and bytes per Newton iteration, the time of one
Hessian-vector product local vs distributed, and a projection of the time per iteration
on 16 and 64 workers from those constants.

    python scripts/bench_newton_cluster.py --rows 677000 --multicore-path /tmp/llmc
"""
import argparse
import json
import logging
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

from dlinear import Params, train                                  # noqa: E402
from dlinear.datasets import make_rcv1_like                       # noqa: E402
from dlinear.solvers.primal_objective_values import primal_objective  # noqa: E402

MULTICORE_CHILD = r"""
import json, sys, time
sys.path.insert(0, {repo!r})
from dlinear.datasets import make_rcv1_like
from liblinear import liblinear as lib, liblinearutil
P = make_rcv1_like({rows}, n_features={features}, nnz_per_row={nnz}, seed=0)
prob = lib.problem(P.y, P.to_scipy())
out = {{}}
for s in {solvers!r}:
    t = time.perf_counter()
    liblinearutil.train(prob, lib.parameter(f"-s {{s}} -n 2 -q"))
    out[s] = time.perf_counter() - t
print(json.dumps(out))
"""


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--features", type=int, default=47_236)
    ap.add_argument("--nnz-per-row", type=float, default=70)
    ap.add_argument("--solvers", default="0,2")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--multicore-path", default=None)
    ap.add_argument("--bandwidth", type=float, default=1.25e9,
                    help="bytes/s assumed between machines for the projection (10 Gb/s)")
    args = ap.parse_args(argv)
    solvers = [int(s) for s in args.solvers.split(",")]

    from distributed import Client, LocalCluster
    from liblinear import liblinear as lib
    from liblinear import liblinearutil

    from dlinear.cluster import Dataset
    from dlinear.cluster.objective import distributed_objective
    from dlinear.solvers.primal_objectives import PrimalObjective, LOSS_OF_SOLVER
    from dlinear.plan import subproblem

    P = make_rcv1_like(args.rows, n_features=args.features, nnz_per_row=args.nnz_per_row,
                       seed=0)
    print(f"data: {P.n_samples} x {P.n_features}, nnz {P.nnz}")
    train(P.subset(np.arange(300)), Params(solver_type=0))      # Numba warm-up

    multicore = {}
    if args.multicore_path:
        code = MULTICORE_CHILD.format(repo=os.path.join(os.path.dirname(__file__), ".."),
                                      rows=args.rows, features=args.features,
                                      nnz=args.nnz_per_row, solvers=solvers)
        env = dict(os.environ, PYTHONPATH=args.multicore_path)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True)
        multicore = {int(k): v for k, v in json.loads(out.stdout.splitlines()[-1]).items()}

    lib_problem = lib.problem(P.y, P.to_scipy())
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=None, silence_logs=logging.CRITICAL)
    client = Client(cluster)
    t_spread, data = best(lambda: Dataset.from_arrays(P, None, client), 1)
    client.run(lambda: train(P.subset(np.arange(300)), Params(solver_type=0)))
    print(f"spreading the data over 2 workers: {t_spread:.1f} s (not in the times below)")

    print(f"{'solver':>6} {'local':>7} {'2 workers':>10} {'LIBLINEAR':>10} {'multicore-2':>12}"
          f" {'local/LL':>9} {'local/2w':>9} {'2w vs mc-2':>11}  objectives (local, 2w, LL)")
    for s in solvers:
        params = Params(solver_type=s)
        t_local, m_local = best(lambda: train(P, params, n_threads=1), args.repeat)
        t_dist, m_dist = best(lambda: train(data, params), args.repeat)
        t_ll, m_ll = best(lambda: liblinearutil.train(lib_problem,
                                                       lib.parameter(f"-s {s} -q")), args.repeat)
        from liblinear_oracle import liblinear_model_to_dlinear
        f = [primal_objective(P, params, m) for m in
             (m_local, m_dist, liblinear_model_to_dlinear(m_ll))]
        mc = multicore.get(s)
        mc_text = f"{mc:12.2f}" if mc else " " * 12
        vs_mc = f"{mc / t_dist:11.2f}" if mc else " " * 11
        print(f"{'-s ' + str(s):>6} {t_local:7.2f} {t_dist:10.2f} {t_ll:10.2f} {mc_text} "
              f"{t_local / t_ll:9.2f} {t_local / t_dist:9.2f} {vs_mc}  "
              f"{f[0]:.6f} {f[1]:.6f} {f[2]:.6f}")

    # constants of the distributed backend, on -s 2
    params = Params(solver_type=2).resolved()
    label = np.array([int(P.y[0]), int(-P.y[0])]) if P.y[0] == 1 else np.array([1, -1])
    weighted = np.array([1.0, 1.0])
    objective, counts = distributed_objective(data, label, 0, weighted, params)
    from dlinear.solvers.newton import fit_newton_objective
    term = objective.loss_term
    stats0 = term.stats()
    result = fit_newton_objective(objective, params, None, counts)
    n_iter = max(result.n_iter, 1)
    received, sent, busy = (b - a for a, b in zip(stats0, term.stats()))
    client_bytes = term.bytes_to_workers + term.bytes_from_workers
    print(f"-s 2 on 2 workers: {result.n_iter} Newton iterations, "
          f"{term.n_calls / n_iter:.1f} map-reduce rounds per iteration; per iteration "
          f"{client_bytes / n_iter / 1e6:.2f} MB between client and root, "
          f"{(received + sent) / n_iter / 1e6:.2f} MB into and out of the workers "
          f"(n = {objective.n_variables}); the workers computed {busy:.2f} s in all")

    local_obj = PrimalObjective(P, subproblem(P, label, 0, weighted, params).y,
                                subproblem(P, label, 0, weighted, params).C, -1.0,
                                LOSS_OF_SOLVER[2])
    w = result.w
    local_obj.fun(w)
    local_obj.grad(w)
    objective.fun(w)
    objective.grad(w)
    s_vec = np.random.default_rng(0).normal(size=objective.n_variables)
    t_hv_local, _ = best(lambda: local_obj.hv(s_vec), 5)
    t_hv_dist, _ = best(lambda: objective.hv(s_vec), 5)
    print(f"one Hessian-vector product: local {t_hv_local * 1e3:.1f} ms, "
          f"2 workers {t_hv_dist * 1e3:.1f} ms")

    # projection: compute divides by W; a round goes down and up a binary tree of depth
    # d(W) = floor(log2 W) + 1 (client to root is the first hop), each hop paying the
    # measured fixed cost per hop plus one n-vector each way at the assumed bandwidth
    t_local_iter = t_local / max(m_local.n_iter[0], 1)
    rounds = term.n_calls / n_iter
    vec = 8 * objective.n_variables

    def depth(W):
        return int(np.floor(np.log2(W))) + 1

    per_hop = max(t_hv_dist - t_hv_local / 2, 0.0) / depth(2)
    print(f"fixed cost per round on 2 workers: {per_hop * depth(2) * 1e3:.1f} ms "
          f"({depth(2)} hops)")
    for W in (2, 16, 64):
        t_iter = t_local_iter / W + rounds * depth(W) * (per_hop + 2 * vec / args.bandwidth)
        print(f"projected time per Newton iteration on {W:2d} workers: {t_iter * 1e3:7.1f} ms "
              f"(local 1 core: {t_local_iter * 1e3:.1f} ms)")
    term.close()
    client.close()
    cluster.close()


if __name__ == "__main__":
    main()
