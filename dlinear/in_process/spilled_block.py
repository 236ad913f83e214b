"""A block of the partitioned dual CD (-s 1, -s 3) whose rows are on disk: what a Dask
worker keeps when its share of the parts exceeds what its memory limit leaves
(dlinear.cluster.partitioned_cd decides), usable in any process.

The block's parts are written once, in dlinear's binary format, to a directory of the
process's own disk (a Dask worker's local directory), and dropped. What stays in memory
for the whole fit is what the in-memory BlockState keeps apart from the rows: per class
each row's packed record (target, C, squared norm, margin), dual variable, pending step
and place in the active list, as in-process out of core (in_process.out_of_core:
resident_bytes). The rows are read back in sub-blocks of consecutive rows, sized by
out_of_core.plan_blocks for the memory `budget` given, by its BlockReader (the next
sub-block read by a thread while the current one trains, the page cache told to drop
them).

A round is the in-memory round (kernels.block_dual_cd.block_round_svc) run on the
sub-blocks one after another (kernels.sub_block_cd), the block's step dw carried from
one to the next: still one-variable CD on the block's subproblem, each row visited once
a pass, in a random order within each sub-block (cyclic over them, where in memory one
permutation covers the block), with the rows of a cache (row_cache.RowCache: copies of
the other sub-blocks' rows with alpha > 0, as much as out_of_core.cache_room holds)
swept along at each visit. The statistics the driver reads are sums, maxima and minima
over rows at the round's start (the first pass takes every row's gradient at the broadcast w before its
own step moves, whatever came before it in the block), so they are the in-memory
block's, and so are the stopping rule and the optimum; only the path there, and so the
number of rounds, may differ. The order of the sub-blocks alternates each round, so the
one visited last stays in memory and is visited first again: one read fewer a round.
"""
from __future__ import annotations

import os
import shutil
import uuid
import weakref
from types import SimpleNamespace

import numpy as np
import scipy.sparse as sp

from ..data.binary_format import read_range, write_binary_dataset
from ..kernels.block_dual_cd import (REC_C, REC_SQ, REC_Y, STEP_LINEAR, STEP_QUADRATIC,
                                     squared_norms)
from ..kernels.sub_block_cd import sub_block_round_svc
from ..kernels.rng import seed_state
from ..errors import DlinearError
from ..planning.memory_budget import format_size
from ..problem import Problem
from ..solver_table import SOLVERS
from ..solvers.dual_start import scores_of, svc_duals_at
from ..solvers.partitioned_dual_cd import empty_stats
from .block_duals import svc_informative
from .out_of_core import BlockReader, block_room, cache_room, plan_blocks, resident_bytes
from .row_cache import RowCache

SPILL_PREFIX = "dlinear-spill-"
# bytes a stored nonzero takes in the spill file: int32 column, float64 value (float32
# parts are widened, as the in-memory kernels widen them, so both see the same values)
STORED_NONZERO_BYTES = 4 + 8


def spilled_dual_cd_solver(spec) -> bool:
    """Whether a block of this solver can be kept on disk: the one-variable dual CD of
    the SVC (-s 1, -s 3), the problems in-process out of core trains by block
    minimization."""
    return (spec.method == "dual_cd" and spec.kind == "classification"
            and spec.loss in ("squared_hinge", "hinge"))


def _pieces(parts, room: int):
    """`parts` as Problems of consecutive rows of at most `room` bytes each (a single row
    larger than that alone), so that out_of_core.plan_blocks can group them into
    sub-blocks of at most `room`: a Dask part may hold more rows than one sub-block."""
    for part in parts:
        indptr = np.asarray(part.indptr, dtype=np.int64)
        row_bytes = np.diff(indptr) * STORED_NONZERO_BYTES + 8
        cum = np.concatenate([[0], np.cumsum(row_bytes)])
        n = len(indptr) - 1
        r = 0
        while r < n:
            end = max(int(np.searchsorted(cum, cum[r] + room, side="right")) - 1, r + 1)
            z0, z1 = int(indptr[r]), int(indptr[end])
            yield Problem(indptr=indptr[r:end + 1] - z0,
                          indices=np.asarray(part.indices[z0:z1]),
                          data=np.asarray(part.data[z0:z1], dtype=np.float64),
                          y=np.asarray(part.y[r:end], dtype=np.float64),
                          n_features=int(part.n_features))
            r = end


def _remove(path: str):
    shutil.rmtree(path, ignore_errors=True)


