"""Multi-class: one-vs-rest Newton by per-class drivers against k-column Newton (one pass
over X for all k classes) and LIBLINEAR, the k-column kernels against k single-column
ones, and multinomial Newton against scikit-learn's lbfgs."""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")      # lbfgs and scipy on one thread, as dlinear here

import numpy as np  # noqa: E402

from dlinear import Params, train  # noqa: E402
from dlinear.datasets.rcv1_like import make_rcv1_like  # noqa: E402

from . import harness, shapes  # noqa: E402


class OneVsRest:
    """-s 0 / -s 2 one-vs-rest on the multiclass shape, one thread: per-class drivers
    (kcolumn=False), k-column Newton (kcolumn=True), and LIBLINEAR."""
    params = [[0, 2], ["per-class", "k-column", "liblinear"]]
    param_names = ["solver", "method"]
    number = 1
    repeat = 2
    timeout = 600

    def setup(self, solver, method):
        self.problem = shapes.load("multiclass")
        if method == "liblinear":
            self.lib_problem = harness.liblinear_problem(self.problem)
        else:
            self.params = Params(solver_type=solver, kcolumn=method == "k-column")
            harness.warm_up(self.problem, [self.params])

    def _fit(self, solver, method):
        if method == "liblinear":
            return harness.liblinear_fit(self.lib_problem, f"-s {solver} -q")[1]
        return train(self.problem, self.params, n_threads=1)

    def time_fit(self, solver, method):
        self._fit(solver, method)

    def peakmem_fit(self, solver, method):
        self._fit(solver, method)

    def track_cpu_ratio_to_kcolumn(self, solver, method):
        kcolumn = Params(solver_type=solver, kcolumn=True)
        harness.warm_up(self.problem, [kcolumn])
        ref = harness.best_of(lambda: train(self.problem, kcolumn, n_threads=1), 2).cpu
        return harness.best_of(lambda: self._fit(solver, method), 2).cpu / ref
    track_cpu_ratio_to_kcolumn.unit = "CPU time / k-column's"


class KColumnCrossover:
    """Whole one-vs-rest -s 0 fits on one thread: per-class drivers against k-column Newton
    for k classes and nonzeros per row, the crossover behind the in-process rule."""
    params = [[2, 8, 35], [10, 70]]
    param_names = ["classes", "nnz_per_row"]
    timeout = 900

    def setup_cache(self):
        rows = 20_000 if shapes.size() == "full" else 2_000
        out = {}
        for k in self.params[0]:
            for nnz in self.params[1]:
                problem = make_rcv1_like(rows, n_features=20_000, n_classes=k,
                                         nnz_per_row=nnz, seed=1)
                per, kcol = (Params(solver_type=0, kcolumn=flag) for flag in (False, True))
                harness.warm_up(problem, [per, kcol])
                cpu = {}
                for name, p in (("per-class", per), ("k-column", kcol)):
                    cpu[name] = harness.best_of(lambda: train(problem, p, n_threads=1), 2).cpu
                out[k, nnz] = cpu
        return out

    def track_per_class_over_kcolumn(self, cpu, classes, nnz_per_row):
        c = cpu[classes, nnz_per_row]
        return c["per-class"] / c["k-column"]
    track_per_class_over_kcolumn.unit = "CPU time ratio"


