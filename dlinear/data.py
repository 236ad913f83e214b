"""Training data: the Problem (raw CSR arrays + labels) and LIBSVM text I/O."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .errors import DlinearError


@dataclass
class Problem:
    """A sparse training set as the kernels see it.

    indptr (int64, length l+1), indices (int32, 0-based column ids, strictly increasing
    within a row), data (float64) are the CSR arrays of X; y (float64) holds the labels
    or regression targets; n_features is the number of columns (the largest 1-based
    index seen in a LIBSVM file). The bias feature of `-B` is never stored here: kernels
    add it on the fly, so a block is never copied to append a column.
    """

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    y: np.ndarray
    n_features: int
    sample_weight: np.ndarray | None = None

    @property
    def n_samples(self) -> int:
        return len(self.indptr) - 1

    @property
    def nnz(self) -> int:
        return int(self.indptr[-1])

    def to_scipy(self) -> sp.csr_matrix:
        return sp.csr_matrix((self.data, self.indices, self.indptr),
                             shape=(self.n_samples, self.n_features))

    @classmethod
    def from_arrays(cls, X, y, n_features: int | None = None, sample_weight=None) -> "Problem":
        """From a scipy sparse matrix or dense 2-D array and a label vector."""
        if sp.issparse(X):
            X = sp.csr_matrix(X)
        else:
            X = np.asarray(X, dtype=np.float64)
            if X.ndim != 2:
                raise DlinearError(f"X must be 2-dimensional, got shape {X.shape}")
            X = sp.csr_matrix(X)
        if not X.has_sorted_indices:
            X = X.sorted_indices()
        X.sum_duplicates()
        y = np.ascontiguousarray(y, dtype=np.float64).ravel()
        if y.shape[0] != X.shape[0]:
            raise DlinearError(f"X has {X.shape[0]} rows but y has {y.shape[0]} labels")
        data = np.ascontiguousarray(X.data, dtype=np.float64)
        if not np.all(np.isfinite(data)) or not np.all(np.isfinite(y)):
            raise DlinearError("X and y must not contain NaN or infinity")
        if sample_weight is not None:
            sample_weight = np.ascontiguousarray(sample_weight, dtype=np.float64).ravel()
            if sample_weight.shape != y.shape:
                raise DlinearError("sample_weight must have one weight per row")
        return cls(
            indptr=np.ascontiguousarray(X.indptr, dtype=np.int64),
            indices=np.ascontiguousarray(X.indices, dtype=np.int32),
            data=data,
            y=y,
            n_features=int(X.shape[1] if n_features is None else n_features),
            sample_weight=sample_weight,
        )

    def subset(self, rows: np.ndarray) -> "Problem":
        """The rows `rows` (in that order) as a new Problem (copies; used for CV folds)."""
        X = self.to_scipy()[rows]
        w = None if self.sample_weight is None else self.sample_weight[rows]
        return Problem.from_arrays(X, self.y[rows], self.n_features, w)
