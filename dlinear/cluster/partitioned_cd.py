"""The Dask backend of the partitioned dual CD (dlinear.solvers.partitioned_dual_cd).

The blocks are an ActorTree (cluster/tree.py) whose actors each hold a DualBlock: a
BlockState over the parts their worker already holds (no part moves, nothing is
concatenated) with the dual variables of its rows for every class. A round's W goes down
the tree, each actor runs its local passes while its children run theirs, and the summed
steps of w with the reduced statistics come back up, so each worker receives one
(classes x n) array per round and sends one.

A lost worker loses the dual variables of its parts. The others survive: the new actor the
tree makes on a surviving worker takes them over from the payload of the actor it
replaces there, part by part (the tree keeps that actor until then). Keeping them costs no
traffic, where sending them through the client would move O(rows) per worker, and saves
the rounds that brought them there. Parts rebuilt elsewhere from their lineage restart
from alpha = 0 or a warm start's duals (feasible either way), and the driver's w is recomputed from all dual variables by
one reduction before the round is repeated.

-s 4 and -s 21 ride the same tree with payloads of their own: CrammerSingerPayload (the
rows' alpha for all k classes at once, W and its steps k x n) and OneClassPayload (each
block's share of sum(alpha); after a lost worker its rounds start again, as the lost
rows took part of that sum).

A worker whose share of the parts exceeds SPILL_SHARE of its memory limit keeps its
block of -s 1 / -s 3 on its local disk (in_process.spilled_block: the parts written in
the binary format to the worker's local directory, each round read back in sub-blocks);
its rounds' results are the same kind, so the driver does not know. The file is removed
when the fit ends (PartitionedBlocks.close), or with its actor.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..data.columns import expand_rows
from ..kernels.block_dual_cd import N_STATS

from ..planning.class_plan import block_seeds, group_rows, n_problems, problem_seed, targets
from ..solvers import partitioned_crammer_singer as PCS
from ..solvers import partitioned_oneclass as POC
from ..solvers.partitioned_dual_cd import BlockState, combine_rounds
from ..in_process.spilled_block import SpilledBlockState, spilled_dual_cd_solver
from .dataset import concat_weights
from .tree import ActorTree, ColumnCodec, OnTree, Placement, WorkerLost, add_results


# A worker keeps its share of the parts on its local disk (-s 1, -s 3) when the share
# exceeds this fraction of its memory limit, and the fit's memory budget there is that
# fraction: the rest is for Dask's own copies of the parts (which it may spill), the
# renumbered column indices the actor makes, and the worker's unmanaged memory.
SPILL_SHARE = 0.5


def budget_on_disk(share_bytes: int, memory_limit: int):
    """The memory budget of a worker's block kept on disk, or None where its share of
    the parts stays in memory (no limit, or the share within SPILL_SHARE of it)."""
    if memory_limit and share_bytes > SPILL_SHARE * memory_limit:
        return int(SPILL_SHARE * memory_limit)
    return None


def _worker_spill_budget(share):
    """budget_on_disk of this worker's share, and its local directory."""
    from distributed import get_worker
    worker = get_worker()
    limit = worker.memory_manager.memory_limit or 0
    return (budget_on_disk(sum(p.__sizeof__() for p in share.parts), limit),
            worker.local_directory)


class DualBlock:
    """Payload: the worker's parts as one block of the partitioned dual CD, for every
    class (its BlockState, `state`), with the parts' keys. -s 1 and -s 3 keep the parts
    on the worker's local disk instead (in_process.spilled_block) where the worker's
    share exceeds SPILL_SHARE of its memory limit, or always with `budget` (bytes: the
    budget the block may hold in memory; tests and benchmarks force the path so)."""

    def __init__(self, share, label, weighted_C, params, budget=None):
        Y, C = targets(np.concatenate([p.y for p in share.parts]), concat_weights(share.parts),
                       label, weighted_C, params)
        seeds = block_seeds(params.seed, share.block, Y.shape[1])
        if spilled_dual_cd_solver(params.spec):
            automatic, directory = _worker_spill_budget(share)
            budget = budget or automatic
        else:
            budget = None
        if budget:
            self.state = SpilledBlockState(share.parts, Y, C, params.bias, share.n_features,
                                           params.solver_type, seeds, directory, budget)
        else:
            self.state = BlockState(share.parts, Y, C, params.bias, share.n_features,
                                    params.solver_type, seeds, params.p)
        if params.init_sol is not None:     # the warm start's W, on all the columns
            self.state.start_from(params.init_sol, share.columns)
        self.keys = share.keys

    def take_over(self, previous: DualBlock):
        """The dual variables `previous` (the block this one replaces on its worker) has
        of the parts both hold."""
        mine, theirs = self.state, previous.state
        where = {key: (s, e) for key, s, e in zip(previous.keys, theirs.starts[:-1],
                                                  theirs.starts[1:])}
        for key, s, e in zip(self.keys, mine.starts[:-1], mine.starts[1:]):
            if key not in where:
                continue
            s0, e0 = where[key]
            for c in range(mine.k):
                mine.alpha[c][s:e] = theirs.alpha[c][s0:e0]
                if mine.logistic:
                    mine.rest[c][s:e] = mine.C[c][s:e] - theirs.alpha[c][s0:e0]
        # the replaced block is not used again: its spill file goes now, not when (or if)
        # its worker collects the actor
        previous.release()

    def round(self, *args):
        return self.state.round(*args)

    def w_of_alpha(self):
        return self.state.w_of_alpha()

    def rows(self):
        return np.array([self.state.n_rows], dtype=np.int64)

    def spilled(self):
        """[1] where this block's rows are on its worker's disk, else [0]."""
        return np.array([isinstance(self.state, SpilledBlockState)], dtype=np.int64)

    def release(self):
        """Removes what the block keeps on disk (the spill file), at the fit's end."""
        close = getattr(self.state, "close", None)
        if close is not None:
            close()
        return np.zeros(1, dtype=np.int64)

    @staticmethod
    def combine(method, a, b):
        return combine_rounds(a, b) if method == "round" else add_results(a, b)


