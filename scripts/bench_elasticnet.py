#!/usr/bin/env python
"""Benchmark: -s 6's elastic net (newGLMNET, `--l1-ratio`) against scikit-learn's saga,
time to the same relative objective gap.

    python -m dlinear make-data /work/data/enet_40k --rows 40000 --test-rows 10000
    python scripts/bench_elasticnet.py /work/data/enet_40k.train --ratios 0.5 --gaps 1e-3,1e-6

The problem is  min_w rho ||w||_1 + (1 - rho)/2 ||w||^2 + C sum_i log(1 + exp(-y_i w.x_i))
(with --intercept an unpenalized intercept: dlinear's -B 1 -R, saga's fit_intercept).
f* is the lower of dlinear's objective at -e 1e-9 and the best saga reached. Each solver
runs from scratch at a sequence of tolerances (dlinear's -e 1e-1, 1e-2, ...; saga's tol
1e-1, 1e-2, ...), the two sweeps in step and their runs interleaved, each run timed
(best of --repeat); a solver's time to a gap g is the shortest time of its runs whose
objective is within g of f* (on a quiet machine, its first such run). Both run on one
thread (saga is single-threaded; dlinear trains one binary problem). Numba and
scikit-learn are warmed up on a tiny problem first, so no compile time is counted; the
data are read once (not timed), and dlinear's timed call includes its CSC transposition.
Printed per ratio: the Jaccard index of the two last runs' non-zero weights, the sweep
(tolerance, seconds, gap, non-zeros) of each solver, then per gap the two times and
saga's time over dlinear's.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from dlinear import Params, read_libsvm, train  # noqa: E402
from dlinear.datasets import make_rcv1_like  # noqa: E402


def objective(X, ysign, w, b, rho, C):
    z = X @ w + b
    return float(rho * np.abs(w).sum() + 0.5 * (1.0 - rho) * (w @ w)
                 + C * np.logaddexp(0.0, -ysign * z).sum())


def jaccard(a, b):
    union = np.count_nonzero((a != 0) | (b != 0))
    return 1.0 if union == 0 else np.count_nonzero((a != 0) & (b != 0)) / union


def dlinear_run(problem, rho, C, intercept, eps):
    params = Params(solver_type=6, l1_ratio=rho, C=C, eps=eps,
                    bias=1.0 if intercept else -1.0, regularize_bias=not intercept)
    t = time.perf_counter()
    model = train(problem, params, n_threads=1)
    seconds = time.perf_counter() - t
    w = model.w[:, 0]
    w, b = (w[:-1], float(w[-1])) if intercept else (w, 0.0)
    # dlinear's w faces label[0]; the objective is the same either way round
    return seconds, w, b, np.where(problem.y == model.label[0], 1.0, -1.0)


def saga_run(X, y, rho, C, intercept, tol, max_iter):
    from sklearn.linear_model import LogisticRegression
    est = LogisticRegression(l1_ratio=rho, solver="saga", C=C, tol=tol, max_iter=max_iter,
                             fit_intercept=intercept)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        est.fit(X, y)
        seconds = time.perf_counter() - t
    b = float(est.intercept_[0]) if intercept else 0.0
    return seconds, est.coef_.ravel(), b, np.where(y == est.classes_[1], 1.0, -1.0), \
        int(est.n_iter_[0])


def done(sweeps, name, f_star, gaps, args) -> bool:
    """Whether a solver's sweep may stop: its last run is within a tenth of the smallest
    gap of f*, or (saga) took longer than --saga-budget."""
    if not sweeps[name]:
        return False
    _, seconds, f, _, _ = sweeps[name][-1]
    return (f - f_star) / abs(f_star) <= gaps[-1] / 10 or \
        (name == "saga" and seconds > args.saga_budget)


def warm_up():
    tiny = make_rcv1_like(300, n_features=100, nnz_per_row=8, seed=9)
    for intercept in (False, True):
        dlinear_run(tiny, 0.5, 1.0, intercept, 0.1)
        saga_run(tiny.to_scipy(), tiny.y, 0.5, 1.0, intercept, 0.1, 100)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("train_file")
    ap.add_argument("--rows", type=int, default=0, help="use the first ROWS rows (0: all)")
    ap.add_argument("--ratios", default="0.5", help="l1_ratio values, comma-separated")
    ap.add_argument("-c", "--C", type=float, default=1.0)
    ap.add_argument("--intercept", action="store_true",
                    help="an unpenalized intercept (-B 1 -R; saga's fit_intercept)")
    ap.add_argument("--gaps", default="1e-3,1e-6", help="relative objective gaps")
    ap.add_argument("--repeat", type=int, default=2, help="timed runs per point (best of)")
    ap.add_argument("--saga-budget", type=float, default=120.0,
                    help="stop saga's sweep once one run takes longer (seconds)")
    ap.add_argument("--saga-max-iter", type=int, default=100_000)
    args = ap.parse_args(argv)

    problem = read_libsvm(args.train_file)
    if args.rows:
        problem = problem.subset(np.arange(min(args.rows, problem.n_samples)))
    X, y = problem.to_scipy(), problem.y
    gaps = sorted((float(g) for g in args.gaps.split(",")), reverse=True)
    print(f"data {args.train_file}: {problem.n_samples} rows, {problem.n_features} features, "
          f"{problem.nnz} non-zeros; C = {args.C:g}, intercept "
          f"{'unpenalized (-B 1 -R)' if args.intercept else 'none'}; load "
          f"{os.getloadavg()[0]:.2f}", flush=True)
    warm_up()

    for rho in (float(r) for r in args.ratios.split(",")):
        _, w, b, ys = dlinear_run(problem, rho, args.C, args.intercept, 1e-9)
        f_star = objective(X, ys, w, b, rho, args.C)
        sweeps = {"dlinear": [], "saga": []}
        last_w = {}
        tol = 0.1
        # both sweeps walk the same ladder of tolerances in step, their runs interleaved
        # (dlinear, saga, dlinear, saga, ...), so a change of load hits both
        while tol >= 1e-12 and not all(done(sweeps, name, f_star, gaps, args)
                                       for name in sweeps):
            runs = {"dlinear": [], "saga": []}
            for _ in range(args.repeat):
                if not done(sweeps, "dlinear", f_star, gaps, args) and tol >= 1e-9:
                    runs["dlinear"].append(dlinear_run(problem, rho, args.C, args.intercept,
                                                       tol) + ("",))
                if not done(sweeps, "saga", f_star, gaps, args):
                    *run, n_iter = saga_run(X, y, rho, args.C, args.intercept, tol,
                                            args.saga_max_iter)
                    runs["saga"].append(tuple(run) + (f"{n_iter} epochs",))
            for name, results in runs.items():
                if not results:
                    continue
                seconds, w, b, ys, extra = min(results, key=lambda r: r[0])
                f = objective(X, ys, w, b, rho, args.C)
                sweeps[name].append((tol, seconds, f, np.count_nonzero(w), extra))
                last_w[name] = w
                f_star = min(f_star, f)
            tol /= 10
        if "dlinear" not in last_w or "saga" not in last_w:
            continue
        w_dlinear, w_saga = last_w["dlinear"], last_w["saga"]

        print(f"\nl1_ratio {rho:g}: f* = {f_star:.10g}; non-zero pattern of the last runs: "
              f"Jaccard {jaccard(w_dlinear, w_saga):.4f}")
        first = {}
        for name, sweep in sweeps.items():
            for tol, seconds, f, nnz, extra in sweep:
                gap = max((f - f_star) / abs(f_star), 0.0)
                print(f"  {name:8s} tol {tol:7.0e}  {seconds:8.3f} s  gap {gap:8.1e}  "
                      f"nnz {nnz:6d}  {extra}")
                for g in gaps:
                    if gap <= g:
                        first[name, g] = min(seconds, first.get((name, g), np.inf))
        for g in gaps:
            ours, theirs = first.get(("dlinear", g)), first.get(("saga", g))
            text = [f"  gap {g:7.0e}:",
                    f"dlinear {ours:.3f} s" if ours else "dlinear not reached",
                    f"saga {theirs:.3f} s" if theirs else
                    f"saga not reached (last run {sweeps['saga'][-1][1]:.1f} s)"]
            if ours and theirs:
                text.append(f"saga / dlinear = {theirs / ours:.1f}x")
            print("  ".join(text), flush=True)
    print(f"\nload after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
