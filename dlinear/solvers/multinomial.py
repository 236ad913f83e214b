"""Multinomial (softmax) logistic regression, which LIBLINEAR lacks:

    min_W  0.5 ||W||_F^2 + sum_i C_i (logsumexp(W^T x_i) - (W^T x_i)[y_i])

W is (n_variables, K), one column per class (the bias row last; -R leaves it out of the
regulariser), C_i = C x the weight of row i's class (-wi) x its instance weight. Solved by
LIBLINEAR's line-search Newton with preconditioned CG (dlinear.solvers.newton; TRON with
Params(newton="tron")), on W flattened in C order, with the exact Hessian-vector product

    H S = S + X^T U,   U_ic = C_i p_ic (r_ic - p_i . r_i),   r_i = S^T x_i,  p_i = softmax

and the diagonal preconditioner sum_i C_i p_ic (1 - p_ic) x_ij^2, all from the k-column
kernels (dlinear.kernels.kcolumn_ops): every pass over the rows serves all K columns.

`MultinomialTerm` has LossTerm's methods (at, grad_precond, hv, along, loss_along, move,
counts) on the flattened vectors, so RegularizedObjective turns it into the drivers'
objective here, and the cluster sums one MultinomialTerm per worker the same way it sums
LossTerms (dlinear.cluster.objective).

Stopping rule: ||grad f(W)|| <= eps' ||grad f(0)||, eps' = eps x max(smallest class
count, 1) / l, the multi-class reading of LIBLINEAR's primal_solver_tol (which uses the
smaller of the two classes).
"""
from __future__ import annotations

import numpy as np

from ..kernels import kcolumn_ops as KK


class MultinomialTerm:
    """The softmax data term on the rows of one or more CSR blocks (taken as their rows
    in order); class_of_row (int64, 0..K-1) and C_rows per row. Row state: R (l, 2K) =
    [X W, X S of the line search], P (l, K) the probabilities of the last gradient."""

    def __init__(self, blocks, class_of_row, C_rows, n_classes, bias, n_features=None):
        blocks = list(blocks) if isinstance(blocks, (list, tuple)) else [blocks]
        self.blocks = [b for b in blocks if b.n_samples > 0]
        self.n_features = int(n_features if n_features is not None
                              else max(b.n_features for b in blocks))
        self.bias = float(bias)
        self.n_classes = int(n_classes)
        self.n_rows_vars = self.n_features + (1 if self.bias >= 0 else 0)
        self.n_variables = self.n_rows_vars * self.n_classes
        self.y_class = np.ascontiguousarray(class_of_row, dtype=np.int64)
        self.C = np.ascontiguousarray(C_rows, dtype=np.float64)
        self._starts = np.cumsum([0] + [b.n_samples for b in self.blocks])
        l = int(self._starts[-1])
        if len(self.y_class) != l or len(self.C) != l:
            raise ValueError(f"class_of_row and C must have one value per row ({l})")
        K = self.n_classes
        self.R = np.zeros((l, 2 * K))
        self.P = np.zeros((l, K))
        self._z_cols = np.arange(K, dtype=np.int64)
        self._zs_cols = np.arange(K, 2 * K, dtype=np.int64)
        self.n_passes = 0

    def _pieces(self):
        for b, start, stop in zip(self.blocks, self._starts[:-1], self._starts[1:]):
            yield b, slice(int(start), int(stop))

    def _matrix(self, v):
        return np.ascontiguousarray(v, dtype=np.float64).reshape(self.n_rows_vars,
                                                                 self.n_classes)

    def _xv(self, v, cols):
        V = self._matrix(v)
        for b, rows in self._pieces():
            KK.xv_k(b.indptr, b.indices, b.data, self.n_features, self.bias, V,
                    self.R[rows], cols)
        self.n_passes += 1

    def counts(self):
        """Rows per class (K,)."""
        return np.bincount(self.y_class, minlength=self.n_classes).astype(np.int64)

    def at(self, w) -> float:
        if np.any(w):
            self._xv(w, self._z_cols)
        else:
            self.R[:, :self.n_classes] = 0.0
        return self.loss_along(0.0)

    def grad_precond(self):
        G = np.zeros((self.n_rows_vars, self.n_classes))
        M = np.zeros((self.n_rows_vars, self.n_classes))
        for b, rows in self._pieces():
            KK.softmax_grad_precond(b.indptr, b.indices, b.data, self.n_features, self.bias,
                                    self.R[rows], self.y_class[rows], self.C[rows], G, M,
                                    self.P[rows])
        self.n_passes += 1
        return G.ravel(), M.ravel()

    def hv(self, s):
        S = self._matrix(s)
        out = np.zeros((self.n_rows_vars, self.n_classes))
        for b, rows in self._pieces():
            KK.softmax_hess_vec(b.indptr, b.indices, b.data, self.n_features, self.bias,
                                self.P[rows], self.C[rows], S, out)
        self.n_passes += 1
        return out.ravel()

    def along(self, s, alpha) -> float:
        self._xv(s, self._zs_cols)
        return self.loss_along(alpha)

    def loss_along(self, alpha) -> float:
        return KK.softmax_loss(self.R, self.y_class, self.C, float(alpha))

    def move(self, alpha):
        KK.move_k(self.R, self._z_cols, self._zs_cols, np.full(self.n_classes, float(alpha)))


def multinomial_tol(eps, class_counts) -> float:
    """eps x max(smallest class count, 1) / l (see the module text)."""
    counts = np.asarray(class_counts)
    return float(eps) * max(int(counts.min()), 1) / max(int(counts.sum()), 1)


def fit_multinomial_objective(objective, class_counts, params, w0=None):
    """Newton (or TRON) on a multinomial objective (local or distributed); returns a
    FitResult whose w is (n_variables / K, K)."""
    from . import FitResult
    from .newton import NEWTON_MAX_ITER, TRON_EPS_CG, TRON_EPS_CG_WARM, newton, tron
    if params.eps is None:
        params = params.resolved()
    K = len(class_counts)
    w = np.zeros(objective.n_variables)
    if w0 is not None:
        w[:] = np.asarray(w0, dtype=np.float64).reshape(-1)
    eps = multinomial_tol(params.eps, class_counts)
    if params.newton == "tron":
        res = tron(objective, w, eps,
                   eps_cg=TRON_EPS_CG_WARM if w0 is not None else TRON_EPS_CG,
                   max_newton_iter=NEWTON_MAX_ITER)
    else:
        res = newton(objective, w, eps, max_newton_iter=NEWTON_MAX_ITER)
    return FitResult(w=w.reshape(-1, K), n_iter=res.n_iter, log=res.log,
                     hit_max_iter=res.hit_max_iter)


def multinomial_objective(term, regularize_bias=True):
    from .primal_objectives import RegularizedObjective
    return RegularizedObjective(term, term.n_variables, regularize_bias,
                                n_bias=term.n_classes)


def fit_multinomial(problem, class_of_row, C_rows, n_classes, params, w0=None):
    """Multinomial logistic regression on one Problem in this process."""
    term = MultinomialTerm(problem, class_of_row, C_rows, n_classes, params.bias,
                           problem.n_features)
    return fit_multinomial_objective(multinomial_objective(term, params.regularize_bias),
                                     term.counts(), params, w0)
