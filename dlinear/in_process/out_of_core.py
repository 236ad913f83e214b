"""Training from a binary dataset larger than the memory budget, in this process.

The dual CD solvers -s 1, 3, 7, 12, 13 by block minimization (Yu, Hsieh, Chang & Lin,
KDD 2010; LIBLINEAR's cdblock tool): the rows are split into blocks, runs of the
dataset's parts (consecutive row ranges) sized so that two blocks fit the budget beside
what stays in memory for the whole fit (w and, per row, its dual record, label and row
pointer). An outer
iteration visits every block once: its CSR rows are read from disk (the next block read
by a thread while the current one trains) and dual CD takes `sweeps_per_visit` sweeps
over them (kernels.block_minimization; each solver's state, stopping rule and cache of
informative rows in in_process.block_duals). The block visited last stays in memory and
is visited first in the next outer iteration (one read fewer a pass), the others follow
in a new random order. The stopping rule is the solver's in LIBLINEAR over all rows
(measured in each block's first sweep of the iteration, with shrinking confirmed on the
whole set), so the model reaches the in-memory optimum to the same eps.

A block's byte ranges are read into two buffers the blocks take in turn, by direct reads
(O_DIRECT: no copy through the page cache) where the file system takes them, else by
plain reads, each READ_CHUNK followed by POSIX_FADV_DONTNEED: either way the page cache
does not keep the data (under a cgroup memory limit it is charged to the process's
group). -s 1 / -s 3 split a visit's rows between threads (block_duals.SvcDuals).
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Callable, Optional

import numpy as np

from ..data.binary_format import _npy_layout, read_range, read_header
from ..data.columns import (expand_rows, fits_on_occurring_columns, union_columns,
                            worth_compacting)
from ..errors import DlinearError
from ..kernels.columns import mark_columns, renumber_into, used_columns
from ..kernels.rng import seed_state
from ..model import Model
from ..params import Params, check_parameter
from ..planning.memory_budget import format_size
from ..planning.class_plan import (assemble_model, first_appearance, lean_targets,
                                   plan_classes, problem_seed, target_column, targets)
from ..solvers.checkpoint import refuse
from ..solvers.newton import fit_steps, newton_tol
from ..solvers.primal_objectives import LOSS_CODE, LossTerm, RegularizedObjective
from ..solvers.requests import serve
from ..solvers.status import Status, note
from ..threads import available_cores, raise_if_stopped
from .block_duals import block_duals
from .row_cache import RowCache

# dual CD sweeps over a block each time it is in memory. The reader thread hides the
# read behind the sweep, so more sweeps only add CD work: measured on 300k rcv1-shaped
# rows in 18 blocks, 1, 2, 3, 5 sweeps took 16, 16, 17, 18 outer iterations (45, 61, 84,
# 114 s), the cache of support vectors already carrying most of what repeated sweeps gave
SWEEPS_PER_VISIT = 1
# times an outer iteration each cached row is swept (each visit sweeps a share of the
# cache): on 300k rcv1-shaped rows in 18 blocks, sweeping the whole cache at every visit
# took 11 outer iterations and 13.8 s of CD, 3 times 14 iterations and 8.6 s; on 4M rows
# (float32, 77 blocks, the visits' CD cheaper than a pass's read) 3, 4, 5 times took
# 19.8, 18.8, 17.8 passes, 14.4, 14.2, 15.0 s (medians of 8, 5, 2 capped runs); -s 3 on
# 300k rows 7.9 and 6.9 passes at 3 and 4
CACHE_SWEEPS_PER_PASS = 4
# what the budget leaves beside the fit's state: a block each for the one in use and the
# one being read, (dual CD) the cache of informative rows, and VISIT_SHARE for what a
# visit makes and drops (its order of rows and their steps, 25 bytes a row of the block
# and the cache, and the cache refresh's row flags); Newton keeps no cache, so its two
# blocks share all of it. The cache, not the blocks' size, saves passes: on 4M
# rcv1-shaped rows (float32, a budget of 504 MiB), blocks of 0.4 / 0.3 / 0.2 / 0.15 / 0.1
# and the cache the rest took 38.3 / 23.3 / 18.6 / 17.8 / 16.9 passes (26-27 s but 40 s
# at 0.4: the CD work is about the same). With the fit's state 24 bytes a row smaller (a
# budget of 487 MiB, capped), 0.15 and 0.1 took 17.6 and 16.8 passes but 13.9-14.5 and
# 14.8-16.2 s (5 runs each): the larger cache's sweeps cost more than the pass they
# save. On 300k rows in 72 parts (a budget of 67.8 MiB) 0.15 makes 36 blocks, 0.1 72:
# -s 7 at -e 0.1 / 0.01 took 5.9 / 8.8 and 4.9 / 7.9 passes. A block of the dataset's
# largest part takes up to LARGEST_BLOCK_SHARE, the cache then less
BLOCK_SHARE = 0.15
LARGEST_BLOCK_SHARE = 0.3
VISIT_SHARE = 0.1
NEWTON_BLOCK_SHARE = 0.5
# bytes a row keeps in memory for the whole fit, per binary problem: the dual record (4
# float64) and the active list (int64); a block's targets and C are made when it is
# visited (block_duals.BlockDuals)
ROW_STATE_BYTES = 32 + 8
# and once: the row pointer and the label, and the weight where the rows have weights
ROW_SHARED_BYTES = 8 + 8
WEIGHT_BYTES = 8
# a Newton fit's rows (LossTerm, one problem at a time): X w, X s sharing its array with
# the curvature weights, the rows with curvature (int32), the +1/-1 labels (int8) and C
# where instances are weighted (the float64 targets made first, before X w and X s, fit
# in the same bytes)
NEWTON_ROW_BYTES = 8 + 8 + 4 + 1 + 8
# and its n-vectors: w, the gradient, the preconditioner, CG's vectors, the step
NEWTON_VECTORS = 10
# bytes of a read between two drops of its pages from the page cache
READ_CHUNK = 16 << 20
# the alignment of a direct read's offset, length and buffer (the largest logical block
# size of common disks)
ALIGN = 4096


# the dual CD solvers block minimization trains (in_process.block_duals)
BLOCK_DUAL_LOSSES = ("squared_hinge", "hinge", "logistic_regression",
                     "squared_epsilon_insensitive", "epsilon_insensitive")
OUT_OF_CORE_SOLVERS = ("-s 1, 3, 7, 12 and 13 (one-variable dual CD) and -s 0, 2, 11 "
                       "(Newton)")


def out_of_core_solver(params: Params) -> bool:
    """Whether -s N trains out of core here: one-variable dual CD of -s 1, 3, 7, 12 or 13,
    or the Newton solvers -s 0, 2, 11 one problem at a time."""
    spec = params.spec
    if spec.newton:
        return not params.multinomial and not params.primal_cd
    return (spec.method == "dual_cd" and spec.loss in BLOCK_DUAL_LOSSES
            and params.cd_block == 1 and not params.online and params.regularize_bias
            and not params.primal_cd)


@dataclass(frozen=True)
class Block:
    rows: tuple     # [start, end)
    nnz: tuple      # [start, end) in indices / data


def resident_bytes(n_rows: int, w_size: int, n_problems: int, newton: bool = False,
                   weighted: bool = False) -> int:
    """What stays in memory for the whole fit, whatever the blocks."""
    shared = ROW_SHARED_BYTES + (WEIGHT_BYTES if weighted else 0)
    if newton:      # one problem at a time, its targets made when it starts
        return n_rows * (shared + NEWTON_ROW_BYTES) + NEWTON_VECTORS * w_size * 8
    return n_rows * (shared + n_problems * ROW_STATE_BYTES) + 2 * n_problems * w_size * 8


def block_room(budget: int, resident: int, newton: bool = False, largest: int = 0) -> int:
    """The bytes of one block: BLOCK_SHARE (NEWTON_BLOCK_SHARE) of what the budget leaves
    beside `resident` (the block in use and the one being read take two shares), or as
    much as the `largest` part needs up to LARGEST_BLOCK_SHARE."""
    free = budget - resident
    if newton:
        return int(NEWTON_BLOCK_SHARE * free)
    return int(max(BLOCK_SHARE * free, min(largest, LARGEST_BLOCK_SHARE * free)))


def cache_room(budget: int, resident: int, block: int) -> int:
    """The bytes of the cache of informative rows: what the budget leaves beside
    `resident`, two blocks of `block` bytes and VISIT_SHARE."""
    return max(0, int((1.0 - VISIT_SHARE) * (budget - resident)) - 2 * block)


def _part_bytes(part, bytes_per_nonzero: int) -> int:
    (r0, r1), (z0, z1) = part.rows, part.nnz
    return (z1 - z0) * bytes_per_nonzero + (r1 - r0 + 1) * 8


def plan_blocks(header, bytes_per_nonzero: int, budget: int, resident: int,
                newton: bool = False) -> tuple:
    """(blocks, their room in bytes): runs of consecutive parts, each at most
    block_room bytes. A part larger than that is one clear error naming the budget that
    would hold it."""
    largest = max((_part_bytes(p, bytes_per_nonzero) for p in header.parts), default=0)
    room = block_room(budget, resident, newton, largest)
    share = NEWTON_BLOCK_SHARE if newton else LARGEST_BLOCK_SHARE
    blocks, start, size = [], None, 0
    for part in header.parts:
        r0 = part.rows[0]
        z0 = part.nnz[0]
        part_bytes = _part_bytes(part, bytes_per_nonzero)
        if part_bytes > room:
            need = resident + int(part_bytes / share) + 1
            raise DlinearError(
                f"{header.path}: a memory budget of {format_size(budget)} leaves no room for "
                f"a block of its rows beside the fit's state ({format_size(resident)}): it "
                f"needs at least {format_size(need)}")
        if start is not None and size + part_bytes > room:
            blocks.append(Block((start[0], r0), (start[1], z0)))
            start, size = None, 0
        if start is None:
            start = (r0, z0)
        size += part_bytes
    if start is not None:
        last = header.parts[-1]
        blocks.append(Block((start[0], last.rows[1]), (start[1], last.nnz[1])))
    return blocks, room


def visit_threads(n_threads: Optional[int], blocks, w_size: int) -> int:
    """The threads a dual CD visit takes (n_threads; None: one per core): one where a
    block holds too few nonzeros for a thread's share of a visit to outweigh the merge of
    the threads' copies of w (parallel_dual_cd's limits for a round: MIN_NNZ_PER_THREAD
    a thread, NNZ_PER_WEIGHT_PER_ROUND a weight)."""
    from ..solvers.parallel_dual_cd import NNZ_PER_WEIGHT_PER_ROUND, solver_threads
    nnz = max((block.nnz[1] - block.nnz[0] for block in blocks), default=0)
    if nnz < NNZ_PER_WEIGHT_PER_ROUND * w_size:
        return 1
    return solver_threads(available_cores() if n_threads is None else n_threads, nnz)


def read_whole(h, name: str) -> np.ndarray:
    """Array `name` of the dataset (y, indptr, ...) copied into memory, its file's pages
    then dropped from the page cache: under a cgroup memory limit they would stay charged
    to the process's group beside the budget. On 68M rows (1.1 GB of them) a -s 0 fit in
    a 20 GiB group reached the limit 531 times, its page cache reclaimed; with them
    dropped the group peaked at 19.45 GiB. On 4M rows (64 MB) the group's peak went from
    640-645 to 580 MiB under a cap of 654."""
    out = np.array(read_range(h, name, 0, None))
    if hasattr(os, "posix_fadvise"):
        fd = os.open(h.file(name), os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    return out


def occurring_columns(h, params) -> Optional[np.ndarray]:
    """The sorted columns the dataset's rows use, when the fit runs on those alone (as
    in memory, data.columns: the same w on them, zeros elsewhere), else None. Its
    n-vectors then take the occurring columns' bytes: 1.83M of 2^24 on click-shaped data."""
    if not (fits_on_occurring_columns(params) and h.parts
            and worth_compacting(h.occurring_columns, h.n_features)):
        return None
    every = read_whole(h, "columns")
    return union_columns([every[p.columns[0]:p.columns[1]] for p in h.parts], h.n_features)



