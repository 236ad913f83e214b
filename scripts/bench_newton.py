"""-s 0 and -s 2 on rcv1-shaped data: dlinear line-search Newton vs dlinear TRON vs
liblinear-official (single-threaded), in one run.

Prints each one's train seconds (wall clock and process CPU time, each the best of
--repeat runs; the CPU time is the steadier figure on a shared machine), the ratio to
LIBLINEAR, Newton iterations, Hessian-vector
products (dlinear) and the primal objective at the end. Numba is warmed up on a tiny
problem first; LIBLINEAR's conversion of the data is done before its clock starts, so all
times are solver time.

    python scripts/bench_newton.py                  # 200k rows x 47,236 features
    python scripts/bench_newton.py --rows 677000    # rcv1's size (the issue's)
    python scripts/bench_newton.py --row-order sorted   # rows grouped by label

--row-order: "interleaved" (the generator's order, labels mixed) or "sorted" (rows
stable-sorted by label). LIBLINEAR's train() groups rows by class before solving and
then reads them through that permutation, so on interleaved rows its passes over X jump
around memory; on label-sorted rows they are sequential, as dlinear's always are.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

from dlinear import Params                                       # noqa: E402
from dlinear.datasets import make_rcv1_like_split               # noqa: E402
from dlinear.model import Model                                  # noqa: E402
from dlinear.solvers import SubProblem                           # noqa: E402
from dlinear.solvers.newton import newton, primal_solver_tol, tron  # noqa: E402
from dlinear.solvers.primal_objective_values import primal_objective  # noqa: E402
from liblinear_oracle import liblinear_model_to_dlinear  # noqa: E402
from dlinear.solvers.primal_objectives import make_objective    # noqa: E402


def run_dlinear(train_set, params):
    """One cold-start run of the driver params.newton: (wall s, cpu s, w, DriverResult,
    passes over X)."""
    y = np.where(train_set.y > 0, 1.0, -1.0)     # +1 is the positive class, as in train()
    task = SubProblem(train_set, y, np.full(len(y), params.C), params.bias, 0)
    obj = make_objective(task, params)
    eps = primal_solver_tol(params.eps, y, False)
    w = np.zeros(task.w_size)
    t, c = time.perf_counter(), time.process_time()
    res = tron(obj, w, eps) if params.newton == "tron" else newton(obj, w, eps)
    return time.perf_counter() - t, time.process_time() - c, w, res, obj.n_passes


def as_model(train_set, params, w):
    return Model(params.solver_type, 2, np.array([1, -1], dtype=np.int64),
                 train_set.n_features, params.bias, w.reshape(-1, 1))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--features", type=int, default=47_236)
    ap.add_argument("--nnz-per-row", type=float, default=75)
    ap.add_argument("--solvers", default="0,2")
    ap.add_argument("-c", type=float, default=1.0, dest="C")
    ap.add_argument("-e", type=float, default=0.01, dest="eps")
    ap.add_argument("-B", type=float, default=-1.0, dest="bias")
    ap.add_argument("--repeat", type=int, default=3,
                    help="runs of each method, interleaved; the best is shown")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--row-order", choices=("interleaved", "sorted"), default="interleaved",
                    help="sorted: rows stable-sorted by label, as LIBLINEAR groups them")
    args = ap.parse_args(argv)

    from liblinear import liblinear as lib
    from liblinear import liblinearutil

    t0 = time.perf_counter()
    train_set, _ = make_rcv1_like_split(args.rows, 0, n_features=args.features,
                                        nnz_per_row=args.nnz_per_row, seed=args.seed)
    if args.row_order == "sorted":
        train_set = train_set.subset(np.argsort(train_set.y, kind="stable"))
    print(f"data: {train_set.n_samples} x {train_set.n_features}, nnz {train_set.nnz} "
          f"(generated in {time.perf_counter() - t0:.1f} s); -c {args.C:g} -e {args.eps:g} "
          f"-B {args.bias:g}; rows {args.row_order}")
    lib_problem = lib.problem(train_set.y, train_set.to_scipy(), bias=args.bias)

    tiny = train_set.subset(np.arange(min(300, train_set.n_samples)))
    for s in args.solvers.split(","):
        for drv in ("linesearch", "tron"):
            run_dlinear(tiny, Params(solver_type=int(s), bias=args.bias, eps=args.eps,
                                     newton=drv))

    print(f"{'solver':>6} {'method':>18} {'wall s':>8} {'ratio':>6} {'cpu s':>8} "
          f"{'ratio':>6} {'iter':>5} {'Hv':>5} {'passes':>6} {'objective':>18}")
    for s in args.solvers.split(","):
        solver = int(s)
        opts = f"-s {solver} -c {args.C} -e {args.eps} -B {args.bias} -q"
        params = {drv: Params(solver_type=solver, C=args.C, eps=args.eps, bias=args.bias,
                              newton=drv) for drv in ("linesearch", "tron")}
        best = {}       # name -> [wall, cpu, details]; runs interleaved, best of each

        def keep(name, wall, cpu, details):
            if name not in best:
                best[name] = [wall, cpu, details]
            else:
                best[name][0] = min(best[name][0], wall)
                best[name][1] = min(best[name][1], cpu)

        for _ in range(args.repeat):
            t, c = time.perf_counter(), time.process_time()
            theirs_raw = liblinearutil.train(lib_problem, lib.parameter(opts))
            keep("LIBLINEAR 2.50", time.perf_counter() - t, time.process_time() - c,
                 ("", "", "", liblinear_model_to_dlinear(theirs_raw)))
            for drv, p in params.items():
                wall, cpu, w, res, passes = run_dlinear(train_set, p)
                keep(f"dlinear {drv}", wall, cpu,
                     (res.n_iter, res.cg_iter, passes, as_model(train_set, p, w)))
        t_lib, c_lib = best["LIBLINEAR 2.50"][:2]
        for name, (wall, cpu, (it, cg, passes, model)) in best.items():
            f = primal_objective(train_set, params["linesearch"], model)
            print(f"{solver:>6} {name:>18} {wall:8.3f} {wall / t_lib:6.2f} {cpu:8.3f} "
                  f"{cpu / c_lib:6.2f} {it!s:>5} {cg!s:>5} {passes!s:>6} {f:18.10g}")


if __name__ == "__main__":
    main()
