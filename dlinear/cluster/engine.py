"""Training and cross-validation as tasks on a Dask cluster.

The client chooses the mode (dlinear.planning.modes), plans the classes (dlinear.planning.class_plan: labels,
per-class C) or the folds, and assembles the model; the workers do the work. CD solvers
need all rows of a binary problem, so each worker gets one local copy of the data
(Dataset.local_copy) and every class or fold task sent to it runs on that copy. Class k
goes to worker k mod W; since each task's seed depends only on k, the model does not
depend on the number of workers. Tasks may move to another worker if theirs dies
(allow_other_workers): Dask then rebuilds the copy there.
"""
from __future__ import annotations

import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import numpy as np

from ..data.columns import (compact_rows, expand_rows, fits_on_occurring_columns,
                       worth_compacting)
from ..data.libsvm_reader import Problem
from ..errors import ConvergenceWarning, DlinearError
from ..model import Model
from ..planning.modes import Cluster, Data, Mode, choose
from ..planning.modes import copy_fits as copy_fits_on
from ..params import Params
from ..planning.class_plan import (assemble_model, initial_w, n_binary_problems, plan_classes,
                                   warm_start_columns)
from ..progress import progress_bar
from ..solvers import SharedColumns
from ..solvers.kcolumn import fit_newton_in_lockstep
from ..solvers.multinomial import fit_multinomial_objective
from ..solvers.newton import fit_newton_objective
from ..solvers.owlqn import fit_owlqn
from ..in_process.train import (after_dual_cap, cv_folds, fit_class, fit_class_group, run_cv_fold,
                     train_in_process)
from .dataset import Dataset
from .heap import heap_kept
from .objective import (TreeColumnsTerm, distributed_loss_term,
                        distributed_multinomial_objective, distributed_objective)
from ..in_process.spilled_block import spilled_dual_cd_solver
from .partitioned_cd import (SPILL_SHARE, train_partitioned, train_partitioned_crammer_singer,
                             train_partitioned_oneclass)
from .session import worker_addresses
from .tree import Placement


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
    from distributed import as_completed     # dask.distributed loads when a fit runs
    with progress_bar(len(futures), label) as bar:
        for future in as_completed(futures):
            bar.update()
            if future.status == "error":
                break               # gather raises it now, as it did without the bar
    return client.gather(futures)


def dataset_bytes(dataset: Dataset) -> int:
    """The CSR size of all parts (modes.Data.nbytes)."""
    return data_shape(dataset).nbytes


def data_shape(dataset: Dataset) -> Data:
    """The shape the mode chooser reads: rows, nonzeros, and the binary problems (from
    the labels the parts saw, asked only where a rule needs them)."""
    return Data(dataset.n_samples, dataset.nnz, n_problems=lambda: n_binary_problems(
        len(dataset.class_labels_by_first_appearance())))


def smallest_worker_memory(client) -> int:
    """The smallest memory limit of the workers (0: none of them has one)."""
    limits = [info.get("memory_limit") or 0
              for info in client.scheduler_info(n_workers=-1)["workers"].values()]
    limits = [m for m in limits if m > 0]
    return min(limits) if limits else 0


def check_shares_fit(dataset: Dataset, params: Params) -> None:
    """The partitioned dual CD of -s 1 and -s 3 keeps a worker's share on the worker's
    disk where it exceeds what the memory limit leaves (partitioned_cd.SPILL_SHARE).
    The other partitioned solvers keep each worker's parts in memory (its actor holds
    them: Dask cannot spill them), so a worker whose share exceeds its memory limit would
    be paused or killed round after round. Say so at once, with both sizes and what
    trains such data (the map-reduced solvers read one part at a time, and Dask spills
    the others)."""
    if spilled_dual_cd_solver(params.spec):
        return
    client = dataset.client
    limit = smallest_worker_memory(client)
    if limit <= 0:
        return
    keys = [part.key for part in dataset.parts]
    nbytes = client.nbytes(keys, summary=False)
    shares: dict = {}
    for key, holders in client.who_has(dataset.parts).items():
        for worker in holders[:1]:
            shares[worker] = shares.get(worker, 0) + nbytes.get(key, 0)
    needed = max(shares.values(), default=0)
    if needed > limit:
        raise DlinearError(
            f"partitioned -s {params.solver_type} keeps each worker's share of the data in "
            f"memory: it needs about {needed / 2**20:.1f} MiB on each worker (of "
            f"{sum(nbytes.values()) / 2**20:.1f} MiB in all), but a worker's memory limit is "
            f"{limit / 2**20:.1f} MiB; use more workers or more memory per worker, or "
            "-s 1 or 3, whose workers keep their share on their local disks, or -s 0, 2 "
            "or 11, whose map-reduced Newton lets Dask spill")


