"""What a fit function takes (a SubProblem and the Params) and returns (a FitResult)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from ..data.libsvm_reader import Problem, arrays_nbytes
from ..errors import DlinearError
from ..kernels.sparse_ops import csr_to_csc_into
from ..threads import SharedValues
from .status import Status


class SharedColumns:
    """X by columns (LIBLINEAR's transpose), made once per problem and bias and shared by
    the one-vs-rest tasks of the solvers that walk features (-s 5, -s 6, --primal-cd),
    which would otherwise each transpose X again. Thread-safe: classes run on threads.
    Sent to a Dask worker (a class task that moved off its worker takes its holder
    along), it arrives empty: the receiver transposes again when asked."""

    def __init__(self):
        self._arrays = SharedValues()

    def get(self, problem: Problem, bias: float):
        """(col_ptr int64, row_ind int32, vals float64), with a last column of `bias` when
        bias >= 0."""
        key = float(bias) if bias >= 0 else -1.0
        return self._arrays.get(key, lambda: columns_of(problem, bias))


def columns_of(problem: Problem, bias: float):
    """X by columns (see SharedColumns.get), without sharing; in NumPy's arrays, which
    get huge pages where Numba's would not (csr_to_csc_into)."""
    l = len(problem.indptr) - 1
    nnz = int(problem.indptr[l])
    n_features = int(problem.n_features)
    with_bias = bias >= 0
    col_ptr = np.zeros(n_features + (2 if with_bias else 1), dtype=np.int64)
    row_ind = np.empty(nnz + (l if with_bias else 0), dtype=np.int32)
    vals = np.empty(row_ind.shape[0], dtype=np.float64)
    csr_to_csc_into(problem.indptr, problem.indices, problem.data, n_features,
                    float(bias) if with_bias else -1.0, col_ptr, row_ind, vals,
                    np.empty(nnz, dtype=np.uint16))
    return col_ptr, row_ind, vals


@dataclass
class SubProblem:
    """The problem one fit function solves: one binary classification problem of train's
    one-vs-rest (y = +1/-1), or the whole regression (y = targets) or one-class problem.
    LIBLINEAR's train_one gets one of these."""

    problem: Problem      # X as raw CSR arrays (y of the problem is ignored)
    # float64 +1/-1 (classification) or targets (regression); for the Newton solvers, the
    # +1/-1 as int8 (dlinear.planning.class_plan.lean_targets)
    y: np.ndarray
    # float64 per instance: class weight x instance weight x C; for the Newton solvers,
    # one value broadcast over the rows (a zero-stride view) where all rows share it
    C: np.ndarray
    bias: float           # < 0: no bias feature; else the value of the virtual last column
    seed: int
    w0: Optional[np.ndarray] = None
    alpha0: Optional[np.ndarray] = None   # warm start of the dual CD solvers (-s 1, 3)
    shared_columns: Optional[SharedColumns] = None   # X by columns, shared across classes
    # the only problem of its fit: the Newton passes in fixed row chunks, or the dual CD
    # sweeps, on this many threads (None: one thread, and Newton's passes in row order, as
    # the k-column and cluster terms sum)
    n_threads: Optional[int] = None
    # where the solver saves its state and resumes from (dlinear.solvers.checkpoint's
    # ProblemCheckpoint); None: no checkpoints
    checkpoint: Optional[object] = None
    # Newton solvers: ||grad f(0)|| when known (Params.gnorm0_per_C); None: computed
    gnorm0: Optional[float] = None

    def columns(self, with_bias: bool = True):
        """X by columns (with the bias column when with_bias and bias >= 0)."""
        # on one thread: in parts on two it was slower on the 2-core machine (BENCHMARKS.md,
        # "-s 5 and -s 6 on threads")
        bias = self.bias if with_bias else -1.0
        if self.shared_columns is not None:
            return self.shared_columns.get(self.problem, bias)
        return columns_of(self.problem, bias)

    @property
    def w_size(self) -> int:
        return self.problem.n_features + (1 if self.bias >= 0 else 0)


def starting_w(w0, w_size: int) -> np.ndarray:
    """The primal solvers' starting point: a float64 copy of the warm start w0, or zeros."""
    if w0 is None:
        return np.zeros(w_size)
    w = np.array(w0, dtype=np.float64, copy=True).reshape(-1)
    if w.shape[0] != w_size:
        raise DlinearError(f"initial w has {w.shape[0]} values, expected {w_size}")
    return w


@dataclass
class FitResult:
    w: np.ndarray
    n_iter: int
    log: list = field(default_factory=list)  # lines, printed in class order by train()
    hit_max_iter: bool = False
    rho: float = 0.0
    alpha: Optional[np.ndarray] = None    # the dual solution, where the solver has one
    status: Status = Status.CONVERGED     # the caps met, each logged (solvers.status)
    switched_to: Optional[int] = None     # the primal solver LIBLINEAR switched to at the dual cap
    gnorm0: Optional[float] = None        # Newton solvers: ||grad f(0)||, the stopping rule's scale

    def __sizeof__(self) -> int:    # dask.sizeof of a result kept on a worker
        return object.__sizeof__(self) + arrays_nbytes(self.w, self.alpha)
