"""k-column Newton: the one-vs-rest classes of -s 0 / -s 2 driven together, sharing every
pass over the data.

Each class keeps its own driver (dlinear.solvers.newton: line-search Newton or TRON,
unchanged: its own iterate, CG, line search and stopping test), run on its own thread
against a RegularizedObjective whose data term (`ClassTerm`) does not compute anything
itself: it posts the request (move to w, gradient, Hv, line-search direction, loss along
it) to a `Lockstep` and waits. When every class still running has posted one, the
Lockstep hands all of them to one executor call, which serves them with one pass over
the rows per kind (one X.W for the points and directions, one gradient-and-preconditioner
pass, one X^T (D o (X.S)) for the Hessian-vector products) and wakes the drivers with
their results. A class that has converged leaves, so the passes carry only the active
columns. The drivers never run while a batch is executed, so per-class state needs no
locking.

The executor is `KColumnLossTerm.execute` on one process's rows, or one map-reduce round
over the workers' KColumnLossTerms on a cluster (dlinear.cluster.objective): either way a
round costs one pass (one actor round) for all classes, so the number of rounds does not
depend on k.

The kernels (dlinear.kernels.kcolumn_ops) do each column's arithmetic in the order of the
one-column kernels, so every class gets bit-identical values, iterates, logs and Newton /
CG counts as when it runs alone.
"""
from __future__ import annotations

import threading
from types import SimpleNamespace

import numpy as np

from ..kernels import kcolumn_ops as KK
from .primal_objectives import LOSS_CODE, RegularizedObjective


COLUMN_BLOCK = None     # columns per pass (None: all); see KColumnLossTerm


# rows of a chunk of X by columns (columns_in_chunks): its rows of an (l, K) array take at
# most this many bytes, so that a pass's random accesses to them stay in cache (8 MB: 4
# chunks on the 200,000-row 20-class set, X S in 0.092 s against 0.100 s by rows and
# 0.23 s in one chunk; BENCHMARKS.md, "Multi-class Newton")
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
    from ..kernels.sparse_ops import csr_to_csc
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