def cluster_shape(client) -> Cluster:
    return Cluster(workers=len(_workers(client)), memory=smallest_worker_memory(client))


def choose_mode(dataset: Dataset, params: Params, solver_named: bool = True):
    """modes.choose for `dataset` on its cluster."""
    return choose(params, data_shape(dataset), cluster_shape(dataset.client),
                  solver_named=solver_named)


def copy_fits(dataset: Dataset) -> bool:
    """modes.copy_fits for `dataset` on its cluster."""
    return copy_fits_on(data_shape(dataset), cluster_shape(dataset.client))


def choose_partitioned(dataset: Dataset, params: Params) -> bool:
    """Whether the CD solvers train partitioned (each worker solves its own rows)."""
    return choose_mode(dataset, params).mode is Mode.PARTITIONED_DUAL_CD


def training_mode(data, params: Params, solver_named: bool = True):
    """(params with `partition` decided, the line saying how the cluster will train):
    modes.choose and its Choice.describe(), for the CLI."""
    choice = choose_mode(as_dataset(data, None), params, solver_named)
    return choice.params, choice.describe()


def train_on_cluster(data, params: Params, client=None, log=None, *,
                     compact: bool = True) -> Model:
    """Train on a Dask cluster, in the mode chosen for the data and solver.

    :func:`dlinear.train` calls this for a Dataset or Dask collection; it takes the
    parameters as they are (``params.partition`` chooses the mode as ``partition`` of
    :func:`dlinear.train` does).

    Parameters
    ----------
    data : Dataset or Problem
        A Problem is scattered to the cluster of ``client`` first.
    params : Params
        Resolved parameters (``Params.resolved()``: eps filled in).
    client : distributed.Client, optional
        Needed for a Problem.
    log : callable, optional
        Receives the progress lines.
    compact : bool, default True
        Newton map-reduced over the parts, and the partitioned dual CD, run on the
        columns that occur, each worker holding and exchanging its own only
        (dlinear.data.columns; the same model, bit for bit).

    Returns
    -------
    Model
        Its ``fit_stats`` say how the fit ran (mode, class groups or actor rounds and
        their traffic, workers).

    Raises
    ------
    DlinearError
        For data the solver cannot take, or no client for a Problem.
    """
    dataset = as_dataset(data, client)
    emit = log or (lambda line: None)
    if params.init_sol is not None:
        params = _warm_start_weights(dataset, params)
    choice = choose_mode(dataset, params)
    mode = choice.mode
    if choice.primal_cd_replaced:
        params = choice.params
    if mode is Mode.WHOLE_ON_WORKER:
        model = _train_whole_on_worker(dataset, params, emit)
    elif mode is Mode.CLASSES_ON_COPIES:
        model = _train_classes_on_copies(dataset, params, emit)
    elif mode is Mode.NEWTON_GROUPS_ON_COPIES:
        model = _train_newton_groups_on_copies(dataset, params, emit)
    elif mode is Mode.PARTITIONED_DUAL_CD:
        model = _train_partitioned(dataset, params, emit, compact)
    else:
        model = _train_map_reduced(dataset, params, mode, emit, compact)
    return model


def _warm_start_weights(dataset: Dataset, params: Params) -> Params:
    """params with init_sol (a Model, or weights shaped like Model.w) as the weights
    (w_size, binary problems) in the order this fit plans its classes, checked against
    the data as in process (class_plan.warm_start_columns): every mode then starts its
    problem k from column k (class_plan.initial_w)."""
    label = _plan(dataset, params, lambda line: None).label
    return replace(params, init_sol=warm_start_columns(params.init_sol, dataset.n_features,
                                                       label, params))


def _plan(dataset: Dataset, params: Params, emit):
    return plan_classes(params, dataset.class_labels_by_first_appearance, emit)


def _train_whole(problem: Problem, params: Params):
    """The whole problem in process on a worker's copy, on one thread: the model, its log
    lines and the texts of the ConvergenceWarnings raised (on the worker, unseen there)."""
    lines = []
    with heap_kept(), warnings.catch_warnings(record=True) as raised:
        warnings.simplefilter("always", ConvergenceWarning)
        model = train_in_process(problem, params, log=lines.append, n_threads=1)
    return model, lines, [str(w.message) for w in raised
                          if issubclass(w.category, ConvergenceWarning)]


