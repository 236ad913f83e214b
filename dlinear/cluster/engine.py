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
from ..solver_table import SOLVERS
from ..solvers import SharedColumns
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
    from .heap import heap_kept
    lines = []
    with heap_kept():
        model = train_in_process(problem, params, log=lines.append, n_threads=1)
    return model, lines


def _fit_class_without_duals(problem: Problem, label, k, weighted_C, params: Params,
                             columns: SharedColumns = None):
    """fit_class on a worker, returning w without the dual variables: nothing asks for
    them after a fit, and they are a float per row and class. `columns` is the worker's
    holder of X by columns, shared by its class tasks."""
    return replace(fit_class(problem, label, k, weighted_C, params, columns), alpha=None)


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
        if newton_on_copies(dataset, params):
            return _train_newton_on_copies(dataset, params, emit)
        return _train_newton(dataset, params, emit)

    if choose_partitioned(dataset, params):
        return _train_partitioned(dataset, params, emit)

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
    # one holder of X by columns per worker (filled by the first class task of a solver
    # that walks features: -s 5, -s 6, --primal-cd), so each data copy is transposed once
    # for all its classes, as in process; it goes when this training's futures go
    columns = {}
    for k in range(n_binary_problems(len(label))):
        options, worker = place(k)
        if worker not in columns:
            columns[worker] = client.submit(SharedColumns, **options)
        futures.append(client.submit(_fit_class_without_duals, dataset.local_copy(worker),
                                     label, k, weighted_C, params, columns[worker],
                                     **options))
    results = _gather(client, futures, "classes")
    for r in results:
        for line in r.log:
            emit(line)
    return assemble_model(params, dataset.n_features, label, results)


# A worker trains on a copy only if the copy takes at most this share of its memory limit
# (the rest: Dask's own, the parts it already holds, the solver's state).
COPY_MEMORY_SHARE = 0.5


def dataset_bytes(dataset: Dataset) -> int:
    """The CSR size of all parts: 12 bytes a non-zero (value, column), 16 a row (row
    pointer, label)."""
    return int(12 * dataset.nnz + 16 * dataset.n_samples)


def smallest_worker_memory(client) -> int:
    """The smallest memory limit of the workers (0: none of them has one)."""
    limits = [info.get("memory_limit") or 0
              for info in client.scheduler_info(n_workers=-1)["workers"].values()]
    limits = [m for m in limits if m > 0]
    return min(limits) if limits else 0


def copy_fits(dataset: Dataset) -> bool:
    """Whether a copy of the data fits one worker: it takes at most COPY_MEMORY_SHARE of
    the smallest worker memory limit (always, when no worker has a limit). The one memory
    rule of both cluster modes: the CD solvers' copy / partitioned, and Newton's copy /
    map-reduced."""
    limit = smallest_worker_memory(dataset.client)
    return limit <= 0 or dataset_bytes(dataset) <= COPY_MEMORY_SHARE * limit


def choose_partitioned(dataset: Dataset, params: Params) -> bool:
    """Whether the CD solvers train partitioned (each worker solves its own rows; -s 1,
    3, 12, 13): when asked (params.partition True), or, by default (None), when a copy of the
    data would take more than COPY_MEMORY_SHARE of the smallest worker memory limit."""
    from ..train import check_partitioned
    if params.partition is not None:
        if params.partition:
            check_partitioned(params)
        return bool(params.partition)
    if (not params.spec.partitioned_dual_cd or params.cd_block != 1
            or params.online):
        return False
    return not copy_fits(dataset)


def newton_on_copies(dataset: Dataset, params: Params) -> bool:
    """Whether a Newton solver (-s 0, 2, 11) trains on a copy of the data per worker
    rather than map-reduced over the parts: when asked (params.partition False; True asks
    for map-reduce), or, by default (None), for one-vs-rest with more than one binary
    problem (-s 0 / -s 2, at least 3 classes, not --multinomial) when a copy fits one
    worker (copy_fits, the rule of the CD solvers' copy mode). The classes then run in
    groups, one per worker thread, each on its worker's copy without a message between
    Newton rounds (BENCHMARKS.md, "Multi-class Newton on a cluster: the classes as
    tasks"); one problem (binary, regression, multinomial) is split by rows instead."""
    if params.partition is not None:
        return not params.partition
    if params.spec.kind != "classification" or params.multinomial:
        return False
    n_problems = n_binary_problems(len(dataset.class_labels_by_first_appearance()))
    return n_problems > 1 and copy_fits(dataset)


def _worker_slots(client) -> list:
    """One entry per worker thread, the workers interleaved (w0, w1, w0, w1, ...), so
    that the first groups go to different workers."""
    nthreads = client.nthreads()
    workers = _workers(client)
    most = max(nthreads.get(w, 1) for w in workers)
    return [w for i in range(most) for w in workers if nthreads.get(w, 1) > i]


