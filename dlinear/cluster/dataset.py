"""Training data on a Dask cluster: row blocks read on the workers, kept there.

A Dataset is a list of parts, each a future of a Problem (CSR rows, labels and instance
weights of the same rows kept together, as xgboost.dask and lightgbm.dask keep theirs).
Parts read from LIBSVM files are tasks (read a byte range), so Dask can recompute one
lost with its worker; parts from in-memory arrays are scattered and cannot be. `.X` and
`.y` show the parts as dask arrays (X's blocks are sparse.GCXS compressed-row arrays that
share the parts' buffers).
"""
from __future__ import annotations

import math
import os

import numpy as np

from ..data.columns import part_columns, union_columns
from ..data.binary_format import (check_binary_dtype, is_binary_dataset, read_binary_part,
                             read_header)
from ..data.libsvm_reader import Problem, line_aligned_ranges, read_libsvm
from ..errors import DlinearError
from ..data.input_files import file_stamp, is_url
from .session import worker_addresses

# Aim for blocks of about this many bytes of LIBSVM text (a few MB of CSR each).
DEFAULT_BLOCK_BYTES = 32 << 20


def _read_part(path, start, end, first_line, storage_options=None, dtype=np.float64):
    # one thread: a worker's other threads read the other blocks
    return read_libsvm(path, start=start, end=end, first_line=first_line, allow_empty=True,
                       storage_options=storage_options, dtype=dtype, n_threads=1)


def _binary_plan(path, storage_options=None):
    """(header, stamp of the header file) of a binary dataset, read where the data is."""
    from ..data.binary_format import HEADER_NAME, _join
    return (read_header(path, storage_options),
            file_stamp(_join(path, HEADER_NAME), storage_options))


def _is_binary(path, storage_options=None) -> bool:
    return is_binary_dataset(path, storage_options)


def _plan_ranges(path, block_bytes, n_workers, storage_options=None):
    """(path, (size, mtime or ETag), line-aligned byte ranges) of one file, computed
    where the file is: one range per block_bytes, and for files over 1 MB a multiple of
    the number of workers (a compressed file is one range, read whole)."""
    stamp = file_stamp(path, storage_options)
    size = stamp[0]
    n_parts = max(1, math.ceil(size / block_bytes))
    if size > (1 << 20):    # a multiple of the workers, so each reads as much
        n_parts = math.ceil(n_parts / n_workers) * n_workers
    return path, stamp, line_aligned_ranges(path, n_parts, storage_options)


def _part_summary(part: Problem):
    """What the client needs of a part: rows, largest feature, labels by first appearance."""
    from ..planning.class_plan import first_appearance
    labels = None
    y = part.y
    if len(y) and np.array_equal(y, np.round(y)):
        labels = first_appearance(y)
    return part.n_samples, part.n_features, part.nnz, labels


def concat_parts(n_features: int, *parts: Problem) -> Problem:
    """One Problem of all parts in order: the per-worker copy that CD solvers run on."""
    parts = [p for p in parts if p.n_samples > 0]
    offsets = np.cumsum([0] + [p.nnz for p in parts])
    indptr = np.concatenate([[0]] + [p.indptr[1:] - p.indptr[0] + off
                                     for p, off in zip(parts, offsets[:-1])]).astype(np.int64)
    return Problem(indptr=indptr,
                   indices=np.concatenate([p.indices[p.indptr[0]:p.indptr[-1]] for p in parts]),
                   data=np.concatenate([p.data[p.indptr[0]:p.indptr[-1]] for p in parts]),
                   y=np.concatenate([p.y for p in parts]), n_features=int(n_features),
                   sample_weight=concat_weights(parts))


def concat_weights(parts):
    """The parts' instance weights in row order (1 for parts without), or None if no part
    has any."""
    if all(p.sample_weight is None for p in parts):
        return None
    return np.concatenate([p.sample_weight if p.sample_weight is not None
                           else np.ones(p.n_samples) for p in parts])


