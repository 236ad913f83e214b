"""Convergence plot: relative primal objective gap against time, dlinear vs LIBLINEAR 2.50.

Trains -s 0 (L2-regularized logistic regression, Newton) and -s 1 (L2-loss SVC, dual CD)
with dlinear (one thread) and liblinear-official at a sequence of stopping tolerances -e on
a generated rcv1-shaped set, records (seconds, primal objective) of each run, and plots
log10((f - f*) / f*) against seconds, one panel per solver, each curve joining the runs
from the loosest to the tightest -e. f* is the objective of a run at
a very tight tolerance (dlinear's Newton -s 0, and -s 2 for the L2-loss SVC primal of -s 1),
or the lowest objective seen if that is lower. Both objectives are computed by the same
Python code from the two models (dlinear.solvers.primal_objective_values.primal_objective).

Needs matplotlib (pip install ".[plot]").

    python scripts/plot_convergence.py --rows 50000 --out docs/convergence.png
    python scripts/plot_convergence.py --from-json runs.json --out docs/convergence.png
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

from dlinear import Params, train                               # noqa: E402
from dlinear.datasets import make_rcv1_like                    # noqa: E402
from dlinear.solvers.primal_objective_values import primal_objective  # noqa: E402
from liblinear_oracle import liblinear_model_to_dlinear  # noqa: E402

TOLERANCES = {0: [1.0, 0.3, 0.1, 0.03, 0.01, 0.003, 0.001, 1e-4, 1e-5],
              1: [1.0, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001]}
NAMES = {0: "-s 0: L2-regularized logistic regression (primal Newton)",
         1: "-s 1: L2-regularized L2-loss SVC (dual CD)"}
REFERENCE = {0: (0, 1e-7), 1: (2, 1e-7)}     # solver and -e of the f* run


def run(problem, solvers, C, repeat):
    import warnings

    from liblinear import liblinear, liblinearutil

    from dlinear.errors import ConvergenceWarning
    warnings.simplefilter("ignore", ConvergenceWarning)
    lib_problem = liblinear.problem(problem.y, problem.to_scipy())
    train(problem.subset(np.arange(300)), Params(solver_type=0))     # Numba warm-up
    train(problem.subset(np.arange(300)), Params(solver_type=1))
    out = {"rows": problem.n_samples, "features": problem.n_features, "nnz": problem.nnz,
           "C": C, "solvers": {}}
    for s in solvers:
        ref_solver, ref_eps = REFERENCE[s]
        ref = train(problem, Params(solver_type=ref_solver, C=C, eps=ref_eps), n_threads=1)
        f_star = primal_objective(problem, Params(solver_type=ref_solver, C=C), ref)
        runs = {"dlinear": [], "LIBLINEAR 2.50": []}
        for eps in TOLERANCES[s]:
            params = Params(solver_type=s, C=C, eps=eps)
            best = None
            for _ in range(repeat):
                t = time.perf_counter()
                model = train(problem, params, n_threads=1)
                t = time.perf_counter() - t
                best = t if best is None else min(best, t)
            runs["dlinear"].append((eps, best, primal_objective(problem, params, model)))
            best = None
            for _ in range(repeat):
                param = liblinear.parameter(f"-s {s} -c {C} -e {eps} -q")
                t = time.perf_counter()
                lib = liblinearutil.train(lib_problem, param)
                t = time.perf_counter() - t
                best = t if best is None else min(best, t)
            runs["LIBLINEAR 2.50"].append(
                (eps, best, primal_objective(problem, params, liblinear_model_to_dlinear(lib))))
            print(f"-s {s} -e {eps:g}: dlinear {runs['dlinear'][-1][1]:.3f} s, "
                  f"LIBLINEAR {runs['LIBLINEAR 2.50'][-1][1]:.3f} s", flush=True)
        out["solvers"][str(s)] = {"f_star": f_star, "runs": runs}
    return out


def plot(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    solvers = list(results["solvers"])
    fig, axes = plt.subplots(1, len(solvers), figsize=(6.2 * len(solvers), 4.6), squeeze=False)
    styles = {"dlinear": dict(color="tab:blue", marker="o"),
              "LIBLINEAR 2.50": dict(color="tab:orange", marker="s")}
    for ax, s in zip(axes[0], solvers):
        entry = results["solvers"][s]
        runs = entry["runs"]
        f_star = min([entry["f_star"]] + [f for r in runs.values() for _, _, f in r])
        for name, points in runs.items():
            xs, ys, labels = [], [], []
            for eps, t, f in sorted(points, key=lambda p: -p[0]):   # loose to tight
                gap = (f - f_star) / abs(f_star)
                xs.append(t)
                ys.append(math.log10(max(gap, 1e-15)))
                labels.append(eps)
            ax.plot(xs, ys, label=name, **styles.get(name, {}))
            for x, y, eps in zip(xs, ys, labels):
                ax.annotate(f"{eps:g}", (x, y), textcoords="offset points", xytext=(4, 3),
                            fontsize=7, color=styles.get(name, {}).get("color", "k"))
        ax.set_title(NAMES.get(int(s), f"-s {s}"), fontsize=10)
        ax.set_xlabel("seconds (one thread)")
        ax.set_ylabel("log10 relative objective gap (f - f*) / f*")
        ax.set_xlim(left=0)
        ax.grid(True, alpha=0.3)
        ax.legend()
    fig.suptitle(f"{results['rows']} x {results['features']} rcv1-like, "
                 f"{results['nnz']} nonzeros, C = {results['C']:g}; "
                 f"labels: -e of each run", fontsize=10)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=50_000)
    ap.add_argument("--features", type=int, default=47236)
    ap.add_argument("--nnz-per-row", type=float, default=75)
    ap.add_argument("-c", type=float, default=1.0, dest="C")
    ap.add_argument("--solvers", default="0,1")
    ap.add_argument("--repeat", type=int, default=1, help="best of this many runs each")
    ap.add_argument("--out", default="docs/convergence.png")
    ap.add_argument("--save-json", help="also write the measurements here")
    ap.add_argument("--from-json", help="plot these measurements instead of running")
    args = ap.parse_args(argv)
    if args.from_json:
        with open(args.from_json) as f:
            results = json.load(f)
    else:
        problem = make_rcv1_like(args.rows, n_features=args.features,
                                 nnz_per_row=args.nnz_per_row, seed=0)
        results = run(problem, [int(s) for s in args.solvers.split(",")], args.C,
                      args.repeat)
        if args.save_json:
            with open(args.save_json, "w") as f:
                json.dump(results, f, indent=1)
    plot(results, args.out)


if __name__ == "__main__":
    main()