def _train_whole_on_worker(dataset: Dataset, params: Params, emit) -> Model:
    """A problem that is not split by class (regression, one-class, Crammer-Singer,
    multinomial, binary), whole on the first worker's copy of the data."""
    worker = _worker_slots(dataset.client)[0]
    model, lines, raised = dataset.client.submit(_train_whole, dataset.local_copy(worker), params,
                                         workers=[worker], allow_other_workers=True,
                                         pure=False).result()
    for line in lines:
        emit(line)
    for message in raised:                  # raised on the worker, unseen here
        warnings.warn(message, ConvergenceWarning, stacklevel=4)
    model.fit_stats = dict(mode="copy", groups=[1], workers=1)
    return model


def _fit_class_without_duals(problem: Problem, label, k, weighted_C, params: Params,
                             columns: SharedColumns = None):
    """fit_class on a worker, returning w without the dual variables: nothing asks for
    them after a fit, and they are a float per row and class. `columns` is the worker's
    holder of X by columns, shared by its class tasks."""
    return replace(fit_class(problem, label, k, weighted_C, params, columns), alpha=None)


def _train_classes_on_copies(dataset: Dataset, params: Params, emit) -> Model:
    """The CD solvers' copy mode: class k on worker k mod W, on its copy of the data."""
    client = dataset.client
    workers = _workers(client)
    label, weighted_C = _plan(dataset, params, emit)
    futures = []
    # one holder of X by columns per worker (filled by the first class task of a solver
    # that walks features: -s 5, -s 6, --primal-cd), so each data copy is transposed once
    # for all its classes, as in process; it goes when this training's futures go
    columns = {}
    for k in range(n_binary_problems(len(label))):
        worker = workers[k % len(workers)]
        options = dict(workers=[worker], allow_other_workers=True, pure=False)
        if worker not in columns:
            columns[worker] = client.submit(SharedColumns, **options)
        futures.append(client.submit(_fit_class_without_duals, dataset.local_copy(worker),
                                     label, k, weighted_C, params, columns[worker],
                                     **options))
    results = _gather(client, futures, "classes")
    model = assemble_model(params, dataset.n_features, label, results, emit)
    model.fit_stats = dict(mode="copy", groups=[1] * len(results),
                           workers=len(set(columns)))
    return model


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
    with heap_kept():
        results = fit_class_group(problem, label, ks, weighted_C, params)
    return [replace(r, alpha=None) for r in results]


def _train_newton_groups_on_copies(dataset: Dataset, params: Params, emit) -> Model:
    """Newton's copy mode for one-vs-rest: the classes split into groups, class k in group
    k mod G, G = min(#classes, worker threads); each group one task on its worker's copy
    of the data (Dataset.local_copy), fit as in process on one thread
    (dlinear.in_process.train.fit_class_group: one k-column Newton fit, or a driver per class). No
    message between the Newton rounds: the task returns the group's weights. The models
    are those of train_in_process (k-column Newton is bit-identical to the per-class
    drivers). Tasks may move to another worker if theirs dies (allow_other_workers), Dask
    rebuilding the copy there."""
    client = dataset.client
    slots = _worker_slots(client)
    label, weighted_C = _plan(dataset, params, emit)
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
    model = assemble_model(params, dataset.n_features, label, results, emit)
    model.fit_stats = dict(mode="copy", groups=[len(g) for g in groups],
                           workers=len(set(slots[:n_groups])))
    return model


