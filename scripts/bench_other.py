#!/usr/bin/env python
"""Benchmark: dlinear's -s 4, -s 5, -s 6 and -s 21 against LIBLINEAR 2.50 on the same data.

    python scripts/bench_other.py                      # 50k x 20k, 20 classes for -s 4
    python scripts/bench_other.py --rows 200000 --features 50000   # the issue's size

Data are generated with dlinear.datasets.make_rcv1_like_split (rcv1-like tf-idf rows):
a `--classes`-class set for -s 4 and a binary set of the same shape for -s 5, -s 6 and
-s 21 (whose labels one-class training ignores). Numba kernels are warmed up on a tiny
problem first, so compile time is not counted. Timed: dlinear.train (single thread,
including its CSC transposition for -s 5/-s 6) and liblinearutil.train on a prebuilt
liblinear problem (including LIBLINEAR's own transposition). Objectives are recomputed
from both models by the same Python code: the primal of each formulation (for -s 21 the
primal at (w, rho) and the dual 0.5||w||^2).
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

from dlinear import Params, predict, train  # noqa: E402
from dlinear.datasets import make_rcv1_like, make_rcv1_like_split  # noqa: E402
from dlinear.solvers.primal_objective_values import primal_objective  # noqa: E402
from liblinear_oracle import liblinear_model_to_dlinear  # noqa: E402
from dlinear.solvers.oneclass import oneclass_objectives  # noqa: E402


def jaccard(a, b):
    nz_a, nz_b = a != 0, b != 0
    union = np.count_nonzero(nz_a | nz_b)
    return 1.0 if union == 0 else np.count_nonzero(nz_a & nz_b) / union


def options(params):
    opt = f"-s {params.solver_type} -e {params.eps:g} -c {params.C:g} -B {params.bias:g} -q"
    if params.solver_type == 21:
        opt += f" -n {params.nu:g}"
    if not params.regularize_bias:
        opt += " -R"
    return opt


def warm_up(solvers):
    tiny = make_rcv1_like(400, n_features=60, n_classes=3, nnz_per_row=6, seed=99)
    tiny_binary = make_rcv1_like(400, n_features=60, nnz_per_row=6, seed=99)
    for s in solvers:
        train(tiny if s == 4 else tiny_binary, Params(solver_type=s), n_threads=1)
        if s in (5, 6):
            train(tiny_binary, Params(solver_type=s, bias=1.0, regularize_bias=False),
                  n_threads=1)


def run(solver, params, train_set, test_set, repeat, n_threads):
    from liblinear import liblinearutil
    lib_problem = liblinearutil.problem(train_set.y, train_set.to_scipy(),
                                        params.bias if params.bias >= 0 else -1)
    lib_param = liblinearutil.parameter(options(params))
    t_ours, t_lib = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        ours = train(train_set, params, n_threads=n_threads)
        t_ours.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        lib_model = liblinearutil.train(lib_problem, lib_param)
        t_lib.append(time.perf_counter() - t0)
    theirs = liblinear_model_to_dlinear(lib_model)
    f_ours = primal_objective(train_set, params, ours)
    f_lib = primal_objective(train_set, params, theirs)
    row = {
        "solver": solver, "ours_s": min(t_ours), "lib_s": min(t_lib),
        "f_ours": f_ours, "f_lib": f_lib, "rel": (f_ours - f_lib) / abs(f_lib),
    }
    if solver == 21:
        row["dual_ours"] = oneclass_objectives(train_set, ours, params.nu)[0]
        row["dual_lib"] = oneclass_objectives(train_set, theirs, params.nu)[0]
        row["agree"] = 100.0 * np.mean(predict(ours, test_set) == predict(theirs, test_set))
    else:
        row["acc_ours"] = 100.0 * np.mean(predict(ours, test_set) == test_set.y)
        row["acc_lib"] = 100.0 * np.mean(predict(theirs, test_set) == test_set.y)
    if solver in (5, 6):
        row["nnz"] = (int(np.count_nonzero(ours.w)), int(np.count_nonzero(theirs.w)))
        row["jaccard"] = jaccard(ours.w, theirs.w)
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=50000)
    ap.add_argument("--features", type=int, default=20000)
    ap.add_argument("--classes", type=int, default=20, help="classes of the -s 4 set")
    ap.add_argument("--nnz", type=float, default=75, help="mean distinct words per row")
    ap.add_argument("--test-rows", type=int, default=10000)
    ap.add_argument("--solvers", default="4,5,6,21")
    ap.add_argument("--eps", type=float, default=None, help="default: each solver's")
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--nu", type=float, default=0.1)
    ap.add_argument("--bias", type=float, default=1.0, help="-B (not used for -s 21)")
    ap.add_argument("--repeat", type=int, default=1, help="best of N runs")
    ap.add_argument("--threads", type=int, default=1, help="dlinear threads (one-vs-rest)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    solvers = [int(s) for s in args.solvers.split(",")]

    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cpus, "
          f"python {platform.python_version()}, numpy {np.__version__}")
    t0 = time.perf_counter()
    warm_up(solvers)
    print(f"# warm-up (Numba compile or cache load): {time.perf_counter() - t0:.1f} s")

    sets = {}
    if 4 in solvers:
        sets["multi"] = make_rcv1_like_split(args.rows, args.test_rows, n_features=args.features,
                                             n_classes=args.classes, nnz_per_row=args.nnz,
                                             seed=args.seed)
    if any(s != 4 for s in solvers):
        sets["binary"] = make_rcv1_like_split(args.rows, args.test_rows,
                                              n_features=args.features, nnz_per_row=args.nnz,
                                              seed=args.seed + 1)
    for name, (tr, _) in sets.items():
        print(f"# {name}: {tr.n_samples} x {tr.n_features}, nnz {tr.nnz}, "
              f"{len(np.unique(tr.y))} classes")

    print(f"{'solver':<10} {'dlinear s':>10} {'LIBLINEAR s':>12} {'ratio':>6} "
          f"{'f dlinear':>16} {'f LIBLINEAR':>16} {'rel diff':>9}  extra")
    for s in solvers:
        tr, te = sets["multi" if s == 4 else "binary"]
        params = Params(solver_type=s, C=args.C, eps=args.eps, nu=args.nu,
                        bias=-1.0 if s == 21 else args.bias).resolved()
        r = run(s, params, tr, te, args.repeat, args.threads)
        if s == 21:
            extra = (f"dual {r['dual_ours']:.6g} vs {r['dual_lib']:.6g}, "
                     f"test labels agree {r['agree']:.2f}%")
        else:
            extra = f"test acc {r['acc_ours']:.2f}% vs {r['acc_lib']:.2f}%"
        if s in (5, 6):
            extra += f", nnz {r['nnz'][0]} vs {r['nnz'][1]}, Jaccard {r['jaccard']:.4f}"
        print(f"-s {s:<7} {r['ours_s']:>10.3f} {r['lib_s']:>12.3f} "
              f"{r['ours_s'] / r['lib_s']:>6.2f} {r['f_ours']:>16.8g} {r['f_lib']:>16.8g} "
              f"{r['rel']:>9.1e}  eps {params.eps:g}; {extra}", flush=True)


if __name__ == "__main__":
    main()