def _part_as_gcxs(part: Problem, n_features: int):
    import sparse
    return sparse.GCXS((part.data, part.indices, part.indptr),
                       shape=(part.n_samples, n_features), compressed_axes=(0,))


def _part_y(part: Problem):
    return part.y


class Dataset:
    """A training set held on a Dask cluster as row blocks, kept where they were made.

    Each part is a future of a :class:`dlinear.Problem` (rows, labels and instance
    weights of the same rows together). Make one with :meth:`from_libsvm` or
    :meth:`from_arrays`, and give it to :func:`dlinear.train`,
    :func:`dlinear.cross_validation`, :func:`dlinear.find_parameters` or the
    predictions.

    Parameters
    ----------
    client : distributed.Client
        The cluster's client.
    parts : list of distributed.Future
        One future of a Problem per part.
    rows : list of int
        The number of rows of each part.
    n_features : int
        The number of columns.
    nnz : int
        The number of nonzeros of all parts.
    first_labels : list
        Each part's labels in order of first appearance (None for non-integer labels).
    name : str, default "dataset"
        A name for messages (the file names, for :meth:`from_libsvm`).
    """

    def __init__(self, client, parts: list, rows: list, n_features: int, nnz: int,
                 first_labels: list, name: str = "dataset"):
        self.client = client
        self.parts = parts
        self.rows = rows
        self.n_features = int(n_features)
        self.nnz = int(nnz)
        self._first_labels = first_labels
        self.name = name
        self._local_copies = {}
        self._occurring_columns = None

    # ----------------------------------------------------------------- constructors
    @classmethod
    def from_libsvm(cls, paths, client, n_features: int | None = None,
                    block_bytes: int = DEFAULT_BLOCK_BYTES,
                    storage_options: dict | None = None, dtype=np.float64) -> "Dataset":
        """Read one or more LIBSVM files on the workers, one task per byte range.

        The client never reads the data; the workers take the ranges in turn, so each
        holds about its share. A part lost with its worker is read again.

        Parameters
        ----------
        paths : str, os.PathLike or list of them
            Files every worker can read at the same name (shared storage), or fsspec URLs
            (``s3://bucket/key``, ``gs://``, ``hdfs://``, ``https://``) whose ranges the
            workers read directly. A compressed file (``.gz``, ``.bz2``, ``.xz``) has no
            byte ranges: one worker reads it.
        client : distributed.Client
            The cluster.
        n_features : int, optional
            The number of columns; default the largest index read.
        block_bytes : int, optional
            About how much text each part is read from (32 MB).
        storage_options : dict, optional
            fsspec options; the filesystem's own environment variables on the workers
            (e.g. ``AWS_*``) work too.
        dtype : {numpy.float64, numpy.float32}, default numpy.float64
            The type of the stored values (as :func:`dlinear.read_libsvm`).

        Returns
        -------
        Dataset

        Raises
        ------
        DlinearError
            For a file that cannot be read or parsed (naming the file and line), or one
            without data.
        """
        from dask.base import tokenize

        if isinstance(paths, (str, os.PathLike)):
            paths = [paths]
        n_workers = max(1, len(worker_addresses(client)))
        # The byte ranges are found on a worker: only the workers need to see the files.
        # (relative paths are the client's: made absolute here, then used as they are)
        paths = [p if is_url(p) else os.path.abspath(os.fspath(p)) for p in paths]
        plans = client.gather([client.submit(_plan_ranges, p, block_bytes, n_workers,
                                             storage_options, pure=False)
                               for p in paths])
        # Ranges go to the workers in turn: left to itself the scheduler may give most
        # quick reads to one worker, which then holds most of the data, and the
        # partitioned solvers (whose blocks are the workers' parts) get one huge block.
        addresses = worker_addresses(client)
        parts = []
        for path, stamp, ranges in plans:
            for start, end, first_line in ranges:
                key = (f"dlinear-read-"
                       f"{tokenize(path, stamp, start, end, storage_options, np.dtype(dtype).str)}")
                where = [addresses[len(parts) % len(addresses)]] if addresses else None
                parts.append(client.submit(_read_part, path, start, end, first_line,
                                           storage_options, dtype, key=key, workers=where,
                                           allow_other_workers=True))
        dataset = cls._from_parts(client, parts, n_features, name=", ".join(map(str, paths)))
        if dataset.n_samples == 0:
            raise DlinearError(f"{paths[0]}: line 1: file has no data")
        return dataset

    @classmethod
    def from_path(cls, path, client, storage_options: dict | None = None,
                  dtype=np.float64) -> "Dataset":
        """A LIBSVM file (from_libsvm) or a binary dataset directory (from_binary), told
        apart where the workers see the path."""
        if not is_url(path):
            path = os.path.abspath(os.fspath(path))
        if client.submit(_is_binary, path, storage_options, pure=False).result():
            return cls.from_binary(path, client, storage_options=storage_options, dtype=dtype)
        return cls.from_libsvm(path, client, storage_options=storage_options, dtype=dtype)

    @classmethod
    def from_binary(cls, path, client, storage_options: dict | None = None,
                    dtype=None) -> "Dataset":
        """A binary dataset directory (`python -m dlinear convert`), each of its parts
        read by one worker (in turn) from a path all workers see or an fsspec URL: a local
        file is memory-mapped, a URL read by byte ranges. The header is read on a worker;
        the parts' rows, nonzeros and labels come from it. The values are as stored
        (float64, or float32 from `convert --float32`); dtype float32 asks for float32."""
        from dask.base import tokenize
        if not is_url(path):
            path = os.path.abspath(os.fspath(path))
        header, stamp = client.submit(_binary_plan, path, storage_options,
                                      pure=False).result()
        if dtype is not None:
            check_binary_dtype(header, dtype)
        addresses = worker_addresses(client)
        parts = []
        for i in range(len(header.parts)):
            key = f"dlinear-read-binary-{tokenize(path, stamp, i, storage_options)}"
            where = [addresses[i % len(addresses)]] if addresses else None
            parts.append(client.submit(read_binary_part, path, i, None, storage_options,
                                       header, key=key, workers=where,
                                       allow_other_workers=True))
        if any(p.labels is None for p in header.parts) and header.label_type == "integer":
            return cls._from_parts(client, parts, header.n_features, name=path)
        return cls(client, parts, [p.rows[1] - p.rows[0] for p in header.parts],
                   header.n_features, header.nnz, [p.labels for p in header.parts], path)

    @classmethod
    def from_arrays(cls, X, y, client, sample_weight=None, n_parts: int | None = None
                    ) -> "Dataset":
        """A Dataset from arrays in memory or from Dask collections.

        Dask collections are made into parts on the workers, chunk by chunk: nothing
        passes through the client. In-memory arrays are split and scattered.

        Parameters
        ----------
        X : Problem, scipy.sparse matrix, numpy.ndarray, dask array or dask DataFrame
            The rows. A dask array's chunks must span all columns and may be numpy,
            scipy.sparse or sparse arrays.
        y : array-like, dask array or dask Series
            The labels (None with a Problem), partitioned as X for a Dask collection.
        client : distributed.Client
            The cluster.
        sample_weight : array-like, dask array or dask Series, optional
            Instance weights, as y.
        n_parts : int, optional
            Parts for in-memory data; default one per worker.

        Returns
        -------
        Dataset

        Raises
        ------
        DlinearError
            If X and y do not match (rows, partitions) or X is not 2-dimensional.
        """
        import dask
        if isinstance(X, Problem):
            problem = X
        elif dask.is_dask_collection(X):
            return cls._from_dask(X, y, client, sample_weight)
        else:
            problem = Problem.from_arrays(X, y, sample_weight=sample_weight)
        if n_parts is None:
            n_workers = max(1, len(worker_addresses(client)))
            n_parts = max(n_workers, math.ceil(problem.nnz * 12 / DEFAULT_BLOCK_BYTES))
            # a multiple of the workers: each gets as many rows (map-reduce waits for the
            # slowest worker)
            n_parts = math.ceil(n_parts / n_workers) * n_workers
        bounds = np.linspace(0, problem.n_samples, min(n_parts, max(problem.n_samples, 1)) + 1)
        bounds = bounds.astype(np.int64)
        pieces = [problem.subset(np.arange(a, b)) for a, b in zip(bounds[:-1], bounds[1:])
                  if b > a]
        # hash=False: identical blocks scattered again must not share keys with ones being
        # released (content-hashed keys race with the release and can hang)
        parts = client.scatter(pieces, hash=False)
        return cls._from_parts(client, parts, problem.n_features)

    @classmethod
    def _from_dask(cls, X, y, client, sample_weight=None) -> "Dataset":
        import dask
        import dask.array as da
        if _is_dataframe(X):
            return cls._from_dataframe(X, y, client, sample_weight)
        if X.ndim != 2:
            raise DlinearError(f"X must be 2-dimensional, got {X.ndim} dimensions")
        if len(X.chunks[1]) != 1:
            X = X.rechunk({1: -1})   # a block must hold whole rows
        y = da.asarray(y)
        if y.ndim != 1 or (not any(map(math.isnan, X.chunks[0])) and len(y) != X.shape[0]):
            raise DlinearError("y must be 1-dimensional with one label per row of X")
        y = _rows_like(y, X)
        w = None
        if sample_weight is not None:
            w = _rows_like(da.asarray(sample_weight), X)
        x_blocks = X.to_delayed().ravel()
        y_blocks = y.to_delayed().ravel()
        w_blocks = w.to_delayed().ravel() if w is not None else [None] * len(x_blocks)
        make = dask.delayed(_block_to_problem, pure=True)
        delayed_parts = [make(xb, yb, wb, X.shape[1]) for xb, yb, wb in
                         zip(x_blocks, y_blocks, w_blocks)]
        parts = client.compute(delayed_parts)
        return cls._from_parts(client, parts, X.shape[1])

    @classmethod
    def _from_dataframe(cls, X, y, client, sample_weight=None) -> "Dataset":
        """One part per partition of the dask DataFrame X, built on the worker that
        computes the partition: X's partition with y's (and sample_weight's) of the
        same number, so y and weights must be partitioned as X (dask Series or
        DataFrame columns, or dask arrays with one chunk per partition)."""
        import dask
        non_numeric = [c for c, t in X.dtypes.items() if not _is_numeric_dtype(t)]
        if non_numeric:
            raise DlinearError(f"X has non-numeric columns {non_numeric[:5]}: "
                               "convert or drop them before training")
        n_features = len(X.columns)
        x_blocks = X.to_delayed()
        lengths = None
        if any(v is not None and not dask.is_dask_collection(v) for v in (y, sample_weight)):
            # in-memory labels or weights are split as X's partitions: their lengths,
            # computed once (as xgboost.dask and lightgbm.dask do)
            lengths = [int(n) for n in X.map_partitions(len).compute()]
        y_blocks = _partition_blocks(y, len(x_blocks), "y", lengths)
        w_blocks = (_partition_blocks(sample_weight, len(x_blocks), "sample_weight", lengths)
                    if sample_weight is not None else [None] * len(x_blocks))
        make = dask.delayed(_block_to_problem, pure=True)
        parts = client.compute([make(xb, yb, wb, n_features) for xb, yb, wb in
                                zip(x_blocks, y_blocks, w_blocks)])
        return cls._from_parts(client, parts, n_features)

    @classmethod
    def _from_parts(cls, client, parts, n_features=None, name="dataset") -> "Dataset":
        summaries = client.gather(client.map(_part_summary, parts, pure=False))
        rows = [s[0] for s in summaries]
        seen = max([s[1] for s in summaries] + [0])
        if n_features is not None:
            if n_features < seen:
                raise DlinearError(f"{name}: feature index {seen} is larger than "
                                   f"n_features={n_features}")
            seen = n_features
        return cls(client, parts, rows, seen, sum(s[2] for s in summaries),
                   [s[3] for s in summaries], name)

    # ----------------------------------------------------------------- views
    @property
    def n_samples(self) -> int:
        """The number of rows of all parts."""
        return int(sum(self.rows))

    def class_labels_by_first_appearance(self) -> np.ndarray:
        """Labels over all parts in order of first appearance (integer labels only)."""
        if any(labels is None for labels, r in zip(self._first_labels, self.rows) if r):
            raise DlinearError(f"{self.name}: classification needs integer labels "
                               "(-s 11, 12, 13 do regression)")
        order = []
        seen = set()
        for labels in self._first_labels:
            for v in (labels if labels is not None else []):
                if int(v) not in seen:
                    seen.add(int(v))
                    order.append(int(v))
        return np.array(order, dtype=np.int64)

    @property
    def X(self):
        """The features as a dask array of sparse.GCXS row blocks (no copies)."""
        import dask
        import dask.array as da
        import sparse
        meta = sparse.GCXS.from_numpy(np.zeros((0, 0)), compressed_axes=(0,))
        blocks = [da.from_delayed(dask.delayed(_part_as_gcxs)(p, self.n_features),
                                  shape=(r, self.n_features), dtype=np.float64, meta=meta)
                  for p, r in zip(self.parts, self.rows)]
        return da.concatenate(blocks, axis=0)

    @property
    def y(self):
        """The labels as a dask array, chunked as :attr:`X`."""
        import dask
        import dask.array as da
        blocks = [da.from_delayed(dask.delayed(_part_y)(p), shape=(r,), dtype=np.float64)
                  for p, r in zip(self.parts, self.rows)]
        return da.concatenate(blocks)

    def occurring_columns(self) -> np.ndarray:
        """The sorted columns (int32) that the rows of any part use: found on the
        workers, part by part (dlinear.data.columns.part_columns), once per Dataset."""
        if self._occurring_columns is None:
            found = self.client.gather(self.client.map(part_columns, self.parts,
                                                       n_features=self.n_features,
                                                       pure=False))
            self._occurring_columns = union_columns(found, self.n_features)
        return self._occurring_columns

    def to_problem(self) -> Problem:
        """Everything gathered into this process (small data, tests)."""
        return concat_parts(self.n_features, *self.client.gather(self.parts))

    def local_copy(self, worker: str):
        """A future of the whole data set as one Problem held on `worker`: made once per
        worker and reused by every task sent there (CD solvers need all rows)."""
        if worker not in self._local_copies:
            self._local_copies[worker] = self.client.submit(
                concat_parts, self.n_features, *self.parts, workers=[worker],
                allow_other_workers=True, pure=False)
        return self._local_copies[worker]


