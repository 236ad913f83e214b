"""The distributed backend of the primal objectives (-s 0, 2, 11): Newton/TRON's objective
protocol (dlinear.solvers.newton) map-reduced over the data held on Dask workers.

Each worker concatenates the parts it already holds into one block (no data moves) with
that binary problem's labels and per-instance C. Per call only n-vectors and scalars
travel: the direction is scattered to the workers, each worker's block computes its share
with its own z = X_w w (kept on the worker as a future), and the workers' n-vectors are
summed on a worker before one n-vector reaches the client. The regulariser (and -R) is
added on the client, so local and distributed runs share every line of the driver.

State is functional: each call makes new futures from old ones (z after a line-search
step is a new future), so Dask can recompute a lost block from its lineage.
"""
from __future__ import annotations

import numpy as np

from ..data import Problem
from ..kernels import primal_ops as K
from ..solvers.newton import dot
from ..solvers.primal_objectives import (LINESEARCH_ETA, LOSS_OF_SOLVER, MAX_NUM_LINESEARCH,
                                         add_regularizer, regularized_dot)
from .dataset import concat_parts
from .session import worker_addresses


class WorkerBlock:
    """The rows one worker holds, with one binary (or regression) problem's y and C."""

    def __init__(self, problem: Problem, y, C, bias, loss, p):
        self.problem = problem
        self.y = y
        self.C = C
        self.bias = float(bias)
        self.loss = int(loss)
        self.p = float(p)

    @property
    def n_variables(self):
        return self.problem.n_features + (1 if self.bias >= 0 else 0)


def make_worker_block(n_features, label, k, weighted_C, params, *parts) -> WorkerBlock:
    from ..train import binary_task, single_task
    problem = concat_parts(n_features, *parts)
    if label is None:
        task = single_task(problem, params)
    else:
        task = binary_task(problem, label, k, weighted_C, params)
    return WorkerBlock(problem, task.y, task.C, task.bias, LOSS_OF_SOLVER[params.solver_type],
                       params.p)


def block_counts(block: WorkerBlock):
    return int(np.count_nonzero(block.y > 0)), len(block.y)


def block_xv(block: WorkerBlock, v):
    P = block.problem
    out = np.empty(P.n_samples)
    K.xv(P.indptr, P.indices, P.data, P.n_features, block.bias, v, out)
    return out


def block_loss(block: WorkerBlock, z):
    return K.loss_sum(block.loss, block.y, block.C, z, block.p)


def block_loss_along(block: WorkerBlock, z, zs, alpha):
    return K.loss_sum_along(block.loss, block.y, block.C, z, zs, alpha, block.p)


def block_moved(z, zs, alpha):
    out = z.copy()
    K.add_scaled(alpha, zs, out)
    return out


def _curvature(block: WorkerBlock, z):
    """One pass at z: (gradient of the loss, diag(X^T H X), rows with curvature, their h)."""
    P = block.problem
    n = block.n_variables
    g, M = np.empty(n), np.empty(n)
    rows, coef = np.empty(P.n_samples, dtype=np.int64), np.empty(P.n_samples)
    k = K.grad_precond(block.loss, P.indptr, P.indices, P.data, P.n_features, block.bias,
                       block.y, block.C, z, block.p, g, M, rows, coef)
    return g, M, rows, coef, k


def block_grad_state(block: WorkerBlock, z):
    """One pass at z: ([loss gradient, preconditioner diagonal] as one 2n-vector, for one
    reduction; the rows with curvature and their weights, kept for the CG steps)."""
    g, M, rows, coef, k = _curvature(block, z)
    return np.concatenate([g, M]), (rows[:k].copy(), coef[:k].copy())


def first(pair):
    return pair[0]


def second(pair):
    return pair[1]


def block_hv(block: WorkerBlock, hess_state, s):
    P = block.problem
    rows, coef = hess_state
    out = np.empty(block.n_variables)
    K.hess_vec(P.indptr, P.indices, P.data, P.n_features, block.bias, rows, coef, len(rows),
               s, out)
    return out


def sum_arrays(*arrays):
    total = arrays[0].copy()
    for a in arrays[1:]:
        total += a
    return total


