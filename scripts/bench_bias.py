#!/usr/bin/env python
"""Benchmark: the dual SVM with a true bias (-s 1 / -s 3 with -B 1 -R, two-variable CD
under y^T alpha = 0) against the embedded bias (-B 1, one-variable dual CD), on the same
data, one thread.

    python scripts/bench_bias.py                      # 100k rcv1-like rows, 50k x 20 dense
    python scripts/bench_bias.py --rows 50000 --repeat 3
    python scripts/bench_bias.py --search --rows 20000 --dense-rows 5000   # -C warm start

For each set, solver and tolerance: iterations (outer passes), time (best of --repeat),
the primal objective of each run's own formulation, and test accuracy. For L2 loss,
LIBLINEAR's primal Newton -s 2 -B 1 -R solves the same true-bias problem and is timed as a
reference. Numba is warmed up on a tiny problem first.

--search: the -C path of one fold (dlinear.model_selection.run_fold_path, the first fifth
held out) for -s 1 / -s 3 with -B 1 -R, each C warm-started from the previous C's alpha
against every C started cold; total outer iterations, seconds and held-out counts.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import replace

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

from dlinear import Params, Problem, predict, train  # noqa: E402
from dlinear.datasets import make_rcv1_like, make_rcv1_like_split  # noqa: E402
from dlinear.solvers.primal_objective_values import primal_objective  # noqa: E402
from liblinear_oracle import liblinear_model_to_dlinear  # noqa: E402


def dense_split(rows, test_rows, n_features, seed):
    """Gaussian features, planted labels with an offset, 5% flipped."""
    rng = np.random.default_rng(seed)
    n = rows + test_rows
    X = rng.normal(size=(n, n_features))
    y = np.where(X @ rng.normal(size=n_features) + 1.0 > 0, 1.0, -1.0)
    y[rng.random(n) < 0.05] *= -1
    return (Problem.from_arrays(X[:rows], y[:rows]),
            Problem.from_arrays(X[rows:], y[rows:], n_features=n_features))


def timed(fn, repeat):
    best, out = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def search_paths(sets, repeat):
    """Warm-started against cold -C paths of the true-bias duals (see --search)."""
    import dlinear.model_selection as ms
    from dlinear.solver_table import SOLVERS
    print(f"{'set':<26} {'-s':>3} {'#C':>3} {'start':<5} {'iter':>6} {'s':>8}  held-out counts")
    for name, (tr, _) in sets.items():
        perm = np.random.default_rng(0).permutation(tr.n_samples)
        end = tr.n_samples // 5
        for s in (1, 3):
            params = Params(solver_type=s, bias=1.0, regularize_bias=False).resolved()
            Cs = ms.c_grid(ms.calc_start_C(tr, params), 1024.0)
            runs = {}
            row = SOLVERS[s]
            for start in ("warm", "cold"):
                # cold: each C from alpha = 0 (the previous w, which the dual does not read)
                SOLVERS[s] = row if start == "warm" else replace(row, search="primal")
                t, path = timed(lambda: ms.run_fold_path(tr, perm, 0, end, params, Cs,
                                                         ms.PathRequest(0, 0)), repeat)
                runs[start] = path
                print(f"{name:<26} {s:>3} {len(path.scores):>3} {start:<5} "
                      f"{sum(path.n_iter):>6} {t:>8.3f}  {path.scores}", flush=True)
            SOLVERS[s] = row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=100000)
    ap.add_argument("--dense-rows", type=int, default=50000)
    ap.add_argument("--test-rows", type=int, default=10000)
    ap.add_argument("--eps", default="0.1,0.001")
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--search", action="store_true",
                    help="time -C paths warm-started against cold instead")
    args = ap.parse_args(argv)
    from liblinear import liblinearutil

    tiny = make_rcv1_like(300, n_features=40, nnz_per_row=5, seed=9)
    for s in (1, 3):
        for R in (True, False):
            train(tiny, Params(solver_type=s, bias=1.0, regularize_bias=R), n_threads=1)

    sets = {
        f"rcv1-like {args.rows} x 47236": make_rcv1_like_split(args.rows, args.test_rows,
                                                               n_features=47236, seed=3),
        f"dense {args.dense_rows} x 20": dense_split(args.dense_rows, args.test_rows, 20, 4),
    }
    if args.search:
        search_paths(sets, args.repeat)
        return
    print(f"{'set':<26} {'-s':>3} {'eps':>6} {'bias':<9} {'iter':>6} {'s':>8} "
          f"{'primal f':>16} {'test acc':>8}")
    for name, (tr, te) in sets.items():
        lib_problem = liblinearutil.problem(tr.y, tr.to_scipy(), 1.0)
        for s in (1, 3):
            for eps in (float(e) for e in args.eps.split(",")):
                for label, R in (("true -R", False), ("embedded", True)):
                    params = Params(solver_type=s, C=args.C, eps=eps, bias=1.0,
                                    regularize_bias=R, max_iter=100000)
                    lines = []
                    t, model = timed(lambda: train(tr, params, n_threads=1,
                                                   log=lines.append), args.repeat)
                    it = next(int(x.split("=")[1]) for x in lines if "#iter" in x)
                    f = primal_objective(tr, params, model)
                    acc = 100.0 * np.mean(predict(model, te) == te.y)
                    print(f"{name:<26} {s:>3} {eps:>6g} {label:<9} {it:>6} {t:>8.3f} "
                          f"{f:>16.8g} {acc:>7.2f}%", flush=True)
                if s == 1:
                    opt = liblinearutil.parameter(f"-s 2 -e {eps * 0.1:g} -c {args.C:g} -B 1 -R -q")
                    t, lib_model = timed(lambda: liblinearutil.train(lib_problem, opt),
                                         args.repeat)
                    ref = liblinear_model_to_dlinear(lib_model)
                    params = Params(solver_type=1, C=args.C, bias=1.0, regularize_bias=False)
                    f = primal_objective(tr, params, ref)
                    acc = 100.0 * np.mean(predict(ref, te) == te.y)
                    print(f"{name:<26} {'2':>3} {eps * 0.1:>6g} {'LIBLINEAR -R':<9} {'':>6} "
                          f"{t:>8.3f} {f:>16.8g} {acc:>7.2f}%", flush=True)


if __name__ == "__main__":
    main()
