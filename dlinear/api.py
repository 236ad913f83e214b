"""dlinear's Python entry points; they choose where the work runs.

Training data is a Problem, a scipy.sparse matrix or numpy array with its labels
(`y=`), a cluster Dataset, or a Dask collection (dask array, dask DataFrame) with its
labels. Without a client, a Problem or matrix trains in this process (dlinear.train,
dlinear.in_process.model_selection); with a distributed.Client, or given a Dataset or a Dask
collection, it trains on the Dask cluster (dlinear.cluster). This module sits above both,
so neither imports the other: the layers below know nothing of the backends above them.
"""
from __future__ import annotations

from dataclasses import replace
import os
import sys
from typing import Callable, Optional

import numpy as np

from .cluster import Dataset, cross_validation_on_cluster, train_on_cluster
from .cluster.dataset import current_client
from .cluster.search import find_parameters_on_cluster
from .data.libsvm_reader import Problem
from .problem import facts_shared
from .errors import DlinearError, surfacing_interrupts
from .model import Model
from .in_process.model_selection import checked_search_params, find_parameters_in_process
from .params import Params, check_parameter
from .predict import PREDICTIONS, predict_block
from .in_process.train import cross_validation_in_process, train_in_process
from .solvers.checkpoint import refuse as refuse_checkpoint


def is_dask_collection(x) -> bool:
    """A dask array, DataFrame or Series (without importing dask when it is not loaded)."""
    if "dask" not in sys.modules:
        return False
    import dask
    return dask.is_dask_collection(x)


def _is_matrix(x) -> bool:
    return is_scipy_sparse(x) or isinstance(x, (np.ndarray, list))


def is_scipy_sparse(x) -> bool:
    """A scipy.sparse matrix or array (without importing scipy.sparse when it is not
    loaded: a LIBSVM file trains without it)."""
    if "scipy.sparse" not in sys.modules:
        return False
    import scipy.sparse as sp
    return sp.issparse(x)


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


@surfacing_interrupts
def train(data, params: Params, log: Optional[Callable[[str], None]] = None,
          n_threads: Optional[int] = None, client=None, partition: Optional[bool] = None,
          *, y=None, sample_weight=None, init=None, memory=None,
          checkpoint=None) -> Model:
    """Train a LIBLINEAR model, in this process or on a Dask cluster.

    A Problem or matrix trains in this process unless a ``client`` is given; a Dataset
    or Dask collection trains on the Dask cluster (of ``client``, or of the current
    client), its partitions kept on the workers. The model is the same either way.

    Parameters
    ----------
    data : Problem, scipy.sparse matrix, numpy.ndarray, dlinear.cluster.Dataset, dask array or dask DataFrame
        The training set. A matrix or Dask collection takes its labels from ``y``.
        float32 values stay float32 (half the memory; the solvers sum in float64).
    params : Params
        The solver and its options.
    log : callable, optional
        Receives LIBLINEAR's progress lines, one string at a time; default: none.
    n_threads : int, optional
        In process, the threads for one-vs-rest classes (or a multinomial fit's passes);
        default one per core.
    client : distributed.Client, optional
        Train on this cluster (also a Problem or matrix).
    partition : bool, optional
        On a cluster, -s 1, 3, 4, 7, 12, 13 and 21: True trains partitioned dual CD (each
        worker on the rows it holds, no worker needs the whole set), False a copy per worker;
        the default (None, or ``params.partition``) partitions when a copy would not fit
        one worker's memory. The optimum is the same; the models agree to the solvers'
        tolerance. For the Newton solvers -s 0, 2, 11, True map-reduces over the parts,
        False fits on a copy per worker (bit for bit the in-process model), and None
        takes the copy for one-vs-rest with 3+ classes when it fits one worker. -s 5 and
        -s 6: True (and None when a copy would not fit) trains by OWL-QN map-reduced
        over the parts (the in-process optimum to the tolerance), False on copies. A
        variant with no partitioned method (--cd-block 2, --online) raises DlinearError
        on data a copy of which would not fit, before sending any.
    y : array-like, dask array or dask Series, optional
        The labels of a matrix or Dask collection, partitioned as the rows.
    sample_weight : array-like, dask array or dask Series, optional
        Instance weights of a matrix or Dask collection: each row's C is multiplied by
        its weight.
    init : Model or numpy.ndarray, optional
        Warm start (``dlinear-train -i``; ``params.init_sol``): the fit starts from this
        model's weights (the dual solvers from duals consistent with them) and reaches
        the same optimum as a fit from zero. A model with fewer features than the data
        is extended with zero weights; more features, other labels, another bias or a
        model of another problem family is a DlinearError. Weights are shaped like
        ``Model.w``. The same on a cluster, in every mode: the partitioned dual CD
        starts each worker's rows from their duals consistent with the weights.
    memory : int or str, optional
        In this process, the memory budget of the fit: bytes, or a size such as "800M",
        "2G", "1.5GB" (powers of 1024), counting the data and the solver's state. By
        default the smaller of the available RAM and the process's cgroup memory limit,
        against which only the solver's state is counted (the data is already held).
        A fit that needs more raises DlinearError before training.
    checkpoint : str or os.PathLike, optional
        A directory where the solver's state is saved every ``params.checkpoint_every``
        seconds and resumed from (``--checkpoint``, ``params.checkpoint``;
        docs/guide/checkpoints.rst). In this process only.

    Returns
    -------
    Model

    Raises
    ------
    DlinearError
        For bad parameters (LIBLINEAR's ``check_parameter`` wording), missing or extra
        labels, or data the solver cannot take.

    Warns
    -----
    ConvergenceWarning
        When a solver stops at an iteration cap.
    """
    if partition is not None:
        params = replace(params, partition=bool(partition))
    if init is not None:
        params = replace(params, init_sol=init)
    if checkpoint is not None:
        params = replace(params, checkpoint=os.fspath(checkpoint))
    data, here = _training_data(data, y, sample_weight, client)
    if here:
        if params.partition:
            raise DlinearError("partition=True trains on a Dask cluster: pass a "
                               "dlinear.cluster.Dataset or a client")
        with facts_shared():        # the labels, made once for the check and the fit
            _check_memory(data, params, n_threads, memory)
            return train_in_process(data, params, log=log, n_threads=n_threads)
    check_parameter(params)
    refuse_checkpoint(params, "a Dask cluster (in this process only, for now)")
    dataset = _cluster_dataset(data, y, sample_weight, client)
    return train_on_cluster(dataset, params.resolved(), client=client, log=log)