class CrammerSingerPayload(DualBlock):
    """Payload: the worker's parts as one block of the partitioned -s 4
    (solvers.partitioned_crammer_singer), all classes in one alpha (rows x k)."""

    def __init__(self, share, label, weighted_C, params):
        y = np.concatenate([p.y for p in share.parts]) if share.parts else np.zeros(0)
        class_of_row = group_rows(label, y)
        C = np.asarray(weighted_C, dtype=np.float64)[class_of_row]
        weights = concat_weights(share.parts)
        if weights is not None:
            C = C * weights
        self.state = PCS.CrammerSingerBlock(share.parts, class_of_row, C, len(label),
                                        params.bias, share.n_features,
                                        problem_seed(params.seed, 0, share.block))
        self.keys = share.keys

    def take_over(self, previous: CrammerSingerPayload):
        mine, theirs = self.state, previous.state
        where = {key: (s, e) for key, s, e in zip(previous.keys, theirs.starts[:-1],
                                                  theirs.starts[1:])}
        for key, s, e in zip(self.keys, mine.starts[:-1], mine.starts[1:]):
            if key in where:
                s0, e0 = where[key]
                mine.take_over_rows(s, e, theirs.alpha[s0:e0])


class PartitionedBlocks(OnTree):
    """The driver's `blocks` on a Dask cluster: round() over an ActorTree of DualBlocks.
    With `columns` (the dataset's occurring columns), each worker holds and exchanges its
    own columns only, and W and its steps are on `columns` (then the bias); `columns` is
    None after all where a worker's own columns could not be told from its statistics
    (ColumnCodec)."""

    def __init__(self, placement: Placement, label, weighted_C, params, columns=None,
                 payload=DualBlock, payload_args=()):
        self.n_problems = n_problems(label)
        self.restarted_w = None
        self._round_args = None
        self.columns = columns
        args = (label, weighted_C, params) + tuple(payload_args)
        if columns is not None:
            codec = ColumnCodec(columns, params.bias >= 0, reserved=(N_STATS,))
            try:
                self.tree = ActorTree(placement, payload, args, replay=self._replay,
                                      codec=codec, combine=DualBlock.combine)
                return
            except ValueError:         # the actors made go with the failed tree
                self.columns = None
        self.tree = ActorTree(placement, payload, args, replay=self._replay)

    @property
    def w_size(self) -> int:
        """The length of W's rows: the dataset's columns (or occurring ones), the bias."""
        dataset = self.tree.placement.dataset
        n = dataset.n_features if self.columns is None else len(self.columns)
        return n + (1 if self.tree.args[2].bias >= 0 else 0)

    @property
    def n_blocks(self) -> int:
        return len(self.tree.actors)

    def _replay(self):
        """w rebuilt from all dual variables by one reduction, and the interrupted
        round's arguments (kept by reference in round()) rewritten to start from it."""
        W = self.tree.call("w_of_alpha")
        self.restarted_w = W
        if self._round_args is not None:
            W_round, classes, applied = self._round_args
            W_round[:] = W[classes]
            applied[:] = 0.0

    def rows(self) -> int:
        return int(self.tree.round("rows")[0])

    def spilled(self) -> int:
        """How many workers keep their block on disk."""
        return int(self.tree.call("spilled")[0])

    def close(self):
        """Each block's spill file removed (a lost worker's goes with it), the actors
        released."""
        if self.tree.actors:
            try:
                self.tree.call("release")
            except (OSError, RuntimeError, WorkerLost):
                pass
        self.tree.close()

    def w_of_alpha(self):
        return self.tree.round("w_of_alpha")

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
            return self.tree.round("round", W, classes, applied,
                                   np.asarray(sigma, dtype=np.float64), int(n_passes),
                                   inner_eps, bounds, bool(full_stats))
        finally:
            self._round_args = None


