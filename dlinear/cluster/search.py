"""-C on a Dask cluster: each (fold, p) path of warm-started C's is one task.

As cross_validation_on_cluster: the client draws the folds (train.cv_folds) and scatters
the permutation; each task runs dlinear.in_process.model_selection.run_fold_path on its worker's
local copy of the data (Dataset.local_copy, one per worker, shared by every task sent
there). Path i goes to worker i mod W, and a continuation of a fold (see
dlinear.in_process.model_selection) to the same worker, so the copy is there. The client replays
LIBLINEAR's stopping rule over the paths as they finish (distributed.as_completed); the
dual variables of -s 1 and 3 stay on the workers, where a continuation finds them. The
result does not depend on the number of workers: every path is the same computation on
the same rows wherever it runs.
"""
from __future__ import annotations

from dataclasses import replace

from ..in_process.model_selection import run_fold_path, run_search, search_plan
from ..params import Params
from ..in_process.train import cv_folds
from .engine import _workers, as_dataset


def _run_path(problem, perm, begin, end, params, Cs, request, previous):
    """run_fold_path on a worker; a continuation takes its warm start of the dual
    variables from the result of the fold's previous path, kept on the same worker."""
    if previous is not None:
        request = replace(request, alpha0=previous.alpha)
    return run_fold_path(problem, perm, begin, end, params, Cs, request)


def _without_duals(result):
    """What the client needs of a path: scores and w. The dual variables (a float per
    training row and class) stay on the worker for the fold's continuation."""
    return replace(result, alpha=None)


def find_parameters_on_cluster(data, params: Params, nr_fold: int, start_C=None,
                               start_p=None, client=None, log=None) -> tuple:
    """model_selection.find_parameters with the fold paths as Dask tasks."""
    from distributed import as_completed

    dataset = as_dataset(data, client)
    client = client or dataset.client
    emit = log or (lambda line: None)
    workers = _workers(client)
    # the grid needs max ||x_i||^2 (and the targets for -s 11): computed where a copy is
    plan = client.submit(search_plan, dataset.local_copy(workers[0]), params, start_C,
                         start_p, workers=[workers[0]], allow_other_workers=True,
                         pure=False).result()
    perm, fold_start = cv_folds(dataset.n_samples, nr_fold, params.seed, emit)
    nr_fold = len(fold_start) - 1
    [perm_future] = client.scatter([perm], broadcast=True)
    group_params = [replace(params, p=p) if p >= 0 else params for p, _ in plan]
    submitted = []
    last_path = {}      # (group, fold) -> future of that path's whole result, on its worker

    def submit(request, search):
        worker = workers[(request.group * nr_fold + request.fold) % len(workers)]
        options = dict(workers=[worker], allow_other_workers=True, pure=False)
        previous = last_path.get((request.group, request.fold)) if request.start else None
        path = client.submit(_run_path, dataset.local_copy(worker), perm_future,
                             fold_start[request.fold], fold_start[request.fold + 1],
                             group_params[request.group], plan[request.group][1], request,
                             previous, **options)
        last_path[request.group, request.fold] = path
        summary = client.submit(_without_duals, path, **options)
        submitted.extend([path, summary])
        return summary

    try:
        return run_search(plan, nr_fold, dataset.n_samples, params.spec.kind == "regression",
                          submit, as_completed(), emit)
    finally:
        client.cancel([f for f in submitted if not f.done()])
