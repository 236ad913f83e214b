"""Training and cross-validation as tasks on a Dask cluster.

The client plans (labels, per-class C, folds) and assembles the model; the workers do
the work. CD solvers need all rows of a binary problem, so each worker gets one local
copy of the data (Dataset.local_copy) and every class or fold task sent to it runs on
that copy. Class k goes to worker k mod W; since each task's seed depends only on k, the
model does not depend on the number of workers. Tasks may move to another worker if
theirs dies (allow_other_workers): Dask then rebuilds the copy there.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..data import Problem
from ..errors import DlinearError
from ..model import Model
from ..params import Params
from ..train import (assemble_model, cv_folds, fit_class, initial_w, n_binary_problems,
                     order_labels, run_cv_fold, train_in_process, warn_about_logs,
                     weighted_class_C)
from .dataset import Dataset
from .session import worker_addresses


def as_dataset(data, client) -> Dataset:
    if isinstance(data, Dataset):
        return data
    if client is None:
        raise DlinearError("training on a cluster needs a distributed.Client")
    if isinstance(data, Problem):
        return Dataset.from_arrays(data, None, client)
    raise DlinearError(f"cannot train on {type(data).__name__}: pass a dlinear.Problem or "
                       "a dlinear.cluster.Dataset")


def _workers(client) -> list:
    workers = worker_addresses(client)
    if not workers:
        raise DlinearError("the Dask cluster has no workers")
    return workers


def _gather(client, futures: list, label: str) -> list:
    """client.gather(futures), with a progress bar (dlinear.progress: on a terminal only)
    counting them as they finish."""
    from distributed import as_completed

    from ..progress import progress_bar
    with progress_bar(len(futures), label) as bar:
        for future in as_completed(futures):
            bar.update()
            if future.status == "error":
                break               # gather raises it now, as it did without the bar
    return client.gather(futures)


def _train_whole(problem: Problem, params: Params):
    """A solver that is not split by class (regression, one-class, Crammer-Singer), run
    whole on one worker."""
    lines = []
    model = train_in_process(problem, params, log=lines.append, n_threads=1)
    return model, lines


def _fit_class_without_duals(problem: Problem, label, k, weighted_C, params: Params):
    """fit_class on a worker, returning w without the dual variables: nothing asks for
    them after a fit, and they are a float per row and class."""
    return replace(fit_class(problem, label, k, weighted_C, params), alpha=None)


def train_on_cluster(data, params: Params, client=None, log=None) -> Model:
    dataset = as_dataset(data, client)
    client = client or dataset.client
    emit = log or (lambda line: None)
    spec = params.spec
    workers = _workers(client)

    def place(k):
        worker = workers[k % len(workers)]
        return dict(workers=[worker], allow_other_workers=True, pure=False), worker

    if is_map_reduce(params):
        return _train_newton(dataset, params, emit)

    if spec.kind != "classification" or spec.all_classes:
        options, worker = place(0)
        model, lines = client.submit(_train_whole, dataset.local_copy(worker), params,
                                     **options).result()
        for line in lines:
            emit(line)
        warn_about_logs(lines, stacklevel=3)    # raised on the worker, unseen here
        return model

    label = order_labels(dataset.class_labels_by_first_appearance())
    weighted_C = weighted_class_C(label, params, emit)
    futures = []
    for k in range(n_binary_problems(len(label))):
        options, worker = place(k)
        futures.append(client.submit(_fit_class_without_duals, dataset.local_copy(worker),
                                     label, k, weighted_C, params, **options))
    results = _gather(client, futures, "classes")
    for r in results:
        for line in r.log:
            emit(line)
    return assemble_model(params, dataset.n_features, label, results)


def is_map_reduce(params: Params) -> bool:
    """Newton/TRON solvers train on data spread over the workers (map-reduce); the CD
    solvers need each binary problem whole on one worker."""
    from ..solvers.primal_objectives import LOSS_OF_SOLVER
    return params.solver_type in LOSS_OF_SOLVER and not getattr(params, "primal_cd", False)


def _train_newton(dataset: Dataset, params: Params, emit) -> Model:
    """One Newton driver per binary problem, on client threads; each call of a driver is a
    map-reduce over the workers' blocks (dlinear.cluster.objective)."""
    from concurrent.futures import ThreadPoolExecutor
    from types import SimpleNamespace

    from ..solvers.newton import fit_newton
    from .objective import Placement, distributed_objective

    if params.spec.kind == "regression":
        label, weighted_C, ks = None, None, [0]
    else:
        label = order_labels(dataset.class_labels_by_first_appearance())
        weighted_C = weighted_class_C(label, params, emit)
        ks = list(range(n_binary_problems(len(label))))

    placement = Placement(dataset)

    def fit(k):
        objective, counts = distributed_objective(dataset, label, k, weighted_C, params,
                                                  placement)
        task = SimpleNamespace(w0=initial_w(params, k), w_size=objective.n_variables, y=None)
        try:
            return fit_newton(task, params, objective=objective, counts=counts)
        finally:
            objective.loss_term.close()

    with ThreadPoolExecutor(max_workers=min(len(ks), 8)) as pool:
        results = list(pool.map(fit, ks))
    for r in results:
        for line in r.log:
            emit(line)
    return assemble_model(params, dataset.n_features, label, results)


def cross_validation_on_cluster(data, params: Params, nr_fold: int, client=None,
                                log=None) -> np.ndarray:
    """LIBLINEAR's folds (see train.cv_folds), one task per fold."""
    dataset = as_dataset(data, client)
    client = client or dataset.client
    emit = log or (lambda line: None)
    workers = _workers(client)
    perm, fold_start = cv_folds(dataset.n_samples, nr_fold, params.seed, emit)
    [perm_future] = client.scatter([perm], broadcast=True)
    futures = []
    for i in range(len(fold_start) - 1):
        worker = workers[i % len(workers)]
        futures.append(client.submit(run_cv_fold, dataset.local_copy(worker), perm_future,
                                     fold_start[i], fold_start[i + 1], params,
                                     workers=[worker], allow_other_workers=True, pure=False))
    target = np.empty(dataset.n_samples)
    for held, predicted in _gather(client, futures, "CV folds"):
        target[held] = predicted
    return target
