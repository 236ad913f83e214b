"""The most a 2-way row split can gain on this machine: Hessian-vector products on all rows
in one process, against two plain processes (no Dask) on half the rows each, started
together.

Map-reduced Newton on 2 workers does exactly the second thing plus the messaging, so the
ratio printed here bounds what `scripts/bench_newton_cluster.py` can show for
"2 workers against local" on the same machine, whatever the messaging costs.

    python scripts/bench_split_ceiling.py --rows 677000

With --classes K it measures instead the split of one-vs-rest -s 0 by classes (the copy
mode of multi-class Newton on a cluster): one process fitting all K classes
(dlinear.train.fit_class_group, the in-process rule: k-column Newton), against two
processes each fitting half of the classes (classes 0, 2, 4, ... and 1, 3, 5, ..., the
cluster's grouping) on its own copy of the data, started together:

    python scripts/bench_split_ceiling.py --classes 35 --rows 48949 --features 297063 \
        --nnz-per-row 95
"""
import argparse
import multiprocessing as mp
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from dlinear.datasets import make_rcv1_like                                  # noqa: E402
from dlinear.solvers.primal_objectives import LOSS_OF_SOLVER, LossTerm      # noqa: E402


def time_hv(problem, solver, n_hv, barrier, out):
    y = np.where(problem.y == 1, 1.0, -1.0)
    term = LossTerm(problem, y, np.ones(problem.n_samples), -1.0, LOSS_OF_SOLVER[solver])
    w = np.full(term.n_variables, 1e-3)
    s = np.random.default_rng(0).normal(size=term.n_variables)
    term.at(w)
    term.grad_precond()
    term.hv(s)                                  # warm: compiled, pages touched
    if barrier is not None:
        barrier.wait()
    start = time.perf_counter()
    for _ in range(n_hv):
        term.hv(s)
    out.put(time.perf_counter() - start)


def time_classes(problem, ks, barrier, out):
    from dlinear import Params
    from dlinear.plan import first_appearance, order_labels, weighted_class_C
    from dlinear.train import fit_class_group
    problem = problem.subset(np.arange(problem.n_samples))     # this process's own copy
    params = Params(solver_type=0).resolved()
    label = order_labels(first_appearance(problem.y))
    weighted_C = weighted_class_C(label, params, lambda line: None)
    # warm: the same path (k-column or per class) compiled, on a few rows
    fit_class_group(problem.subset(np.arange(min(2000, problem.n_samples))), label, ks,
                    weighted_C, params)
    if barrier is not None:
        barrier.wait()
    start = time.perf_counter()
    fit_class_group(problem, label, ks, weighted_C, params)
    out.put(time.perf_counter() - start)


def split_classes(args, ctx):
    P = make_rcv1_like(args.rows, n_features=args.features, n_classes=args.classes,
                       nnz_per_row=args.nnz_per_row, seed=1)
    ks = list(range(args.classes))
    print(f"data: {P.n_samples} x {P.n_features}, nnz {P.nnz}, {args.classes} classes; "
          f"-s 0 one-vs-rest")

    def run(groups):
        return run_together(ctx, time_classes, [(P, g) for g in groups])

    for _ in range(args.repeat):
        t_all = run([ks])
        t_half = run([ks[0::2]])
        t_two = run([ks[0::2], ks[1::2]])
        print(f"all classes, 1 process {t_all:.2f} s; half (0, 2, ...), alone {t_half:.2f} s;"
              f" two halves at once {t_two:.2f} s; ceiling of a 2-way split "
              f"{t_all / t_two:.2f}x (ideal {t_all / t_half:.2f}x)", flush=True)


def run_together(ctx, target, argss):
    """Starts one process per argument tuple, target(*args, barrier, out), released at
    once by the barrier; the slowest one's seconds."""
    out, barrier = ctx.Queue(), ctx.Barrier(len(argss))
    procs = [ctx.Process(target=target, args=(*args, barrier, out)) for args in argss]
    for p in procs:
        p.start()
    times = [out.get() for _ in procs]
    for p in procs:
        p.join()
    return max(times)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--features", type=int, default=47_236)
    ap.add_argument("--nnz-per-row", type=float, default=70)
    ap.add_argument("--hv", type=int, default=20, help="Hessian-vector products timed")
    ap.add_argument("--classes", type=int, default=0,
                    help="split one-vs-rest -s 0 by classes instead (see above)")
    ap.add_argument("--repeat", type=int, default=1, help="--classes: repeats")
    args = ap.parse_args(argv)
    ctx = mp.get_context("fork")        # the children share the generated data
    if args.classes:
        return split_classes(args, ctx)
    P = make_rcv1_like(args.rows, n_features=args.features, nnz_per_row=args.nnz_per_row,
                       seed=0)
    mid = P.n_samples // 2
    halves = [P.subset(np.arange(0, mid)), P.subset(np.arange(mid, P.n_samples))]
    print(f"data: {P.n_samples} x {P.n_features}, nnz {P.nnz}; {args.hv} Hv each")

    def run(jobs):
        return run_together(ctx, time_hv, [(p, s, args.hv) for p, s in jobs])

    for solver in (0, 2):
        t_all = run([(P, solver)])
        t_half = run([(halves[0], solver)])
        t_two = run([(h, solver) for h in halves])
        print(f"-s {solver}: all rows, 1 process {t_all:.2f} s; half, alone {t_half:.2f} s; "
              f"two halves at once {t_two:.2f} s; ceiling of a 2-way split "
              f"{t_all / t_two:.2f}x (ideal {t_all / t_half:.2f}x)")


if __name__ == "__main__":
    main()
