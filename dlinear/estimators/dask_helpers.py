"""Dask arrays and DataFrames in the estimators: row blocks, predictions mapped over the
blocks lazily (map_blocks, as xgboost.dask and lightgbm.dask return theirs), the labels
of a dask y encoded as class indices, and the cluster Dataset a dask fit trains on.

The block functions take one block of rows (numpy, scipy.sparse or pydata sparse); the
estimators apply them to a whole numpy or scipy.sparse X as to one block, so the local
and the dask predictions are the same arithmetic.
"""
from __future__ import annotations

import dask.array as da
import numpy as np
import scipy.sparse as sp

from ..api import is_dask_collection
from ..cluster.dataset import Dataset, current_client
from ..errors import DlinearError
from ..predict import probabilities
from ..planning.class_plan import order_labels
from ..planning.formulation import Scale, matrix_energies, matrix_scale, scale_from_energies


def is_dask(x) -> bool:
    """A dask array, or a dask DataFrame or Series (made a dask array of its partitions,
    see as_dask_array)."""
    return is_dask_collection(x)


def as_dask_array(x, row_chunks=None):
    """A dask DataFrame or Series as a dask array of its partitions (row counts unknown:
    nothing is computed; or row_chunks, X's known counts when it has as many
    partitions); a dask array as it is."""
    if not hasattr(x, "to_dask_array"):
        return x
    if row_chunks is not None and not np.isnan(sum(row_chunks)) \
            and x.npartitions == len(row_chunks):
        return x.to_dask_array(lengths=tuple(row_chunks))
    return x.to_dask_array()


def dask_rows(X, lengths: bool = False):
    """X with all columns in each block (what the blocks' products need). lengths: a
    DataFrame's partition lengths are computed (once) so that the blocks' row counts are
    known, which in-memory labels or weights need to be split as X's partitions (what
    xgboost.dask and lightgbm.dask do); otherwise they stay unknown."""
    if lengths and hasattr(X, "to_dask_array"):
        X = X.to_dask_array(lengths=True)
    X = as_dask_array(X)
    if X.ndim != 2:
        raise ValueError(f"Expected a 2D dask array, got {X.ndim} dimensions")
    return X.rechunk({1: -1}) if len(X.chunks[1]) != 1 else X


# ----------------------------------------------------------------- one block of rows

def _block_as_matrix(block):
    if hasattr(block, "to_scipy_sparse"):       # pydata sparse (GCXS, COO)
        return block.to_scipy_sparse().tocsr()
    if sp.issparse(block):
        return block.tocsr()
    return np.asarray(block, dtype=np.float64)


def block_scores(block, coef, intercept):
    """(rows, rows of coef) scores X coef^T + intercept."""
    X = _block_as_matrix(block)
    return np.asarray(X @ coef.T, dtype=np.float64) + intercept


def block_labels(block, coef, intercept, classes):
    """The predicted classes: the positive side of one score column is classes[1], else
    the class of the largest score."""
    scores = block_scores(block, coef, intercept)
    if scores.shape[1] == 1:
        return classes[(scores[:, 0] > 0).astype(np.int64)]
    return classes[np.argmax(scores, axis=1)]


def block_oneclass(block, coef, rho, what):
    """A one-class model's "score" (w.x), "decision" (w.x - rho) or "predict" (+1 where
    the decision is > 0, else -1: LIBLINEAR's predict, 0 is an outlier)."""
    scores = block_scores(block, coef, 0.0)[:, 0]
    if what == "score":
        return scores
    if what == "decision":
        return scores - rho
    return np.where(scores - rho > 0, 1, -1)


# ----------------------------------------------------------------- lazy predictions

def map_scores(X, coef, intercept):
    """The (n, rows of coef) scores of dask X (all columns in each block), lazily."""
    return X.map_blocks(block_scores, coef, intercept,
                        chunks=(X.chunks[0], (coef.shape[0],)), dtype=np.float64,
                        meta=np.empty((0, 0)))


def map_labels(X, coef, intercept, classes):
    return X.map_blocks(block_labels, coef, intercept, classes, drop_axis=1,
                        dtype=classes.dtype, meta=np.empty((0,), dtype=classes.dtype))


def map_oneclass(X, coef, rho, what):
    return X.map_blocks(block_oneclass, coef, rho, what, drop_axis=1,
                        dtype=np.int64 if what == "predict" else np.float64)


def map_probabilities(scores, multinomial):
    """dlinear.predict.probabilities of each block of a dask array of scores."""
    k = max(scores.shape[1], 2)
    return scores.map_blocks(probabilities, multinomial, chunks=(scores.chunks[0], (k,)),
                             dtype=np.float64)


# ----------------------------------------------------------------- labels and parts

def _ones_block(block):
    return np.ones(block.shape[0])


def ones_per_row(X):
    """A dask array of 1.0 per row of X (the one-class SVM's labels)."""
    return X.map_blocks(_ones_block, drop_axis=1, dtype=np.float64)


def as_labels(y, row_chunks=None):
    """y (dask array, DataFrame column or Series) as a 1-D dask array (row_chunks: see
    as_dask_array)."""
    y = da.asarray(as_dask_array(_one_column(y), row_chunks))
    if y.ndim != 1:
        raise ValueError(f"y must be 1-dimensional, got shape {y.shape}")
    return y