def _rows_like(v, X):
    """v (labels or weights) chunked as X's rows. With unknown row counts (arrays made
    from DataFrames) the chunks must already correspond, one to one."""
    if v.chunks[0] == X.chunks[0]:
        return v
    if any(map(math.isnan, X.chunks[0] + v.chunks[0])):
        if v.numblocks[0] != X.numblocks[0]:
            raise DlinearError(f"X has {X.numblocks[0]} row blocks of unknown size but the "
                               f"labels or weights have {v.numblocks[0]}: partition them as X")
        return v
    return v.rechunk({0: X.chunks[0]})


def _block_to_problem(x_block, y_block, w_block, n_features) -> Problem:
    """A chunk of a dask array (numpy, scipy.sparse or pydata sparse) or a partition of
    a dask DataFrame (pandas) as a Problem."""
    import sparse
    if isinstance(x_block, sparse.SparseArray):
        x_block = x_block.to_scipy_sparse()
    elif hasattr(x_block, "to_numpy"):          # pandas
        x_block = x_block.to_numpy(dtype=np.float64)
    return Problem.from_arrays(x_block, _column(y_block), n_features=n_features,
                               sample_weight=None if w_block is None else _column(w_block))


def _column(block) -> np.ndarray:
    """Labels or weights of one block: numpy, or a pandas Series or one-column frame."""
    if hasattr(block, "to_numpy"):
        block = block.to_numpy(dtype=np.float64)
    return np.asarray(block, dtype=np.float64).ravel()