def _aligned(nbytes: int) -> np.ndarray:
    """nbytes of uint8 starting on an ALIGN boundary."""
    raw = np.empty(nbytes + ALIGN, dtype=np.uint8)
    skip = -raw.ctypes.data % ALIGN
    return raw[skip:skip + nbytes]


def _read_into(fd, view, start, need, path, drop=False):
    """Reads into `view` from offset `start` until at least `need` bytes are in, a
    READ_CHUNK at a time (its pages dropped after it if `drop`)."""
    done = 0
    while done < need:
        n = os.preadv(fd, [view[done:done + READ_CHUNK]], start + done)
        if n <= 0:
            raise DlinearError(f"{path}: truncated")
        if drop:
            os.posix_fadvise(fd, start + done, n, os.POSIX_FADV_DONTNEED)
        done += n


class BlockReader:
    """A block's CSR arrays read from the dataset's files by byte range, kept out of the
    page cache (_fill); `pass_over` yields the blocks, the next one read ahead."""

    def __init__(self, header, indptr, blocks, used=None):
        self.indptr, self.blocks = indptr, blocks
        # the occurring columns the fit runs on as a bitmap and its ranks (n_features / 8
        # and / 16 bytes): renumbering by them is a popcount a nonzero, where a
        # binary search in the columns took more time than the pass's Newton work
        self.columns = None
        if used is not None:
            words = mark_columns(used, int(header.n_features))
            self.columns = (words, used_columns(words)[1])
        self.arrays = {}
        for name in ("indices", "data"):
            path = header.file(name)
            with open(path, "rb") as f:
                dtype, _, offset = _npy_layout(f, path)
            self.arrays[name] = (path, np.dtype(dtype), offset)
        self.pool = ThreadPoolExecutor(1, thread_name_prefix="dlinear-block-reader")
        self.pending = {}
        self.reads = 0
        self.lock = threading.Lock()
        self.kept = None            # (block, (its arrays, buffers)): a pass's last
        self.spare = []             # buffers of blocks no longer in use
        self.direct = hasattr(os, "O_DIRECT")

    @property
    def bytes_per_nonzero(self) -> int:
        return sum(dtype.itemsize for _, dtype, _ in self.arrays.values())

    def _buffers(self):
        """An (indices, data) pair of byte buffers for the largest block's arrays, each
        starting on an ALIGN boundary with ALIGN to spare at either end (direct reads
        take whole aligned pages): a spare one (a block no longer in use) or a new one.
        Reusing them spares the kernel a fresh mapping's page faults and zeroing at every
        read (on 4M rcv1-shaped rows, 4.8 of the fit's 17 CPU seconds in the kernel)."""
        with self.lock:
            if self.spare:
                return self.spare.pop()
        most = max(block.nnz[1] - block.nnz[0] for block in self.blocks)
        return tuple(_aligned(most * self.arrays[name][1].itemsize + 2 * ALIGN)
                     for name in ("indices", "data"))

    def _release(self, buffers):
        with self.lock:
            self.spare.append(buffers)

    def _read(self, b):
        """Block b's (indptr, indices, data) and the buffers holding the last two."""
        block = self.blocks[b]
        (r0, r1), (z0, z1) = block.rows, block.nnz
        buffers = self._buffers()
        out = [np.ascontiguousarray(self.indptr[r0:r1 + 1] - z0)]
        for name, buffer in zip(("indices", "data"), buffers):
            path, dtype, offset = self.arrays[name]
            start = offset + z0 * dtype.itemsize
            nbytes = (z1 - z0) * dtype.itemsize
            skip = self._fill(path, buffer, start, nbytes)
            values = buffer[skip:skip + nbytes].view(dtype)
            if name == "indices" and self.columns is not None:
                renumber_into(values, *self.columns, values)
            out.append(values)
        with self.lock:
            self.reads += 1
        return tuple(out), buffers

    def _fill(self, path, buffer, start, nbytes) -> int:
        """Reads bytes start .. start + nbytes of `path` into `buffer`; returns where in
        it they begin. Direct reads (O_DIRECT) where the file system takes them: the
        disk writes into the buffer, with no copy through the page cache (on a 2-core
        machine that copy's CPU slowed the visits' threads), else plain reads of
        READ_CHUNK, the pages dropped after each (so the page cache never holds, nor a
        cgroup's limit charges, more than a chunk of the file)."""
        if self.direct:
            first = start - start % ALIGN
            length = -(-(start + nbytes - first) // ALIGN) * ALIGN
            try:
                fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
            except OSError:
                self.direct = False
            else:
                try:
                    _read_into(fd, memoryview(buffer)[:length], first,
                               start + nbytes - first, path)
                    return start - first
                except OSError:
                    self.direct = False
                finally:
                    os.close(fd)
        fd = os.open(path, os.O_RDONLY)
        try:
            _read_into(fd, memoryview(buffer)[:nbytes], start, nbytes, path,
                       drop=hasattr(os, "posix_fadvise"))
        finally:
            os.close(fd)
        return 0

    def ahead(self, b):
        if b not in self.pending:
            self.pending[b] = self.pool.submit(self._read, b)

    def get(self, b):
        """Block b's arrays and their buffers (to _release when no longer used)."""
        self.ahead(b)
        return self.pending.pop(b).result()

    def pass_over(self, order, then=None):
        """Yields (b, its arrays) for the blocks in `order`, the next one read while the
        caller works on this one; `then`: the block the next pass starts with, kept in
        memory if it is this pass's last (the order reversed), else read ahead. A block's
        arrays are valid until the caller asks for the next: their buffers are reused."""
        order = list(order)
        for position, b in enumerate(order):
            if self.kept is not None and self.kept[0] == b:
                arrays, buffers = self.kept[1]
            else:
                if self.kept is not None:
                    self._release(self.kept[1][1])
                arrays, buffers = self.get(b)
            self.kept = None
            last = position + 1 == len(order)
            if not last:
                self.ahead(order[position + 1])
            yield b, arrays
            if last and then == b:
                self.kept = (b, (arrays, buffers))
            else:
                if last and then is not None:
                    self.ahead(then)
                del arrays
                self._release(buffers)

    @property
    def passes(self) -> float:
        return self.reads / max(len(self.blocks), 1)

    def close(self):
        self.pool.shutdown(wait=True, cancel_futures=True)


@dataclass(frozen=True)
class _RowsInMemory:
    """A block's CSR arrays, as a LossTerm reads a block."""
    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray


@dataclass(frozen=True)
class _RowCount:
    n_samples: int


class StreamedLossTerm(LossTerm):
    """A LossTerm whose blocks are on disk: every pass over X reads them in order, the
    next one read ahead (the row state z, zs and the curvature rows stay in memory)."""

    def __init__(self, reader, y, C, bias, loss, p, n_features):
        super().__init__([_RowCount(b.rows[1] - b.rows[0]) for b in reader.blocks], y, C,
                         bias, loss, p, n_features=n_features)
        self.reader = reader

    def _pieces(self):
        # one order every pass: grad_precond and hv index the blocks' active rows by place
        for b, arrays in self.reader.pass_over(range(len(self.reader.blocks)), then=0):
            r0, r1 = self.reader.blocks[b].rows
            yield _RowsInMemory(*arrays), slice(r0, r1)
            del arrays


def train_out_of_core(path: str, params: Params, memory: int,
                      log: Optional[Callable[[str], None]] = None,
                      sweeps_per_visit: int = SWEEPS_PER_VISIT,
                      n_threads: Optional[int] = None) -> Model:
    """Trains on the binary dataset at `path` (a directory from `python -m dlinear
    convert`) holding at most `memory` bytes of it and of the fit's state: -s 1, 3, 7, 12,
    13 by selective block minimization, -s 0 / 2 / 11 by Newton with streamed passes.
    -s 1 / -s 3 visit a block on `n_threads` threads (default: one per core; visit_threads)."""
    check_parameter(params)
    refuse(params, "training out of core (data larger than the memory budget)")
    params = params.resolved()
    if not out_of_core_solver(params):
        raise DlinearError(f"-s {params.solver_type} does not train out of core: "
                           f"{OUT_OF_CORE_SOLVERS} do")
    emit = log or (lambda line: None)
    h = read_header(path)
    y = read_whole(h, "y")
    weights = read_whole(h, "weights") if h.weights else None
    plan = plan_classes(params, lambda: first_appearance(y), emit)
    used = occurring_columns(h, params)
    n_features = h.n_features if used is None else len(used)
    w_size = n_features + (1 if params.bias >= 0 else 0)
    newton = params.spec.newton
    resident = resident_bytes(h.rows, w_size, plan.n_problems, newton, weights is not None)
    if used is not None:        # the occurring columns, their bitmap and ranks
        resident += used.nbytes + h.n_features // 8 + h.n_features // 16
    reader = BlockReader(h, read_whole(h, "indptr"), [], used)
    reader.blocks, room = plan_blocks(h, reader.bytes_per_nonzero, memory, resident, newton)
    threads = (visit_threads(n_threads, reader.blocks, w_size)
               if not newton and block_duals(params).threaded else 1)
    if threads > 1:         # the threads' copies of w
        resident += threads * w_size * 8
        reader.blocks, room = plan_blocks(h, reader.bytes_per_nonzero, memory, resident)
    try:
        if newton:
            emit(f"streamed Newton: {len(reader.blocks)} blocks of at most "
                 f"{format_size(room)} for a budget of {format_size(memory)}")
            results = _newton(reader, n_features, y, weights, plan, params)
        else:
            def targets_of(r0, r1):
                return targets(y[r0:r1], None if weights is None else weights[r0:r1],
                               plan.label, plan.weighted_C, params)
            capacity = cache_room(memory, resident, room)
            cache = RowCache(capacity, reader.blocks, reader.arrays["indices"][1],
                             reader.arrays["data"][1], threads)
            emit(f"selective block minimization: {len(reader.blocks)} blocks of at most "
                 f"{format_size(room)}, a cache of {format_size(capacity)} for a budget of "
                 f"{format_size(memory)}, visits on {threads} thread"
                 f"{'s' if threads > 1 else ''}")
            duals = block_duals(params)(reader.blocks, h.rows, n_features, targets_of,
                                        params, n_threads=threads)
            try:
                results = _block_minimization(reader, cache, duals, params, sweeps_per_visit)
            finally:
                duals.close()
                cache.close()
    finally:
        reader.close()
    model = assemble_model(params, n_features, plan.label, results, emit)
    if used is None:
        return model
    return replace(model, nr_feature=h.n_features,
                   w=expand_rows(model.w, used, h.n_features, params.bias))


def _newton(reader, n_features, y, weights, plan, params) -> list:
    """One Newton fit per binary problem, each pass over the data streamed; a problem's
    targets are made when it starts, in the Newton kernels' lean form."""
    results = []
    for c in range(plan.n_problems):
        target, C = target_column(y, weights, plan.label, c, plan.weighted_C, params)
        tol = newton_tol(params, target)
        target, C = lean_targets(target, C, classification=plan.label is not None)
        term = StreamedLossTerm(reader, target, C, float(params.bias),
                                LOSS_CODE[params.spec.loss], params.p, n_features)
        del target, C
        objective = RegularizedObjective(term, term.n_variables, params.regularize_bias)
        result = serve(fit_steps(params, None, term.n_variables, tol), objective)
        result.log.append(f"streamed Newton: {len(reader.blocks)} blocks, "
                          f"{term.n_passes} passes over the data")
        results.append(result)
        del term, objective
    return results


def _block_minimization(reader, cache, duals, params, sweeps_per_visit) -> list:
    """Selective block minimization of every binary problem of `duals` (block_duals), each
    block visited once an outer iteration for all of them."""
    blocks = reader.blocks
    k = duals.k
    rng = [seed_state(problem_seed(params.seed, c)) for c in range(k)]
    done = [False] * k
    n_iter = [0] * k
    order = list(range(len(blocks)))
    block_rng = np.random.default_rng(params.seed)
    first_pass = True
    visits = 0
    cache_stride = max(1, len(blocks) // CACHE_SWEEPS_PER_PASS)
    for outer in range(params.max_iter):
        duals.start_iteration()
        for b, arrays in reader.pass_over(order, then=order[-1]):
            visits += 1
            cached = cache.arrays()
            for c in range(k):
                if done[c]:
                    continue
                duals.visit(c, b, arrays, first_pass, cached, rng[c], sweeps_per_visit,
                            cache_stride, visits % cache_stride)
                raise_if_stopped()
            del cached
            cache.refresh(b, arrays, blocks[b].rows[0], *duals.informative(b))
            del arrays
        first_pass = False
        for c in range(k):
            if done[c]:
                continue
            n_iter[c] += 1
            done[c] = duals.end_iteration(c)
        if all(done):
            break
        # the block in memory first, the others in a new random order: alternating the
        # direction instead, a block at either end is visited twice in a row, then not
        # for two passes. On 300k rcv1-shaped rows in 24 blocks (-e 0.1; in memory 5, 15,
        # 6 iterations): -s 7 took 19 outer iterations alternating, 10 rotating the order
        # by one, 7 shuffled; -s 1 21, 15, 14; -s 12 at -e 0.01 26 and 14 (12 in memory)
        rest = order[:-1]
        block_rng.shuffle(rest)
        order = [order[-1]] + rest
    detail = (f"selective block minimization: {len(blocks)} blocks, {reader.passes:.1f} "
              "passes over the data")
    results = []
    for c in range(k):
        results.append(duals.result(c, n_iter[c], detail))
        if results[-1].hit_max_iter:
            results[-1].status |= note(results[-1].log, Status.MAX_ITER)
    return results
