"""The Dask backend of the partitioned dual CD (dlinear.solvers.partitioned_dual_cd).

One actor per worker holds a BlockState over the dataset's parts that worker already
holds (no part moves, nothing is concatenated) with the dual variables of its rows for
every class. Calls travel the same binary actor tree as the Newton solvers'
(cluster/objective.py, whose client-side plumbing, placement and lost-worker detection
this reuses): the round's W goes down, each actor runs its local passes while its
children run theirs, and the summed steps of w with the reduced statistics come back up,
so each worker receives one (classes x n) array per round and sends one.

A lost worker loses the dual variables of its parts. The others survive: each actor
registers its per-part dual variables (views, no copy) on its worker under the run's id,
and the new actor made there after a loss takes them over. Parts rebuilt elsewhere from
their lineage restart from alpha = 0 (feasible), and the driver's w is recomputed from
all dual variables by one reduction before the round is repeated.
"""
from __future__ import annotations

import asyncio
import time
import uuid

import numpy as np

from ..solvers.partitioned_dual_cd import BlockState, combine_rounds
from ..plan import block_seeds, n_problems, targets
from .dataset import concat_weights
from .objective import Placement, TreeLossTerm, _nbytes

_REGISTRY = "_dlinear_partitioned_dual"     # worker attribute: {(run, part key): alphas}


def _combine(method, a, b):
    return combine_rounds(a, b) if method == "round" else a + b


class PartitionedCDActor:
    """Lives on one worker as a Dask actor: its parts' BlockState and tree children."""

    def __init__(self, run_id, n_features, label, weighted_C, params, block, keys, *parts):
        from distributed import get_worker

        from .heap import hold_heap_while_alive
        hold_heap_while_alive(self)     # see BlockActor._hold
        worker = get_worker()
        kept = [(key, p) for key, p in zip(keys, parts) if p.n_samples > 0]
        parts = [p for _, p in kept]
        Y, C = targets(np.concatenate([p.y for p in parts]), concat_weights(parts), label,
                       weighted_C, params)
        k = Y.shape[1]
        self.state = BlockState(parts, Y, C, params.bias, n_features, params.solver_type,
                                block_seeds(params.seed, block, k), params.p)
        # take over the dual variables this worker kept of a run's lost actor
        registry = getattr(worker, _REGISTRY, None)
        if registry is None:
            registry = {}
            setattr(worker, _REGISTRY, registry)
        self.run_id = run_id
        self.keys = [key for key, _ in kept]
        for key, s, e in zip(self.keys, self.state.starts[:-1], self.state.starts[1:]):
            saved = registry.get((run_id, key))
            for c in range(k):
                if saved is not None:
                    self.state.alpha[c][s:e] = saved[c]
                    if self.state.logistic:
                        self.state.rest[c][s:e] = self.state.C[c][s:e] - saved[c]
            registry[(run_id, key)] = [self.state.alpha[c][s:e] for c in range(k)]
        self._registry = registry
        self.children = []
        self.bytes_received = 0
        self.bytes_sent = 0
        self.busy = 0.0
        self._executor = worker.executors["default"]

    def set_children(self, children) -> int:
        self.children = list(children)
        return len(self.children)

    def _run(self, method, args):
        start = time.perf_counter()
        if method == "round":
            result = self.state.round(*args)
        elif method == "w_of_alpha":
            result = self.state.w_of_alpha()
        elif method == "rows":
            result = np.array([self.state.n_rows], dtype=np.int64)
        elif method == "stats":
            return np.array([self.bytes_received, self.bytes_sent, self.busy])
        elif method == "forget":
            for key in self.keys:
                self._registry.pop((self.run_id, key), None)
            return np.zeros(1)
        else:
            raise ValueError(method)
        self.busy += time.perf_counter() - start
        return result

    async def call(self, pending_move, method, *args):
        """`method` summed (reduced) over this actor's subtree."""
        self.bytes_received += sum(_nbytes(a) for a in args)
        pending = [child.call(None, method, *args) for child in self.children]
        loop = asyncio.get_running_loop()
        total = await loop.run_in_executor(self._executor, self._run, method, args)
        for child_result in pending:
            total = _combine(method, total, await child_result)
        if method != "stats":
            self.bytes_sent += _nbytes(total)
        return total


class PartitionedBlocks(TreeLossTerm):
    """The driver's `blocks` on a Dask cluster: round() over one actor per worker."""

    def __init__(self, placement: Placement, label, weighted_C, params):
        self.run_id = uuid.uuid4().hex
        self.n_problems = n_problems(label)
        self.restarted_w = None
        self._round_args = None
        super().__init__(placement, label, None, weighted_C, params)

    @property
    def n_blocks(self) -> int:
        return len(self.actors)

    def _make_actors(self, by_worker, generation):
        label, _, weighted_C, params = self._problem
        self._generation = generation
        self.workers = list(by_worker)
        n_features = self._placement.dataset.n_features
        self._link([self.client.submit(PartitionedCDActor, self.run_id, n_features, label,
                                       weighted_C, params, block, [p.key for p in parts],
                                       *parts, actor=True, workers=[w], pure=False)
                    for block, (w, parts) in enumerate(by_worker.items())])

    def _recover(self):
        """New actors (the survivors' dual variables carried over on their workers), w
        rebuilt from all dual variables by one reduction, and the interrupted round's
        arguments (kept by reference in _round's retry) rewritten to start from it."""
        by_worker, generation = self._placement.rebuilt(self._generation)
        self._make_actors(by_worker, generation)
        W = self._call(None, "w_of_alpha")
        self.restarted_w = W
        if self._round_args is not None:
            W_round, classes, applied = self._round_args
            W_round[:] = W[classes]
            applied[:] = 0.0
        self._stale = False

    def rows(self) -> int:
        return int(self._round("rows")[0])

    def w_of_alpha(self):
        return self._round("w_of_alpha")

    def round(self, W, classes, applied, sigma, n_passes, inner_eps=None, bounds=None,
              full_stats=True):
        W = np.ascontiguousarray(W, dtype=np.float64)
        inner_eps = np.zeros(len(applied)) if inner_eps is None else np.asarray(inner_eps,
                                                                                 dtype=float)
        applied = np.array(applied, dtype=np.float64)
        classes = np.asarray(classes, dtype=np.int64)
        bounds = (np.tile([np.inf, -np.inf], (len(classes), 1)) if bounds is None
                  else np.array(bounds, dtype=np.float64))
        self._round_args = (W, classes, applied)
        try:
            return self._round("round", W, classes, applied,
                               np.asarray(sigma, dtype=np.float64), int(n_passes),
                               inner_eps, bounds, bool(full_stats))
        finally:
            self._round_args = None

    def close(self):
        try:
            if self.actors:
                self._call(None, "forget")
        finally:
            super().close()


def train_partitioned(dataset, params, label, weighted_C, rule, n_passes, on_round=None):
    """FitResults of every binary problem of `label` (or of the regression problem, label
    None) by the partitioned dual CD on the workers holding `dataset`'s parts."""
    from ..solvers.partitioned_dual_cd import fit_partitioned_dual_cd
    blocks = PartitionedBlocks(Placement(dataset), label, weighted_C, params)
    try:
        w_size = dataset.n_features + (1 if params.bias >= 0 else 0)
        return fit_partitioned_dual_cd(blocks, blocks.n_problems, w_size, params, rule,
                                       n_passes, on_round)
    finally:
        blocks.close()