def _as_vector(v):
    return np.ascontiguousarray(v, dtype=np.float64)


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
        # served at once (each column's arithmetic is unchanged, so are the results)
        self.n_threads = max(1, int(n_threads))
        # at most this many columns per pass: the (n, m) vectors a pass gathers from and
        # scatters into should stay in cache (BENCHMARKS.md, "k-column Newton")
        self.column_block = max(1, int(column_block or self.n_columns))
        self._pool = None
        self._scratch = [Scratch()]
        # the logistic loss's passes in two phases over X by columns in chunks of rows
        # (kcolumn_ops; X kept a second time): the same bits, without the random
        # accesses to (n, m) arrays that outgrow the cache
        self.by_columns = bool(by_columns) and self.loss == LOSS_CODE["logistic_regression"]
        self._columns = None
        self._columns_lock = threading.Lock()

    def _by_columns(self):
        """columns_in_chunks of the blocks, made once (class groups run on threads)."""
        with self._columns_lock:
            if self._columns is None:
                self._columns = columns_in_chunks(self.blocks, self.n_features, self.bias,
                                                  self.n_columns)
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
        if n_groups <= 1:
            return self._execute(moves, requests, self._scratch[0])
        groups = [set(g) for g in np.array_split(np.array(classes), n_groups)]
        parts = [({c: a for c, a in moves.items() if c in g},
                  {c: r for c, r in requests.items() if c in g}) for g in groups]
        results = {}
        if self.n_threads <= 1:
            for group_moves, group_requests in parts:
                results.update(self._execute(group_moves, group_requests,
                                             self._scratch[0]))
            return results
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor
            self._pool = ThreadPoolExecutor(self.n_threads, thread_name_prefix="dlinear-kcol")
        while len(self._scratch) < len(parts):      # groups may run at once: one each
            self._scratch.append(Scratch())
        futures = [self._pool.submit(self._execute, *part, self._scratch[q])
                   for q, part in enumerate(parts)]
        for f in futures:
            results.update(f.result())
        return results

    def close(self):
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def _execute(self, moves: dict, requests: dict, scratch) -> dict:
        K = self.n_columns
        results = {}
        self.move(moves)
        by_method = {}
        for c in sorted(requests):
            method, args = requests[c]
            by_method.setdefault(method, []).append((c, args))

        # one X.V pass for the new points (at) and line-search directions (along)
        xv_cols, xv_vecs, zero_cols = [], [], []
        for c, (w,) in by_method.get("at", []):
            if w.any():
                xv_cols.append(c)
                xv_vecs.append(w)
            else:
                zero_cols.append(c)     # w = 0 (the start): X w needs no pass
        for c, (s, _) in by_method.get("along", []):
            xv_cols.append(K + c)
            xv_vecs.append(s)
        if zero_cols:
            self.R[:, zero_cols] = 0.0
        if xv_cols:
            V = self._stack(xv_vecs, scratch)
            cols = np.array(xv_cols, dtype=np.int64)
            if self.by_columns:
                T = scratch.array("T", (len(self.R), len(cols)))
                for (b, rows), (cp2, ri, vals, chunk_rows, _, _) in zip(
                        self._pieces(), self._by_columns()):
                    KK.columns_gather(cp2, ri, vals, chunk_rows, V, T[rows], 0, len(cp2))
                KK.put_columns(T, self.R, cols)
            for b, rows in ([] if self.by_columns else self._pieces()):
                KK.xv_k(b.indptr, b.indices, b.data, self.n_features, self.bias, V,
                        self.R[rows], cols)
            self.n_passes += 1

        # the losses (no pass over X)
        loss_of = [(c, c, 0.0) for c, _ in by_method.get("at", [])]
        loss_of += [(c, K + c, float(a)) for c, (_, a) in by_method.get("along", [])]
        loss_of += [(c, K + c, float(a)) for c, (a,) in by_method.get("loss_along", [])]
        if loss_of:
            cs = np.array([c for c, _, _ in loss_of], dtype=np.int64)
            zs = np.array([z for _, z, _ in loss_of], dtype=np.int64)
            alphas = np.array([a for _, _, a in loss_of], dtype=np.float64)
            out = np.empty(len(cs))
            KK.loss_k(self.loss, self.Y, self.C, self.R, cs, cs, zs, alphas, self.p, out)
            for c, value in zip(cs, out):
                results[int(c)] = float(value)

        grads = by_method.get("grad_precond", [])
        if grads:
            cols = np.array([c for c, _ in grads], dtype=np.int64)
            G = scratch.array("G", (self.n_variables, len(cols)), zero=True)
            M = scratch.array("M", (self.n_variables, len(cols)), zero=True)
            if self.by_columns:
                DL = scratch.array("T", (len(self.R), len(cols)))
                H = scratch.array("H", (len(self.R), len(cols)))
                KK.lr_rows(self.Y, self.C, self.R, cols, DL, H, self.COEF)
                for (b, rows), (cp2, ri, vals, _, _, _) in zip(self._pieces(),
                                                               self._by_columns()):
                    KK.columns_grad_precond(cp2, ri, vals, DL[rows], H[rows], G, M, 0,
                                            cp2.shape[1] - 1)
            for b, rows in ([] if self.by_columns else self._pieces()):
                KK.grad_precond_k(self.loss, b.indptr, b.indices, b.data, self.n_features,
                                  self.bias, self.Y[rows], self.C[rows], self.R[rows], cols,
                                  self.p, G, M, self.COEF[rows])
            self.n_passes += 1
            for c, g, m in zip(cols, self._unstack(G, scratch), self._unstack(M, scratch)):
                results[int(c)] = (g, m)

        hvs = by_method.get("hv", [])
        if hvs:
            cols = np.array([c for c, _ in hvs], dtype=np.int64)
            S = self._stack([s for _, (s,) in hvs], scratch)
            out = scratch.array("Hv", (self.n_variables, len(cols)), zero=True)
            if self.by_columns:
                T = scratch.array("T", (len(self.R), len(cols)))
                for (b, rows), (cp2, ri, vals, chunk_rows, _, _) in zip(
                        self._pieces(), self._by_columns()):
                    KK.columns_gather(cp2, ri, vals, chunk_rows, S, T[rows], 0, len(cp2))
                    KK.scale_rows(self.COEF[rows], cols, T[rows])
                    KK.columns_times(cp2, ri, vals, T[rows], out, 0, cp2.shape[1] - 1)
            for b, rows in ([] if self.by_columns else self._pieces()):
                KK.hess_vec_k(b.indptr, b.indices, b.data, self.n_features, self.bias,
                              self.COEF[rows], cols, S, out)
            self.n_passes += 1
            for c, hv in zip(cols, self._unstack(out, scratch)):
                results[int(c)] = hv
        return results


