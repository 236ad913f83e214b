"""Writing LIBSVM text (dlinear.data re-exports write_libsvm): every value reads back as
the identical double."""
from __future__ import annotations

import numpy as np

from ..errors import DlinearError
from .fileio import atomic_output
from ..kernels import libsvm_format as _format
from ..problem import Problem

_WRITE_CHUNK_NONZEROS = 1 << 20  # rows are formatted and written about this many nonzeros at a time
_WRITE_CHUNK_ROWS = 1 << 16


def _fallback_text(values: np.ndarray, decimals: np.ndarray) -> np.ndarray:
    """repr() of the values without a short exact decimal form, each followed by a space
    (repr is the shortest text that reads back as the same double)."""
    hard = values[decimals < 0]
    text = " ".join(map(repr, hard.tolist())) + " "
    return np.frombuffer(text.encode("ascii"), dtype=np.uint8)  # always read-only: one specialization


def write_libsvm(path, problem_or_X, y=None) -> None:
    """Write a Problem, or a matrix X with labels y, as LIBSVM text.

    Every label and value reads back as the identical double; integral values print as
    integers (``1``, ``-1``, ``3``). The file is written to a temporary name in the same
    directory and renamed over ``path``, so readers never see a partial file. The format
    has no column count: trailing all-zero columns are not recorded.

    Parameters
    ----------
    path : str or os.PathLike
        The file to write.
    problem_or_X : Problem, scipy.sparse matrix or array-like of shape (l, n)
        The rows.
    y : array-like of shape (l,), optional
        The labels; required with a matrix, not allowed with a Problem.

    Raises
    ------
    DlinearError
        If y is missing or extra, or the values hold NaN or infinity.
    """
    if isinstance(problem_or_X, Problem):
        if y is not None:
            raise DlinearError("write_libsvm: pass y only with a matrix X, not with a Problem")
        problem = problem_or_X
        if not (np.all(np.isfinite(problem.data)) and np.all(np.isfinite(problem.y))):
            raise DlinearError("write_libsvm: X and y must not contain NaN or infinity")
    else:
        if y is None:
            raise DlinearError("write_libsvm: y is required when writing a matrix X")
        problem = Problem.from_arrays(problem_or_X, y)
    indptr = np.ascontiguousarray(problem.indptr, dtype=np.int64)
    indices = np.ascontiguousarray(problem.indices, dtype=np.int32)
    data = np.ascontiguousarray(problem.data, dtype=np.float64)
    labels = np.ascontiguousarray(problem.y, dtype=np.float64)
    n_rows = len(indptr) - 1

    with atomic_output(path) as f:
        row = 0
        while row < n_rows:
            # Rows up to about _WRITE_CHUNK_NONZEROS nonzeros (at least one row).
            row_end = int(np.searchsorted(indptr, indptr[row] + _WRITE_CHUNK_NONZEROS, "right")) - 1
            row_end = min(max(row_end, row + 1), row + _WRITE_CHUNK_ROWS, n_rows)
            values = data[indptr[row]:indptr[row_end]]
            value_decimals, value_mantissas = _format.plan_decimals(values)
            chunk_labels = labels[row:row_end]
            label_decimals, label_mantissas = _format.plan_decimals(chunk_labels)
            out = np.empty(len(values) * _format.MAX_FEATURE_BYTES
                           + (row_end - row) * _format.MAX_LABEL_BYTES, dtype=np.uint8)
            n_bytes = _format.format_rows(
                indptr, indices, data, labels, row, row_end,
                value_decimals, value_mantissas, _fallback_text(values, value_decimals),
                label_decimals, label_mantissas, _fallback_text(chunk_labels, label_decimals),
                out)
            if n_bytes < 0:
                raise DlinearError(f"write_libsvm: the feature indices of row {-1 - n_bytes} "
                                   "are not strictly increasing")
            f.write(out[:n_bytes])
            row = row_end
