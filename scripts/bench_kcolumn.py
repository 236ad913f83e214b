"""One-vs-rest Newton: k classes sharing each pass over X (X·W with k columns) against k
single-column passes, measured on the two passes a Newton iteration repeats.

Issue #4 asks whether a driver carrying all k one-vs-rest classes through each pass over
a block (one X·W with k columns) beats k independent drivers. Before building that
driver, this measures its kernel-level ceiling on one core: the Hessian-vector product
(the bulk of the passes) and z = X w, for k columns at once against k calls of the
single-column kernels dlinear uses (dlinear.kernels.primal_ops). The k-column kernels
below are prototypes for this measurement only: S, W are (n, k) and coef, Z are (l, k),
C order, so a row's k values and a feature's k weights are adjacent. Logistic loss
(every row has curvature in every class), the most favourable case for k columns:
with L2 losses each class has its own active rows and a k-column pass would also touch
the rows inactive for some classes.

    python scripts/bench_kcolumn.py --rows 677000

With --production, the k-column kernels dlinear runs (dlinear.kernels.kcolumn_ops, whose
gathers and scatters prefetch the rows of S and of the output) instead of the
prototypes, timed by this process's CPU time (see fit_crossover on why):

    python scripts/bench_kcolumn.py --production --rows 200000 --k 4,8,20,35

With --fit, whole one-vs-rest trainings instead: dlinear.train_in_process with one
driver per class (Params(kcolumn=False)) against k-column Newton (kcolumn=True), both on
one thread, interleaved, best of --repeat, for each k in --k and nnz per row in --nnz:

    python scripts/bench_kcolumn.py --fit --rows 20000 --k 2,4,8,16,35 --nnz 10,70,300
"""
import argparse
import os
import sys
import time

import numpy as np
from numba import njit

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from dlinear.datasets import make_rcv1_like           # noqa: E402
from dlinear.kernels import kcolumn_ops as KK          # noqa: E402
from dlinear.kernels import primal_ops as K            # noqa: E402


@njit(cache=True, nogil=True)
def hess_vec_k(indptr, indices, data, coef, S, out):
    """out[:, c] += X^T diag(coef[:, c]) X S[:, c] for all k columns in one pass."""
    k = S.shape[1]
    t = np.empty(k)
    for i in range(np.uint64(len(indptr) - 1)):
        for c in range(k):
            t[c] = 0.0
        for q in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            j = np.uint64(indices[q])
            v = data[q]
            for c in range(k):
                t[c] += v * S[j, c]
        for c in range(k):
            t[c] *= coef[i, c]
        for q in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            j = np.uint64(indices[q])
            v = data[q]
            for c in range(k):
                out[j, c] += t[c] * v


@njit(cache=True, nogil=True)
def xv_k(indptr, indices, data, W, Z):
    """Z[i, c] = x_i . W[:, c] for all k columns in one pass."""
    k = W.shape[1]
    for i in range(np.uint64(len(indptr) - 1)):
        for c in range(k):
            Z[i, c] = 0.0
        for q in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            j = np.uint64(indices[q])
            v = data[q]
            for c in range(k):
                Z[i, c] += v * W[j, c]


def best(fn, repeat, clock=time.perf_counter):
    times = []
    for _ in range(repeat):
        t = clock()
        fn()
        times.append(clock() - t)
    return min(times)