def _fit_class_group_without_duals(problem: Problem, label, ks, weighted_C,
                                   params: Params) -> list:
    """fit_class_group on a worker's copy (no dual variables: Newton has none), glibc's
    heap kept meanwhile (dlinear.cluster.heap: Dask's workers otherwise page-fault every
    n-vector in afresh, 20-35% of the fit)."""
    from ..train import fit_class_group
    from .heap import heap_kept
    with heap_kept():
        results = fit_class_group(problem, label, ks, weighted_C, params)
    return [replace(r, alpha=None) for r in results]


def _train_newton_on_copies(dataset: Dataset, params: Params, emit) -> Model:
    """Newton's copy mode (newton_on_copies): the one-vs-rest classes split into groups,
    class k in group k mod G, G = min(#classes, worker threads); each group one task on
    its worker's copy of the data (Dataset.local_copy), fit as in process on one thread
    (dlinear.train.fit_class_group: one k-column Newton fit, or a driver per class). No
    message between the Newton rounds: the task returns the group's weights. The models
    are those of train_in_process (k-column Newton is bit-identical to the per-class
    drivers). Tasks may move to another worker if theirs dies (allow_other_workers), Dask
    rebuilding the copy there. A single problem (binary, regression, multinomial) runs
    whole on one worker."""
    client = dataset.client
    slots = _worker_slots(client)
    last_fit_stats.clear()
    if params.spec.kind != "classification" or params.multinomial:
        label = None
    else:
        label = order_labels(dataset.class_labels_by_first_appearance())
    if label is None or n_binary_problems(len(label)) == 1:
        worker = slots[0]
        model, lines = client.submit(_train_whole, dataset.local_copy(worker), params,
                                     workers=[worker], allow_other_workers=True,
                                     pure=False).result()
        for line in lines:
            emit(line)
        last_fit_stats.update(mode="copy", groups=[1], workers=1)
        return model
    weighted_C = weighted_class_C(label, params, emit)
    ks = list(range(n_binary_problems(len(label))))
    n_groups = min(len(ks), len(slots))
    groups = [ks[g::n_groups] for g in range(n_groups)]
    futures = [client.submit(_fit_class_group_without_duals,
                             dataset.local_copy(slots[g]), label, group, weighted_C, params,
                             workers=[slots[g]], allow_other_workers=True, pure=False)
               for g, group in enumerate(groups)]
    results = [None] * len(ks)
    for group, fitted in zip(groups, _gather(client, futures, "class groups")):
        for k, r in zip(group, fitted):
            results[k] = r
    for r in results:
        for line in r.log:
            emit(line)
    last_fit_stats.update(mode="copy", groups=[len(g) for g in groups],
                          workers=len(set(slots[:n_groups])))
    return assemble_model(params, dataset.n_features, label, results)


def training_mode(data, params: Params, solver_named: bool = True):
    """(params with `partition` decided, one line saying how the cluster will train).
    When the user named no solver (the CLI without -s) and the default -s 1 would train
    partitioned because the data does not fit one worker, the distributed Newton -s 2
    trains instead: the same optimum, measured 9.4x faster on 2 workers (677k rows: 2.6 s
    against 24.8 s; BENCHMARKS.md, "Partitioned dual CD"). An explicit -s 1 or --partition
    keeps the dual."""
    from dataclasses import replace
    dataset = as_dataset(data, None)
    named = params
    params = params.resolved()
    n = len(_workers(dataset.client))
    if is_map_reduce(params):
        copies = newton_on_copies(dataset, params)
        params = replace(params, partition=not copies)
        if copies:
            return params, (f"-s {params.solver_type} on a copy of the data per worker "
                            f"({n} worker(s)), the one-vs-rest classes in groups, one per "
                            "worker thread, no messages between Newton rounds")
        return params, (f"-s {params.solver_type} map-reduced over the parts on "
                        f"{n} worker(s)")
    partitioned = choose_partitioned(dataset, params)
    fallback = params.spec.fallback
    if (partitioned and not solver_named and named.partition is None
            and fallback is not None and SOLVERS[fallback].newton):
        primal, _ = training_mode(data, replace(named, solver_type=fallback))
        return primal, (f"-s {fallback} (the primal of the default -s {params.solver_type}: "
                        f"the same model) map-reduced over the parts on {n} worker(s): the "
                        f"data does not fit one worker, where -s {params.solver_type} would "
                        "train partitioned dual CD, ~9x slower")
    params = replace(params, partition=partitioned)
    if partitioned:
        return params, (f"-s {params.solver_type} partitioned: dual CD on each worker's own "
                        f"rows ({n} worker(s), rule {params.resolved().partition_rule})")
    return params, (f"-s {params.solver_type} on a copy of the data per worker "
                    f"({n} worker(s))")