def train_given_problem(problem: Problem, params: Params,
                        log: Optional[Callable[[str], None]] = None,
                        n_threads: Optional[int] = None) -> Model:
    """train in this process for a caller that gives `problem` up (dlinear-train, which
    read it): no copy of its data is made (its column indices are renumbered in place, so
    it is not to be used again), and a fit on wide data's occurring columns returns its
    weights on those only (Model.rows), which save_model writes as the full model."""
    with facts_shared():
        _check_memory(problem, params, n_threads, None)
        return train_in_process(problem, params, log=log, n_threads=n_threads,
                                own_data=True, full_w=False)


def _check_memory(problem: Problem, params: Params, n_threads, memory) -> None:
    """memory= (or the default budget) against the fit of `problem` in this process."""
    from .planning.class_plan import first_appearance, n_binary_problems
    from .planning.memory_budget import check_fits, fit_bytes, memory_budget
    from .threads import available_cores
    budget = memory_budget(memory, "memory=")
    at_once = 1
    if params.spec.kind == "classification":
        classes = len(first_appearance(problem.y))
        at_once = max(1, min(n_binary_problems(classes), n_threads or available_cores()))
    csr = fit_bytes(problem.n_samples, problem.nnz, 0, problem.data.itemsize,
                    problem.indices.itemsize, problem.sample_weight is not None, 0)
    need = fit_bytes(problem.n_samples, problem.nnz, problem.n_features,
                     problem.data.itemsize, problem.indices.itemsize,
                     problem.sample_weight is not None, at_once)
    check_fits(need, budget, "dlinear.train", held=csr if memory is None else 0)


@surfacing_interrupts
def cross_validation(data, params: Params, nr_fold: int,
                     log: Optional[Callable[[str], None]] = None, client=None,
                     n_threads: Optional[int] = None, *, y=None,
                     sample_weight=None) -> np.ndarray:
    """Cross validation: every row predicted by the model trained on the other folds.

    The folds (seeded by ``params.seed``) run in parallel: on threads in process, or as
    tasks on a Dask cluster.

    Parameters
    ----------
    data, params, log, client, n_threads, y, sample_weight
        As for :func:`train`.
    nr_fold : int
        The number of folds (``-v``).

    Returns
    -------
    numpy.ndarray of shape (l,)
        The predicted label (or regression value) of every row.

    Raises
    ------
    DlinearError
        As for :func:`train`.
    """
    refuse_checkpoint(params, "cross validation (-v)")
    data, here = _training_data(data, y, sample_weight, client)
    if here:
        return cross_validation_in_process(data, params, nr_fold, log=log,
                                           n_threads=n_threads)
    check_parameter(params)
    dataset = _cluster_dataset(data, y, sample_weight, client)
    return cross_validation_on_cluster(dataset, params.resolved(), nr_fold, client=client,
                                       log=log)


