"""Benchmark: dlinear's coordinate-descent solvers against liblinear-official 2.50.

For each solver, the time to reach a 1% relative primal-objective gap,
(f(w) - f*) / f* <= 0.01, where f* is the best objective LIBLINEAR reaches at a tight
tolerance (its primal Newton solver where one exists, else the same dual solver), on

  * rcv1: `dlinear.datasets.make_rcv1_like(--rows)` (47,236 features, ~75 nonzeros per row,
    unit-norm tf-idf rows; regression targets X w_true + noise for -s 12/13);
  * few-features: --few-rows dense rows of 20 Gaussian features, planted linear labels
    (with 5% flipped) / targets: the many-rows/few-features case where primal methods
    tend to win.

For the L1 losses (-s 3, -s 13) LIBLINEAR has no primal solver and its dual one can stop
at its 300-iteration cap well short of the optimum (seen on the few-features set), so an
untimed dlinear run of the same dual solver with a 3000-iteration cap also enters f*
(the smallest value is used; all are printed).

"Time to the gap" is measured the same way for both libraries: runs from scratch at a
sequence of tolerances eps = 1, 1/2, 1/4, ... (online variants: update budgets of
1/4, 1/2, 1, 2, ... passes), loosest first; the time is that of the first run whose model
is within the gap. dlinear is timed through `dlinear.train` (including its set-up, e.g. the
CSC copy of primal CD), LIBLINEAR through `liblinearutil.train` on a prebuilt problem,
in the same process, after a Numba warm-up. Ratios are dlinear / LIBLINEAR (< 1: faster).
A sweep that reaches the solver's iteration cap without the gap stops there ("cap").
One-variable and two-variable (--cd-block 2) dual CD are printed side by side.

    python scripts/bench_cd.py [--rows 100000] [--few-rows 200000] [--gap 0.01]
                               [--only rcv1|few] [--repeat 1]
"""
import argparse
import os
import sys
import tempfile
import time
import warnings

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

from dlinear import ConvergenceWarning, Params, train  # noqa: E402
from dlinear.data import Problem  # noqa: E402
from dlinear.datasets import make_rcv1_like  # noqa: E402
from dlinear.solvers.primal_objective_values import primal_objective  # noqa: E402
from liblinear_oracle import liblinear_model_to_dlinear  # noqa: E402

# (label, dlinear Params keywords, LIBLINEAR counterpart -s, formulation)
SOLVER_RUNS = [
    ("-s 1", dict(solver_type=1), 1, "l2svc"),
    ("-s 1 --cd-block 2", dict(solver_type=1, cd_block=2), 1, "l2svc"),
    ("-s 1 --online", dict(solver_type=1, online=True), 1, "l2svc"),
    ("-s 3", dict(solver_type=3), 3, "l1svc"),
    ("-s 3 --cd-block 2", dict(solver_type=3, cd_block=2), 3, "l1svc"),
    ("-s 3 --online", dict(solver_type=3, online=True), 3, "l1svc"),
    ("-s 2 --primal-cd", dict(solver_type=2, primal_cd=True), 2, "l2svc"),
    ("-s 2 --primal-cd --online", dict(solver_type=2, primal_cd=True, online=True), 2, "l2svc"),
    ("-s 7", dict(solver_type=7), 7, "lr"),
    ("-s 12", dict(solver_type=12), 12, "l2svr"),
    ("-s 13", dict(solver_type=13), 13, "l1svr"),
]

# LIBLINEAR runs giving f* for each formulation (the best of them is taken)
REFERENCE = {
    "l2svc": ["-s 2 -e 1e-6", "-s 1 -e 1e-5"],
    "l1svc": ["-s 3 -e 1e-5"],
    "lr": ["-s 0 -e 1e-6", "-s 7 -e 1e-5"],
    "l2svr": ["-s 11 -e 1e-7", "-s 12 -e 1e-5"],
    "l1svr": ["-s 13 -e 1e-5"],
}
FORMULATION_SOLVER = {"l2svc": 2, "l1svc": 3, "lr": 0, "l2svr": 11, "l1svr": 13}
# untimed dlinear runs that also give f* (L1 losses: LIBLINEAR has only the capped dual)
DLINEAR_REFERENCE = {"l1svc": dict(solver_type=3, eps=1e-6, max_iter=3000),
                     "l1svr": dict(solver_type=13, eps=1e-6, max_iter=3000)}