def _is_dataframe(x) -> bool:
    """A dask DataFrame or Series."""
    import dask
    return dask.is_dask_collection(x) and hasattr(x, "npartitions") \
        and hasattr(x, "to_dask_array")


def _is_numeric_dtype(dtype) -> bool:
    return getattr(dtype, "kind", "O") in "biuf"      # numpy and pandas' nullable dtypes


def _partition_blocks(values, n_blocks: int, name: str, lengths=None) -> list:
    """Blocks of y or weights matching a DataFrame's n_blocks partitions: of a dask
    Series/DataFrame or dask array with as many partitions (chunks), or of an in-memory
    array (numpy, list, pandas) split by the partitions' lengths."""
    import dask
    if not dask.is_dask_collection(values):
        values = np.asarray(values)
        if values.ndim != 1:
            raise DlinearError(f"{name} must be 1-dimensional")
        if len(values) != sum(lengths):
            raise DlinearError(f"X has {sum(lengths)} rows but {name} has {len(values)} "
                               "values")
        return np.split(values, np.cumsum(lengths)[:-1])
    if _is_dataframe(values):
        blocks = values.to_delayed()
    else:
        if values.ndim != 1:
            raise DlinearError(f"{name} must be 1-dimensional")
        blocks = list(values.to_delayed().ravel())
    if len(blocks) != n_blocks:
        raise DlinearError(f"X has {n_blocks} partitions but {name} has {len(blocks)}: "
                           f"partition {name} as X (e.g. take both from one DataFrame)")
    return blocks