class SpilledBlockState:
    """BlockState's interface (round, w_of_alpha, start_from, apply; alpha, starts, k)
    for -s 1 / -s 3 with the block's rows in a binary dataset under `directory`, at most
    `budget` bytes of memory for the block's state and the sub-blocks being read (see
    the module text). `close()` (or the object's collection) removes the file."""

    logistic = False
    regression = False

    def __init__(self, parts, Y, C, bias, n_features, solver_type, seeds, directory,
                 budget: int):
        parts = [p for p in parts if p.n_samples > 0]
        self.starts = np.cumsum([0] + [p.n_samples for p in parts])
        self.bias = float(bias)
        self.n_features = int(n_features)
        l = self.n_rows
        Y = np.asarray(Y, dtype=np.float64).reshape(l, -1)
        C = np.asarray(C, dtype=np.float64).reshape(l, -1)
        self.k = Y.shape[1]
        self.l2_loss = SOLVERS[solver_type].squared_loss
        w_size = self.n_features + (1 if self.bias >= 0 else 0)
        self.resident = resident_bytes(l, w_size, self.k)
        self.budget = int(budget)
        # the kernels' records (y, C, ||x||^2 with the bias, margin) hold the targets and C
        sq = (np.concatenate([squared_norms(p.indptr, p.data, self.bias) for p in parts])
              if parts else np.zeros(0))
        self.records = []
        for c in range(self.k):
            rec = np.zeros((l, 4))
            rec[:, REC_Y], rec[:, REC_C], rec[:, REC_SQ] = Y[:, c], C[:, c], sq
            self.records.append(rec)
        del sq
        self.alpha = [np.zeros(l) for _ in range(self.k)]
        self.step = [np.zeros(l) for _ in range(self.k)]
        self.rng = [seed_state(int(s)) for s in seeds]
        self.path = os.path.join(os.fspath(directory), SPILL_PREFIX + uuid.uuid4().hex)
        self._finalizer = weakref.finalize(self, _remove, self.path)
        self.reader = None
        self.blocks = []
        if l == 0:
            return
        # sub-blocks of the largest share (out_of_core.LARGEST_BLOCK_SHARE), the cache the
        # rest: on 200k rows, 2 workers, -s 1 took 9.0 s on disk, 13.7-17.7 s with the
        # in-process split (smaller sub-blocks, a larger cache), the same 56 rounds
        room = block_room(self.budget, self.resident, largest=self.budget)
        if room <= 0:
            raise DlinearError(
                f"a memory budget of {format_size(self.budget)} leaves no room for a block of "
                f"its {l} rows beside the fit's state of them ({format_size(self.resident)}): "
                "use more workers or more memory per worker")
        header = write_binary_dataset(self.path, _pieces(parts, room - 8))
        del parts       # the caller drops its own references: the rows are on disk now
        self.reader = BlockReader(header, np.array(read_range(header, "indptr", 0, None)),
                                  [])
        self.reader.blocks, room = plan_blocks(header, self.reader.bytes_per_nonzero,
                                               self.budget, self.resident)
        self.blocks = self.reader.blocks
        # per class and sub-block: its rows with C > 0, the active ones first (shrinking)
        self.index, self.n_active = [], []
        for c in range(self.k):
            lists = [np.flatnonzero(self.records[c][b.rows[0]:b.rows[1], REC_C] > 0)
                     for b in self.blocks]
            self.index.append(lists)
            self.n_active.append([len(ix) for ix in lists])
        self._order = list(range(len(self.blocks)))
        # one sub-block: the block in memory, nothing to cache
        capacity = cache_room(self.budget, self.resident, room) if len(self.blocks) > 1 else 0
        self.cache = RowCache(capacity, self.blocks, self.reader.arrays["indices"][1],
                              self.reader.arrays["data"][1])

    @property
    def n_rows(self) -> int:
        return int(self.starts[-1])

    @property
    def n_sub_blocks(self) -> int:
        return len(self.blocks)

    def C_of(self, c):
        """Class c's C of every row (a view of its records)."""
        return self.records[c][:, REC_C]

    def _pass(self):
        """(b, rows r0..r1, the sub-block's CSR arrays) over all sub-blocks, in this
        round's order (reversed every round: the last one is kept for the next)."""
        order = self._order
        self._order = order[::-1]
        for b, arrays in self.reader.pass_over(order, then=order[-1]):
            r0, r1 = self.blocks[b].rows
            yield b, r0, r1, arrays
            del arrays

    def start_from(self, W0, columns=None):
        """BlockState.start_from, the rows' scores read from disk."""
        W0 = np.asarray(W0, dtype=np.float64)
        if W0.ndim == 1:
            W0 = W0[:, None]
        if columns is not None:
            rows = np.append(columns, W0.shape[0] - 1) if self.bias >= 0 else columns
            W0 = W0[rows]
        if self.reader is None:
            return
        scores = np.zeros((self.k, self.n_rows))
        for _, r0, r1, (indptr, indices, data) in self._pass():
            rows = SimpleNamespace(indptr=indptr, indices=indices, data=data,
                                   n_samples=r1 - r0)
            for c in range(self.k):
                w = np.ascontiguousarray(W0[:, c if W0.shape[1] > 1 else 0])
                scores[c, r0:r1] = scores_of(rows, self.bias, w, self.n_features)
        for c in range(self.k):
            rec = self.records[c]
            self.alpha[c][:] = svc_duals_at(np.ascontiguousarray(rec[:, REC_Y]),
                                            np.ascontiguousarray(rec[:, REC_C]), scores[c],
                                            self.l2_loss)

    def apply(self, applied):
        """alpha += eta * (last round's step) for each class, eta = applied[c] (0: drop)."""
        for c in range(self.k):
            eta = float(applied[c])
            if eta != 0.0:
                a = self.alpha[c]
                a += eta * self.step[c]
                if not self.l2_loss:
                    np.minimum(a, self.C_of(c), out=a)
                np.maximum(a, 0.0, out=a)
            self.step[c][:] = 0.0

    def round(self, W, classes, applied, sigma, n_passes, inner_eps=None, bounds=None,
              full_stats=True):
        """BlockState.round over the sub-blocks read from disk (see the module text)."""
        self.apply(applied)
        dW = np.zeros_like(W)
        stats = empty_stats(len(classes))
        if self.reader is None:
            return dW, stats
        sigmas = np.broadcast_to(np.asarray(sigma, dtype=np.float64), (len(classes),))
        W = [np.ascontiguousarray(W[j]) for j in range(len(classes))]
        for b, r0, r1, arrays in self._pass():
            # each visit sweeps the whole cache (block minimization in process sweeps a
            # third a visit): a round visits each row once, and the cached rows carry the
            # other sub-blocks' variables along. On 12,000 rcv1-shaped rows, 2 blocks of
            # 19 sub-blocks, -s 1 to eps 0.01: 151 rounds (in memory 123), against 201
            # sweeping a third a visit, and less time
            cached = self.cache.arrays()
            for j, c in enumerate(classes):
                pg_max_old, pg_min_old = ((np.inf, -np.inf) if bounds is None
                                          else (float(bounds[j][0]), float(bounds[j][1])))
                self.n_active[c][b] = sub_block_round_svc(
                    *arrays, r0, self.n_features, self.bias, self.records[c], self.l2_loss,
                    self.alpha[c], W[j], float(sigmas[j]), int(n_passes), self.rng[c],
                    self.step[c], dW[j], stats[j], self.index[c][b], self.n_active[c][b],
                    pg_max_old, pg_min_old, bool(full_stats), *cached, 1, 0)
            del cached
            self.cache.refresh(b, arrays, r0, *svc_informative(
                [self.alpha[c][r0:r1] + self.step[c][r0:r1] for c in range(self.k)],
                [np.inf if self.l2_loss else self.C_of(c)[r0:r1] for c in range(self.k)]))
            del arrays
        for j, c in enumerate(classes):     # the line search's sums over the final steps
            d = self.step[c]
            moved = np.flatnonzero(d)
            if self.l2_loss:
                D = 0.5 / self.C_of(c)[moved]
                stats[j, STEP_LINEAR] += np.sum((D * self.alpha[c][moved] - 1.0) * d[moved])
                stats[j, STEP_QUADRATIC] += np.sum(D * d[moved] ** 2)
            else:
                stats[j, STEP_LINEAR] -= np.sum(d[moved])
        return dW, stats

    def w_of_alpha(self):
        """sum_i alpha_i y_i x_i of this block, per class: (k, w_size)."""
        W = np.zeros((self.k, self.n_features + (1 if self.bias >= 0 else 0)))
        if self.reader is None:
            return W
        for _, r0, r1, (indptr, indices, data) in self._pass():
            X = sp.csr_matrix((data, indices, indptr), shape=(r1 - r0, self.n_features))
            for c in range(self.k):
                coef = self.alpha[c][r0:r1] * self.records[c][r0:r1, REC_Y]
                W[c, :self.n_features] += X.T @ coef
                if self.bias >= 0:
                    W[c, -1] += self.bias * coef.sum()
        return W

    def close(self):
        """Stops the reader and removes the spill file (also done when collected)."""
        if self.reader is not None:
            self.reader.close()
            self.reader = None
        self._finalizer()