def _train_partitioned(dataset: Dataset, params: Params, emit, compact: bool = True
                       ) -> Model:
    """-s 1, 3, 4, 7, 12, 13, 21 by partitioned dual CD (dlinear.cluster.partitioned_cd): all
    classes in each round, on the workers' own columns with `compact`; at the round cap,
    LIBLINEAR's warning and switch (-s 1 to the distributed -s 2, -s 12 to -s 11, on the
    occurring columns too)."""
    check_shares_fit(dataset, params)
    label, weighted_C = _plan(dataset, params, emit)
    columns, _ = _on_occurring_columns(dataset, params, Mode.PARTITIONED_DUAL_CD, label,
                                       compact)
    if params.spec.all_classes or params.spec.kind == "oneclass":
        rule = params.resolved().partition_rule
        result = (train_partitioned_crammer_singer(dataset, params, label, weighted_C, rule,
                                                   PARTITION_LOCAL_PASSES, columns=columns)
                  if params.spec.all_classes else
                  train_partitioned_oneclass(dataset, params, rule, PARTITION_LOCAL_PASSES,
                                             columns=columns))
        model = assemble_model(params, dataset.n_features, label, [result], emit)
        model.fit_stats = dict(mode="partitioned", workers=len(_workers(dataset.client)))
        return model
    fit_stats = {}
    results = train_partitioned(dataset, params, label, weighted_C,
                                params.resolved().partition_rule,
                                PARTITION_LOCAL_PASSES, columns=columns, fit_stats=fit_stats)
    if fit_stats["spilled_workers"]:
        emit(f"{fit_stats['spilled_workers']} of {len(_workers(dataset.client))} workers "
             "keep their share of the data on their local disks (a share over "
             f"{SPILL_SHARE:.0%} of a worker's memory limit)")
    placement = []

    def primal_fitter(k):
        def fit(primal, w0):
            if not placement:
                placement.append(Placement(dataset))
            on, fit_params = _on_occurring_columns(dataset, replace(primal, init_sol=w0),
                                                   Mode.NEWTON_MAP_REDUCED, label, compact)
            objective, counts = distributed_objective(dataset, label, k, weighted_C,
                                                      fit_params, placement[0], on)
            try:
                result = fit_newton_objective(objective, replace(fit_params, init_sol=None),
                                              fit_params.init_sol, counts)
            finally:
                objective.loss_term.close()
            if on is None:
                return result
            return replace(result, w=expand_rows(result.w, on, dataset.n_features,
                                                 params.bias))
        return fit

    results = [after_dual_cap(r, params, primal_fitter(k)) for k, r in enumerate(results)]
    model = assemble_model(params, dataset.n_features, label, results, emit)
    model.fit_stats = dict(mode="partitioned", workers=len(_workers(dataset.client)),
                           **fit_stats)
    return model


PARTITION_LOCAL_PASSES = 1


def _train_map_reduced(dataset: Dataset, params: Params, mode: Mode, emit,
                       compact: bool = True) -> Model:
    """The Newton solvers over the workers' parts: each call of a driver a map-reduce
    over the workers' blocks (dlinear.cluster.objective). Multinomial: one softmax
    driver; k-column: one actor round serves every class's request; else one driver per
    binary problem, on client threads."""
    label, weighted_C = _plan(dataset, params, emit)
    placement = Placement(dataset)
    columns, fit_params = _on_occurring_columns(dataset, params, mode, label, compact)
    if mode is Mode.MULTINOMIAL_MAP_REDUCED:
        results, stats = _fit_multinomial(placement, label, weighted_C, fit_params, columns)
    elif mode is Mode.L1_MAP_REDUCED:
        results, stats = _fit_l1_map_reduced(placement, label, weighted_C, fit_params,
                                             columns)
    elif mode is Mode.KCOLUMN_MAP_REDUCED:
        results, stats = _fit_kcolumn_map_reduced(placement, label, weighted_C, fit_params,
                                                  columns)
    else:
        results, stats = _fit_per_problem_map_reduced(placement, label, weighted_C,
                                                      fit_params, columns)
    if columns is not None:
        results = [replace(r, w=expand_rows(r.w, columns, dataset.n_features, params.bias))
                   for r in results]
        stats["occurring_columns"] = len(columns)
    model = assemble_model(params, dataset.n_features, label, results, emit)
    model.fit_stats = stats
    return model


def _on_occurring_columns(dataset: Dataset, params: Params, mode: Mode, label,
                          compact: bool):
    """(the dataset's occurring columns, the params of the fit on them) when the fit runs
    on those (dlinear.data.columns: the same model, bit for bit, as on all columns; where few
    enough occur, columns.worth_compacting); else (None, params). The fit keeps the CG cap of all the columns, and a warm start
    is taken to the columns that occur (on all columns where it is nonzero on another)."""
    # OWL-QN walks no columns: a column that never occurs keeps a zero gradient and
    # weight, so its fit on the occurring columns is the same
    if not (compact and (mode is Mode.L1_MAP_REDUCED or fits_on_occurring_columns(params))):
        return None, params
    used = dataset.occurring_columns()
    if not worth_compacting(len(used), dataset.n_features):
        return None, params
    changes = {}
    if params.init_sol is not None:
        changes["init_sol"] = compact_rows(params.init_sol, used, dataset.n_features,
                                           params.bias)
        if changes["init_sol"] is None:
            return None, params
    w_size = dataset.n_features + (1 if params.bias >= 0 else 0)
    changes["cg_cap_weights"] = w_size * (len(label) if mode is Mode.MULTINOMIAL_MAP_REDUCED
                                          else 1)
    return used, replace(params, **changes)


