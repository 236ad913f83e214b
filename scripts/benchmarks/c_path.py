"""Every C at once (dlinear-train -C --path-models, LogisticRegressionCV): the models at 20
values of C (C_max / 2^19 .. C_max, doubling, as -C's grid), each fit warm-started from
the one before (dlinear.in_process.model_selection.train_path), against one fresh fit at
the largest C; both measured in this run, one after the other, on the same threads.
Prints one JSON line per solver with path_s, largest_C_s and their ratio (the goal:
<= 3), the same in CPU seconds, and the iterations.

    python -m dlinear make-data /tmp/cpath/rcv1 --rows 40000
    python -m scripts.benchmarks.c_path /tmp/cpath/rcv1.train -s 0 2 1 3 --max-C 4
    python -m scripts.benchmarks.c_path /tmp/cpath/rcv1.train -s 6

-s 6 (L1 logistic regression) starts its path where it starts to be nonzero: C_min, 2
C_min, ... (C_min = 1 / max_j |g_j|, g the loss's gradient at w = 0 in LIBLINEAR's
scaling, dlinear.estimators.logistic_cv.l1_path_start; binary data), whatever --max-C.
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np

from dlinear import Params, train
from dlinear.data.libsvm_reader import read_libsvm
from dlinear.in_process.model_selection import train_path


def measure(problem, solver: int, Cs, bias: float = 1.0) -> dict:
    params = Params(solver_type=solver, bias=bias)
    start, cpu = time.perf_counter(), time.process_time()
    models = train_path(problem, params, Cs,
                        lambda p, at_C, init: train(p, at_C, init=init))
    path_s, path_cpu = time.perf_counter() - start, time.process_time() - cpu
    start, cpu = time.perf_counter(), time.process_time()
    largest = train(problem, Params(solver_type=solver, bias=bias, C=float(max(Cs))))
    largest_s, largest_cpu = time.perf_counter() - start, time.process_time() - cpu
    return {"solver": solver, "rows": problem.n_samples, "n_C": len(Cs),
            "C_range": [float(min(Cs)), float(max(Cs))],
            "path_s": round(path_s, 3), "largest_C_s": round(largest_s, 3),
            "ratio": round(path_s / largest_s, 2),
            # CPU seconds of this process (all threads): less disturbed by a loaded machine
            "path_cpu_s": round(path_cpu, 3), "largest_C_cpu_s": round(largest_cpu, 3),
            "cpu_ratio": round(path_cpu / largest_cpu, 2),
            "path_iter": int(sum(sum(m.n_iter) for m in models)),
            "largest_C_iter": int(sum(largest.n_iter))}


def l1_start(problem, bias: float = 1.0) -> float:
    """The smallest C at which -s 6's binary model has a nonzero weight."""
    import scipy.sparse as sp
    from dlinear.estimators.logistic_cv import l1_path_start
    X = sp.csr_matrix((problem.data, problem.indices, problem.indptr),
                      shape=(problem.n_samples, problem.n_features))
    labels, y = np.unique(problem.y, return_inverse=True)
    return l1_path_start(X, y, len(labels), None, np.ones(len(labels)), bias, False, 1.0)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("train_file")
    parser.add_argument("-s", dest="solvers", type=int, nargs="+", default=[0, 2])
    parser.add_argument("--max-C", type=float, default=4.0)
    parser.add_argument("--n-C", type=int, default=20)
    args = parser.parse_args(argv)
    problem = read_libsvm(args.train_file)
    train(problem.subset(np.arange(min(200, problem.n_samples))),
          Params(solver_type=args.solvers[0]))      # compile outside the timings
    for solver in args.solvers:
        if solver == 6:
            Cs = l1_start(problem) * 2.0 ** np.arange(args.n_C)
        else:
            Cs = args.max_C / 2.0 ** np.arange(args.n_C - 1, -1, -1)
        train(problem.subset(np.arange(min(200, problem.n_samples))),
              Params(solver_type=solver))
        print(json.dumps(measure(problem, solver, Cs)), flush=True)


if __name__ == "__main__":
    main()
