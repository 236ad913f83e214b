"""k-column Newton: the one-vs-rest classes of -s 0 / -s 2 driven in lockstep, sharing
every pass over the data.

Each class keeps its own driver (dlinear.solvers.newton: line-search Newton or TRON,
unchanged: its own iterate, CG, line search and stopping test) and its own
RegularizedObjective; the driver is a generator of requests, and the objective's `drive`
turns its requests into the data term's (move to w, gradient, Hv, line-search direction,
loss along it). `serve_in_lockstep` (dlinear.solvers.requests) collects one request of
every class still running and serves them all with one executor call, which makes one
pass over the rows per kind (one X.W for the points and directions, one
gradient-and-preconditioner pass, one X^T (D o (X.S)) for the Hessian-vector products).
A class that has converged leaves, so the passes carry only the active columns. The
drivers take turns on one thread: no locks, no hand-offs.

The executor is `KColumnLossTerm.execute` on one process's rows, or one map-reduce round
over the workers' KColumnLossTerms on a cluster (dlinear.cluster.objective): either way a
round costs one pass (one actor round) for all classes, so the number of rounds does not
depend on k.

The kernels (dlinear.kernels.kcolumn_ops) do each column's arithmetic in the order of the
one-column kernels, so every class gets bit-identical values, iterates, logs and Newton /
CG counts as when it runs alone.
"""
from __future__ import annotations

import numpy as np

from ..kernels import kcolumn_ops as KK
from ..kernels.sparse_ops import csr_to_csc
from ..threads import PassPool
from .newton import NEWTON_MAX_ITER, fit_steps, newton_tol
from .primal_objectives import LOSS_CODE, RegularizedObjective
from .requests import TermRequest, serve_in_lockstep


COLUMN_BLOCK = None     # columns per pass (None: all); see KColumnLossTerm


# rows of a chunk of X by columns (columns_in_chunks): its rows of an (l, K) array take at
# most this many bytes, so that a pass's random accesses to them stay in cache (8 MB
# measured fastest; BENCHMARKS.md, "Multi-class Newton")
CHUNK_BYTES = 8 << 20


def balanced(ptr, n_parts):
    """(start, stop) ranges of rows (CSR indptr) or columns (CSC col_ptr) with about the
    same number of nonzeros each; one range for one part."""
    n = len(ptr) - 1
    if n_parts <= 1 or n == 0:
        return [(0, n)]
    cuts = np.searchsorted(ptr, np.linspace(0, ptr[-1], n_parts + 1)[1:-1])
    bounds = [0] + [int(min(max(c, 0), n)) for c in cuts] + [n]
    return [(a, b) for a, b in zip(bounds[:-1], bounds[1:]) if b > a] or [(0, n)]


