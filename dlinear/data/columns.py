"""Columns that occur: fitting wide data in the space of the columns its rows use.

Hashed wide data (click logs: 2^24 columns) uses a small share of its columns: 1.83M of
16.8M on the click-shaped set. A column no row uses has weight 0 at the optimum of every
L2- or L1-regularized problem here, and the solvers that never walk the columns one by
one reach exactly the same w on the columns that occur: every vector they keep is 0
there, and their sums (dlinear.solvers.vectors.dot adds in index order) are the same sums
without the zeros. So a fit renumbers the columns once, runs on `used` columns, and puts
its weights back at their columns (`expand_rows`); the model file still has all n.

`compact_columns` is the one function that finds a block's occurring columns and its
renumbered indices, for a fit in process (dlinear.train), a cluster part, or a stored
dataset.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional

import numpy as np

from .libsvm_reader import Problem
from ..problem import shared_fact
from ..kernels import columns as _k


def compact_columns(indices: np.ndarray, n_features: int):
    """(used, local_indices): the sorted columns (int32) that `indices` (a CSR block's
    int32 column indices) contains, and those indices renumbered into positions of
    `used` (a new int32 array; the input is never written). Where n_features is much
    larger than the block (a small part of a 2^24-column set), nothing of size
    n_features is made: the columns are found by sorting the block's indices instead of
    flagging them."""
    indices = _int32(indices)
    if _flags_fit(len(indices), n_features):
        return _renumbered(indices, _k.mark_columns(indices, int(n_features)))
    used = np.unique(indices).astype(np.int32, copy=False)
    return used, np.searchsorted(used, indices).astype(np.int32)


def count_columns(indices, n_features: int) -> int:
    """The number of distinct columns in `indices` (a CSR block's column indices), by a
    bitmap where it fits (_flags_fit), else by sorting."""
    indices = _int32(indices)
    if _flags_fit(len(indices), n_features):
        return int(_k.count_marked(_k.mark_columns(indices, int(n_features))))
    return len(np.unique(indices))


def _int32(indices):
    indices = np.asarray(indices)
    return indices if indices.dtype == np.int32 else indices.astype(np.int32)


def _own_indices(indices):
    """A problem's indices as the column kernels take them when renumbered by its own
    columns: uint16 ones as they are (their ranks fit uint16 too; no 4-byte copy of the
    largest array), any other type as int32."""
    indices = np.asarray(indices)
    return indices if indices.dtype == np.uint16 else _int32(indices)


# A block of at most this many nonzeros is sorted (a few ms) even where the bitmap is
# faster: a small run then compiles no bitmap kernels (0.3 s of a cold first run).
SORTED_BLOCK_NNZ = 1 << 18


def _flags_fit(n_indices: int, n_features) -> bool:
    """Whether a bitmap of the columns (n/8 bytes, two passes over the indices) beats
    sorting a block's n_indices indices: for blocks of more than SORTED_BLOCK_NNZ nonzeros
    and more than 1/64 as many nonzeros as columns (on the 400k-row click slice, 2^24
    columns, 15.6M nonzeros: 0.2 s against 4.8 s)."""
    return (int(n_indices) > SORTED_BLOCK_NNZ
            and int(n_features) <= max(64 * int(n_indices), 1 << 16))


def _renumbered_copy(indices, words, before):
    """The indices' ranks among the set columns (kernels.columns.renumber_into) in a new
    NumPy array: one index a nonzero, which NumPy backs with huge pages and Numba's
    allocation would not (a page fault each 4 KiB written)."""
    out = np.empty(indices.shape[0], dtype=indices.dtype)
    _k.renumber_into(indices, words, before, out)
    return out


def _renumbered(indices, words):
    used, before = _k.used_columns(words)
    return used, _renumbered_copy(indices, words, before)


# Fit on the occurring columns when at most this share of the columns occurs. Beyond it
# the renumbered copy of the indices (4 bytes a nonzero) buys little in process, and on
# a cluster the client's traffic (each worker's own columns, summed over the workers)
# would pass the one n-vector of a tree on all columns.
MAX_OCCURRING_SHARE = 0.5


def worth_compacting(n_used: int, n_features: int) -> bool:
    """Whether a fit on n_used of n_features columns runs on those (MAX_OCCURRING_SHARE)."""
    return n_used <= MAX_OCCURRING_SHARE * n_features


def fits_on_occurring_columns(params) -> bool:
    """Whether a fit of `params` gives the same model on the occurring columns only: not
    for the solvers that walk the features in a random order (-s 5, -s 6,
    --primal-cd), whose order over fewer features is another one."""
    return not (params.spec.feature_wise or params.primal_cd)


def weight_rows(used: np.ndarray, n_features: int, bias: float) -> np.ndarray:
    """The rows of a full weight matrix (w_size, k) that a fit on the columns `used` has,
    in its order: the used columns, then the bias row (n_features) when bias >= 0."""
    rows = np.asarray(used, dtype=np.int64)
    return np.append(rows, n_features) if bias >= 0 else rows


def compact_rows(W: np.ndarray, used: np.ndarray, n_features: int,
                 bias: float) -> Optional[np.ndarray]:
    """A full-size warm start W ((w_size,) or (w_size, k)) on the rows of a fit on the
    columns `used`, or None when it is nonzero on another column (the fit would then move
    those weights, and must run on all columns)."""
    W = np.asarray(W, dtype=np.float64)
    keep = weight_rows(used, n_features, bias)
    dropped = np.ones(W.shape[0], dtype=bool)
    dropped[keep] = False
    if W[dropped].any():
        return None
    return W[keep].copy()


def expand_rows(W: np.ndarray, used: np.ndarray, n_features: int, bias: float) -> np.ndarray:
    """The weights (w_size_c, ...) of a fit on the columns `used` at their rows of the
    full (w_size, ...), zeros elsewhere."""
    W = np.asarray(W)
    full = np.zeros((n_features + (1 if bias >= 0 else 0),) + W.shape[1:], dtype=W.dtype)
    full[weight_rows(used, n_features, bias)] = W
    return full


@dataclass(frozen=True)
class CompactProblem:
    """A Problem on the columns it uses (`problem`), and those columns of the original
    (`used`, sorted) with the original's number of features."""
    problem: Problem
    used: np.ndarray
    n_features: int

    def compact_rows(self, W: np.ndarray, bias: float) -> Optional[np.ndarray]:
        return compact_rows(W, self.used, self.n_features, bias)

    def expand_rows(self, W: np.ndarray, bias: float) -> np.ndarray:
        return expand_rows(W, self.used, self.n_features, bias)


def compact_problem(problem: Problem, only_if_worth: bool = False, in_place: bool = False
                    ) -> Optional[CompactProblem]:
    """`problem` on the columns it uses, or None when it uses them all (or, with
    only_if_worth, more than MAX_OCCURRING_SHARE of them). With in_place (a caller that
    owns the problem's arrays and will not use it again), writeable indices are renumbered
    where they are, and the compact problem shares every array with `problem`: no second
    index array (4 bytes a nonzero, the largest copy of a fit on wide data). Else made
    once for the same arrays along a path (problem.shared_fact)."""
    if in_place:
        return _compact_problem(problem, only_if_worth, True)
    return shared_fact(f"columns {problem.n_features} {only_if_worth}",
                       (problem.indptr, problem.indices, problem.data, problem.y,
                        problem.sample_weight),
                       lambda: _compact_problem(problem, only_if_worth, False))


def _compact_problem(problem, only_if_worth, in_place):
    start, stop = int(problem.indptr[0]), int(problem.indptr[-1])
    indices = _own_indices(problem.indices[start:stop])
    n = int(problem.n_features)
    if _flags_fit(len(indices), n):
        words = _k.mark_columns(indices, n)
        used, before = _k.used_columns(words)
        # checked before renumbering: nothing (or too little) to gain
        if len(used) == n or (only_if_worth and not worth_compacting(len(used), n)):
            return None
        if in_place and indices.flags.writeable:
            _k.renumber_into(indices, words, before, indices)
            local = indices
        else:
            local = _renumbered_copy(indices, words, before)
    else:
        used, local = compact_columns(indices, n)
        if len(used) == n or (only_if_worth and not worth_compacting(len(used), n)):
            return None
        if in_place and indices.flags.writeable:
            indices[:] = local
            local = indices
    indptr = problem.indptr - start if start else problem.indptr
    return CompactProblem(replace(problem, indptr=indptr, indices=local,
                                  data=problem.data[start:stop], n_features=len(used)),
                          used, n)


def part_columns(part: Problem, n_features: Optional[int] = None) -> np.ndarray:
    """The sorted columns (int32) a part's rows use."""
    start, stop = int(part.indptr[0]), int(part.indptr[-1])
    return compact_columns(part.indices[start:stop],
                           part.n_features if n_features is None else n_features)[0]


def union_columns(column_lists, n_features: int) -> np.ndarray:
    """The sorted union (int32) of sorted int32 column lists: by a bitmap of the columns
    where it fits (_flags_fit), else by sorting (a hash-based np.unique of the 32 click
    parts' lists took 2.5 s on the client, the bitmap a tenth of that)."""
    column_lists = [_int32(c) for c in column_lists]
    if not column_lists:
        return np.zeros(0, dtype=np.int32)
    if len(column_lists) == 1:
        return column_lists[0]
    every = np.concatenate(column_lists)
    if _flags_fit(len(every), n_features):
        return _k.used_columns(_k.mark_columns(every, int(n_features)))[0]
    return np.unique(every).astype(np.int32, copy=False)


def on_local_columns(parts: list, n_features: int):
    """(used, parts): the sorted columns (int32) that any of `parts` uses, and each part
    with its indices renumbered into positions of `used` (new index arrays; the parts'
    own are never written). What a cluster worker holds of wide data: its vectors are
    then len(used) long, whatever n_features is."""
    blocks = [_int32(part.indices[int(part.indptr[0]):int(part.indptr[-1])])
              for part in parts]
    if blocks and _flags_fit(sum(len(b) for b in blocks), n_features):
        # one bitmap of all the parts' columns, each part renumbered by it directly
        words = _k.mark_columns(blocks[0], int(n_features))
        for block in blocks[1:]:
            words |= _k.mark_columns(block, int(n_features))
        used, before = _k.used_columns(words)
        local = [_renumbered_copy(block, words, before) for block in blocks]
    else:
        found = [compact_columns(block, n_features) for block in blocks]
        used = union_columns([u for u, _ in found], n_features)
        local = [np.searchsorted(used, part_used).astype(np.int32)[block_local]
                 for part_used, block_local in found]
    local_parts = []
    for part, indices in zip(parts, local):
        start = int(part.indptr[0])
        local_parts.append(replace(part, indptr=part.indptr - start if start else part.indptr,
                                   indices=indices,
                                   data=part.data[start:int(part.indptr[-1])],
                                   n_features=len(used)))
    return used, local_parts
