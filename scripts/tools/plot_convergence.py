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

    python -m scripts.tools.plot_convergence --rows 50000 --out docs/images/convergence.png
    python -m scripts.tools.plot_convergence --from-json runs.json --out docs/images/convergence.png
"""
import argparse
import json
import math
import os
import time

import numpy as np

from scripts.benchmarks.harness import liblinear_model_to_dlinear
from scripts.benchmarks.shapes import dense_planted
from dlinear import Params, train
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.solvers.primal_objective_values import primal_objective
from dlinear.kernels.dual_cd_svc import NO_TRACE
from dlinear.threads import stop_flag

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


# ---- --block-cd: one-variable vs two-variable dual CD (Chiu, Lin & Lin, supplementary
# Figures IV-IX): relative distance to the optimal dual objective against CD steps and time

BLOCK_CD_SETS = {      # name: (description, maker)
    "rows>>features": ("make_rcv1_like(20000, n_features=500, nnz_per_row=20, seed=11)",
                       lambda: make_rcv1_like(20000, n_features=500, nnz_per_row=20,
                                              seed=11)),
    "features>>rows": ("make_rcv1_like(3000, n_features=50000, nnz_per_row=75, seed=12)",
                       lambda: make_rcv1_like(3000, n_features=50000, nnz_per_row=75,
                                              seed=12)),
    "dense": ("scripts.benchmarks.shapes.dense_planted(5000, 30, seed=13): Gaussian rows, all "
              "nonzero", lambda: dense_planted(5000, 30, 13)),
}
BLOCK_CD_KERNELS = ("one-variable", "two-variable")
CURVE_EPS = 1e-8      # the curves stop here or at --max-iter
REF_EPS = 1e-11       # the f* runs stop here or at --ref-iter


def block_cd_kernel(name):
    from dlinear.kernels.block_cd_svc import block_cd_svc
    from dlinear.kernels.dual_cd_svc import dual_cd_svc
    return dual_cd_svc if name == "one-variable" else block_cd_svc


def block_cd_call(kernel, problem, y, C, l2_loss, eps, max_iter, shrinking, trace=NO_TRACE):
    alpha = np.zeros(problem.n_samples)
    w = np.zeros(problem.n_features)
    Cv = np.full(problem.n_samples, C)
    return kernel(problem.indptr, problem.indices, problem.data, problem.n_features, -1.0, y,
                  Cv, l2_loss, eps, max_iter, 1, alpha, w, stop_flag(), shrinking, trace)


def newton_dual_optimum(problem, C):
    """[minus the primal optimum of the L2-loss SVC] (strong duality: the dual optimum),
    by the primal Newton -s 2 at eps 1e-10, which gets there in a few steps at any C
    (it may end on "actred too small", i.e. at machine precision); [] if it stops at its
    iteration cap instead (then -P(w) is only a lower bound of the dual optimum)."""
    newton = Params(solver_type=2, C=C, eps=1e-10, bias=-1.0)
    lines = []
    model = train(problem, newton, n_threads=1, log=lines.append)
    if any(line.startswith("WARNING: reaching max number") for line in lines):
        return []
    return [-primal_objective(problem, newton, model)]


def block_cd_study(set_names, Cs, max_iter, ref_iter, timing, repeat):
    """Per set, C, loss and shrinking: each kernel's trace (CD steps, dual objective) per
    outer iteration, run to CURVE_EPS or max_iter; with `timing`, the CPU
    seconds of runs stopped after k outer iterations for k on a geometric grid (the time
    to reach that point from alpha = 0). f* is the lowest dual objective of long reference
    runs (L1 loss: both kernels, shrinking, REF_EPS or ref_iter outer iterations; L2
    loss: newton_dual_optimum, unless Newton stops at its cap) and of everything traced."""
    out = {"max_iter": max_iter, "ref_iter": ref_iter, "sets": {}}
    for name in set_names:
        problem = BLOCK_CD_SETS[name][1]()
        y = np.where(problem.y > 0, 1.0, -1.0)
        entry = {"recipe": BLOCK_CD_SETS[name][0], "rows": problem.n_samples,
                 "features": problem.n_features, "nnz": problem.nnz, "cases": []}
        for C in Cs:
            for l2_loss in (False, True):
                refs = []
                if l2_loss:
                    refs = newton_dual_optimum(problem, C)
                if not refs:
                    refs = [block_cd_call(block_cd_kernel(k), problem, y, C, l2_loss,
                                          REF_EPS, ref_iter, True)[-1]
                            for k in BLOCK_CD_KERNELS]
                for shrinking in (True, False):
                    case = {"C": C, "loss": "l2" if l2_loss else "l1",
                            "shrinking": shrinking, "curves": {}}
                    f_star = min(refs)
                    for k in BLOCK_CD_KERNELS:
                        kernel = block_cd_kernel(k)
                        trace = np.zeros((max_iter, 2))
                        r = block_cd_call(kernel, problem, y, C, l2_loss, CURVE_EPS, max_iter,
                                          shrinking, trace)
                        it = r[0]
                        curve = {"steps": trace[:it, 0].tolist(), "f": trace[:it, 1].tolist(),
                                 "iters": it}
                        f_star = min(f_star, float(trace[:it, 1].min()))
                        if timing:
                            grid = sorted({max(1, int(round(it ** (q / 12.0))))
                                           for q in range(13)})
                            secs = []
                            for kk in grid:
                                best = np.inf
                                for _ in range(repeat):
                                    t0 = time.process_time()
                                    block_cd_call(kernel, problem, y, C, l2_loss, CURVE_EPS, kk,
                                                  shrinking)
                                    best = min(best, time.process_time() - t0)
                                secs.append(best)
                            curve["time_iters"] = grid
                            curve["seconds"] = secs
                        case["curves"][k] = curve
                    case["f_star"] = f_star
                    entry["cases"].append(case)
                    last = {k: (c["f"][-1] - f_star) / abs(f_star)
                            for k, c in case["curves"].items()}
                    print(f"{name} C={C:g} {case['loss']} shrinking={shrinking}: "
                          + ", ".join(f"{k} {case['curves'][k]['iters']} iter, "
                                      f"final rel {v:.2e}" for k, v in last.items()),
                          flush=True)
        out["sets"][name] = entry
    return out


def block_cd_relative(curve, f_star):
    return [max((f - f_star) / abs(f_star), 1e-16) for f in curve["f"]]


def plot_block_cd(results, path, x_axis):
    """One figure per set: rows C x loss, columns shrinking on/off; x is CD steps
    (x_axis == "steps") or CPU seconds ("time")."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    styles = {"one-variable": dict(color="tab:orange"), "two-variable": dict(color="tab:blue")}
    written = []
    for name, entry in results["sets"].items():
        cases = entry["cases"]
        keys = sorted({(c["C"], c["loss"]) for c in cases})
        fig, axes = plt.subplots(len(keys), 2, figsize=(10, 2.8 * len(keys)), squeeze=False)
        for row, (C, loss) in enumerate(keys):
            for col, shrinking in enumerate((False, True)):
                ax = axes[row][col]
                case = next(c for c in cases if c["C"] == C and c["loss"] == loss
                            and c["shrinking"] == shrinking)
                for k, curve in case["curves"].items():
                    rel = block_cd_relative(curve, case["f_star"])
                    if x_axis == "steps":
                        xs = curve["steps"]
                        ys = rel
                    else:
                        if "seconds" not in curve:
                            continue
                        xs = curve["seconds"]
                        ys = [rel[i - 1] for i in curve["time_iters"]]
                    ax.semilogy(xs, ys, label=k, **styles[k])
                ax.set_title(f"C = {C:g}, {loss} loss, shrinking {'on' if shrinking else 'off'}",
                             fontsize=9)
                ax.set_xlabel("CD steps (a pair is one step)" if x_axis == "steps"
                              else "CPU seconds")
                ax.set_ylabel("(f - f*) / |f*|")
                ax.grid(True, alpha=0.3)
                ax.legend(fontsize=8)
        fig.suptitle(f"{name}: {entry['rows']} x {entry['features']}, {entry['nnz']} nonzeros "
                     f"(dual objective, one- vs two-variable CD)", fontsize=10)
        fig.tight_layout()
        out = path.replace(".png", f"_{name.replace('>>', '_gg_')}_{x_axis}.png")
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        fig.savefig(out, dpi=90)
        plt.close(fig)
        written.append(out)
        print(f"wrote {out}")
    return written