def _fit_per_problem_map_reduced(placement, label, weighted_C, params, columns=None):
    """One Newton driver per binary problem (or the regression problem), on client
    threads: (results, fit statistics)."""
    dataset = placement.dataset
    ks = list(range(1 if label is None else n_binary_problems(len(label))))
    traffic = []

    def fit(k):
        objective, counts = distributed_objective(dataset, label, k, weighted_C, params,
                                                  placement, columns)
        try:
            result = fit_newton_objective(objective, params, initial_w(params, k), counts)
            traffic.append(_traffic(objective.loss_term))
            return result
        finally:
            objective.loss_term.close()

    with ThreadPoolExecutor(max_workers=min(len(ks), 8)) as pool:
        results = list(pool.map(fit, ks))
    stats = dict(mode="map-reduce", workers=len(placement.by_worker))
    for key in ("rounds", "bytes_to_workers", "bytes_from_workers", "busy_seconds"):
        stats[key] = sum(t[key] for t in traffic)
    return results, stats


def _fit_l1_map_reduced(placement, label, weighted_C, params, columns=None):
    """-s 5 and -s 6 (and the elastic net) by OWL-QN (dlinear.solvers.owlqn), one driver
    per binary problem on client threads, each evaluation one round of the loss and its
    gradient over the workers' parts: (results, fit statistics)."""
    dataset = placement.dataset
    ks = list(range(n_binary_problems(len(label))))
    w_size = dataset.n_features + (1 if params.bias >= 0 else 0)
    unreg_bias = (not params.regularize_bias) and params.bias >= 0
    traffic = []

    def fit(k):
        term, counts = distributed_loss_term(dataset, label, k, weighted_C, params,
                                             placement, columns)
        try:
            result = fit_owlqn(term.loss_gradient, term.n_variables, counts, params,
                               unreg_bias, reported_w_size=w_size, w0=initial_w(params, k),
                               support_rounds=term)
            traffic.append(dict(_traffic(term), support_rounds=term.support_rounds,
                                support_bytes=term.support_bytes))
            return result
        finally:
            term.close()

    with ThreadPoolExecutor(max_workers=min(len(ks), 8)) as pool:
        results = list(pool.map(fit, ks))
    stats = dict(mode="map-reduce", method="owlqn", workers=len(placement.by_worker))
    for key in ("rounds", "bytes_to_workers", "bytes_from_workers", "busy_seconds",
                "support_rounds", "support_bytes"):
        stats[key] = sum(t[key] for t in traffic)
    return results, stats


def _traffic(term) -> dict:
    """The rounds of a tree, their bytes through the client, and the seconds its actors
    computed (summed over them)."""
    return dict(mode="map-reduce", rounds=term.n_calls,
                bytes_to_workers=term.bytes_to_workers,
                bytes_from_workers=term.bytes_from_workers, workers=len(term.workers),
                busy_seconds=term.stats()[2])


def _fit_kcolumn_map_reduced(placement, label, weighted_C, params, columns=None):
    """k-column Newton over the workers: one actor round serves every class's request.
    (results, fit statistics)."""
    params = params.resolved()
    term = TreeColumnsTerm(placement, label, weighted_C, params, columns)
    try:
        counts = term.counts()
        w0s = [initial_w(params, k) for k in range(term.n_classes)]
        results, lockstep = fit_newton_in_lockstep(term.execute, term.n_variables, counts,
                                                params, w0s)
        return results, dict(_traffic(term), lockstep_rounds=lockstep.n_rounds)
    finally:
        term.close()


def _fit_multinomial(placement, label, weighted_C, params, columns=None):
    """Multinomial logistic regression map-reduced over the workers' rows: ([result],
    fit statistics)."""
    params = params.resolved()
    objective, counts = distributed_multinomial_objective(placement.dataset, label,
                                                          weighted_C, params, placement,
                                                          columns)
    try:
        result = fit_multinomial_objective(objective, counts, params, params.init_sol)
        return [result], _traffic(objective.loss_term)
    finally:
        objective.loss_term.close()


def cross_validation_on_cluster(data, params: Params, nr_fold: int, client=None,
                                log=None) -> np.ndarray:
    """Cross validation on a Dask cluster, one task per fold on a copy per worker.

    Parameters
    ----------
    data : Dataset or Problem
        As for :func:`train_on_cluster`.
    params : Params
        Resolved parameters.
    nr_fold : int
        The number of folds (LIBLINEAR's folds, seeded by ``params.seed``).
    client : distributed.Client, optional
        Needed for a Problem.
    log : callable, optional
        Receives the progress lines.

    Returns
    -------
    numpy.ndarray of shape (l,)
        The predicted label (or value) of every row.
    """
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
    for held, predicted, lines in _gather(client, futures, "CV folds"):
        target[held] = predicted
        for line in lines:
            emit(line)
    return target