def current_client():
    """The distributed.Client of this context (distributed.get_client), for the
    scikit-learn estimators given dask arrays."""
    from distributed import get_client
    try:
        return get_client()
    except ValueError:
        raise DlinearError("training on dask arrays needs a running distributed.Client "
                           "(create one first: Client(...) or Client(LocalCluster()))") from None


def _attach_weights(part: Problem, weights: np.ndarray) -> Problem:
    from dataclasses import replace
    return replace(part, sample_weight=np.asarray(weights, dtype=np.float64))


def with_sample_weight(dataset: Dataset, weights) -> Dataset:
    """The dataset with instance weights: `weights` (one per row, in row order, as read
    on the client) is split by the parts' row counts and each slice is attached to its
    part by a task on the part's worker. The slices travel inside the tasks, so a lost
    weighted part is rebuilt from its part (read again from the file) like any other."""
    from dask.base import tokenize
    weights = np.ascontiguousarray(weights, dtype=np.float64).ravel()
    if len(weights) != dataset.n_samples:
        raise DlinearError(f"{dataset.name}: {dataset.n_samples} instances but "
                           f"{len(weights)} weights")
    bounds = np.cumsum([0] + list(dataset.rows))
    parts = []
    for part, a, b in zip(dataset.parts, bounds[:-1], bounds[1:]):
        piece = weights[a:b]
        parts.append(dataset.client.submit(_attach_weights, part, piece,
                                           key=f"dlinear-weights-{tokenize(part.key, piece)}"))
    return Dataset(dataset.client, parts, list(dataset.rows), dataset.n_features,
                   dataset.nnz, list(dataset._first_labels), dataset.name)