@surfacing_interrupts
def find_parameters(data, params: Params, nr_fold: int, start_C: Optional[float] = None,
                    start_p: Optional[float] = None,
                    log: Optional[Callable[[str], None]] = None, client=None,
                    n_threads: Optional[int] = None, *, y=None, sample_weight=None) -> tuple:
    """LIBLINEAR 2.50's parameter search (``train -C``): C, and p for -s 11.

    Cross validation at C = C0, 2 C0, 4 C0, ..., each C warm-started from the previous
    one in each fold. For -s 0, 2, 11 as LIBLINEAR, and for -s 1 and -s 3 too.

    Parameters
    ----------
    data, params, log, client, n_threads, y, sample_weight
        As for :func:`train`; ``log`` receives the per-C lines
        (``log2c=  -7.00\\trate=92.1``).
    nr_fold : int
        The number of folds.
    start_C, start_p : float, optional
        The first C (LIBLINEAR's ``-c``) and p (``-p``); default LIBLINEAR's starting
        points.

    Returns
    -------
    best_C : float
    best_p : float
        -1 for classification.
    best_score : float
        The CV accuracy as a fraction (-s 0, 1, 2, 3) or the CV mean squared error
        (-s 11).

    Raises
    ------
    DlinearError
        For a solver without a search, or as for :func:`train`.
    """
    refuse_checkpoint(params, "the parameter search (-C)")
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
    """A dask DataFrame's or a dask array's rows as a dask array whose blocks hold whole
    rows."""
    if hasattr(X, "to_dask_array"):                   # dask DataFrame
        X = X.to_dask_array()
    if X.ndim != 2:
        raise DlinearError(f"X must be 2-dimensional, got {X.ndim} dimensions")
    return X.rechunk({1: -1}) if len(X.chunks[1]) != 1 else X


def _predict_parts(data: Dataset, shared_model, model: Model, what: str):
    """A Dataset's predictions as a dask array, one block per part, each computed from the
    part itself where it is held. Not through ``data.X``: its sparse.GCXS blocks run
    pydata sparse's Numba functions, which it does not cache, so every worker process
    compiled them again (seconds each) before its first prediction."""
    import dask
    import dask.array as da
    columns = () if what == "labels" else (
        model.nr_w if what == "decision_values" else model.nr_class,)
    return da.concatenate([
        da.from_delayed(dask.delayed(PREDICTIONS[what])(shared_model, part),
                        shape=(rows, *columns), dtype=np.float64,
                        meta=np.empty((0,) * (1 + len(columns))))
        for part, rows in zip(data.parts, data.rows)])


def _predict(model: Model, X, what: str):
    if what == "probabilities" and not model.is_probability:
        raise DlinearError("probability output is only supported for logistic regression")
    if isinstance(X, Problem):
        return PREDICTIONS[what](model, X)
    if not (is_dask_collection(X) or hasattr(X, "parts")):
        return predict_block(X, model, what)
    import dask
    shared_model = dask.delayed(model, pure=True)    # one copy in the graph, not one per block
    if isinstance(X, Dataset):
        return _predict_parts(X, shared_model, model, what)
    rows = _rows_as_dask_array(X)
    if what == "labels":
        return rows.map_blocks(predict_block, shared_model, what, drop_axis=1,
                               dtype=np.float64, meta=np.empty((0,)))
    columns = model.nr_w if what == "decision_values" else model.nr_class
    return rows.map_blocks(predict_block, shared_model, what,
                           chunks=(rows.chunks[0], (columns,)), dtype=np.float64,
                           meta=np.empty((0, 0)))


def predict(model: Model, X):
    """Labels (or regression values) of the rows of X.

    Parameters
    ----------
    model : Model
        A trained or loaded model.
    X : Problem, scipy.sparse matrix, numpy.ndarray, dlinear.cluster.Dataset, dask array or dask DataFrame
        The rows.

    Returns
    -------
    numpy.ndarray or dask.array.Array of shape (l,)
        A numpy array for in-memory X; for a Dataset or Dask collection a lazy dask array,
        computed block by block where the blocks are (the model goes into the graph once).
    """
    return _predict(model, X, "labels")


def decision_values(model: Model, X):
    """Decision values of the rows of X.

    Parameters
    ----------
    model, X
        As for :func:`predict`.

    Returns
    -------
    numpy.ndarray or dask.array.Array of shape (l, nr_w)
        One column per weight column of the model (one-class models: rho subtracted);
        numpy or lazy dask as :func:`predict`.
    """
    return _predict(model, X, "decision_values")


def predict_probability(model: Model, X):
    """Class probabilities of the rows of X (logistic regression models only).

    Parameters
    ----------
    model, X
        As for :func:`predict`.

    Returns
    -------
    numpy.ndarray or dask.array.Array of shape (l, nr_class)
        Probabilities in the order of ``model.label``; numpy or lazy dask as
        :func:`predict`.

    Raises
    ------
    DlinearError
        If the model is not a logistic regression model.
    """
    return _predict(model, X, "probabilities")
