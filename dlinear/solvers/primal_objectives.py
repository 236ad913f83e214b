"""The primal objectives of -s 0, -s 2 and -s 11 (LIBLINEAR's l2r_lr_fun, l2r_l2_svc_fun
and l2r_l2_svr_fun) and their local backend on one CSR Problem.

    f(w) = 0.5 w^T w + sum_i C_i loss_i(x_i . w)

with x_i carrying the virtual -B bias column, C_i the per-instance C (C x class weight x
instance weight), and, for -R (regularize_bias=False), the bias weight w[-1] left out of
the regulariser (so out of the 0.5 w^T w, the gradient's w, the Hessian's identity and the
preconditioner's 1), as l2r_erm_fun does.

Two halves: `LossTerm`, the data term on one CSR block, which keeps everything of size l
(z = Xw, Xs, the rows with curvature and their weights) and lets only n-vectors and
scalars out; and `RegularizedObjective`, which adds the regulariser and implements the
objective protocol of dlinear.solvers.newton (fun, grad, hv, diag_precond,
linesearch_and_update, n_variables) over any data term with LossTerm's methods. The local
backend is the pair on one problem (`PrimalObjective`); the distributed one
(dlinear.cluster.objective) puts a LossTerm on each worker and sums them.
"""
from __future__ import annotations

import numpy as np

from ..data.columns import count_columns
from ..kernels import primal_ops as K
from ..solver_table import SOLVERS
from ..threads import PassPool
from .requests import ObjectiveRequest, Request, TermRequest, serve
from .vectors import dot

# the primal_ops code of each loss (SolverSpec.loss) a Newton solver minimises
LOSS_CODE = {"logistic_regression": K.LR, "squared_hinge": K.L2SVC,
             "squared_epsilon_insensitive": K.L2SVR}
# -s -> its loss code, for the tests and benchmarks that pick a loss by solver
LOSS_OF_SOLVER = {s.id: LOSS_CODE[s.loss] for s in SOLVERS.values() if s.newton}

# LIBLINEAR's line search (l2r_erm_fun::linesearch_and_update)
LINESEARCH_ETA = 0.01
MAX_NUM_LINESEARCH = 20

# A threaded LossTerm splits the rows into chunks of about CHUNK_NNZ nonzeros, and of at
# least NNZ_PER_PART x (the columns the rows use), so that adding up the chunks' n-vectors
# stays a small share of a pass (wide data get fewer, larger chunks). The chunks depend on
# the rows alone, never on the number of threads, nor on columns no row uses: a fit on the
# columns that occur (dlinear.data.columns) cuts the same chunks, so its sums, hence its model,
# are those of the fit on all columns, to the bit.
CHUNK_NNZ = 1 << 20
NNZ_PER_PART = 8