def _one_column(y):
    """A one-column (dask or pandas) DataFrame as its column; anything else as it is."""
    if hasattr(y, "iloc") and y.ndim == 2 and len(y.columns) == 1:
        return y.iloc[:, 0]
    return y


def in_memory_column(v, rows, name: str) -> np.ndarray:
    """A non-dask y or sample_weight (list, numpy, pandas, of any dtype scikit-learn
    takes) as a 1-D numpy array with one value per row of X."""
    v = np.asarray(_one_column(v))
    if v.ndim == 2 and v.shape[1] == 1:
        v = v[:, 0]
    if v.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional, got shape {v.shape}")
    if len(v) != rows:
        raise ValueError(f"X has {rows} rows but {name} has {len(v)} values")
    return v


def chunked_as(v: np.ndarray, X):
    """An in-memory column as a dask array chunked as X's rows (known sizes)."""
    return da.from_array(v, chunks=(X.chunks[0],))


def _series_codes(part, classes):
    codes = np.searchsorted(classes, part.to_numpy()).astype(np.float64)
    return type(part)(codes, index=part.index, name=part.name)


def dask_class_codes(y, row_chunks=None):
    """(classes, codes) of a dask y: its sorted distinct labels (only they are computed)
    and each row's class index as a lazy float64 dask array, partitioned as y
    (row_chunks: see as_dask_array). A dask
    Series (or one-column DataFrame) is read as a Series, so string columns are never
    converted to a dask array of objects."""
    y = _one_column(y)
    if hasattr(y, "map_partitions") and y.ndim == 1:
        classes = _distinct_labels(y)
        codes = y.map_partitions(_series_codes, classes, meta=(y.name, "f8"))
        return classes, as_dask_array(codes, row_chunks)
    y = as_labels(y)
    classes = sorted_classes(y)
    return classes, encoded(y, classes)


def _distinct_labels(series) -> np.ndarray:
    """The sorted distinct values of a dask Series: each partition's, merged here. (Its
    unique() shuffles the labels between the workers, two Dask shuffle warnings a fit.)"""
    import dask
    parts = [dask.delayed(_partition_labels)(part) for part in series.to_delayed()]
    return np.unique(np.concatenate(dask.compute(*parts)))


def _partition_labels(part) -> np.ndarray:
    return np.unique(np.asarray(part.to_numpy()))


def sorted_classes(y) -> np.ndarray:
    """The distinct labels of dask y, sorted (only they are computed)."""
    return np.sort(np.asarray(da.unique(y).compute()))


def _encode_block(y_block, classes):
    return np.searchsorted(classes, y_block).astype(np.float64)


def encoded(y, classes):
    """Each label of dask y as the index of its class in classes (float64), lazily."""
    return y.map_blocks(_encode_block, classes, dtype=np.float64)


def class_counts(y, classes) -> np.ndarray:
    """The number of rows of each class of dask y."""
    return da.bincount(encoded(y, classes).astype(np.int64), minlength=len(classes)).compute()


def dataset(X, y, classes, sample_weight, client) -> Dataset:
    """The cluster Dataset of dask X and y (classes encoded as their indices) on client
    (None: the current distributed.Client)."""
    if classes is not None:
        y = encoded(y, classes)
    try:
        return Dataset.from_arrays(X, y, client or current_client(),
                                   sample_weight=sample_weight)
    except DlinearError as e:
        raise ValueError(str(e)) from e


def dataset_label_order(data: Dataset):
    """The class indices in the order train gives their binary problems, read from the
    parts (LIBLINEAR's: first appearance)."""
    return order_labels(data.class_labels_by_first_appearance())


# ----------------------------------------------------------------- the data's scale

def _block_energies(block, weights, C):
    X = _block_as_matrix(block)
    row_C = C if weights is None else C * np.asarray(weights, dtype=np.float64)
    row_C = np.broadcast_to(np.asarray(row_C, dtype=np.float64), (X.shape[0],))
    s, largest = matrix_energies(X, row_C)
    return s, largest, X.shape[0], float(row_C.sum()), float(row_C.max(initial=0.0))


def fit_scale(X, sample_weight, params, client=None) -> Scale:
    """The dlinear.planning.formulation.Scale of a fit's X (in memory or dask), each row's
    C being params.C times its sample_weight (None: 1)."""
    if is_dask(X):
        return dask_scale(X, sample_weight, params.C, params.bias, client)
    return matrix_scale(X, params.C if sample_weight is None else params.C * sample_weight,
                        params.bias)


def dask_scale(X, sample_weight, C: float, bias: float, client=None) -> Scale:
    """The dlinear.planning.formulation.Scale of a dask array's rows (blocks of rows, all
    columns), each row's C being C times its sample_weight (a dask array chunked as X,
    or None): one pass over the blocks on the cluster, the column energies summed here."""
    import dask
    blocks = X.to_delayed().ravel()
    weights = (sample_weight.to_delayed().ravel() if sample_weight is not None
               else [None] * len(blocks))
    parts = [dask.delayed(_block_energies)(b, w, C) for b, w in zip(blocks, weights)]
    client = client or current_client()
    results = client.compute(parts, sync=True)
    s = np.sum([r[0] for r in results], axis=0)
    return scale_from_energies(sum(r[2] for r in results), s, max(r[1] for r in results),
                               sum(r[3] for r in results), max(r[4] for r in results), bias)
