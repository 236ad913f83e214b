"""-s 6's elastic net (newGLMNET, `l1_ratio`) against scikit-learn's saga: seconds to a
relative objective gap to f* (dlinear's objective at -e 1e-9), each solver swept over its
tolerances 1e-1, 1e-2, ... from scratch, both on one thread; saga's sweep ends after a run
longer than SAGA_BUDGET seconds.

The problem: min_w rho ||w||_1 + (1 - rho)/2 ||w||^2 + C sum_i log(1 + exp(-y_i w.x_i)).
"""
from __future__ import annotations

import warnings

import numpy as np

from dlinear import Params, train

from . import harness, shapes

TOLS = [10.0 ** -k for k in range(1, 10)]
SAGA_BUDGET = 60.0


def objective(X, ysign, w, rho, C):
    return float(rho * np.abs(w).sum() + 0.5 * (1.0 - rho) * (w @ w)
                 + C * np.logaddexp(0.0, -ysign * (X @ w)).sum())


class ElasticNet:
    params = [[0.2, 0.5, 0.8], [1e-3, 1e-6]]
    param_names = ["l1_ratio", "gap"]
    timeout = 1800

    def setup_cache(self):
        from sklearn.linear_model import LogisticRegression
        problem = shapes.load("rcv1")
        X, y = problem.to_scipy(), problem.y
        harness.warm_up(problem, [Params(solver_type=6, l1_ratio=0.5)])

        def ours(rho, tol):
            t = harness.timed(lambda: train(problem, Params(solver_type=6, l1_ratio=rho,
                                                            eps=tol), n_threads=1))
            ysign = np.where(y == t.value.label[0], 1.0, -1.0)   # w faces label[0]
            return t.wall, (t.value.w[:, 0], ysign), False

        def saga(rho, tol):
            est = LogisticRegression(l1_ratio=rho, solver="saga", C=1.0, tol=tol,
                                     max_iter=100_000, fit_intercept=False)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t = harness.timed(lambda: est.fit(X, y))
            fit = (est.coef_.ravel(), np.where(y == est.classes_[1], 1.0, -1.0))
            return t.wall, fit, t.wall > SAGA_BUDGET

        out = {}
        for rho in self.params[0]:
            def f(fit, rho=rho):
                return objective(X, fit[1], fit[0], rho, 1.0)
            f_star = f(ours(rho, 1e-9)[1])
            for gap in self.params[1]:
                for name, run in (("dlinear", ours), ("saga", saga)):
                    seconds = harness.seconds_to_gap(lambda tol, run=run, rho=rho: run(rho, tol),
                                                  TOLS, f, f_star, gap)[0]
                    out[name, rho, gap] = float("nan") if seconds is None else seconds
        return out

    def track_dlinear_seconds(self, out, l1_ratio, gap):
        return out["dlinear", l1_ratio, gap]
    track_dlinear_seconds.unit = "seconds"

    def track_saga_over_dlinear(self, out, l1_ratio, gap):
        return out["saga", l1_ratio, gap] / out["dlinear", l1_ratio, gap]
    track_saga_over_dlinear.unit = "saga / dlinear"
