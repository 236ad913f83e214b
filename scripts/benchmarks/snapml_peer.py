"""dlinear against IBM's Snap ML (a threaded CoCoA/SDCA trainer), train call only, on the
same CSR: seconds to reach a relative gap to LIBLINEAR's optimum f*.

    python -m scripts.benchmarks.snapml_peer [--file /work/data/rcv1_542k.train] [--gap 1e-5]
        [--lock PATH] [--problems logistic,squared_hinge,hinge]

Each problem is LIBLINEAR's at C = 1 without a bias: logistic (dlinear -s 0, Snap ML
LogisticRegression), squared hinge (-s 2, SupportVectorMachine(loss="squared_hinge")),
hinge (-s 3, SupportVectorMachine(loss="hinge")). Snap ML's `regularizer` = 1/C gives
exactly LIBLINEAR's problem (its objective is LIBLINEAR's divided by C). Each program runs
a ladder of tolerances, loosest first (dlinear's eps, Snap ML's tol), and the time is that
of the first model within the gap (best of --repeat); dlinear on 1 and 2 threads and on
its default (one per core), Snap ML with n_jobs = 1 and 2. Skipped when snapml is not
installed (it is only a benchmark peer).
"""
from __future__ import annotations

import argparse

import numpy as np

from dlinear import Params
from dlinear.threads import available_cores

from . import harness
from .threads import load

PROBLEMS = {  # name: (dlinear's solvers -s, primal first; Snap ML class; its keywords)
    "logistic": ((0, 7), "LogisticRegression", {}),
    "squared_hinge": ((2, 1), "SupportVectorMachine", {"loss": "squared_hinge"}),
    "hinge": ((3,), "SupportVectorMachine", {"loss": "hinge"}),
}

DLINEAR_EPS = {0: [1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5, 1e-6],
               2: [1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5, 1e-6],
               3: [1.0, 0.3, 0.1, 0.03, 0.01, 3e-3, 1e-3, 1e-4]}
DLINEAR_EPS[1] = DLINEAR_EPS[3]
# -s 7's |g'| (the largest of a sweep) starts near 30 on the rcv1-shaped set and falls
# below 1 by the sweep that reaches 1e-5, so its ladder starts looser
DLINEAR_EPS[7] = [30.0, 10.0, 3.0] + DLINEAR_EPS[3]
SNAPML_TOL = [1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5, 1e-6, 1e-7]


def snapml_fit(X, y, name, kwargs, C, n_jobs, tol):
    """(seconds, w) of one Snap ML fit."""
    import snapml
    model = getattr(snapml, name)(regularizer=1.0 / C, fit_intercept=False, n_jobs=n_jobs,
                                  tol=tol, max_iter=1000, **kwargs)
    t = harness.timed(lambda: model.fit(X, y))
    return t.wall, np.asarray(model.coef_, dtype=np.float64).reshape(-1)


def objective(X, y, C, loss):
    """LIBLINEAR's primal f(w) = 0.5 w.w + C sum loss(y_i x_i.w), labels +1/-1."""
    def f(w):
        m = y * (X @ w)
        if loss == "logistic":
            values = np.logaddexp(0.0, -m)
        elif loss == "squared_hinge":
            values = np.maximum(0.0, 1.0 - m) ** 2
        else:
            values = np.maximum(0.0, 1.0 - m)
        return float(0.5 * w @ w + C * values.sum())
    return f


def run_dlinear(report, problem, name, solver, C, f_star, cores, args):
    """dlinear -s `solver` on 1, 2 and every core: seconds to the gap, into `report`."""
    params = Params(solver_type=solver, C=C)
    harness.warm_up(problem, [params], n_threads=2)

    def dlinear_run(n_threads):
        def run(eps):
            seconds, model, capped = harness.dlinear_fit(
                problem, Params(solver_type=solver, C=C, eps=eps), n_threads)
            return seconds, model, capped
        return run

    for n_threads in sorted({1, 2, cores}):
        with harness.benchmark_lock(args.lock):
            seconds, eps, value = harness.seconds_to_gap(
                dlinear_run(n_threads), DLINEAR_EPS[solver],
                harness.objective_of(problem, params), f_star, args.gap, args.repeat)
        report.add(problem=name, program=f"dlinear -s {solver}", threads=n_threads,
                   seconds=seconds, knob=eps, gap=harness.relative_gap(value, f_star))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--file", default="/work/data/rcv1_542k.train")
    parser.add_argument("--gap", type=float, default=1e-5)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--problems", default="logistic,squared_hinge,hinge")
    parser.add_argument("--snapml", action=argparse.BooleanOptionalAction, default=True,
                        help="also time Snap ML (--no-snapml: dlinear only)")
    harness.add_output_arguments(parser)
    args = parser.parse_args(argv)
    try:
        import snapml  # noqa: F401
    except ImportError:
        print("snapml is not installed: nothing to compare")
        return
    report = harness.Report("snapml_peer", args)
    problem = load(args.file)
    X = problem.to_scipy().tocsr()
    y = np.where(problem.y == problem.y[0], 1.0, -1.0)      # LIBLINEAR's first label: +1
    cores = available_cores()
    report.note(f"{args.file}: {problem.n_samples} x {problem.n_features}, {problem.nnz} "
                f"nonzeros, float64 CSR; gap {args.gap:g}; {cores} cores; C = 1, no bias")
    C = 1.0
    for name in args.problems.split(","):
        solvers, snap_class, kwargs = PROBLEMS[name]
        f_star = harness.f_star(problem, Params(solver_type=solvers[0], C=C))
        f = objective(X, y, C, name)
        for solver in solvers:
            run_dlinear(report, problem, name, solver, C, f_star, cores, args)

        for n_jobs in (1, 2):
            def snap_run(tol):
                seconds, w = snapml_fit(X, y, snap_class, kwargs, C, n_jobs, tol)
                return seconds, w, False
            snapml_fit(X[:1000], y[:1000], snap_class, kwargs, C, n_jobs, 1e-2)   # warm
            with harness.benchmark_lock(args.lock):
                seconds, tol, value = harness.seconds_to_gap(snap_run, SNAPML_TOL, f, f_star,
                                                             args.gap, args.repeat)
            report.add(problem=name, program="snapml", threads=n_jobs, seconds=seconds,
                       knob=tol, gap=harness.relative_gap(value, f_star))
    report.finish(["problem", "program", "threads", "seconds", "knob", "gap"])


if __name__ == "__main__":
    main()
