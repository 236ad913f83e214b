"""dlinear.LogisticRegression(solver=NAME) against scikit-learn's LogisticRegression with
the same solver name and parameters (issue #16), as a user switching the import gets it.

    python scripts/bench_sklearn_solvers.py --rows 20000 --features 20000 --classes 5

On make_rcv1_like(rows, features, classes, nnz) (and its two-class version), for each
case both estimators are fitted with the same arguments at their default tol (dlinear:
the -s solver's LIBLINEAR -e; scikit-learn: 1e-4, max_iter raised so that it stops at its
tol), best of --repeat, the two interleaved. Printed: seconds, the ratio scikit-learn /
dlinear, and each model's relative gap (f - f*) / f* to the problem's optimum, f* the
smaller objective of dlinear at tol 1e-10 and scikit-learn at tol 1e-10 (untimed).
BLAS/OpenMP threads are limited to one.
"""
import argparse
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


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--features", type=int, default=20000)
    ap.add_argument("--classes", type=int, default=5)
    ap.add_argument("--nnz", type=int, default=40)
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=2)
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
    print(f"{'case':42s} {'dlinear s':>9s} {'sklearn s':>9s} {'ratio':>6s} "
          f"{'dlinear gap':>11s} {'sklearn gap':>11s}  -s")
    warnings.simplefilter("ignore")
    for k, kw in CASES:
        k = args.classes if k == "k" else k
        X, y = data[k]
        kw = dict(kw, C=args.C)
        f_star = min(objective(Ours(**kw, tol=1e-10, max_iter=100000).fit(X, y), X, y,
                               args.C, kw),
                     objective(Theirs(**kw, tol=1e-10, max_iter=100000).fit(X, y), X, y,
                               args.C, kw))
        best = {"ours": np.inf, "theirs": np.inf}
        for _ in range(args.repeat):
            for name, make in (("ours", lambda: Ours(**kw)),
                               ("theirs", lambda: Theirs(**kw, max_iter=100000))):
                t = time.perf_counter()
                est = make().fit(X, y)
                seconds = time.perf_counter() - t
                if seconds < best[name]:
                    best[name] = seconds
                    best[name + "_gap"] = (objective(est, X, y, args.C, kw) - f_star) / f_star
                    if name == "ours":
                        best["s"] = est.solver_type_ if not est.model_.multinomial else "0m"
        label = f"{k} classes " + ", ".join(f"{a}={v}" for a, v in kw.items() if a != "C")
        print(f"{label:42s} {best['ours']:9.2f} {best['theirs']:9.2f} "
              f"{best['theirs'] / best['ours']:6.2f} {best['ours_gap']:11.1e} "
              f"{best['theirs_gap']:11.1e}  {best['s']}", flush=True)
    print(f"load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