def row_chunks(indptr, indices, n_features: int, bias: float = -1.0) -> list:
    """(start, stop) row ranges of one CSR block with about the same number of nonzeros
    each (see CHUNK_NNZ); a function of the rows alone."""
    l = len(indptr) - 1
    start, nnz = int(indptr[0]), int(indptr[-1]) - int(indptr[0])
    columns = n_features
    if NNZ_PER_PART * (n_features + 1) > CHUNK_NNZ:      # the count can move the size
        columns = count_columns(indices[start:start + nnz], n_features)
    size = max(CHUNK_NNZ, NNZ_PER_PART * (columns + (1 if bias >= 0 else 0)))
    n_chunks = max(1, min(l, -(-nnz // size)))
    cuts = np.searchsorted(indptr, start + np.arange(1, n_chunks) * (nnz / n_chunks))
    bounds = [0] + [int(min(max(c, 0), l)) for c in cuts] + [l]
    return [(a, b) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]


def regularized_dot(u, v, regularize_bias=True, n_bias=1) -> float:
    """u . v over the regularised weights: all of them, or all but the last n_bias (the
    bias weights, one per column of a multinomial model) for -R."""
    s = dot(u, v)
    if not regularize_bias:
        if n_bias == 1:
            s -= float(u[-1] * v[-1])
        else:
            s -= dot(u[-n_bias:], v[-n_bias:])
    return s


def add_regularizer(out, v, regularize_bias=True, n_bias=1):
    """out += v on the regularised weights (the identity part of a gradient, Hessian or
    preconditioner), in place; v a vector or a scalar (1.0: the preconditioner's identity,
    without allocating a vector of ones)."""
    out += v
    if not regularize_bias:
        out[-n_bias:] -= v if np.ndim(v) == 0 else v[-n_bias:]
    return out


def _row_values(values, keep):
    """A per-row array as the kernels read it: float64 1-D as given (a broadcast C, one
    value over all rows, stays a zero-stride view), or of dtype `keep` as given (+1/-1
    labels as int8), else a float64 contiguous copy."""
    values = np.asarray(values)
    if values.ndim == 1 and (values.dtype == np.float64 or values.dtype == keep):
        return values
    return np.ascontiguousarray(values, dtype=np.float64)


def _pair_with_zeros(s):
    """The (n, 2) pair of hess_vec: s, and zeros for H s to be added to."""
    s_hs = np.empty((len(s), 2))
    s_hs[:, 0] = s
    s_hs[:, 1] = 0.0
    return s_hs


def _second_alone(pair):
    """pair[:, 1] as an n-vector in the pair's own memory, whose other half is given back:
    a pass then holds one n-vector more than with separate outputs, not two."""
    K.second_to_front(pair)
    pair.resize(len(pair), refcheck=False)      # no view of pair exists
    return pair


def _unpair(gm):
    """grad_precond's (n, 2) pair as two contiguous n-vectors (gradient, preconditioner)."""
    g = gm[:, 0].copy()
    return g, _second_alone(gm)


class LossTerm:
    """The data term sum_i C_i loss(x_i . w) on the rows of one or more CSR blocks (a
    Problem, or a list of Problems taken as their rows in order, never concatenated), with
    the row state the Newton drivers reuse between calls: z = X w, zs = X s of the line
    search, and the rows with curvature and their weights. y and C run over all rows;
    `n_features` (default: the blocks' largest) is the data set's.
    `loss` is primal_ops.LR, L2SVC or L2SVR; `p` is the SVR epsilon. Arrays are used as
    given and never written.

    Only n-vectors and scalars go in or out, so the data term of rows spread over
    workers is the sum of one LossTerm per worker (dlinear.cluster.objective).

    n_threads None: each pass runs over all rows in order, on the calling thread (the
    order of the k-column kernels, so a class fitted alone matches k-column Newton); a
    number: the passes run over fixed row chunks on that many threads (`_Chunks`: the
    same bits for any number of threads)."""

    def __init__(self, blocks, y, C, bias, loss, p=0.0, n_features=None, n_threads=None):
        blocks = list(blocks) if isinstance(blocks, (list, tuple)) else [blocks]
        self.blocks = [b for b in blocks if b.n_samples > 0]
        # a block's own n_features may be smaller than the data set's
        self.n_features = int(n_features if n_features is not None
                              else max(b.n_features for b in blocks))
        self.bias = float(bias)
        self.y = _row_values(y, keep=np.int8)
        self.C = _row_values(C, keep=None)
        self.loss = int(loss)
        self.p = float(p)
        self.n_variables = self.n_features + (1 if self.bias >= 0 else 0)
        self._starts = np.cumsum([0] + [b.n_samples for b in self.blocks])
        l = int(self._starts[-1])
        if len(self.y) != l or len(self.C) != l:
            raise ValueError(f"y and C must have one value per row ({l})")
        self._z = np.zeros(l)           # X w at the last `at` / accepted line-search step
        # X s of the line search, and the Hessian's row weights in the same bytes: a
        # line search runs between a pass's last hv and the next grad_precond, which
        # makes the weights again (hv checks that none ran since)
        self._zs = self._coef = np.empty(l)
        self._rows = np.empty(l, dtype=np.int32 if l < 2**31 else np.int64)
        self._curvature = False         # _rows and _coef hold the last grad_precond's
        self._n_active = np.zeros(len(self.blocks), dtype=np.int64)
        self.n_passes = 0               # passes over X, for benchmarks
        self._chunks = None if n_threads is None else _Chunks(self, int(n_threads))

    def _pieces(self):
        """(block, its slice of the row arrays)."""
        for b, start, stop in zip(self.blocks, self._starts[:-1], self._starts[1:]):
            yield b, slice(int(start), int(stop))

    def _xv(self, v, out):
        for b, rows in self._pieces():
            K.xv(b.indptr, b.indices, b.data, self.n_features, self.bias, v, out[rows])

    def at(self, w) -> float:
        """Moves the state to w (z = X w) and returns the loss there."""
        w = np.ascontiguousarray(w, dtype=np.float64)
        if w.any():
            self.n_passes += 1
            if self._chunks is not None:
                return self._chunks.loss_at(w)
            self._xv(w, self._z)
        else:
            self._z[:] = 0.0            # w = 0 (the start): X w needs no pass
        if self._chunks is not None:
            return self._chunks.loss_along(0.0, along=False)
        return K.loss_sum(self.loss, self.y, self.C, self._z, self.p)

    def grad_precond(self):
        """(gradient, diag(X^T H X)) of the loss at the current point; fixes the Hessian
        that `hv` multiplies by."""
        self._curvature = True
        if self._chunks is not None:
            self.n_passes += 1
            return self._chunks.grad_precond()
        gm = np.zeros((self.n_variables, 2))
        for q, (b, rows) in enumerate(self._pieces()):
            self._n_active[q] = K.grad_precond(
                self.loss, b.indptr, b.indices, b.data, self.n_features, self.bias,
                self.y[rows], self.C[rows], self._z[rows], self.p, gm, self._rows[rows],
                self._coef[rows])
        self.n_passes += 1
        return _unpair(gm)

    def hv(self, s):
        if not self._curvature:
            raise RuntimeError("hv needs a grad_precond since the last line search")
        s = np.ascontiguousarray(s, dtype=np.float64)
        if self._chunks is not None:
            self.n_passes += 1
            return self._chunks.hv(s)
        s_hs = _pair_with_zeros(s)
        for q, (b, rows) in enumerate(self._pieces()):
            K.hess_vec(b.indptr, b.indices, b.data, self.n_features, self.bias,
                       self._rows[rows], self._coef[rows], self._n_active[q], s_hs)
        self.n_passes += 1
        return _second_alone(s_hs)

    def along(self, s, alpha) -> float:
        """Fixes the line-search direction s (zs = X s); the loss at w + alpha s."""
        s = np.ascontiguousarray(s, dtype=np.float64)
        self.n_passes += 1
        self._curvature = False         # zs overwrites the Hessian's row weights
        if self._chunks is not None:
            return self._chunks.loss_along(alpha, s)
        self._xv(s, self._zs)
        return self.loss_along(alpha)

    def loss_along(self, alpha) -> float:
        if self._chunks is not None:
            return self._chunks.loss_along(alpha)
        return K.loss_sum_along(self.loss, self.y, self.C, self._z, self._zs, alpha, self.p)

    def move(self, alpha):
        """Accepts the step: the state moves to w + alpha s."""
        K.add_scaled(alpha, self._zs, self._z)

    def close(self):
        if self._chunks is not None:
            self._chunks.pool.close()


class _Chunks:
    """A LossTerm's passes over fixed row chunks (row_chunks of each block), run on
    n_threads threads (dlinear.threads.PassPool). Each chunk writes its own rows of z, zs
    and the active-row arrays, and scatters X^T into its own n-vector; the chunks'
    n-vectors and loss values are then added in chunk order. So the values, hence the
    model, are the same to the bit for any number of threads (not those of the one-pass
    LossTerm, whose sums run over all rows in one order)."""

    def __init__(self, term: LossTerm, n_threads: int):
        self.term = t = term
        self.pool = PassPool(n_threads, "newton")
        self.views = []     # per chunk: its indptr, the block's indices, data, and its rows
        for b, rows in t._pieces():
            for a, e in row_chunks(b.indptr, b.indices, t.n_features, t.bias):
                r = slice(rows.start + a, rows.start + e)
                self.views.append((b.indptr[a:e + 1], b.indices, b.data, t.y[r], t.C[r],
                                   t._z[r], t._zs[r], t._rows[r], t._coef[r]))
        self.n_active = np.zeros(len(self.views), dtype=np.int64)
        n = t.n_variables
        T = self.pool.n_threads
        # one chunk (wide data) adds straight into the output: no parts to keep. Else a
        # wave of one chunk per thread scatters into parts, added to the output in chunk
        # order before the next wave: an n-vector pair a thread, not a chunk (on wide
        # data each chunk's part is 16 bytes a column, its chunk NNZ_PER_PART nonzeros a
        # column); the kernels' (n, 2) pairs (gradient and preconditioner, s and H s)
        n_parts = min(len(self.views), T) if len(self.views) > 1 else 0
        self.parts = np.empty((n_parts, n, 2))
        self.feature_ranges = [(q * n // T, (q + 1) * n // T) for q in range(T)]
        self.feature_ranges = [r for r in self.feature_ranges if r[1] > r[0]]

    def _each_chunk(self, fn):
        return self.pool.run(fn, [(q,) for q in range(len(self.views))])

    def _scatter_and_add(self, scatter, parts, out, width):
        """Each chunk q's scatter(q, slot) into part `slot`, a wave of len(parts) chunks
        at a time, each wave's parts added to `out` in chunk order. `parts` are the rows
        of the summed values (width per feature), `out` their flat sum."""
        wave = len(parts)
        ranges = [(width * a, width * b) for a, b in self.feature_ranges]
        for q0 in range(0, len(self.views), wave):
            n = min(wave, len(self.views) - q0)
            self.pool.run(scatter, [(q0 + i, i) for i in range(n)])

            def add_range(start, stop, n=n, first=q0 == 0):
                K.add_parts(parts, n, out, start, stop, first)
            self.pool.run(add_range, ranges)

    @staticmethod
    def _sum(values) -> float:
        total = 0.0
        for v in values:
            total += v
        return total

    def loss_at(self, w) -> float:
        t = self.term

        def chunk(q):
            indptr, indices, data, y, C, z, _, _, _ = self.views[q]
            K.xv(indptr, indices, data, t.n_features, t.bias, w, z)
            return K.loss_sum(t.loss, y, C, z, t.p)
        return self._sum(self._each_chunk(chunk))

    def loss_along(self, alpha, s=None, along=True) -> float:
        """The loss at w + alpha s (s given: first zs = X s); along=False: at w."""
        t = self.term
        alpha = float(alpha)

        def chunk(q):
            indptr, indices, data, y, C, z, zs, _, _ = self.views[q]
            if s is not None:
                K.xv(indptr, indices, data, t.n_features, t.bias, s, zs)
            if not along:
                return K.loss_sum(t.loss, y, C, z, t.p)
            return K.loss_sum_along(t.loss, y, C, z, zs, alpha, t.p)
        return self._sum(self._each_chunk(chunk))

    def grad_precond(self):
        t = self.term
        if not len(self.parts):
            gm = np.zeros((t.n_variables, 2))
            indptr, indices, data, y, C, z, _, rows, coef = self.views[0]
            self.n_active[0] = K.grad_precond(t.loss, indptr, indices, data, t.n_features,
                                              t.bias, y, C, z, t.p, gm, rows, coef)
            return _unpair(gm)

        def chunk(q, slot):
            indptr, indices, data, y, C, z, _, rows, coef = self.views[q]
            K.zero(self.parts[slot].reshape(-1))
            self.n_active[q] = K.grad_precond(t.loss, indptr, indices, data, t.n_features,
                                              t.bias, y, C, z, t.p, self.parts[slot], rows,
                                              coef)
        gm = np.empty((t.n_variables, 2))
        self._scatter_and_add(chunk, self.parts.reshape(len(self.parts), -1),
                              gm.reshape(-1), 2)
        return _unpair(gm)

    def hv(self, s):
        t = self.term
        if not len(self.parts):
            s_hs = _pair_with_zeros(s)
            indptr, indices, data, _, _, _, _, rows, coef = self.views[0]
            K.hess_vec(indptr, indices, data, t.n_features, t.bias, rows, coef,
                       self.n_active[0], s_hs)
            return _second_alone(s_hs)

        self.parts[:, :, 0] = s     # hess_vec reads this column and never writes it

        def chunk(q, slot):
            indptr, indices, data, _, _, _, _, rows, coef = self.views[q]
            self.parts[slot, :, 1] = 0.0
            K.hess_vec(indptr, indices, data, t.n_features, t.bias, rows, coef,
                       self.n_active[q], self.parts[slot])
        out = np.empty(t.n_variables)
        self._scatter_and_add(chunk, self.parts[:, :, 1], out, 1)
        return out


class RegularizedObjective:
    """f(w) = 0.5 w^T w (without the bias weight for -R) + a data term: an Objective
    (dlinear.solvers.requests) of a DataTerm. The data term is a LossTerm here, or the sum of
    the workers' LossTerms on a cluster, so both backends share this code.

    Each method is written once, as a generator of the data term's requests
    (dlinear.solvers.requests) returning the method's value. The protocol's methods serve
    it with the data term itself; `drive` turns a driver into one stream of data-term
    requests, which k-column Newton serves in lockstep with other classes' (there
    `loss_term` is None: the lockstep's executor is the data term)."""

    def __init__(self, loss_term, n_variables, regularize_bias=True, n_bias=1):
        self.loss_term = loss_term
        self.n_variables = int(n_variables)
        self.regularize_bias = bool(regularize_bias)
        self.n_bias = int(n_bias)       # trailing bias weights that -R leaves out
        self._M = None          # diag(H) of the last grad, until a driver asks for it
        self._wTw = 0.0

    def _sq(self, u, v):
        return regularized_dot(u, v, self.regularize_bias, self.n_bias)

    # ------------------------------------------------------------ the protocol
    def fun(self, w):
        return serve(self._fun(w), self.loss_term)

    def grad(self, w):
        return serve(self._grad(w), self.loss_term)

    def hv(self, s):
        return serve(self._hv(s), self.loss_term)

    def diag_precond(self):
        return self._preconditioner()

    def linesearch_and_update(self, w, s, f, g, alpha):
        return serve(self._linesearch_and_update(w, s, f, g, alpha), self.loss_term)

    # ------------------------------------------------------------ as requests
    def steps(self, method, args):
        """The data-term requests that answer a driver's request (method, args), as a
        generator returning the answer."""
        if method == ObjectiveRequest.DIAG_PRECOND:
            return self._preconditioner()
        as_requests = {ObjectiveRequest.FUN: self._fun, ObjectiveRequest.GRAD: self._grad,
                       ObjectiveRequest.HV: self._hv,
                       ObjectiveRequest.LINESEARCH_AND_UPDATE: self._linesearch_and_update}
        return (yield from as_requests[method](*args))

    def drive(self, driver):
        """The driver generator `driver` (requests of the protocol) as a generator of the
        data term's requests, each of its requests answered by `steps`; returns what the
        driver returns."""
        try:
            request = next(driver)
            while True:
                request = driver.send((yield from self.steps(*request)))
        except StopIteration as stop:
            return stop.value

    def _preconditioner(self):
        """diag(H) of the last grad, handed over: the drivers ask once after each grad
        and make their own M from it, so the objective keeps no reference through the
        CG passes that follow (one n-vector fewer at their peak)."""
        M, self._M = self._M, None
        if M is None:
            raise RuntimeError("diag_precond is asked once after each grad")
        return M

    def _fun(self, w):
        w = np.ascontiguousarray(w, dtype=np.float64)
        self._wTw = self._sq(w, w)
        loss = yield Request(TermRequest.AT, (w,))
        return loss + 0.5 * self._wTw

    def _grad(self, w):
        w = np.ascontiguousarray(w, dtype=np.float64)
        self._M = None      # the last preconditioner is not held through the pass
        g, M = yield Request(TermRequest.GRAD_PRECOND)
        self._M = add_regularizer(M, 1.0, self.regularize_bias, self.n_bias)
        return add_regularizer(g, w, self.regularize_bias, self.n_bias)

    def _hv(self, s):
        s = np.ascontiguousarray(s, dtype=np.float64)
        Hs = yield Request(TermRequest.HV, (s,))
        return add_regularizer(Hs, s, self.regularize_bias, self.n_bias)

    def _linesearch_and_update(self, w, s, f, g, alpha):
        s = np.ascontiguousarray(s, dtype=np.float64)
        sTs = self._sq(s, s)
        wTs = self._sq(w, s)
        gTs = dot(g, s)
        for trial in range(MAX_NUM_LINESEARCH):
            loss = yield (Request(TermRequest.ALONG, (s, alpha)) if trial == 0
                          else Request(TermRequest.LOSS_ALONG, (alpha,)))
            f_new = loss + (alpha * alpha * sTs + self._wTw) / 2.0 + alpha * wTs
            if f_new - f <= LINESEARCH_ETA * alpha * gTs:
                yield Request(TermRequest.MOVE, (alpha,))
                w += alpha * s
                self._wTw += alpha * alpha * sTs + 2.0 * alpha * wTs
                return alpha, f_new
            alpha *= 0.5
        return 0.0, f


class PrimalObjective(RegularizedObjective):
    """The local backend: one loss on one CSR problem (see LossTerm for the arguments)."""

    def __init__(self, problem, y, C, bias, loss, p=0.0, regularize_bias=True,
                 n_threads=None):
        term = LossTerm(problem, y, C, bias, loss, p, n_threads=n_threads)
        super().__init__(term, term.n_variables, regularize_bias)

    @property
    def n_passes(self):
        """Passes over X so far, for benchmarks."""
        return self.loss_term.n_passes


def make_objective(task, params):
    """The objective of the Newton solver params.solver_type on a SubProblem."""
    return PrimalObjective(task.problem, task.y, task.C, task.bias,
                           LOSS_CODE[params.spec.loss], p=params.p,
                           regularize_bias=params.regularize_bias,
                           n_threads=task.n_threads)
