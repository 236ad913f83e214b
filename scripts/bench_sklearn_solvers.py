"""dlinear.LogisticRegression(solver=NAME) against scikit-learn's LogisticRegression with
the same solver name and parameters (issue #16), as a user switching the import gets it.

    nice -n 15 python scripts/bench_sklearn_solvers.py --lock /tmp/dlinear-bench.lock \
        --rows 10000 --features 10000 --classes 5
    python scripts/bench_sklearn_solvers.py --cases 0,1,2      # a part of CASES

On make_rcv1_like(rows, features, classes, nnz) (and its two-class version), for each
case both estimators get the same arguments and are timed twice, best of --repeat, the
two interleaved: at their default tol (dlinear: the -s solver's LIBLINEAR -e; scikit-learn:
1e-4, max_iter raised so that it stops at its tol), and at the first tol of 1e-1, 1e-2,
... that reaches a relative gap (f - f*) / f* <= 1e-6 (found untimed first). f* is the
smaller objective of both at tol 1e-10 (untimed). Printed: seconds, the ratio
scikit-learn / dlinear, the gaps at the defaults, and the -s dlinear used ("0m": the
multinomial -s 0). BLAS/OpenMP threads are limited to one.
"""
import argparse
import contextlib
import fcntl
import os
import sys
import time
import warnings

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import numpy as np  # noqa: E402
from scipy.special import logsumexp  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from dlinear.datasets import make_rcv1_like  # noqa: E402

CASES = [  # (classes, arguments both estimators get)
    (2, dict(solver="lbfgs")), (2, dict(solver="newton-cg")), (2, dict(solver="sag")),
    (2, dict(solver="saga", l1_ratio=1.0)), (2, dict(solver="liblinear")),
    (2, dict(solver="liblinear", dual=True)), (2, dict(solver="liblinear", l1_ratio=1.0)),
    ("k", dict(solver="lbfgs")), ("k", dict(solver="newton-cg")), ("k", dict(solver="saga")),
]


def objective(est, X, y, C, args):
    """scikit-learn's problem of these arguments at est's coef_ and intercept_."""
    coef, b = np.atleast_2d(est.coef_), np.atleast_1d(est.intercept_)
    Z = np.asarray(X @ coef.T) + b
    classes = np.unique(y)
    if len(classes) == 2:
        loss = np.logaddexp(0.0, -np.where(y == classes[1], 1.0, -1.0) * Z[:, 0]).sum()
    else:
        loss = (logsumexp(Z, axis=1) - Z[np.arange(len(y)), np.searchsorted(classes, y)]).sum()
    W = np.column_stack([coef, b]) if args["solver"] == "liblinear" else coef
    penalty = np.abs(W).sum() if args.get("l1_ratio") == 1.0 else 0.5 * (W * W).sum()
    return float(penalty + C * loss)


@contextlib.contextmanager
def benchmark_lock(path):
    """The shared benchmark lock and a raised priority, for the timed runs only."""
    if path is None:
        yield
        return
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        before = os.getpriority(os.PRIO_PROCESS, 0)
        os.setpriority(os.PRIO_PROCESS, 0, -10)
        try:
            yield
        finally:
            os.setpriority(os.PRIO_PROCESS, 0, before)
            fcntl.flock(handle, fcntl.LOCK_UN)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--features", type=int, default=20000)
    ap.add_argument("--classes", type=int, default=5)
    ap.add_argument("--nnz", type=int, default=40)
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--lock", default=None,
                    help="hold this file's lock (and nice -10) for the timed runs only, e.g. "
                         "/tmp/dlinear-bench.lock; the untimed searches run before it")
    ap.add_argument("--cases", default=None,
                    help="comma-separated indices into CASES (default: all), to split runs")
    args = ap.parse_args(argv)

    from sklearn.linear_model import LogisticRegression as Theirs

    from dlinear.estimators import LogisticRegression as Ours

    data = {}
    for k in (2, args.classes):
        P = make_rcv1_like(args.rows, n_features=args.features, n_classes=k,
                           nnz_per_row=args.nnz, seed=7)
        data[k] = (P.to_scipy(), P.y)
    print(f"rows {args.rows}, features {args.features}, nnz/row {args.nnz}, C {args.C}, "
          f"classes 2 and {args.classes}; load {os.getloadavg()[0]:.2f}")
    chosen = (CASES if args.cases is None
              else [CASES[int(i)] for i in args.cases.split(",")])
    warnings.simplefilter("ignore")
    runs = []       # untimed first: f* and the tols reaching 1e-6 of it
    for k, kw in chosen:
        k = args.classes if k == "k" else k
        X, y = data[k]
        kw = dict(kw, C=args.C)
        makers = {"ours": lambda tol=None, kw=kw: Ours(**kw, tol=tol, max_iter=100000),
                  "theirs": lambda tol=1e-4, kw=kw: Theirs(**kw, tol=tol, max_iter=100000)}
        f_star = min(objective(make(1e-10).fit(X, y), X, y, args.C, kw)
                     for make in makers.values())

        def gap(est, X=X, y=y, kw=kw, f_star=f_star):
            return (objective(est, X, y, args.C, kw) - f_star) / f_star

        matched = {name: next((tol for tol in 10.0 ** -np.arange(1, 11)
                               if gap(make(tol).fit(X, y)) <= 1e-6), 1e-10)
                   for name, make in makers.items()}
        runs.append((k, kw, X, y, makers, gap, matched))

    with benchmark_lock(args.lock):
        print(f"timed with the lock; load {os.getloadavg()[0]:.2f}")
        print(f"{'case':40s} {'-s':>3s} | default tol: {'dlinear':>7s} {'sklearn':>7s} "
              f"{'ratio':>6s} {'gaps':>17s} | gap 1e-6: {'dlinear':>7s} {'sklearn':>7s} "
              f"{'ratio':>6s}")
        for k, kw, X, y, makers, gap, matched in runs:
            best, gaps = {}, {}
            for _ in range(args.repeat):
                for name, make in makers.items():
                    for run, tol in (("default", None), ("matched", matched[name])):
                        est = make() if tol is None else make(tol)
                        t = time.perf_counter()
                        est.fit(X, y)
                        seconds = time.perf_counter() - t
                        best[name, run] = min(best.get((name, run), np.inf), seconds)
                        if run == "default":
                            gaps[name] = gap(est)
                        if name == "ours":
                            sid = f"{est.solver_type_}{'m' if est.model_.multinomial else ''}"
            label = f"{k} classes " + ", ".join(f"{a}={v}" for a, v in kw.items()
                                                if a != "C")
            ratio = {run: best["theirs", run] / best["ours", run]
                     for run in ("default", "matched")}
            print(f"{label:40s} {sid:>3s} | {'':12s} {best['ours', 'default']:7.2f} "
                  f"{best['theirs', 'default']:7.2f} {ratio['default']:6.2f} "
                  f"{gaps['ours']:8.1e} {gaps['theirs']:8.1e} | {'':9s} "
                  f"{best['ours', 'matched']:7.2f} {best['theirs', 'matched']:7.2f} "
                  f"{ratio['matched']:6.2f}   tols {matched['ours']:.0e} "
                  f"{matched['theirs']:.0e}", flush=True)
    print(f"load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