def fit_crossover(args):
    """Per-class drivers against k-column Newton, whole trainings on one thread.

    Times are the process's CPU time (time.process_time) and wall time. On the shared
    machine the benchmarks were measured on, other agents' processes took a share of the
    two cores whatever this process's nice value (the kernel groups processes by session,
    sched_autogroup), so wall times were inflated by a varying factor; CPU time counts
    only this process's own work (including its page faults), so the ratio of CPU times
    is the figure compared."""
    from dataclasses import replace

    from dlinear import Params
    from dlinear.train import train_in_process
    print(f"{'solver':>6} {'k':>3} {'nnz/row':>7} {'per-class cpu':>13} {'k-column cpu':>12} "
          f"{'ratio':>6} {'per-class wall':>14} {'k-column wall':>13} {'ratio':>6}  models equal")
    for nnz in [float(x) for x in args.nnz.split(",")]:
        for k in [int(x) for x in args.k.split(",")]:
            P = make_rcv1_like(args.rows, n_features=args.features, n_classes=k,
                               nnz_per_row=nnz, seed=1)
            for solver in [int(x) for x in args.solvers.split(",")]:
                base = Params(solver_type=solver, C=args.C)
                per, tog = replace(base, kcolumn=False), replace(base, kcolumn=True)
                cpu = {False: [], True: []}
                wall = {False: [], True: []}
                models = {}
                for _ in range(args.repeat):
                    for flag, prm in ((False, per), (True, tog)):
                        t, c = time.perf_counter(), time.process_time()
                        models[flag] = train_in_process(P, prm, n_threads=1)
                        wall[flag].append(time.perf_counter() - t)
                        cpu[flag].append(time.process_time() - c)
                c1, ck = min(cpu[False]), min(cpu[True])
                w1, wk = min(wall[False]), min(wall[True])
                same = np.array_equal(models[False].w, models[True].w)
                print(f"{solver:6d} {k:3d} {nnz:7.0f} {c1:12.3f}s {ck:11.3f}s {c1 / ck:6.2f} "
                      f"{w1:13.3f}s {wk:12.3f}s {w1 / wk:6.2f}  {same}", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--features", type=int, default=47_236)
    ap.add_argument("--nnz-per-row", type=float, default=70)
    ap.add_argument("--k", default="1,2,4,8,16,32")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--fit", action="store_true", help="whole trainings (see above)")
    ap.add_argument("--production", action="store_true",
                    help="dlinear's k-column kernels, CPU time (see above)")
    ap.add_argument("--nnz", default="70", help="--fit: nnz per row values")
    ap.add_argument("--solvers", default="0,2", help="--fit: -s values")
    ap.add_argument("--C", type=float, default=1.0)
    args = ap.parse_args(argv)
    if args.fit:
        return fit_crossover(args)

    P = make_rcv1_like(args.rows, n_features=args.features, nnz_per_row=args.nnz_per_row,
                       seed=0)
    n, l = P.n_features, P.n_samples
    clock = time.process_time if args.production else time.perf_counter
    print(f"data: {l} x {n}, nnz {P.nnz}; one core; times are best of {args.repeat}"
          f"{' (CPU time; dlinear.kernels.kcolumn_ops)' if args.production else ''}")
    rng = np.random.default_rng(0)
    rows = np.arange(l, dtype=np.int64)
    print(f"{'k':>3} {'Hv: k x 1 col':>14} {'Hv: k cols':>11} {'ratio':>6} "
          f"{'Xw: k x 1 col':>14} {'Xw: k cols':>11} {'ratio':>6}")
    for k in [int(x) for x in args.k.split(",")]:
        S = np.ascontiguousarray(rng.normal(size=(n, k)))
        coef = np.ascontiguousarray(rng.uniform(0.01, 0.25, size=(l, k)))
        S_cols = [np.ascontiguousarray(S[:, c]) for c in range(k)]
        coef_cols = [np.ascontiguousarray(coef[:, c]) for c in range(k)]
        out1, outk = np.zeros(n), np.zeros((n, k))
        z1, Zk = np.empty(l), np.empty((l, k))

        def hv_single():
            for c in range(k):
                out1[:] = 0.0
                K.hess_vec(P.indptr, P.indices, P.data, n, -1.0, rows, coef_cols[c], l,
                           S_cols[c], out1)

        cols = np.arange(k, dtype=np.int64)

        def hv_k():
            outk[:] = 0.0
            if args.production:
                KK.hess_vec_k(P.indptr, P.indices, P.data, n, -1.0, coef, cols, S, outk)
            else:
                hess_vec_k(P.indptr, P.indices, P.data, coef, S, outk)

        def xv_single():
            for c in range(k):
                K.xv(P.indptr, P.indices, P.data, n, -1.0, S_cols[c], z1)

        def xv_multi():
            if args.production:
                KK.xv_k(P.indptr, P.indices, P.data, n, -1.0, S, Zk, cols)
            else:
                xv_k(P.indptr, P.indices, P.data, S, Zk)

        hv_k()                                  # compile, and check both agree
        out1[:] = 0.0
        K.hess_vec(P.indptr, P.indices, P.data, n, -1.0, rows, coef_cols[-1], l,
                   S_cols[-1], out1)
        assert np.allclose(outk[:, -1], out1)
        xv_multi()
        t_hv1, t_hvk = best(hv_single, args.repeat, clock), best(hv_k, args.repeat, clock)
        t_xv1, t_xvk = (best(xv_single, args.repeat, clock),
                        best(xv_multi, args.repeat, clock))
        print(f"{k:3d} {t_hv1 * 1e3:12.1f}ms {t_hvk * 1e3:9.1f}ms {t_hv1 / t_hvk:6.2f} "
              f"{t_xv1 * 1e3:12.1f}ms {t_xvk * 1e3:9.1f}ms {t_xv1 / t_xvk:6.2f}")


if __name__ == "__main__":
    main()