def block_cd_summary(results, target=1e-6):
    """A markdown table: per case, the outer iterations, CD steps and CPU seconds each
    kernel needs to reach a relative gap of `target` (or, if either never does, the
    smallest gap both reach). Seconds are interpolated on the timing grid."""
    print("| set | C | loss | shrinking | gap reached | one-var iter / steps / s "
          "| two-var iter / steps / s | steps two/one | time two/one |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, entry in results["sets"].items():
        for case in entry["cases"]:
            rel = {k: block_cd_relative(c, case["f_star"]) for k, c in case["curves"].items()}
            goal = max(target, max(min(r) for r in rel.values()))
            cells, reached = [], {}
            for k, curve in case["curves"].items():
                it = next(t for t, g in enumerate(rel[k]) if g <= goal) + 1
                steps = curve["steps"][it - 1]
                secs = float("nan")
                if "seconds" in curve:
                    secs = float(np.interp(it, curve["time_iters"], curve["seconds"]))
                reached[k] = (steps, secs)
                cells.append(f"{it} / {steps:.3g} / {secs:.3g}")
            one, two = reached["one-variable"], reached["two-variable"]
            print(f"| {name} | {case['C']:g} | {case['loss']} | "
                  f"{'on' if case['shrinking'] else 'off'} | {goal:.0e} | {cells[0]} | "
                  f"{cells[1]} | {two[0] / one[0]:.2f} | {two[1] / one[1]:.2f} |")


def block_cd_main(args):
    if args.from_json:
        with open(args.from_json) as f:
            results = json.load(f)
    else:
        results = block_cd_study(args.sets.split(","), [float(c) for c in args.Cs.split(",")],
                                 args.max_iter, args.ref_iter, args.timing, args.repeat)
        if args.save_json:
            with open(args.save_json, "w") as f:
                json.dump(results, f)
    for x_axis in ("steps", "time"):
        plot_block_cd(results, args.out, x_axis)
    block_cd_summary(results)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=50_000)
    ap.add_argument("--features", type=int, default=47236)
    ap.add_argument("--nnz-per-row", type=float, default=75)
    ap.add_argument("-c", type=float, default=1.0, dest="C")
    ap.add_argument("--solvers", default="0,1")
    ap.add_argument("--repeat", type=int, default=1, help="best of this many runs each")
    ap.add_argument("--out", default="docs/images/convergence.png")
    ap.add_argument("--save-json", help="also write the measurements here")
    ap.add_argument("--from-json", help="plot these measurements instead of running")
    ap.add_argument("--block-cd", action="store_true",
                    help="one- vs two-variable dual CD (Chiu, Lin & Lin's comparison)")
    ap.add_argument("--sets", default=",".join(BLOCK_CD_SETS), help="--block-cd data sets")
    ap.add_argument("--Cs", default="1,8192", help="--block-cd values of C")
    ap.add_argument("--max-iter", type=int, default=500, help="--block-cd outer iterations")
    ap.add_argument("--ref-iter", type=int, default=5000,
                    help="--block-cd outer iterations of the f* reference runs")
    ap.add_argument("--timing", action="store_true",
                    help="--block-cd: also time runs stopped at k outer iterations")
    args = ap.parse_args(argv)
    if args.block_cd:
        block_cd_main(args)
        return
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
