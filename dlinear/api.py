"""dlinear's Python entry points; they choose where the work runs.

Training data is a Problem, a scipy.sparse matrix or numpy array with its labels
(`y=`), a cluster Dataset, or a Dask collection (dask array, dask DataFrame) with its
labels. Without a client, a Problem or matrix trains in this process (dlinear.train,
dlinear.model_selection); with a distributed.Client, or given a Dataset or a Dask
collection, it trains on the Dask cluster (dlinear.cluster). This module sits above both,
so neither imports the other: the layers below know nothing of the backends above them.
"""
from __future__ import annotations

from dataclasses import replace
import sys
from typing import Callable, Optional

import numpy as np
import scipy.sparse as sp

from .cluster import Dataset, cross_validation_on_cluster, train_on_cluster
from .cluster.dataset import current_client
from .cluster.search import find_parameters_on_cluster
from .data import Problem
from .errors import DlinearError
from .model import Model
from .model_selection import checked_search_params, find_parameters_in_process
from .params import Params, check_parameter
from .predict import PREDICTIONS, predict_block
from .train import cross_validation_in_process, train_in_process


def is_dask_collection(x) -> bool:
    """A dask array, DataFrame or Series (without importing dask when it is not loaded)."""
    if "dask" not in sys.modules:
        return False
    import dask
    return dask.is_dask_collection(x)


def _is_matrix(x) -> bool:
    return sp.issparse(x) or isinstance(x, (np.ndarray, list))


def _training_data(data, y, sample_weight, client):
    """(the data as a Problem or for the cluster, True to train in this process)."""
    if isinstance(data, Problem) or not (_is_matrix(data) or is_dask_collection(data)):
        if y is not None or sample_weight is not None:
            raise DlinearError(f"a {type(data).__name__} holds its own labels and weights: "
                               "pass y= and sample_weight= only with a matrix or a Dask "
                               "collection")
        return data, client is None and isinstance(data, Problem)
    if y is None:
        raise DlinearError("training on a matrix needs its labels: "
                           "dlinear.train(X, params, y=y)")
    if is_dask_collection(data) or is_dask_collection(y):
        return data, False
    problem = Problem.from_arrays(data, y, sample_weight=sample_weight)
    return problem, client is None


def _cluster_dataset(data, y, sample_weight, client):
    """The Dataset on the cluster of `client` (or of the current distributed.Client, for
    a Dask collection): a Dask collection's partitions become its parts where they are."""
    if isinstance(data, Dataset):
        return data
    if client is None:
        if not is_dask_collection(data):
            raise DlinearError("training on a cluster needs a distributed.Client")
        client = current_client()
    if isinstance(data, Problem):
        return Dataset.from_arrays(data, None, client)
    return Dataset.from_arrays(data, y, client, sample_weight=sample_weight)


def train(data, params: Params, log: Optional[Callable[[str], None]] = None,
          n_threads: Optional[int] = None, client=None, partition: Optional[bool] = None,
          *, y=None, sample_weight=None) -> Model:
    """Trains a LIBLINEAR model.

    `data` is a Problem, a scipy.sparse matrix or numpy array X with labels `y=` (and
    optional per-row `sample_weight=`), a dlinear.cluster.Dataset, or a Dask collection
    (dask array or DataFrame X, with y a dask array, Series or numpy array). A Problem or
    matrix trains in this process, one-vs-rest classes (or a multinomial fit's passes) on
    n_threads threads (default one per core), unless a `client` (distributed.Client) is
    given; a Dataset or Dask collection trains on the Dask cluster (of `client`, or of the current client), its
    partitions kept on the workers. The model is the same either way. `log` receives
    LIBLINEAR-style progress lines.

    On a cluster, -s 1, 3, 7, 12 and 13 train partitioned (each worker runs dual CD on the
    rows it holds; no worker needs the whole data set) when `partition` is True, or by
    default (None, or params.partition) when a copy of the data would not fit one worker's
    memory; partition=False keeps a copy per worker. The optimum is the same; the models
    agree to the solvers' tolerance. For the Newton solvers -s 0, 2 and 11, True
    map-reduces over the parts, False fits on a copy per worker (the one-vs-rest classes
    in one group per worker thread, the model the in-process one bit for bit), and None
    (default) takes the copy for one-vs-rest with 3+ classes when it fits one worker,
    map-reduce otherwise."""
    if partition is not None:
        params = replace(params, partition=bool(partition))
    data, here = _training_data(data, y, sample_weight, client)
    if here:
        if params.partition:
            raise DlinearError("partition=True trains on a Dask cluster: pass a "
                               "dlinear.cluster.Dataset or a client")
        return train_in_process(data, params, log=log, n_threads=n_threads)
    check_parameter(params)
    dataset = _cluster_dataset(data, y, sample_weight, client)
    return train_on_cluster(dataset, params.resolved(), client=client, log=log)