class Lockstep:
    """Collects one request from each running class, then serves them all with one call
    of `execute(moves, requests) -> {class: result}`. Accepted line-search steps (`move`)
    travel with the next round.

    The class drivers are threads, but only one runs at a time: a driver that has posted
    its request hands the baton to the next class that has not posted in this round
    (releasing that class's gate) and parks on its own gate; the last to post executes
    the round, then goes on with its own result. So a round costs one thread hand-off
    per class, with no contention for the GIL or a shared lock (a Condition woken with
    notify_all had every driver contend for both, and each NumPy call that releases the
    GIL handed it to another driver). Only the baton holder touches the Lockstep's state."""

    def __init__(self, execute, n_classes: int):
        self._execute = execute
        self._gates = [threading.Lock() for _ in range(n_classes)]
        for gate in self._gates:
            gate.acquire()              # closed: a class runs once given the baton
        self._running = list(range(n_classes))
        self._requests = {}
        self._moves = {}
        self._results = {}
        self.n_rounds = 0
        self.columns_per_round = []     # active classes served by each round

    def start(self):
        """Gives the baton to the first class (called once, by the thread that started
        the drivers)."""
        if self._running:
            self._gates[self._running[0]].release()

    def wait_turn(self, c):
        """Parks class c's thread until it is given the baton."""
        self._gates[c].acquire()

    def move(self, c, alpha):
        self._moves[c] = self._moves.get(c, 0.0) + float(alpha)

    def request(self, c, method, *args):
        self._requests[c] = (method, args)
        if len(self._requests) == len(self._running):
            self._serve()               # c goes on with its result, holding the baton
        else:
            self._pass_baton(c)
            self._gates[c].acquire()
        result = self._results.pop(c)
        if isinstance(result, BaseException):
            raise result
        return result

    def leave(self, c):
        """Class c's driver has finished: rounds no longer wait for it; the baton goes
        on to a class that still runs."""
        position = self._running.index(c)
        self._running.pop(position)
        if not self._running:
            return
        if self._requests and len(self._requests) == len(self._running):
            self._serve()
        self._pass_baton(self._running[position - 1] if position else None)

    def _pass_baton(self, c):
        """Opens the gate of the first running class after c (in class order, cyclically;
        from the start for c None) that has not posted in this round."""
        running = self._running
        start = 0
        if c is not None:
            start = next((q for q, r in enumerate(running) if r > c), len(running))
        for q in range(len(running)):
            nxt = running[(start + q) % len(running)]
            if nxt not in self._requests:
                self._gates[nxt].release()
                return
        raise RuntimeError("k-column Newton: no class left to run")   # a broken invariant

    def _serve(self):
        requests, self._requests = self._requests, {}
        moves, self._moves = self._moves, {}
        try:
            results = self._execute(moves, requests)
        except BaseException as error:      # every waiting driver sees it
            results = {c: error for c in requests}
        self.n_rounds += 1
        self.columns_per_round.append(len(requests))
        self._results.update(results)


class ClassTerm:
    """LossTerm's methods for class c, served by a Lockstep (see the module text)."""

    def __init__(self, lockstep: Lockstep, c: int):
        self._lockstep = lockstep
        self._c = c

    def at(self, w):
        return self._lockstep.request(self._c, "at", _as_vector(w))

    def grad_precond(self):
        return self._lockstep.request(self._c, "grad_precond")

    def hv(self, s):
        return self._lockstep.request(self._c, "hv", _as_vector(s))

    def along(self, s, alpha):
        return self._lockstep.request(self._c, "along", _as_vector(s), float(alpha))

    def loss_along(self, alpha):
        return self._lockstep.request(self._c, "loss_along", float(alpha))

    def move(self, alpha):
        self._lockstep.move(self._c, alpha)


def fit_newton_together(execute, n_variables: int, counts, params, w0s,
                        max_newton_iter=None, on_class_done=None):
    """fit_newton for K binary problems at once: the data terms are served by `execute`
    (KColumnLossTerm.execute or a cluster round), counts[c] = (#positive rows, #rows) of
    problem c, w0s[c] its warm start or None; `on_class_done()` (a progress bar's
    update) is called as each class converges. Returns (FitResults in class order, the
    Lockstep, for its round statistics)."""
    from .newton import NEWTON_MAX_ITER, fit_newton
    K = len(w0s)
    lockstep = Lockstep(execute, K)
    results = [None] * K
    errors = [None] * K

    def run(c):
        lockstep.wait_turn(c)
        try:
            objective = RegularizedObjective(ClassTerm(lockstep, c), n_variables,
                                             params.regularize_bias)
            task = SimpleNamespace(w0=w0s[c], w_size=n_variables, y=None)
            results[c] = fit_newton(task, params, objective=objective,
                                    max_newton_iter=max_newton_iter or NEWTON_MAX_ITER,
                                    counts=tuple(int(x) for x in counts[c]))
            if on_class_done is not None:
                on_class_done()
        except BaseException as error:
            errors[c] = error
        finally:
            lockstep.leave(c)

    threads = [threading.Thread(target=run, args=(c,), daemon=True,
                                name=f"dlinear-class-{c}") for c in range(K)]
    for t in threads:
        t.start()
    lockstep.start()
    for t in threads:
        t.join()
    for error in errors:
        if error is not None:
            raise error
    return results, lockstep


def fit_one_vs_rest_together(problem, Y, C, params, w0s, n_threads=1, on_class_done=None):
    """The one-vs-rest problems of -s 0 / -s 2 on one Problem, K = Y.shape[1] columns of
    labels (+1/-1) and per-instance C, through one KColumnLossTerm in this process
    (its passes on n_threads threads); on_class_done as in fit_newton_together."""
    if params.eps is None:
        params = params.resolved()
    term = KColumnLossTerm(problem, Y, C, params.bias, LOSS_CODE[params.spec.loss],
                           params.p, problem.n_features, n_threads=n_threads,
                           column_block=COLUMN_BLOCK, by_columns=True)
    try:
        results, _ = fit_newton_together(term.execute, term.n_variables, term.counts(),
                                         params, w0s, on_class_done=on_class_done)
    finally:
        term.close()
    return results
