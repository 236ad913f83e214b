"""The cache of informative rows that selective block minimization keeps in memory
beside the blocks (in_process.out_of_core, in_process.spilled_block)."""
from __future__ import annotations

import numpy as np

from ..kernels.block_minimization import choose_cache_rows, copy_cache_rows
from ..threads import PassPool


class RowCache:
    """Copies of informative rows of the blocks not in memory (Chang & Roth 2011), at
    most `capacity` bytes. Each block has a slot of the arrays in proportion to its rows,
    rewritten in place when the block is visited: a refresh writes that block's copies
    only, where one growing CSR would be copied whole at every visit. The cached rows'
    bounds and numbers are segments of two arrays, a segment per block, where a block's
    rows are rewritten in place while they fit its segment (the rest of it holes, row
    number -1, which visits skip): joining the blocks' lists at every refresh copied
    them all, 0.5 ms a visit (0.76 s of a 16 s fit on 4M rcv1-shaped rows)."""

    # a cached row's bounds in the arrays and its row number
    ROW_BYTES = 3 * 8
    # the arrays' size when they grow, times what they hold
    GROWTH = 1.25

    def __init__(self, capacity: int, blocks, index_dtype, value_dtype, n_threads=1):
        self.per_nonzero = np.dtype(index_dtype).itemsize + np.dtype(value_dtype).itemsize
        n_rows = max(blocks[-1].rows[1], 1) if blocks else 1
        self.slot_bytes = [capacity * (b.rows[1] - b.rows[0]) // n_rows for b in blocks]
        self.slot_start = np.concatenate([[0], np.cumsum(
            [size // self.per_nonzero for size in self.slot_bytes])]).astype(np.int64)
        self.indices = np.empty(int(self.slot_start[-1]), dtype=index_dtype)
        self.data = np.empty(int(self.slot_start[-1]), dtype=value_dtype)
        # block b's cached rows: rows[segment[b]:segment[b] + kept[b]], of room[b] places
        self.segment = np.zeros(len(blocks), dtype=np.int64)
        self.kept = np.zeros(len(blocks), dtype=np.int64)
        self.room = np.zeros(len(blocks), dtype=np.int64)
        self.bounds = np.zeros(0, dtype=np.int64)
        self.rows = np.zeros(0, dtype=np.int64)
        self.end = 0
        # a refresh's copy on threads (the fit's other threads wait for it): on 4M
        # rcv1-shaped rows (float32, 46 blocks) one thread's copies took 1.84 s of the
        # refreshes' 1.97, two threads' 1.2 s in all
        self.pool = PassPool(n_threads, "row-cache")

    def arrays(self):
        """(bounds, indices, data, rows): every cached row, row j at
        indices/data[bounds[2j]:bounds[2j + 1]], holes at rows[j] = -1; visit_block skips
        those and the block it visits."""
        return self.bounds[:2 * self.end], self.indices, self.data, self.rows[:self.end]

    def refresh(self, b: int, block_arrays, r0: int, free, support):
        """After a visit to block b (rows r0..): its slot rewritten with its rows with
        `support` set (the solver's informative rows, in_process.block_duals), those with
        `free` set first, as many as the slot holds."""
        indptr, indices, data = block_arrays
        choose = (indptr, free, support, self.per_nonzero, self.ROW_BYTES,
                  self.slot_bytes[b], int(self.slot_start[b]))
        # a first call counts the rows the slot would hold and how many of the first are
        # those it holds: their nonzeros are in place, and are not copied again
        at = int(self.segment[b])
        n_kept, same = choose_cache_rows(*choose, False, r0, self.bounds[:0],
                                         self.rows[at:at + self.kept[b]])
        if same == n_kept == self.kept[b]:
            return
        if n_kept > self.room[b]:
            self._move(b, n_kept)
        at = int(self.segment[b])
        bounds, rows = self.bounds[2 * at:2 * (at + n_kept)], self.rows[at:at + n_kept]
        choose_cache_rows(*choose, True, r0, bounds, rows)
        cuts = np.linspace(same, n_kept, self.pool.n_threads + 1).astype(np.int64)
        self.pool.run(copy_cache_rows, [
            (indptr, indices, data, r0, bounds, rows, cuts[t], cuts[t + 1], self.indices,
             self.data) for t in range(self.pool.n_threads)])
        self.rows[at + n_kept:at + self.room[b]] = -1
        self.kept[b] = n_kept

    def close(self):
        """Ends the refresh's threads, if any."""
        self.pool.close()

    def _move(self, b: int, n_kept: int):
        """Block b's segment at the end, with room for n_kept rows and some growth: the
        segments packed first when the end has no room, the arrays grown when packing
        leaves none."""
        self.rows[self.segment[b]:self.segment[b] + self.room[b]] = -1
        self.room[b] = self.kept[b] = 0
        need = self._room_for(n_kept)
        if self.end + need > len(self.rows):
            self._pack()
        if self.end + need > len(self.rows):
            size = int(self.GROWTH * (self.end + need))
            bounds, rows = np.empty(2 * size, dtype=np.int64), np.full(size, -1, np.int64)
            bounds[:2 * self.end] = self.bounds[:2 * self.end]
            rows[:self.end] = self.rows[:self.end]
            self.bounds, self.rows = bounds, rows
        self.segment[b], self.room[b] = self.end, need
        self.end += need

    def _pack(self):
        """The segments moved to the front in place, in their order, each keeping room
        for some growth (never more than it had, so that none moves right)."""
        at = 0
        for c in sorted(np.flatnonzero(self.room), key=lambda c: self.segment[c]):
            s, n = int(self.segment[c]), int(self.kept[c])
            room = min(int(self.room[c]), self._room_for(n))
            self.bounds[2 * at:2 * (at + n)] = self.bounds[2 * s:2 * (s + n)]
            self.rows[at:at + n] = self.rows[s:s + n]
            self.rows[at + n:at + room] = -1
            self.segment[c], self.room[c] = at, room
            at += room
        self.rows[at:self.end] = -1
        self.end = at

    @staticmethod
    def _room_for(n_kept: int) -> int:
        return n_kept + n_kept // 8 + 1