def cross_validation(data, params: Params, nr_fold: int,
                     log: Optional[Callable[[str], None]] = None, client=None,
                     n_threads: Optional[int] = None, *, y=None,
                     sample_weight=None) -> np.ndarray:
    """Predicted label (or value) of every row by the model of the folds without it.
    Folds run in parallel: on threads here, or as tasks on a Dask cluster. The data is
    given as to train."""
    data, here = _training_data(data, y, sample_weight, client)
    if here:
        return cross_validation_in_process(data, params, nr_fold, log=log,
                                           n_threads=n_threads)
    check_parameter(params)
    dataset = _cluster_dataset(data, y, sample_weight, client)
    return cross_validation_on_cluster(dataset, params.resolved(), nr_fold, client=client,
                                       log=log)


def find_parameters(data, params: Params, nr_fold: int, start_C: Optional[float] = None,
                    start_p: Optional[float] = None,
                    log: Optional[Callable[[str], None]] = None, client=None,
                    n_threads: Optional[int] = None, *, y=None, sample_weight=None) -> tuple:
    """LIBLINEAR 2.50's find_parameters (train -C): returns (best_C, best_p, best_score).

    best_score is the CV accuracy as a fraction (-s 0, -s 2; best_p is then -1) or the
    CV mean squared error (-s 11). start_C (LIBLINEAR's -c) and start_p (-p) default to
    LIBLINEAR's starting points. `log` receives the per-C lines (`log2c=  -7.00\\trate=92.1`).
    A Problem is searched in this process with its folds on n_threads threads (default:
    one per core); a cluster Dataset, or any data with a `client`, on the Dask cluster.
    The data is given as to train."""
    data, here = _training_data(data, y, sample_weight, client)
    if here:
        return find_parameters_in_process(data, params, nr_fold, start_C, start_p, log=log,
                                          n_threads=n_threads)
    params = checked_search_params(params, nr_fold)
    dataset = _cluster_dataset(data, y, sample_weight, client)
    return find_parameters_on_cluster(dataset, params, nr_fold, start_C, start_p,
                                      client=client, log=log)


# ----------------------------------------------------------------- prediction

def _rows_as_dask_array(X):
    """A Dataset's rows, a dask DataFrame's or a dask array's, as a dask array whose
    blocks hold whole rows."""
    if hasattr(X, "parts") and hasattr(X, "X"):        # a dlinear.cluster.Dataset
        return X.X
    if hasattr(X, "to_dask_array"):                   # dask DataFrame
        X = X.to_dask_array()
    if X.ndim != 2:
        raise DlinearError(f"X must be 2-dimensional, got {X.ndim} dimensions")
    return X.rechunk({1: -1}) if len(X.chunks[1]) != 1 else X


def _predict(model: Model, X, what: str):
    if what == "probabilities" and not model.is_probability:
        raise DlinearError("probability output is only supported for logistic regression")
    if isinstance(X, Problem):
        return PREDICTIONS[what](model, X)
    if not (is_dask_collection(X) or hasattr(X, "parts")):
        return predict_block(X, model, what)
    import dask
    rows = _rows_as_dask_array(X)
    shared_model = dask.delayed(model, pure=True)    # one copy in the graph, not one per block
    if what == "labels":
        return rows.map_blocks(predict_block, shared_model, what, drop_axis=1,
                               dtype=np.float64, meta=np.empty((0,)))
    columns = model.nr_w if what == "decision_values" else model.nr_class
    return rows.map_blocks(predict_block, shared_model, what,
                           chunks=(rows.chunks[0], (columns,)), dtype=np.float64,
                           meta=np.empty((0, 0)))


def predict(model: Model, X):
    """Labels (or regression values) of the rows of X: a Problem, scipy.sparse matrix or
    numpy array gives a numpy array; a dlinear.cluster.Dataset, dask array or dask
    DataFrame a lazy dask array, computed block by block where the blocks are."""
    return _predict(model, X, "labels")


def decision_values(model: Model, X):
    """(rows, nr_w) decision values (one-class models: rho subtracted); numpy or lazy
    dask as predict."""
    return _predict(model, X, "decision_values")


def predict_probability(model: Model, X):
    """(rows, nr_class) probabilities in the order of model.label (logistic regression
    only); numpy or lazy dask as predict."""
    return _predict(model, X, "probabilities")
