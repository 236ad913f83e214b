"""The Problem: a training set as the kernels see it (raw CSR arrays and labels)."""
from __future__ import annotations

import contextvars
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from .errors import DlinearError


# The value types a Problem's data may have: float32 halves the values' memory (8 bytes a
# nonzero with the int32 index instead of 12); the kernels accumulate in float64 either way.
DATA_DTYPES = (np.float64, np.float32)

# float32 data of at most this many columns is read with uint16 column indices: 6 bytes a
# nonzero instead of 8 (BENCHMARKS.md, "float32 data"). float64 data keeps int32 indices,
# so the default path compiles no kernel for another index type.
NARROW_INDEX_COLUMNS = 1 << 16


def index_dtype(n_columns: int, dtype) -> type:
    """The type of the column indices the LIBSVM reader stores for values of `dtype`
    (np.float64 or np.float32) in n_columns columns: np.uint16 for float32 values in at
    most NARROW_INDEX_COLUMNS columns, else np.int32."""
    if dtype == np.float32 and int(n_columns) <= NARROW_INDEX_COLUMNS:
        return np.uint16
    return np.int32


def data_dtype(dtype) -> type:
    """np.float64 or np.float32 from a dtype-like; anything else is a DlinearError."""
    try:
        t = np.dtype(dtype).type
    except TypeError:
        t = None
    if t not in DATA_DTYPES:
        raise DlinearError(f"dtype must be float64 or float32, got {dtype!r}")
    return t


def arrays_nbytes(*values) -> int:
    """Bytes of the numpy arrays among values (lists and tuples of them too; others: 0),
    for the __sizeof__ of objects Dask keeps on its workers."""
    total = 0
    for v in values:
        if isinstance(v, np.ndarray):
            total += v.nbytes
        elif isinstance(v, (list, tuple)):
            total += arrays_nbytes(*v)
    return total


# Facts of a training set that fits of it along a path of C share (its labels, the columns
# it uses), made once rather than at each fit: on 400k rcv1-shaped rows the label uniques
# and the column scan took 15 ms of each C's fit. None outside facts_shared().
_shared_facts = contextvars.ContextVar("dlinear_shared_facts", default=None)


@contextmanager
def facts_shared():
    """Within it (on this thread), shared_fact makes each fact of the same arrays once;
    within an outer one, the outer one's facts are shared."""
    if _shared_facts.get() is not None:
        yield
        return
    token = _shared_facts.set({})
    try:
        yield
    finally:
        _shared_facts.reset(token)


def shared_fact(name: str, arrays: tuple, make):
    """make(), or within facts_shared() what it made before for the same `arrays` (the
    same objects: a fit never changes them) under `name`."""
    memo = _shared_facts.get()
    if memo is None:
        return make()
    known = memo.get(name)
    if known is not None and len(known[0]) == len(arrays) and all(
            a is b for a, b in zip(known[0], arrays)):
        return known[1]
    value = make()
    memo[name] = (arrays, value)
    return value


@dataclass
class Problem:
    """A sparse training set as the kernels see it: the CSR arrays of X and the labels.

    Made by :func:`dlinear.read_libsvm` or :meth:`Problem.from_arrays`. The bias feature
    of ``-B`` is never stored here: the kernels add it on the fly, so a block is never
    copied to append a column.

    Parameters
    ----------
    indptr : numpy.ndarray of int64, shape (l + 1,)
        Row pointers of X (l rows).
    indices : numpy.ndarray of int32 or uint16, shape (nnz,)
        0-based column ids, strictly increasing within a row. The LIBSVM reader stores
        uint16 for float32 values in at most 65,536 columns (:func:`index_dtype`); the
        kernels take either.
    data : numpy.ndarray of float64 or float32, shape (nnz,)
        The nonzero values (float32 halves their memory; sums are float64 either way).
    y : numpy.ndarray of float64, shape (l,)
        Class labels or regression targets.
    n_features : int
        The number of columns (the largest 1-based index seen in a LIBSVM file).
    sample_weight : numpy.ndarray of float64, shape (l,), optional
        Instance weights (``-W``): each row's C is multiplied by its weight.
    """

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    y: np.ndarray
    n_features: int
    sample_weight: np.ndarray | None = None

    def __sizeof__(self) -> int:
        # dask.sizeof falls back to sys.getsizeof: the arrays, so that Dask's memory limits,
        # spilling and dashboard count a part held on a worker as what it is
        return object.__sizeof__(self) + arrays_nbytes(self.indptr, self.indices, self.data,
                                                       self.y, self.sample_weight)

    @property
    def n_samples(self) -> int:
        """The number of rows, l."""
        return len(self.indptr) - 1

    @property
    def nnz(self) -> int:
        """The number of stored nonzeros."""
        return int(self.indptr[-1])

    def to_scipy(self) -> sp.csr_matrix:
        """X as a ``scipy.sparse.csr_matrix`` sharing the values (no copy; scipy makes
        its own int32 index arrays where it needs them)."""
        import scipy.sparse as sp   # in the functions: a LIBSVM file trains without it
        return sp.csr_matrix((self.data, self.indices, self.indptr),
                             shape=(self.n_samples, self.n_features))

    @classmethod
    def from_arrays(cls, X, y, n_features: int | None = None, sample_weight=None,
                    dtype=None) -> "Problem":
        """A Problem from a matrix and its labels.

        Parameters
        ----------
        X : scipy.sparse matrix or array-like of shape (l, n)
            The rows. A non-canonical sparse matrix (unsorted or duplicate indices) is
            copied, never changed.
        y : array-like of shape (l,)
            Labels or regression targets.
        n_features : int, optional
            The number of columns; default ``X.shape[1]``.
        sample_weight : array-like of shape (l,), optional
            Instance weights.
        dtype : {None, numpy.float64, numpy.float32}, optional
            The type of the stored values. Default: float32 values stay float32 (not
            copied), any other type becomes float64.

        Returns
        -------
        Problem

        Raises
        ------
        DlinearError
            If X is not 2-dimensional, the lengths differ, or X or y hold NaN or infinity.
        """
        if dtype is None:
            dtype = np.float32 if getattr(X, "dtype", None) == np.float32 else np.float64
        dtype = data_dtype(dtype)
        import scipy.sparse as sp
        if sp.issparse(X):
            X = sp.csr_matrix(X)
        else:
            X = np.asarray(X, dtype=dtype)
            if X.ndim != 2:
                raise DlinearError(f"X must be 2-dimensional, got shape {X.shape}")
            X = sp.csr_matrix(X)
        if not X.has_canonical_format:
            X = X.copy()          # sorted, duplicates summed: never in the caller's matrix
            X.sum_duplicates()
        y = np.ascontiguousarray(y, dtype=np.float64).ravel()
        if y.shape[0] != X.shape[0]:
            raise DlinearError(f"X has {X.shape[0]} rows but y has {y.shape[0]} labels")
        data = np.ascontiguousarray(X.data, dtype=dtype)
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
        """The given rows, in that order, as a new Problem (a copy; used for CV folds).

        Parameters
        ----------
        rows : numpy.ndarray of int
            Row numbers.

        Returns
        -------
        Problem
        """
        X = self.to_scipy()[rows]
        w = None if self.sample_weight is None else self.sample_weight[rows]
        return Problem.from_arrays(X, self.y[rows], self.n_features, w, dtype=self.data.dtype)