class KColumnKernels:
    """The two passes a Newton iteration repeats (Hv and z = X w), for k columns in one
    pass (dlinear.kernels.kcolumn_ops) against k single-column passes (primal_ops)."""
    params = [[1, 8, 35], ["k single columns", "k columns at once"]]
    param_names = ["k", "kernels"]
    number = 1
    repeat = 3

    def setup(self, k, kernels):
        from dlinear.kernels import kcolumn_ops, primal_ops
        P = shapes.load("rcv1")
        n, l = P.n_features, P.n_samples
        rng = np.random.default_rng(0)
        S = np.ascontiguousarray(rng.normal(size=(n, k)))
        coef = np.ascontiguousarray(rng.uniform(0.01, 0.25, size=(l, k)))
        rows = np.arange(l, dtype=np.int64)
        cols = np.arange(k, dtype=np.int64)
        S_cols = [np.ascontiguousarray(S[:, c]) for c in range(k)]
        coef_cols = [np.ascontiguousarray(coef[:, c]) for c in range(k)]
        s_hs, outk, z1, Zk = np.zeros((n, 2)), np.zeros((n, k)), np.empty(l), np.empty((l, k))

        def hv():
            if kernels == "k columns at once":
                outk[:] = 0.0
                kcolumn_ops.hess_vec_k(P.indptr, P.indices, P.data, n, -1.0, coef, cols, S,
                                       outk)
                return
            for c in range(k):
                s_hs[:, 0] = S_cols[c]
                s_hs[:, 1] = 0.0
                primal_ops.hess_vec(P.indptr, P.indices, P.data, n, -1.0, rows, coef_cols[c],
                                    l, s_hs)

        def xv():
            if kernels == "k columns at once":
                kcolumn_ops.xv_k(P.indptr, P.indices, P.data, n, -1.0, S, Zk, cols)
                return
            for c in range(k):
                primal_ops.xv(P.indptr, P.indices, P.data, n, -1.0, S_cols[c], z1)

        self.hv, self.xv = hv, xv
        hv()
        xv()                                          # compiled or loaded from the cache

    def time_hess_vec(self, k, kernels):
        self.hv()

    def time_xv(self, k, kernels):
        self.xv()


def softmax_objective(problem, W, label, C):
    from dlinear.planning.class_plan import group_rows
    Z = problem.to_scipy() @ W
    Z = Z - Z.max(axis=1, keepdims=True)
    y = group_rows(label, problem.y)
    return 0.5 * float((W * W).sum()) + C * float(
        (np.log(np.exp(Z).sum(axis=1)) - Z[np.arange(len(y)), y]).sum())


DLINEAR_TOLS = [1.0, 3e-1, 1e-1, 3e-2, 1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5, 3e-6, 1e-6,
                1e-7]
LBFGS_TOLS = [1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10]


class Multinomial:
    """Multinomial logistic regression: dlinear's Newton (-s 0 --multinomial) against
    scikit-learn's lbfgs (one thread), CPU seconds to a relative objective gap to f* (the
    better of a tight run of each), each swept over its tolerances."""
    params = [[1e-3, 1e-6]]
    param_names = ["gap"]
    timeout = 1200

    def setup_cache(self):
        from sklearn.linear_model import LogisticRegression
        P = shapes.load("multiclass")
        X = P.to_scipy()
        label = train(P, Params(solver_type=0, multinomial=True, eps=0.1)).label

        def ours(eps):
            return train(P, Params(solver_type=0, multinomial=True, eps=eps), n_threads=1).w

        def lbfgs(tol):
            est = LogisticRegression(C=1.0, fit_intercept=False, tol=tol, max_iter=100000)
            est.fit(X, P.y)
            return est.coef_.T[:, np.searchsorted(est.classes_, label)]

        def objective(W):
            return softmax_objective(P, W, label, 1.0)

        f_star = min(objective(ours(1e-10)), objective(lbfgs(1e-12)))
        out = {}
        for name, run, tols in (("dlinear", ours, DLINEAR_TOLS), ("lbfgs", lbfgs, LBFGS_TOLS)):
            def sweep(tol, run=run):
                t = harness.timed(lambda: run(tol))
                return t.cpu, t.value, False
            for gap in self.params[0]:
                seconds = harness.seconds_to_gap(sweep, tols, objective, f_star, gap)[0]
                out[name, gap] = float("nan") if seconds is None else seconds
        return out

    def track_dlinear_cpu_seconds(self, out, gap):
        return out["dlinear", gap]
    track_dlinear_cpu_seconds.unit = "seconds"

    def track_lbfgs_over_dlinear(self, out, gap):
        return out["lbfgs", gap] / out["dlinear", gap]
    track_lbfgs_over_dlinear.unit = "lbfgs / dlinear (CPU time)"