def _train_partitioned(dataset: Dataset, params: Params, emit) -> Model:
    """-s 1, 3, 12, 13 by partitioned dual CD (dlinear.cluster.partitioned_cd): all
    classes in each round; at the round cap, LIBLINEAR's warning and switch (-s 1 to the
    distributed -s 2, -s 12 to -s 11)."""
    from dataclasses import replace

    from ..solvers.newton import fit_newton_objective
    from ..train import after_dual_cap
    from .objective import Placement, distributed_objective
    from .partitioned_cd import train_partitioned

    if params.spec.kind == "regression":
        label = weighted_C = None
    else:
        label = order_labels(dataset.class_labels_by_first_appearance())
        weighted_C = weighted_class_C(label, params, emit)
    results = train_partitioned(dataset, params, label, weighted_C,
                                params.resolved().partition_rule,
                                PARTITION_LOCAL_PASSES)
    placement = []

    def primal_fitter(k):
        def fit(primal, w0):
            if not placement:
                placement.append(Placement(dataset))
            objective, counts = distributed_objective(dataset, label, k, weighted_C, primal,
                                                      placement[0])
            try:
                return fit_newton_objective(objective, replace(primal, init_sol=None), w0,
                                            counts)
            finally:
                objective.loss_term.close()
        return fit

    results = [after_dual_cap(r, params, primal_fitter(k)) for k, r in enumerate(results)]
    for r in results:
        for line in r.log:
            emit(line)
    return assemble_model(params, dataset.n_features, label, results)


PARTITION_LOCAL_PASSES = 1


def is_map_reduce(params: Params) -> bool:
    """Newton/TRON solvers train on data spread over the workers (map-reduce); the CD
    solvers need each binary problem whole on one worker."""
    return params.spec.partitioned and params.spec.newton and not params.primal_cd


def _train_newton(dataset: Dataset, params: Params, emit) -> Model:
    """One Newton driver per binary problem, on client threads; each call of a driver is a
    map-reduce over the workers' blocks (dlinear.cluster.objective)."""
    from concurrent.futures import ThreadPoolExecutor

    from ..solvers.newton import fit_newton_objective
    from .objective import Placement, distributed_objective

    if params.spec.kind == "regression":
        label, weighted_C, ks = None, None, [0]
    else:
        label = order_labels(dataset.class_labels_by_first_appearance())
        weighted_C = weighted_class_C(label, params, emit)
        ks = list(range(n_binary_problems(len(label))))

    placement = Placement(dataset)
    if params.multinomial:
        results = [_fit_multinomial(placement, label, weighted_C, params)]
        for r in results:
            for line in r.log:
                emit(line)
        return assemble_model(params, dataset.n_features, label, results)
    if label is not None and classes_together_on_cluster(params, len(ks)):
        results = _fit_classes_together(placement, label, weighted_C, params)
        for r in results:
            for line in r.log:
                emit(line)
        return assemble_model(params, dataset.n_features, label, results)

    def fit(k):
        objective, counts = distributed_objective(dataset, label, k, weighted_C, params,
                                                  placement)
        try:
            return fit_newton_objective(objective, params, initial_w(params, k), counts)
        finally:
            objective.loss_term.close()

    with ThreadPoolExecutor(max_workers=min(len(ks), 8)) as pool:
        results = list(pool.map(fit, ks))
    for r in results:
        for line in r.log:
            emit(line)
    return assemble_model(params, dataset.n_features, label, results)


def classes_together_on_cluster(params: Params, n_problems: int) -> bool:
    """On a cluster the classes share every actor round (k-column Newton) unless
    Params.kcolumn is False: rounds, not passes, are what costs there."""
    return (params.spec.kcolumn and n_problems > 1
            and params.kcolumn is not False)


# the last k-column fit's round statistics (benchmarks read them)
last_fit_stats = {}


def _fit_classes_together(placement, label, weighted_C, params) -> list:
    """k-column Newton over the workers: one actor round serves every class's request."""
    from ..solvers.kcolumn import fit_newton_in_lockstep
    from .objective import TreeColumnsTerm
    params = params.resolved()
    term = TreeColumnsTerm(placement, label, weighted_C, params)
    try:
        counts = term.counts()
        w0s = [initial_w(params, k) for k in range(term.n_classes)]
        results, lockstep = fit_newton_in_lockstep(term.execute, term.n_variables, counts,
                                                   params, w0s)
        last_fit_stats.clear()
        last_fit_stats.update(mode="map-reduce", rounds=term.n_calls,
                              lockstep_rounds=lockstep.n_rounds,
                              bytes_to_workers=term.bytes_to_workers,
                              bytes_from_workers=term.bytes_from_workers,
                              workers=len(term.workers))
        return results
    finally:
        term.close()


def _fit_multinomial(placement, label, weighted_C, params):
    """Multinomial logistic regression map-reduced over the workers' rows."""
    from ..solvers.multinomial import fit_multinomial_objective
    from .objective import distributed_multinomial_objective
    params = params.resolved()
    objective, counts = distributed_multinomial_objective(placement.dataset, label,
                                                          weighted_C, params, placement)
    try:
        result = fit_multinomial_objective(objective, counts, params, params.init_sol)
        term = objective.loss_term
        last_fit_stats.clear()
        last_fit_stats.update(mode="map-reduce", rounds=term.n_calls,
                              bytes_to_workers=term.bytes_to_workers,
                              bytes_from_workers=term.bytes_from_workers,
                              workers=len(term.workers))
        return result
    finally:
        objective.loss_term.close()


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
