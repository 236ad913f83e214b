"""dlinear's Python entry points; they choose where the work runs.

A Problem with no client trains in this process (dlinear.train, dlinear.model_selection);
a cluster Dataset, or any data given with a distributed.Client, trains on the Dask cluster
(dlinear.cluster). This module sits above both, so neither imports the other: the layers
below know nothing of the backends above them.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable, Optional

import numpy as np

from .data import Problem
from .errors import DlinearError
from .model import Model
from .model_selection import checked_search_params, find_parameters_in_process
from .params import Params, check_parameter
from .train import cross_validation_in_process, train_in_process


def _in_process(data, client) -> bool:
    return client is None and isinstance(data, Problem)


def train(data, params: Params, log: Optional[Callable[[str], None]] = None,
          n_threads: Optional[int] = None, client=None,
          partition: Optional[bool] = None) -> Model:
    """Trains a LIBLINEAR model on a Problem (in this process, one-vs-rest classes on
    n_threads threads, default one per core) or on a cluster Dataset or with a `client`
    (a distributed.Client: on the Dask cluster). `log` receives LIBLINEAR-style progress
    lines.

    On a cluster, -s 1 and -s 3 train partitioned (each worker runs dual CD on the rows it
    holds; no worker needs the whole data set) when `partition` is True, or by default
    (None, or params.partition) when a copy of the data would not fit one worker's memory;
    partition=False keeps a copy per worker. The optimum is the same; the models agree to
    the solvers' tolerance."""
    if partition is not None:
        params = replace(params, partition=bool(partition))
    if _in_process(data, client):
        if params.partition:
            raise DlinearError("partition=True trains on a Dask cluster: pass a "
                               "dlinear.cluster.Dataset or a client")
        return train_in_process(data, params, log=log, n_threads=n_threads)
    check_parameter(params)
    from .cluster import train_on_cluster
    return train_on_cluster(data, params.resolved(), client=client, log=log)


def cross_validation(data, params: Params, nr_fold: int,
                     log: Optional[Callable[[str], None]] = None, client=None,
                     n_threads: Optional[int] = None) -> np.ndarray:
    """Predicted label (or value) of every row by the model of the folds without it.
    Folds run in parallel: on threads here, or as tasks on a Dask cluster."""
    if _in_process(data, client):
        return cross_validation_in_process(data, params, nr_fold, log=log,
                                           n_threads=n_threads)
    check_parameter(params)
    from .cluster import cross_validation_on_cluster
    return cross_validation_on_cluster(data, params.resolved(), nr_fold, client=client,
                                       log=log)


def find_parameters(data, params: Params, nr_fold: int, start_C: Optional[float] = None,
                    start_p: Optional[float] = None,
                    log: Optional[Callable[[str], None]] = None, client=None,
                    n_threads: Optional[int] = None) -> tuple:
    """LIBLINEAR 2.50's find_parameters (train -C): returns (best_C, best_p, best_score).

    best_score is the CV accuracy as a fraction (-s 0, -s 2; best_p is then -1) or the
    CV mean squared error (-s 11). start_C (LIBLINEAR's -c) and start_p (-p) default to
    LIBLINEAR's starting points. `log` receives the per-C lines (`log2c=  -7.00\\trate=92.1`).
    A Problem is searched in this process with its folds on n_threads threads (default:
    one per core); a cluster Dataset, or any data with a `client`, on the Dask cluster."""
    if _in_process(data, client):
        return find_parameters_in_process(data, params, nr_fold, start_C, start_p, log=log,
                                          n_threads=n_threads)
    params = checked_search_params(params, nr_fold)
    from .cluster.search import find_parameters_on_cluster
    return find_parameters_on_cluster(data, params, nr_fold, start_C, start_p,
                                      client=client, log=log)
