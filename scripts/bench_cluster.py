"""One-vs-rest on a Dask cluster: 1 worker vs 2 workers vs liblinear-official, one run.

Trains -s 1 on a generated k-class rcv1-shaped set held on local clusters of 1 and 2
single-threaded worker processes (data scattered to the workers first, as a Dataset),
in this process with 1 and 2 threads, and with LIBLINEAR single-threaded. The cluster
times include making each worker's copy of the data (first fit) and are also shown with
the copies already made (second fit). Then the fixed cost: wall time of
`dlinear-train` on the shipped example, Numba cache warm.

    python scripts/bench_cluster.py --rows 200000 --features 50000 --classes 35
"""
import argparse
import logging
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from dlinear import Params, train                               # noqa: E402
from dlinear.datasets import make_rcv1_like                    # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "examples", "rcv1_small.train")


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--features", type=int, default=50_000)
    ap.add_argument("--classes", type=int, default=35)
    ap.add_argument("--nnz-per-row", type=float, default=75)
    ap.add_argument("-s", type=int, default=1, dest="solver")
    ap.add_argument("--skip-liblinear", action="store_true")
    args = ap.parse_args(argv)

    from distributed import Client, LocalCluster
    from dlinear.cluster import Dataset

    t, problem = timed(lambda: make_rcv1_like(args.rows, n_features=args.features,
                                              n_classes=args.classes,
                                              nnz_per_row=args.nnz_per_row, seed=0))
    print(f"data: {problem.n_samples} x {problem.n_features}, nnz {problem.nnz}, "
          f"{args.classes} classes (generated in {t:.1f} s); solver -s {args.solver}")
    params = Params(solver_type=args.solver)
    train(problem.subset(np.arange(500)), params)            # Numba warm-up

    rows = []
    for threads in (1, 2):
        t, reference = timed(lambda: train(problem, params, n_threads=threads))
        rows.append((f"in-process, {threads} thread(s)", t, None))
    for n_workers in (1, 2):
        cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                               dashboard_address=None, silence_logs=logging.CRITICAL)
        with Client(cluster) as client:
            data = Dataset.from_arrays(problem, None, client)
            client.run(lambda: train(problem.subset(np.arange(500)), params))  # warm workers
            t1, model = timed(lambda: train(data, params))
            t2, _ = timed(lambda: train(data, params))
            assert np.array_equal(model.w, reference.w), "cluster model differs from local"
            rows.append((f"Dask, {n_workers} worker(s)", t1, t2))
        cluster.close()
    if not args.skip_liblinear:
        from liblinear import liblinear as lib
        from liblinear import liblinearutil
        lib_problem = lib.problem(problem.y, problem.to_scipy())
        t, _ = timed(lambda: liblinearutil.train(
            lib_problem, lib.parameter(f"-s {args.solver} -q")))
        rows.append(("liblinear-official, 1 thread", t, None))

    base = next(t for name, t, _ in rows if name.startswith("Dask, 1"))
    print(f"{'run':32} {'seconds':>8} {'2nd fit':>8} {'speed-up vs 1 worker':>21}")
    for name, t, t2 in rows:
        second = f"{t2:8.2f}" if t2 is not None else " " * 8
        print(f"{name:32} {t:8.2f} {second} {base / t:21.2f}")

    # fixed cost of the command line on the small example (warm Numba cache)
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "dlinear", "train", "-q", EXAMPLE,
               os.path.join(tmp, "example.model")]
        subprocess.run(cmd, check=True)
        times = [timed(lambda: subprocess.run(cmd, check=True))[0] for _ in range(3)]
    print(f"dlinear-train on examples/rcv1_small.train (in-process, warm cache): "
          f"best {min(times):.2f} s of 3")


if __name__ == "__main__":
    main()
