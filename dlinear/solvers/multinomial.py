"""Multinomial (softmax) logistic regression, which LIBLINEAR lacks:

    min_W  0.5 ||W||_F^2 + sum_i C_i (logsumexp(W^T x_i) - (W^T x_i)[y_i])

W is (n_variables, K), one column per class (the bias row last; -R leaves it out of the
regulariser), C_i = C x the weight of row i's class (-wi) x its instance weight. Solved by
LIBLINEAR's line-search Newton with preconditioned CG (dlinear.solvers.newton; TRON with
Params(newton="tron")), on W flattened in C order, with the exact Hessian-vector product

    H S = S + X^T U,   U_ic = C_i p_ic (r_ic - p_i . r_i),   r_i = S^T x_i,  p_i = softmax

and the diagonal preconditioner sum_i C_i p_ic (1 - p_ic) x_ij^2, all from the k-column
kernels (dlinear.kernels.kcolumn_ops): every pass over the rows serves all K columns.

In process (fit_multinomial) the passes go over X by columns in chunks of rows, split
over n_threads threads (`by_columns`, the two-phase kernels of kcolumn_ops; X is kept a
second time, by columns); a cluster worker's term keeps the one-pass kernels on one
thread. Both sum every entry in the same order: the same bits either way.

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
from ..threads import PassPool
from .kcolumn import balanced as _balanced, columns_in_chunks
from .newton import fit_steps
from .primal_objectives import RegularizedObjective
from .requests import serve


class _Alternating:
    """Two arrays handed out in turn, zeroed in place (fill, no new pages)."""

    def __init__(self):
        self._arrays = [None, None]
        self._next = 0

    def zeros(self, shape):
        a = self._arrays[self._next]
        if a is None or a.shape != shape:
            a = self._arrays[self._next] = np.zeros(shape)
        else:
            a.fill(0.0)
        self._next = 1 - self._next
        return a


class MultinomialTerm:
    """The softmax data term on the rows of one or more CSR blocks (taken as their rows
    in order); class_of_row (int64, 0..K-1) and C_rows per row. Row state: R (l, 2K) =
    [X W, X S of the line search], P (l, K) the probabilities of the last gradient."""

    def __init__(self, blocks, class_of_row, C_rows, n_classes, bias, n_features=None,
                 n_threads=1, by_columns=False):
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
        # the (n_rows_vars, K) outputs of the passes, reused from call to call instead of
        # fresh zeroed arrays whose pages fault in inside the pass (83 MB each at K = 35,
        # n = 297,064); two of each, alternating, so what the last call returned stays
        # valid until the call after next (the driver holds g across a Newton iteration)
        self._out = _Alternating()
        self._G = _Alternating()
        self._M = _Alternating()
        # two-phase passes (rows, then X's columns; see kcolumn_ops): X is also kept by
        # columns, and the rows' K values go through the (l, K) arrays U and H
        self.by_columns = bool(by_columns)
        self.n_threads = max(1, int(n_threads))
        self._columns = None
        self._U = self._H = None
        self._pool = PassPool(self.n_threads, "multinomial")
        self._row_ranges = [_balanced(b.indptr, self.n_threads) for b in self.blocks]

    def _pieces(self):
        for b, start, stop in zip(self.blocks, self._starts[:-1], self._starts[1:]):
            yield b, slice(int(start), int(stop))

    def _matrix(self, v):
        return np.ascontiguousarray(v, dtype=np.float64).reshape(self.n_rows_vars,
                                                                 self.n_classes)

    def _run(self, fn, ranges, *args):
        """fn(*args, start, stop) for each (start, stop) of ranges, on the term's threads
        (each range writes its own part of the outputs)."""
        self._pool.run(fn, [(*args, *r) for r in ranges])

    def _by_columns(self):
        """Per block: (col_ptr2, row_ind, vals, chunk_rows, the threads' chunk ranges,
        the threads' feature ranges): X by columns in chunks of rows (kcolumn_ops)."""
        if self._columns is None:
            self._columns = columns_in_chunks(self.blocks, self.n_features, self.bias,
                                              self.n_classes, self.n_threads)
            l = int(self._starts[-1])
            self._U = np.zeros((l, self.n_classes))
            self._H = np.zeros((l, self.n_classes))
        return self._columns

    def _xv(self, v, cols):
        V = self._matrix(v)
        if self.by_columns:             # cols: K adjacent columns of R
            first = int(cols[0])
            for (b, rows), (col_ptr2, row_ind, vals, chunk_rows, chunks, _) in zip(
                    self._pieces(), self._by_columns()):
                self._run(KK.columns_gather, chunks, col_ptr2, row_ind, vals, chunk_rows,
                          V, self.R[rows, first:first + self.n_classes])
            self.n_passes += 1
            return
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
        shape = (self.n_rows_vars, self.n_classes)
        G = self._G.zeros(shape)
        M = self._M.zeros(shape)
        if self.by_columns:
            columns = self._by_columns()
            for (b, rows), ranges, (col_ptr2, row_ind, vals, _, _, features) in zip(
                    self._pieces(), self._row_ranges, columns):
                DL, H = self._U[rows], self._H[rows]
                self._run(KK.softmax_rows, ranges, self.R[rows], self.y_class[rows],
                          self.C[rows], self.P[rows], DL, H)
                self._run(KK.columns_grad_precond, features, col_ptr2, row_ind, vals, DL, H,
                          G, M)
            self.n_passes += 1
            return G.ravel(), M.ravel()
        for b, rows in self._pieces():
            KK.softmax_grad_precond(b.indptr, b.indices, b.data, self.n_features, self.bias,
                                    self.R[rows], self.y_class[rows], self.C[rows], G, M,
                                    self.P[rows])
        self.n_passes += 1
        return G.ravel(), M.ravel()

    def hv(self, s):
        S = self._matrix(s)
        out = self._out.zeros((self.n_rows_vars, self.n_classes))
        if self.by_columns:
            columns = self._by_columns()
            for (b, rows), ranges, (col_ptr2, row_ind, vals, chunk_rows, chunks,
                                    features) in zip(self._pieces(), self._row_ranges,
                                                     columns):
                U = self._U[rows]
                self._run(KK.columns_gather, chunks, col_ptr2, row_ind, vals, chunk_rows,
                          S, U)
                self._run(KK.softmax_hv_rows, ranges, self.P[rows], self.C[rows], U)
                self._run(KK.columns_times, features, col_ptr2, row_ind, vals, U, out)
            self.n_passes += 1
            return out.ravel()
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
    if params.eps is None:
        params = params.resolved()
    K = len(class_counts)
    if w0 is not None:
        w0 = np.asarray(w0, dtype=np.float64).reshape(-1)
    eps = multinomial_tol(params.eps, class_counts)
    result = serve(fit_steps(params, w0, objective.n_variables, eps), objective)
    result.w = result.w.reshape(-1, K)
    return result


def multinomial_objective(term, regularize_bias=True):
    return RegularizedObjective(term, term.n_variables, regularize_bias,
                                n_bias=term.n_classes)


def fit_multinomial(problem, class_of_row, C_rows, n_classes, params, w0=None,
                    n_threads=1):
    """Multinomial logistic regression on one Problem in this process, its passes split
    over n_threads threads."""
    term = MultinomialTerm(problem, class_of_row, C_rows, n_classes, params.bias,
                           problem.n_features, n_threads=n_threads, by_columns=True)
    return fit_multinomial_objective(multinomial_objective(term, params.regularize_bias),
                                     term.counts(), params, w0)
