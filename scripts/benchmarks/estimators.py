"""dlinear.LogisticRegression(solver=NAME) against scikit-learn's LogisticRegression with
the same arguments, as a user switching the import gets it: fit seconds at the default tol
(dlinear: the -s solver's LIBLINEAR -e; scikit-learn: 1e-4), and the relative gap there to
f*, the smaller of dlinear's objective at tol 1e-10 and the one measured."""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import warnings  # noqa: E402

import numpy as np  # noqa: E402
from scipy.special import logsumexp  # noqa: E402

from dlinear.datasets.rcv1_like import make_rcv1_like  # noqa: E402

from . import harness, shapes  # noqa: E402

CASES = {  # name -> (classes, the arguments both estimators get)
    "lbfgs": (2, dict(solver="lbfgs")),
    "newton-cg": (2, dict(solver="newton-cg")),
    "sag": (2, dict(solver="sag")),
    "saga l1": (2, dict(solver="saga", l1_ratio=1.0)),
    "liblinear": (2, dict(solver="liblinear")),
    "liblinear dual": (2, dict(solver="liblinear", dual=True)),
    "liblinear l1": (2, dict(solver="liblinear", l1_ratio=1.0)),
    "lbfgs k classes": (5, dict(solver="lbfgs")),
    "newton-cg k classes": (5, dict(solver="newton-cg")),
    "saga k classes": (5, dict(solver="saga")),
}


def sklearn_objective(est, X, y, arguments) -> float:
    """scikit-learn's problem of these arguments (C = 1) at est's coef_ and intercept_."""
    coef, b = np.atleast_2d(est.coef_), np.atleast_1d(est.intercept_)
    Z = np.asarray(X @ coef.T) + b
    classes = np.unique(y)
    if len(classes) == 2:
        loss = np.logaddexp(0.0, -np.where(y == classes[1], 1.0, -1.0) * Z[:, 0]).sum()
    else:
        loss = (logsumexp(Z, axis=1) - Z[np.arange(len(y)), np.searchsorted(classes, y)]).sum()
    W = np.column_stack([coef, b]) if arguments["solver"] == "liblinear" else coef
    penalty = np.abs(W).sum() if arguments.get("l1_ratio") == 1.0 else 0.5 * (W * W).sum()
    return float(penalty + loss)


class LogisticRegression:
    params = [list(CASES), ["dlinear", "scikit-learn"]]
    param_names = ["case", "library"]
    number = 1
    repeat = 2
    timeout = 600

    def setup(self, case, library):
        from sklearn.linear_model import LogisticRegression as Theirs

        from dlinear.estimators import LogisticRegression as Ours
        warnings.simplefilter("ignore")
        k, self.arguments = CASES[case]
        s = shapes.spec("rcv1")
        P = make_rcv1_like(s["rows"], n_features=20_000, n_classes=k, nnz_per_row=40, seed=7)
        self.X, self.y = P.to_scipy(), P.y
        cls = Ours if library == "dlinear" else Theirs
        self.make = lambda tol=(None if library == "dlinear" else 1e-4): cls(
            **self.arguments, tol=tol, max_iter=100_000)
        self.make().fit(self.X[:300], self.y[:300])          # Numba warm-up

    def time_fit(self, case, library):
        self.make().fit(self.X, self.y)

    def track_gap_at_default_tol(self, case, library):
        from dlinear.estimators import LogisticRegression as Ours
        tight = Ours(**self.arguments, tol=1e-10, max_iter=100_000).fit(self.X, self.y)
        f = sklearn_objective(self.make().fit(self.X, self.y), self.X, self.y, self.arguments)
        return harness.relative_gap(f, min(f, sklearn_objective(tight, self.X, self.y,
                                                                self.arguments)))
    track_gap_at_default_tol.unit = "(f - f*) / f*"