class DistributedObjective:
    """Implements the protocol of dlinear.solvers.newton over one block per worker."""

    def __init__(self, client, blocks: dict, n_variables: int, regularize_bias: bool):
        self.client = client
        self.blocks = blocks                  # worker address -> future of a WorkerBlock
        self.n_variables = int(n_variables)
        self.regularize_bias = bool(regularize_bias)
        self._z = {}                          # worker -> future of X_w w
        self._hess = {}                       # worker -> future of (rows, coef)
        self._M = np.ones(self.n_variables)
        self._wTw = 0.0
        self.n_calls = 0                      # map-reduce rounds, for benchmarks
        self.bytes_out = 0                    # n-vectors sent to workers
        self.bytes_in = 0                     # n-vectors and scalars gathered

    # ---------------------------------------------------------------- plumbing
    def _submit(self, worker, fn, *args):
        return self.client.submit(fn, *args, workers=[worker], allow_other_workers=True,
                                  pure=False)

    def _broadcast(self, v):
        """The vector travels inside each worker's task: no extra round trip."""
        v = np.ascontiguousarray(v, dtype=np.float64)
        self.bytes_out += v.nbytes * len(self.blocks)
        return v

    def _sum_on_workers(self, futures: dict):
        """Sum the workers' n-vectors on one worker; one vector comes back."""
        first = next(iter(futures))
        total = self._submit(first, sum_arrays, *futures.values()).result()
        self.bytes_in += total.nbytes
        self.n_calls += 1
        return total

    def _sum_scalars(self, futures: dict) -> float:
        values = self.client.gather(list(futures.values()))
        self.bytes_in += 8 * len(values)
        self.n_calls += 1
        return float(sum(values))

    def _sq(self, u, v):
        return regularized_dot(u, v, self.regularize_bias)

    # ---------------------------------------------------------------- the protocol
    def fun(self, w):
        w = np.ascontiguousarray(w, dtype=np.float64)
        w_future = self._broadcast(w)
        self._z = {wk: self._submit(wk, block_xv, b, w_future) for wk, b in self.blocks.items()}
        losses = {wk: self._submit(wk, block_loss, self.blocks[wk], z)
                  for wk, z in self._z.items()}
        self._wTw = self._sq(w, w)
        return self._sum_scalars(losses) + 0.5 * self._wTw

    def grad(self, w):
        w = np.ascontiguousarray(w, dtype=np.float64)
        states = {wk: self._submit(wk, block_grad_state, self.blocks[wk], z)
                  for wk, z in self._z.items()}
        self._hess = {wk: self._submit(wk, second, st) for wk, st in states.items()}
        gM = self._sum_on_workers({wk: self._submit(wk, first, st)
                                   for wk, st in states.items()})
        n = self.n_variables
        g = add_regularizer(gM[:n], w, self.regularize_bias)
        self._M = add_regularizer(gM[n:], np.ones(n), self.regularize_bias)
        return g

    def hv(self, s):
        s = np.ascontiguousarray(s, dtype=np.float64)
        s_future = self._broadcast(s)
        parts = {wk: self._submit(wk, block_hv, self.blocks[wk], self._hess[wk], s_future)
                 for wk in self.blocks}
        return add_regularizer(self._sum_on_workers(parts), s, self.regularize_bias)

    def diag_precond(self):
        return self._M.copy()

    def linesearch_and_update(self, w, s, f, g, alpha):
        s = np.ascontiguousarray(s, dtype=np.float64)
        s_future = self._broadcast(s)
        zs = {wk: self._submit(wk, block_xv, b, s_future) for wk, b in self.blocks.items()}
        sTs, wTs, gTs = self._sq(s, s), self._sq(w, s), dot(g, s)
        for _ in range(MAX_NUM_LINESEARCH):
            losses = {wk: self._submit(wk, block_loss_along, self.blocks[wk], self._z[wk],
                                       zs[wk], alpha) for wk in self.blocks}
            f_new = self._sum_scalars(losses) + (alpha * alpha * sTs + self._wTw) / 2.0 \
                + alpha * wTs
            if f_new - f <= LINESEARCH_ETA * alpha * gTs:
                self._z = {wk: self._submit(wk, block_moved, self._z[wk], zs[wk], alpha)
                           for wk in self.blocks}
                w += alpha * s
                self._wTw += alpha * alpha * sTs + 2.0 * alpha * wTs
                return alpha, f_new
            alpha *= 0.5
        return 0.0, f


def distributed_objective(dataset, label, k, weighted_C, params):
    """(objective, (#positive rows, #rows)) of binary problem k (or the regression
    problem, label None) on the workers holding `dataset`'s parts."""
    client = dataset.client
    holders = client.who_has(dataset.parts)
    by_worker = {}
    for part in dataset.parts:
        workers = sorted(holders.get(part.key, ()))
        if not workers:       # not computed yet (or lost): let Dask place it
            workers = worker_addresses(client)[:1]
        by_worker.setdefault(workers[0], []).append(part)
    blocks = {w: client.submit(make_worker_block, dataset.n_features, label, k, weighted_C,
                               params, *parts, workers=[w], allow_other_workers=True,
                               pure=False)
              for w, parts in by_worker.items()}
    counts = client.gather([client.submit(block_counts, b, workers=[w], pure=False)
                            for w, b in blocks.items()])
    pos, l = sum(c[0] for c in counts), sum(c[1] for c in counts)
    n_variables = dataset.n_features + (1 if params.bias >= 0 else 0)
    return DistributedObjective(client, blocks, n_variables, params.regularize_bias), (pos, l)
