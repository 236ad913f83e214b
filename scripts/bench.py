"""Train dlinear and liblinear-official on the same in-memory data, per solver, in one run.

Prints train seconds of each (best of --repeat runs), the ratio dlinear/LIBLINEAR, both primal objective values
and both test accuracies. Numba is warmed up first (its cache is on disk after the first
run anyway), and LIBLINEAR's data conversion is done before its clock starts, so both
times are solver time only. dlinear runs single-threaded by default, like LIBLINEAR.

    python scripts/bench.py --rows 500000 --test-rows 50000 --solvers 1,3
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

from dlinear import Params, predict, train                     # noqa: E402
from dlinear.datasets import make_rcv1_like_split             # noqa: E402
from dlinear.solvers import SOLVERS                            # noqa: E402
from dlinear.solvers.primal_objective_values import primal_objective  # noqa: E402
from liblinear_oracle import liblinear_model_to_dlinear  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--test-rows", type=int, default=20_000)
    ap.add_argument("--features", type=int, default=47_236)
    ap.add_argument("--nnz-per-row", type=float, default=75)
    ap.add_argument("--classes", type=int, default=2)
    ap.add_argument("--solvers", default="1,3")
    ap.add_argument("-c", type=float, default=1.0, dest="C")
    ap.add_argument("-e", type=float, default=None, dest="eps",
                    help="tolerance (default: each solver's LIBLINEAR default)")
    ap.add_argument("-B", type=float, default=-1.0, dest="bias")
    ap.add_argument("--threads", type=int, default=1,
                    help="dlinear threads for one-vs-rest classes (default 1, like LIBLINEAR)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3,
                    help="best of N runs for both (LIBLINEAR's rand() is never reseeded by "
                         "its binding, so its iteration count varies from run to run)")
    args = ap.parse_args(argv)

    from liblinear import liblinear as lib
    from liblinear import liblinearutil

    t0 = time.perf_counter()
    train_set, test_set = make_rcv1_like_split(
        args.rows, args.test_rows, n_features=args.features, n_classes=args.classes,
        nnz_per_row=args.nnz_per_row, seed=args.seed)
    print(f"data: {train_set.n_samples} x {train_set.n_features}, nnz {train_set.nnz}, "
          f"{args.classes} classes, test {test_set.n_samples} rows "
          f"(generated in {time.perf_counter() - t0:.1f} s)")

    X = train_set.to_scipy()
    lib_problem = lib.problem(train_set.y, X, bias=args.bias)

    # Numba warm-up on a tiny problem (compiles or loads the cache), not timed
    tiny = train_set.subset(np.arange(min(200, train_set.n_samples)))
    for s in args.solvers.split(","):
        train(tiny, Params(solver_type=int(s), bias=args.bias))

    header = (f"{'solver':>6} {'dlinear s':>10} {'LIBLINEAR s':>12} {'ratio':>6} "
              f"{'f dlinear':>16} {'f LIBLINEAR':>16} {'rel diff':>9} {'acc dl':>7} {'acc LL':>7}")
    print(header)
    for s in args.solvers.split(","):
        solver = int(s)
        params = Params(solver_type=solver, C=args.C, eps=args.eps, bias=args.bias)
        eps = params.resolved().eps
        t_ours = t_theirs = float("inf")
        lib_param = lib.parameter(f"-s {solver} -c {args.C} -e {eps} -B {args.bias} -q")
        for rep in range(args.repeat):
            params.seed = rep + 1
            t = time.perf_counter()
            ours = train(train_set, params, n_threads=args.threads)
            t_ours = min(t_ours, time.perf_counter() - t)
            t = time.perf_counter()
            theirs_raw = liblinearutil.train(lib_problem, lib_param)
            t_theirs = min(t_theirs, time.perf_counter() - t)
        theirs = liblinear_model_to_dlinear(theirs_raw)

        f_ours = primal_objective(train_set, params, ours)
        f_theirs = primal_objective(train_set, params, theirs)
        acc_ours = 100 * np.mean(predict(ours, test_set) == test_set.y)
        acc_theirs = 100 * np.mean(predict(theirs, test_set) == test_set.y)
        print(f"{'-s ' + s:>6} {t_ours:10.3f} {t_theirs:12.3f} {t_ours / t_theirs:6.2f} "
              f"{f_ours:16.6f} {f_theirs:16.6f} {(f_ours - f_theirs) / abs(f_theirs):9.1e} "
              f"{acc_ours:7.2f} {acc_theirs:7.2f}  ({SOLVERS[solver].name}, eps={eps:g})")


if __name__ == "__main__":
    main()