EPS_GRID = [2.0 ** -k for k in range(0, 21)]          # 1 .. ~1e-6
PASS_GRID = [2.0 ** k for k in range(-2, 9)]          # 1/4 .. 256 passes


def rcv1_sets(rows, seed=1):
    cls = make_rcv1_like(rows, seed=seed)
    X = cls.to_scipy()
    rng = np.random.default_rng(seed + 100)
    y = X @ rng.normal(size=X.shape[1]) + 0.1 * rng.normal(size=X.shape[0])
    return cls, Problem.from_arrays(X, y, n_features=cls.n_features)


def few_feature_sets(rows, n_features=20, seed=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows, n_features))
    w = rng.normal(size=n_features)
    score = X @ w + 0.5 * rng.normal(size=rows)
    y = np.where(score > 0, 1.0, -1.0)
    flip = rng.random(rows) < 0.05
    y[flip] = -y[flip]
    Xs = sp.csr_matrix(X)
    target = X @ w + 0.1 * rng.normal(size=rows)
    return (Problem.from_arrays(Xs, y), Problem.from_arrays(Xs, target))


def lib_problem(problem):
    from liblinear import liblinear
    return liblinear.problem(problem.y, problem.to_scipy())


def lib_train(lib_prob, options):
    """(seconds, model as a dlinear Model, hit its iteration cap?). LIBLINEAR's own output
    (fd 1; it flushes every line) goes to a temporary file, read for its cap warning."""
    from liblinear import liblinear, liblinearutil
    param = liblinear.parameter(options)
    sys.stdout.flush()
    saved = os.dup(1)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 1)
        try:
            t = time.perf_counter()
            model = liblinearutil.train(lib_prob, param)
            seconds = time.perf_counter() - t
        finally:
            os.dup2(saved, 1)
            os.close(saved)
        tmp.seek(0)
        capped = b"reaching max number of iterations" in tmp.read()
    return seconds, liblinear_model_to_dlinear(model), capped


def dl_train(problem, params):
    """(seconds, model, hit its iteration cap?)."""
    lines = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        t = time.perf_counter()
        model = train(problem, params, log=lines.append, n_threads=1)
        seconds = time.perf_counter() - t
    capped = any(line.startswith("WARNING: reaching max number of iterations")
                 for line in lines)
    return seconds, model, capped


def time_to_gap(run, knobs, objective, f_star, gap, repeat):
    """(seconds, knob, objective) of the first knob whose run is within the gap (best of
    `repeat` timings), or (None, "cap" or None, best objective seen) when no run is: the
    sweep stops at the first run that ends at the solver's iteration cap, since tighter
    tolerances then only repeat the same capped run."""
    best_f = np.inf
    for knob in knobs:
        seconds, model, capped = run(knob)
        f = objective(model)
        best_f = min(best_f, f)
        if (f - f_star) / abs(f_star) <= gap:
            for _ in range(repeat - 1):
                seconds = min(seconds, run(knob)[0])
            return seconds, knob, f
        if capped:
            return None, "cap", best_f
    return None, None, best_f


def warm_up():
    """Compile (or load from the cache) every kernel once on a tiny problem."""
    cls, reg = rcv1_sets(200, seed=9)
    for _, kw, _, form in SOLVER_RUNS:
        problem = reg if form.endswith("svr") else cls
        dl_train(problem, Params(eps=0.1, **kw))