def columns_in_chunks(blocks, n_features, bias, n_values, n_threads=1):
    """X by columns in chunks of rows, for the two-phase kernels of kcolumn_ops: per
    block (col_ptr2, row_ind, vals, chunk_rows, the threads' chunk ranges, the threads'
    feature ranges). A chunk's rows of an (l, n_values) array take at most CHUNK_BYTES;
    there are at least n_threads chunks, a multiple of n_threads."""
    T = max(1, int(n_threads))
    n_cols = int(n_features) + (1 if bias >= 0 else 0)
    rows_per_chunk = max(1, CHUNK_BYTES // (8 * max(1, int(n_values))))
    out = []
    for b in blocks:
        l_b = b.n_samples
        n_chunks = max(T, -(-l_b // rows_per_chunk))
        n_chunks = max(1, min(-(-n_chunks // T) * T, l_b))
        chunk_rows = np.linspace(0, l_b, n_chunks + 1).astype(np.int64)
        col_ptr2 = np.empty((n_chunks, n_cols + 1), dtype=np.int64)
        row_ind, vals = [], []
        offset = 0
        for ch in range(n_chunks):
            a0, a1 = int(chunk_rows[ch]), int(chunk_rows[ch + 1])
            q0, q1 = int(b.indptr[a0]), int(b.indptr[a1])
            cp, ri, vv = csr_to_csc(b.indptr[a0:a1 + 1] - b.indptr[a0], b.indices[q0:q1],
                                    b.data[q0:q1], int(n_features), float(bias))
            col_ptr2[ch] = cp + offset
            offset += int(cp[-1])
            row_ind.append(ri + np.int32(a0))
            vals.append(vv)
        per_column = np.diff(col_ptr2, axis=1).sum(axis=0)
        features = balanced(np.concatenate([[0], np.cumsum(per_column)]), T)
        chunks = [(t * n_chunks // T, (t + 1) * n_chunks // T) for t in range(T)]
        out.append((col_ptr2, np.concatenate(row_ind).astype(np.int32),
                    np.concatenate(vals), chunk_rows, [c for c in chunks if c[1] > c[0]],
                    features))
    return out


class Scratch:
    """Arrays a k-column pass reuses from round to round. The (n, m) inputs and outputs
    of a pass are tens of MB (297,064 x 35 x 8 B = 83 MB); allocated afresh each round
    they come from the system as untouched pages, and the first write of every 4 KB
    page faulted inside the passes (measured: a third of a whole k-column fit's time at
    k = 20, n = 47,236)."""

    def __init__(self):
        self._buffers = {}

    def array(self, name, shape, zero=False):
        """A C-order float64 array of `shape` over the buffer `name` (grown when needed;
        overwritten by the next call with the same name)."""
        size = int(np.prod(shape))
        buffer = self._buffers.get(name)
        if buffer is None or len(buffer) < size:
            buffer = self._buffers[name] = np.empty(size)
        out = buffer[:size].reshape(shape)
        if zero:
            out.fill(0.0)
        return out


class KColumnLossTerm:
    """The data terms of K binary problems on the rows of one or more CSR blocks (taken as
    their rows in order): labels Y and per-instance C are (l, K). Row state: R (l, 2K), its
    first K columns z = X w of each problem, the next K X s of its line search; COEF
    (l, K) the curvature weights of the last gradient. `execute` serves one round of
    requests (see the module text); only n-vectors and scalars go in or out."""

    def __init__(self, blocks, Y, C, bias, loss, p=0.0, n_features=None, n_threads=1,
                 column_block=None, by_columns=False):
        blocks = list(blocks) if isinstance(blocks, (list, tuple)) else [blocks]
        self.blocks = [b for b in blocks if b.n_samples > 0]
        self.n_features = int(n_features if n_features is not None
                              else max(b.n_features for b in blocks))
        self.bias = float(bias)
        self.loss = int(loss)
        self.p = float(p)
        self.n_variables = self.n_features + (1 if self.bias >= 0 else 0)
        self.Y = np.ascontiguousarray(Y, dtype=np.float64)
        self.C = np.ascontiguousarray(C, dtype=np.float64)
        l, self.n_columns = self.Y.shape
        self._starts = np.cumsum([0] + [b.n_samples for b in self.blocks])
        if int(self._starts[-1]) != l or self.C.shape != self.Y.shape:
            raise ValueError(f"Y and C must be ({int(self._starts[-1])}, K)")
        self.R = np.zeros((l, 2 * self.n_columns))
        self.COEF = np.zeros((l, self.n_columns))
        self.n_passes = 0               # kernel passes over the rows, for benchmarks
        # more than one thread: the classes of a round are split into n_threads groups
        # served at once (each column's arithmetic is unchanged, so are the results); a
        # round of one group (one class left) splits its by-column passes instead
        self.n_threads = max(1, int(n_threads))
        # at most this many columns per pass: the (n, m) vectors a pass gathers from and
        # scatters into should stay in cache (BENCHMARKS.md, "k-column Newton")
        self.column_block = max(1, int(column_block or self.n_columns))
        self._pool = PassPool(self.n_threads, "kcolumn")
        self._scratch = [Scratch()]
        # the logistic loss's passes in two phases over X by columns in chunks of rows
        # (kcolumn_ops; X kept a second time): the same bits, without the random
        # accesses to (n, m) arrays that outgrow the cache
        self.by_columns = bool(by_columns) and self.loss == LOSS_CODE["logistic_regression"]
        self._columns = None

    def _by_columns(self):
        """columns_in_chunks of the blocks, made by the first round (before its class
        groups go to threads)."""
        if self._columns is None:
            self._columns = columns_in_chunks(self.blocks, self.n_features, self.bias,
                                              self.n_columns, self.n_threads)
        return self._columns

    def counts(self):
        """(#positive rows, #rows) of each problem, (K, 2)."""
        pos = np.count_nonzero(self.Y > 0, axis=0)
        return np.column_stack([pos, np.full(self.n_columns, len(self.Y))]).astype(np.int64)

    def _pieces(self):
        for b, start, stop in zip(self.blocks, self._starts[:-1], self._starts[1:]):
            yield b, slice(int(start), int(stop))

    def _stack(self, vectors, scratch):
        """The (n, m) array of a pass whose columns are `vectors`."""
        rows = scratch.array("rows", (len(vectors), self.n_variables))
        np.stack(vectors, out=rows)
        V = scratch.array("columns", (self.n_variables, len(vectors)))
        KK.transpose_into(rows, V)
        return V

    @staticmethod
    def _unstack(A, scratch):
        """The columns of a pass's (n, m) output as m n-vectors of their own (a driver
        may keep or change its own)."""
        rows = scratch.array("rows", (A.shape[1], A.shape[0]))
        KK.transpose_into(A, rows)
        return [row.copy() for row in rows]

    def move(self, moves: dict):
        """Accepts line-search steps {class: alpha}: z += alpha X s of each."""
        if moves:
            cs = np.array(sorted(moves), dtype=np.int64)
            KK.move_k(self.R, cs, cs + self.n_columns,
                      np.array([moves[c] for c in cs], dtype=np.float64))

    def execute(self, moves: dict, requests: dict) -> dict:
        """Applies the accepted steps `moves` {class: alpha}, then serves `requests`
        {class: (method, args)} with LossTerm's methods' meaning (at, along, loss_along,
        grad_precond, hv); returns {class: result}."""
        classes = sorted(set(requests) | set(moves))
        n_groups = min(max(self.n_threads, -(-len(classes) // self.column_block)),
                       len(classes))
        if self.by_columns:
            self._by_columns()
        if n_groups <= 1:       # one group: its passes split over the threads
            return self._execute(moves, requests, self._scratch[0], split=True)
        groups = [set(g) for g in np.array_split(np.array(classes), n_groups)]
        parts = [({c: a for c, a in moves.items() if c in g},
                  {c: r for c, r in requests.items() if c in g}) for g in groups]
        results = {}
        if self.n_threads <= 1:
            for group_moves, group_requests in parts:
                results.update(self._execute(group_moves, group_requests,
                                             self._scratch[0]))
            return results
        while len(self._scratch) < len(parts):      # groups may run at once: one each
            self._scratch.append(Scratch())
        for group_results in self._pool.run(self._execute, [
                (*part, self._scratch[q]) for q, part in enumerate(parts)]):
            results.update(group_results)
        return results

    def close(self):
        self._pool.close()

    def _ranges(self, split, ranges, whole):
        """The ranges a pass is cut into: the threads' (split), else the whole one."""
        return ranges if split else [whole]

    def _execute(self, moves: dict, requests: dict, scratch, split=False) -> dict:
        """One group's round; split: its by-column passes cut into row chunks and feature
        ranges run on the term's threads (each writes its own rows or features, every
        feature's sum keeps its row order: the same bits)."""
        K = self.n_columns
        run = self._pool.run
        results = {}
        self.move(moves)
        by_method = {}
        for c in sorted(requests):
            method, args = requests[c]
            by_method.setdefault(method, []).append((c, args))

        # one X.V pass for the new points (at) and line-search directions (along)
        xv_cols, xv_vecs, zero_cols = [], [], []
        for c, (w,) in by_method.get(TermRequest.AT, []):
            if w.any():
                xv_cols.append(c)
                xv_vecs.append(w)
            else:
                zero_cols.append(c)     # w = 0 (the start): X w needs no pass
        for c, (s, _) in by_method.get(TermRequest.ALONG, []):
            xv_cols.append(K + c)
            xv_vecs.append(s)
        if zero_cols:
            self.R[:, zero_cols] = 0.0
        if xv_cols:
            V = self._stack(xv_vecs, scratch)
            cols = np.array(xv_cols, dtype=np.int64)
            if self.by_columns:
                T = scratch.array("T", (len(self.R), len(cols)))
                for (b, rows), (cp2, ri, vals, chunk_rows, chunks, _) in zip(
                        self._pieces(), self._by_columns()):
                    run(KK.columns_gather, [
                        (cp2, ri, vals, chunk_rows, V, T[rows], c0, c1)
                        for c0, c1 in self._ranges(split, chunks, (0, len(cp2)))])
                KK.put_columns(T, self.R, cols)
            for b, rows in ([] if self.by_columns else self._pieces()):
                KK.xv_k(b.indptr, b.indices, b.data, self.n_features, self.bias, V,
                        self.R[rows], cols)
            self.n_passes += 1

        # the losses (no pass over X)
        loss_of = [(c, c, 0.0) for c, _ in by_method.get(TermRequest.AT, [])]
        loss_of += [(c, K + c, float(a)) for c, (_, a) in by_method.get(TermRequest.ALONG, [])]
        loss_of += [(c, K + c, float(a)) for c, (a,) in by_method.get(TermRequest.LOSS_ALONG, [])]
        if loss_of:
            cs = np.array([c for c, _, _ in loss_of], dtype=np.int64)
            zs = np.array([z for _, z, _ in loss_of], dtype=np.int64)
            alphas = np.array([a for _, _, a in loss_of], dtype=np.float64)
            out = np.empty(len(cs))
            KK.loss_k(self.loss, self.Y, self.C, self.R, cs, cs, zs, alphas, self.p, out)
            for c, value in zip(cs, out):
                results[int(c)] = float(value)

        grads = by_method.get(TermRequest.GRAD_PRECOND, [])
        if grads:
            cols = np.array([c for c, _ in grads], dtype=np.int64)
            G = scratch.array("G", (self.n_variables, len(cols)), zero=True)
            M = scratch.array("M", (self.n_variables, len(cols)), zero=True)
            if self.by_columns:
                DL = scratch.array("T", (len(self.R), len(cols)))
                H = scratch.array("H", (len(self.R), len(cols)))
                KK.lr_rows(self.Y, self.C, self.R, cols, DL, H, self.COEF)
                for (b, rows), (cp2, ri, vals, _, _, features) in zip(self._pieces(),
                                                                      self._by_columns()):
                    run(KK.columns_grad_precond, [
                        (cp2, ri, vals, DL[rows], H[rows], G, M, j0, j1)
                        for j0, j1 in self._ranges(split, features, (0, cp2.shape[1] - 1))])
            for b, rows in ([] if self.by_columns else self._pieces()):
                KK.grad_precond_k(self.loss, b.indptr, b.indices, b.data, self.n_features,
                                  self.bias, self.Y[rows], self.C[rows], self.R[rows], cols,
                                  self.p, G, M, self.COEF[rows])
            self.n_passes += 1
            for c, g, m in zip(cols, self._unstack(G, scratch), self._unstack(M, scratch)):
                results[int(c)] = (g, m)

        hvs = by_method.get(TermRequest.HV, [])
        if hvs:
            cols = np.array([c for c, _ in hvs], dtype=np.int64)
            S = self._stack([s for _, (s,) in hvs], scratch)
            out = scratch.array("Hv", (self.n_variables, len(cols)), zero=True)
            if self.by_columns:
                T = scratch.array("T", (len(self.R), len(cols)))
                for (b, rows), (cp2, ri, vals, chunk_rows, chunks, features) in zip(
                        self._pieces(), self._by_columns()):
                    run(KK.columns_gather, [
                        (cp2, ri, vals, chunk_rows, S, T[rows], c0, c1)
                        for c0, c1 in self._ranges(split, chunks, (0, len(cp2)))])
                    KK.scale_rows(self.COEF[rows], cols, T[rows])
                    run(KK.columns_times, [
                        (cp2, ri, vals, T[rows], out, j0, j1)
                        for j0, j1 in self._ranges(split, features, (0, cp2.shape[1] - 1))])
            for b, rows in ([] if self.by_columns else self._pieces()):
                KK.hess_vec_k(b.indptr, b.indices, b.data, self.n_features, self.bias,
                              self.COEF[rows], cols, S, out)
            self.n_passes += 1
            for c, hv in zip(cols, self._unstack(out, scratch)):
                results[int(c)] = hv
        return results


def fit_newton_in_lockstep(execute, n_variables: int, counts, params, w0s,
                           max_newton_iter=NEWTON_MAX_ITER, on_class_done=None,
                           gnorm0s=None):
    """fit_newton for K binary problems at once, their drivers in lockstep: the data
    terms are served by `execute` (KColumnLossTerm.execute or a cluster round),
    counts[c] = (#positive rows, #rows) of problem c, w0s[c] its warm start or None;
    `on_class_done()` (a progress bar's update) is called as each class converges.
    gnorm0s[c]: ||grad f(0)|| of problem c where known (fit_steps), else None.
    Returns (FitResults in class order, the lockstep's Rounds)."""
    if params.eps is None:
        params = params.resolved()
    classes = []
    for c, w0 in enumerate(w0s):
        objective = RegularizedObjective(None, n_variables, params.regularize_bias)
        eps = newton_tol(params, counts=tuple(int(x) for x in counts[c]))
        gnorm0 = None if gnorm0s is None else gnorm0s[c]
        classes.append(objective.drive(fit_steps(params, w0, n_variables, eps,
                                                 max_newton_iter, gnorm0=gnorm0)))
    done = None if on_class_done is None else (lambda c: on_class_done())
    return serve_in_lockstep(classes, execute, done)


def fit_one_vs_rest_kcolumn(problem, Y, C, params, w0s, n_threads=1, on_class_done=None,
                            gnorm0s=None):
    """The one-vs-rest problems of -s 0 / -s 2 on one Problem, K = Y.shape[1] columns of
    labels (+1/-1) and per-instance C, by k-column Newton through one KColumnLossTerm in
    this process (its passes on n_threads threads); on_class_done and gnorm0s as in
    fit_newton_in_lockstep."""
    if params.eps is None:
        params = params.resolved()
    term = KColumnLossTerm(problem, Y, C, params.bias, LOSS_CODE[params.spec.loss],
                           params.p, problem.n_features, n_threads=n_threads,
                           column_block=COLUMN_BLOCK, by_columns=True)
    try:
        results, _ = fit_newton_in_lockstep(term.execute, term.n_variables, term.counts(),
                                            params, w0s, on_class_done=on_class_done,
                                            gnorm0s=gnorm0s)
    finally:
        term.close()
    return results