def on_all_columns(result, columns, n_features: int, bias: float):
    """A FitResult of a fit on the workers' own `columns` with w on all the dataset's
    columns again (the same, bit for bit); as it is where `columns` is None."""
    if columns is None:
        return result
    return replace(result, w=expand_rows(result.w, columns, n_features, bias))


def train_partitioned(dataset, params, label, weighted_C, rule, n_passes, on_round=None,
                      columns=None, spill_budget=None, fit_stats=None):
    """FitResults of every binary problem of `label` (or of the regression problem, label
    None) by the partitioned dual CD on the workers holding `dataset`'s parts; with
    `columns` (the dataset's occurring columns) on the workers' own columns, the
    results' w on all columns again (the same, bit for bit). spill_budget (bytes):
    every worker keeps its block on disk with that memory budget (-s 1, -s 3; else
    workers over SPILL_SHARE of their memory limit do). fit_stats (a dict): gets
    "spilled_workers", the number of workers that kept their block on disk."""
    from ..solvers.partitioned_dual_cd import fit_partitioned_dual_cd
    blocks = PartitionedBlocks(Placement(dataset), label, weighted_C, params, columns,
                               payload_args=(spill_budget,))
    try:
        if fit_stats is not None:
            fit_stats["spilled_workers"] = blocks.spilled()
        results = fit_partitioned_dual_cd(blocks, blocks.n_problems, blocks.w_size, params,
                                          rule, n_passes, on_round)
    finally:
        blocks.close()
    return [on_all_columns(r, blocks.columns, dataset.n_features, params.bias)
            for r in results]


def train_partitioned_crammer_singer(dataset, params, label, weighted_C, rule, n_passes,
                                     on_round=None, columns=None):
    """The FitResult of -s 4 (w: (w_size, k)) by the partitioned Crammer-Singer dual on
    the workers holding `dataset`'s parts: the tree of the binary duals, each round one
    k x n array down and up per worker; with `columns`, on the workers' own columns."""
    blocks = PartitionedBlocks(Placement(dataset), label, weighted_C, params, columns,
                               payload=CrammerSingerPayload)
    try:
        result = PCS.fit_partitioned_crammer_singer(blocks, len(label), blocks.w_size,
                                                    params, rule, n_passes, on_round)
    finally:
        blocks.close()
    return on_all_columns(result, blocks.columns, dataset.n_features, params.bias)


class OneClassPayload:
    """Payload: the worker's parts as one block of the partitioned -s 21
    (solvers.partitioned_oneclass); its place in the tree is its block number."""

    combine = staticmethod(POC.combine)

    def __init__(self, share, params):
        weights = concat_weights(share.parts)
        n = sum(p.n_samples for p in share.parts)
        U = np.ones(n) if weights is None else weights
        self.state = POC.OneClassBlock(share.parts, U, params.bias, share.n_features,
                                       share.block)

    def sizes(self, n_blocks):
        return self.state.sizes(n_blocks)

    def start(self, masses):
        return self.state.start(masses)

    def round(self, *args):
        return self.state.round(*args)

    def finish(self, *args):
        return self.state.finish(*args)


class OneClassBlocks(OnTree):
    """The -s 21 driver's `blocks` on a Dask cluster: call(method, ...) over an ActorTree
    of OneClassPayloads (on the workers' own columns with `columns`). After a lost
    worker, `restarted` tells the driver to start again (the sum over alpha is gone with
    the lost rows)."""

    def __init__(self, placement: Placement, params, columns=None):
        self.restarted = False
        self.columns = columns
        if columns is not None:
            codec = ColumnCodec(columns, params.bias >= 0)
            try:
                self.tree = ActorTree(placement, OneClassPayload, (params,),
                                      replay=self._replay, codec=codec,
                                      combine=POC.combine)
                return
            except ValueError:
                self.columns = None
        self.tree = ActorTree(placement, OneClassPayload, (params,), replay=self._replay)

    def _replay(self):
        self.restarted = True

    @property
    def n_blocks(self) -> int:
        return len(self.tree.actors)

    def w_size(self, params) -> int:
        dataset = self.tree.placement.dataset
        n = dataset.n_features if self.columns is None else len(self.columns)
        return n + (1 if params.bias >= 0 else 0)

    def call(self, method, *args):
        return self.tree.round(method, *args)


def train_partitioned_oneclass(dataset, params, rule, n_passes, on_round=None,
                               columns=None):
    """The FitResult (w, rho) of -s 21 by the partitioned one-class dual on the workers
    holding `dataset`'s parts; with `columns`, on the workers' own columns."""
    blocks = OneClassBlocks(Placement(dataset), params, columns)
    try:
        result = POC.fit_partitioned_oneclass(blocks, blocks.w_size(params), params, rule,
                                              n_passes, on_round)
    finally:
        blocks.close()
    return on_all_columns(result, blocks.columns, dataset.n_features, params.bias)