def bench_dataset(name, cls, reg, gap, repeat, out):
    out(f"\n### {name}: {cls.n_samples} rows, {cls.n_features} features, "
        f"{cls.nnz} nonzeros\n")
    lib_probs = {"cls": lib_problem(cls), "reg": lib_problem(reg)}
    f_star = {}
    for form, runs in REFERENCE.items():
        key = "reg" if form.endswith("svr") else "cls"
        problem = reg if key == "reg" else cls
        params = Params(solver_type=FORMULATION_SOLVER[form])
        values = []
        for options in runs:
            seconds, model, _ = lib_train(lib_probs[key], options)
            values.append(primal_objective(problem, params, model))
        source = f"LIBLINEAR {' / '.join(runs)}"
        if form in DLINEAR_REFERENCE:
            # no primal solver in LIBLINEAR for the L1 losses, and its dual one may stop at
            # its 300-iteration cap far from the optimum: a long dlinear run joins in
            _, model, _ = dl_train(problem, Params(**DLINEAR_REFERENCE[form]))
            values.append(primal_objective(problem, params, model))
            source += f" / dlinear -s {DLINEAR_REFERENCE[form]['solver_type']} -e 1e-6 " \
                      f"--max-iter {DLINEAR_REFERENCE[form]['max_iter']}"
        f_star[form] = min(values)
        out(f"f* {form:6s} = {f_star[form]:.10g}  (best of {source}: "
            + ", ".join(f"{v:.10g}" for v in values) + ")")

    out("")
    out("| dlinear solver | LIBLINEAR | dlinear s | LIBLINEAR s | ratio | dlinear knob "
        "| LIBLINEAR eps |")
    out("|---|---|---:|---:|---:|---|---|")
    lib_cache = {}
    results = {}
    for label, kw, lib_s, form in SOLVER_RUNS:
        key = "reg" if form.endswith("svr") else "cls"
        problem = reg if key == "reg" else cls
        params0 = Params(solver_type=FORMULATION_SOLVER[form])

        def objective(model, problem=problem, params0=params0):
            return primal_objective(problem, params0, model)

        if lib_s not in lib_cache:
            lib_cache[lib_s] = time_to_gap(
                lambda e: lib_train(lib_probs[key], f"-s {lib_s} -e {e:g}"),
                EPS_GRID, objective, f_star[form], gap, repeat)
        lib_t, lib_e, _ = lib_cache[lib_s]

        if kw.get("online"):
            n_var = problem.n_samples if kw["solver_type"] != 2 else problem.n_features
            knobs = [max(1, int(p * n_var)) for p in PASS_GRID]
            dl = time_to_gap(
                lambda u: dl_train(problem, Params(eps=1e-9, max_updates=u, **kw)),
                knobs, objective, f_star[form], gap, repeat)
            knob = f"{dl[1] / n_var:g} passes" if dl[0] is not None else (dl[1] or "-")
        else:
            dl = time_to_gap(lambda e: dl_train(problem, Params(eps=e, **kw)),
                             EPS_GRID, objective, f_star[form], gap, repeat)
            knob = f"eps {dl[1]:g}" if dl[0] is not None else (dl[1] or "-")
        dl_t = dl[0]
        results[label] = dl_t
        ratio = f"{dl_t / lib_t:.2f}" if dl_t and lib_t else "-"
        fmt = (lambda t: f"{t:.3f}" if t is not None else "not reached")
        out(f"| {label} | -s {lib_s} | {fmt(dl_t)} | {fmt(lib_t)} | {ratio} | {knob} "
            f"| {lib_e if lib_e is not None else '-'} |")
        if dl_t is None or lib_t is None:
            out(f"|   (best objective: dlinear {dl[2]:.10g}, LIBLINEAR "
                f"{lib_cache[lib_s][2]:.10g}) | | | | | | |")

    for s in (1, 3):
        one, two = results.get(f"-s {s}"), results.get(f"-s {s} --cd-block 2")
        if one and two:
            out(f"\none-variable vs two-variable dual CD, -s {s}: {one:.3f} s vs {two:.3f} s "
                f"(two/one = {two / one:.2f})")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=100_000, help="rcv1-like rows (500000 for full)")
    ap.add_argument("--few-rows", type=int, default=200_000, help="rows of the 20-feature set")
    ap.add_argument("--gap", type=float, default=0.01, help="relative objective gap")
    ap.add_argument("--repeat", type=int, default=1, help="timings per successful run (best)")
    ap.add_argument("--only", choices=["rcv1", "few"], default=None)
    args = ap.parse_args(argv)

    def out(line=""):
        print(line, flush=True)

    t0 = time.perf_counter()
    warm_up()
    out(f"Numba warm-up: {time.perf_counter() - t0:.1f} s; gap {args.gap:g}; "
        f"CPU count {os.cpu_count()}")
    if args.only in (None, "rcv1"):
        cls, reg = rcv1_sets(args.rows)
        bench_dataset("rcv1-like", cls, reg, args.gap, args.repeat, out)
    if args.only in (None, "few"):
        cls, reg = few_feature_sets(args.few_rows)
        bench_dataset("few features, many rows", cls, reg, args.gap, args.repeat, out)
    out(f"\ntotal wall time {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
