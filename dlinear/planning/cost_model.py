"""Predicted seconds of a Newton training (-s 0, 2, 11) in this process and on a local
cluster of K workers, from measured constants and the data's shape: what modes.choose
reads to pick dlinear-train's default backend.

A Newton fit is a number of passes over the data (fun, grad, one per CG step), each of
which, besides its nonzeros, does vector work on the columns in the driver. On a cluster a
pass is one round of the actor tree: the rows split over the workers, plus a round's
latency and its bytes (w out, Xᵀv back) through the loopback network. The cluster also
pays its start, and reads text on K cores where this process reads it on its threads
(the cluster after one scan of the whole file for line starts).

    process = read / threads + passes * (problems * nnz * t_nz / threads + problems * columns * t_col)
    cluster = start + read / K + scan + passes * (problems * nnz * t_nz / K
              + problems * columns * t_col + latency + K * bytes_per_worker / bandwidth)

where columns are those that occur (the fit runs on them, dlinear.data.columns), and
bytes_per_worker = 2 * 8 * problems * (the worker's columns): its occurring columns
(CLUSTER_SHIPS_OCCURRING_COLUMNS; else n). A worker's columns, like the whole set's, are
counted where they are known (a binary dataset's header) and otherwise estimated by
Heaps' law, distinct columns ~ rows ** growth, the exponent fitted on a sample
(columns_seen). t_nz is larger when the weights of the columns the rows touch do not fit
the cache (the wide, hashed sets; on a cluster, a worker's rows touch its own columns
only). The same pass count serves both paths (the same Newton iterations).

The constants below were measured on the development machine (2 cores) by
`python -m scripts.benchmarks.backend_cost constants`; re-run it after a change that moves them
and paste its output here.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..data.libsvm_reader import read_parts

# ---- measured constants (python -m scripts.benchmarks.backend_cost constants) ----------------
# 2026-11-25 03:20-03:33 UTC, 2 cores shared with other jobs (load 3-5): CPU seconds,
# after compaction and threads were merged (BENCHMARKS.md, "The default backend by a
# cost model"; the round's rate fitted again from the same run's
# rows once a pass's rate was interpolated between NARROW_BYTES and WIDE_BYTES); measured
# again 2026-11-26 at 3-4x that load and kept: those values predicted the held-out shapes
# worse, with the same choices (same section)
# one pass, per nonzero, one thread, on sets whose touched columns' weights (8 bytes
# each) take NARROW_BYTES (rcv1-like: 47,236 columns) and WIDE_BYTES (click-like 1.6M
# rows: 1,142,800 columns); between them the cost grows with the log of those bytes
PASS_S_PER_NONZERO = 3.04e-9
PASS_S_PER_NONZERO_WIDE = 6.99e-9
NARROW_BYTES = 377_888
WIDE_BYTES = 9_142_400
# one pass, per occurring column, in the driver (Newton/CG vector work)
PASS_S_PER_COLUMN = 8.63e-9
# passes of one Newton fit at the default eps (fun, grad, Hv): 23 rcv1-, 36-46 click-shaped
NEWTON_PASSES = 40
# a round of the actor tree on a local cluster: fixed latency (fitted as 0: below what
# two fits tell apart), and bytes through it per second (w down, Xᵀv up on each worker's
# columns, with the client's scatter and gather of them and its sum)
ROUND_LATENCY_S = 0.0
ROUND_BYTES_PER_S = 2.11e8
# what a local cluster of 2 adds to a training (its start, the workers' imports, placing
# the parts): CPU seconds on its critical path, as the other constants
CLUSTER_START_S = 1.27
# the cluster's read of text first finds line starts in the whole file, on one worker
# (data.line_aligned_ranges), per byte (1.4-1.9e-9 on the rcv1- and dense-shaped files)
TEXT_SCAN_S_PER_BYTE = 1.6e-9
# LIBSVM text parsed per second on one core when no sample of the file was timed (the
# 1.04 GB rcv1-shaped text, 17-digit values: BENCHMARKS.md, "LIBSVM reading")
TEXT_BYTES_PER_S = 3.9e8
# reading a binary dataset: its check, per nonzero
BINARY_S_PER_NONZERO = 3.5e-9

# ---- what other branches change: constants, not formulas ----------------------------
# a single Newton problem's passes run on the process's threads (else on one)
NEWTON_PASSES_ON_THREADS = True
# the cluster's rounds ship w and Xᵀv on each worker's occurring columns (else all n)
CLUSTER_SHIPS_OCCURRING_COLUMNS = True


@dataclass(frozen=True)
class Workload:
    """What a Newton training costs depends on: rows, nonzeros, columns (n, and those
    that occur: all, per worker of K), binary problems, and the input's read cost."""
    n_samples: int
    nnz: int
    n_features: int
    problems: int = 1
    occurring_columns: Optional[int] = None
    read_s: float = 0.0                 # reading the input in one process, one core
    text_bytes: int = 0                 # of LIBSVM text (0: a binary dataset)
    columns_growth: Optional[float] = None    # Heaps' exponent: columns ~ rows ** growth

    @property
    def touched_columns(self) -> int:
        """The columns the passes touch: those that occur, or (unknown) at most n and at
        most the nonzeros."""
        return self.occurring_columns or min(self.n_features, self.nnz)

    def columns_per_worker(self, workers: int) -> int:
        """A worker's columns in a round: n, or an estimate of those its rows use (at
        most its nonzeros, at most all that occur)."""
        if not CLUSTER_SHIPS_OCCURRING_COLUMNS:
            return self.n_features
        k = max(1, workers)
        occurring = self.occurring_columns or self.n_features
        if self.columns_growth is not None:     # a 1/k of the rows uses k**-growth of them
            occurring = occurring * k ** -self.columns_growth
        return int(min(occurring, self.nnz / k))


def columns_seen(growth_rows: tuple, growth_columns: tuple, rows: int, n_features: int,
                 nnz: int) -> tuple:
    """(columns estimated to occur in `rows` rows, Heaps' exponent) from the distinct
    columns counted in the first `growth_rows` rows of a sample (e.g. a quarter, a half and
    all of it): the exponent from the last two counts, the columns extrapolated from the
    last and capped by n_features and the nonzeros."""
    (r1, r2), (c1, c2) = growth_rows[-2:], growth_columns[-2:]
    growth = float(np.clip(np.log(c2 / c1) / np.log(r2 / r1), 0.0, 1.0)) \
        if min(r1, r2, c1, c2) > 0 and r1 != r2 else 1.0
    return int(min(n_features, nnz, c2 * (rows / r2) ** growth)), growth


def columns_growth_of_parts(part_columns, occurring: int) -> Optional[float]:
    """Heaps' exponent from the columns of P equal parts and of their union: a part
    holds about P ** -growth of them."""
    part_columns = [c for c in part_columns if c > 0]
    if len(part_columns) < 2 or occurring <= 0:
        return None
    mean = float(np.mean(part_columns))
    return float(np.clip(np.log(occurring / mean) / np.log(len(part_columns)), 0.0, 1.0))


def pass_s_per_nonzero(touched_columns: int) -> float:
    """A pass's seconds per nonzero when its rows touch `touched_columns` weights: the
    narrow rate up to NARROW_BYTES of them, the wide one from WIDE_BYTES, and between
    the two by the log of the bytes (the caches they spill out of one after another)."""
    share = np.log(max(touched_columns * 8, NARROW_BYTES) / NARROW_BYTES) \
        / np.log(WIDE_BYTES / NARROW_BYTES)
    share = min(1.0, float(share))
    return PASS_S_PER_NONZERO + share * (PASS_S_PER_NONZERO_WIDE - PASS_S_PER_NONZERO)


def in_process_seconds(w: Workload, n_threads: int) -> float:
    threads = max(1, n_threads) if NEWTON_PASSES_ON_THREADS else min(max(1, n_threads),
                                                                      w.problems)
    columns = w.occurring_columns or w.n_features     # the fit runs on those that occur
    per_pass = (w.problems * w.nnz * pass_s_per_nonzero(w.touched_columns) / threads
                + w.problems * columns * PASS_S_PER_COLUMN)
    return in_process_read_seconds(w, n_threads) + NEWTON_PASSES * per_pass


def in_process_read_seconds(w: Workload, n_threads: int) -> float:
    """Text large enough to be cut into parts is parsed on the process's threads."""
    threads = max(1, n_threads)
    if w.text_bytes and read_parts(w.text_bytes, threads) > 1:
        return w.read_s / threads
    return w.read_s


def driver_columns(w: Workload) -> int:
    """The columns of the cluster driver's Newton/CG vectors."""
    if CLUSTER_SHIPS_OCCURRING_COLUMNS:
        return w.occurring_columns or w.n_features
    return w.n_features


def cluster_seconds(w: Workload, workers: int) -> float:
    k = max(1, workers)
    columns = w.columns_per_worker(k)
    bytes_per_round = k * 2 * 8 * w.problems * columns
    per_pass = (w.problems * w.nnz * pass_s_per_nonzero(min(columns, w.touched_columns)) / k
                + w.problems * driver_columns(w) * PASS_S_PER_COLUMN
                + ROUND_LATENCY_S + bytes_per_round / ROUND_BYTES_PER_S)
    read = w.read_s / k + w.text_bytes * TEXT_SCAN_S_PER_BYTE
    return CLUSTER_START_S + read + NEWTON_PASSES * per_pass


@dataclass(frozen=True)
class Estimate:
    process_s: float
    cluster_s: float
    workers: int

    @property
    def cluster_pays(self) -> bool:
        return self.cluster_s < self.process_s

    def describe(self) -> str:
        return (f"predicted {self.process_s:.1f} s in this process, {self.cluster_s:.1f} s "
                f"on a local cluster of {self.workers}")


def estimate(w: Workload, workers: int, n_threads: int) -> Estimate:
    return Estimate(in_process_seconds(w, n_threads), cluster_seconds(w, workers), workers)
