"""How a fit runs: one chooser for dlinear.train, the cluster engine and dlinear-train.

choose(params, data, cluster) decides the Mode from the parameters, the data's shape
(rows, nonzeros, columns, bytes, binary problems) and the cluster's (workers, smallest
memory limit), each given explicitly. Whether dlinear-train starts a local cluster for a
Newton training is predicted by dlinear.planning.cost_model. Choice.describe() is the line the CLI
prints on stderr.

The data's shape may be partly unknown (the CLI decides where to train before reading the
file); the chooser then only picks the backend (Mode.IN_PROCESS or Mode.CLUSTER) and is
asked again once the data and the cluster are there.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import Callable, Optional, Union

from .cost_model import TEXT_BYTES_PER_S, Estimate, Workload, estimate
from ..errors import DlinearError
from ..params import Params
from ..solver_table import SOLVERS, solvers_text


class Mode(enum.Enum):
    # the backend only: the data (or the cluster) is not there yet
    IN_PROCESS = "in this process"
    CLUSTER = "on a Dask cluster"
    # in this process (dlinear.train)
    ONE_PROBLEM = "one problem (regression, one-class)"
    MULTINOMIAL = "multinomial, its passes on threads"
    ALL_CLASSES = "all classes in one problem (Crammer-Singer)"
    KCOLUMN = "k-column Newton: the classes share each pass, split over threads"
    CLASSES_ON_THREADS = "one binary problem per class, on threads"
    # on a running cluster (dlinear.cluster.engine)
    WHOLE_ON_WORKER = "the whole problem on one worker's copy"
    CLASSES_ON_COPIES = "class tasks on a copy of the data per worker"
    NEWTON_GROUPS_ON_COPIES = "Newton class groups on a copy of the data per worker"
    NEWTON_MAP_REDUCED = "a Newton driver per problem, map-reduced over the parts"
    KCOLUMN_MAP_REDUCED = "k-column Newton map-reduced over the parts"
    MULTINOMIAL_MAP_REDUCED = "multinomial Newton map-reduced over the parts"
    PARTITIONED_DUAL_CD = "partitioned dual CD on each worker's own rows"
    L1_MAP_REDUCED = "OWL-QN per problem, its loss and gradient map-reduced over the parts"

    @property
    def in_process(self) -> bool:
        return self in IN_PROCESS_MODES


IN_PROCESS_MODES = frozenset({Mode.IN_PROCESS, Mode.ONE_PROBLEM, Mode.MULTINOMIAL,
                              Mode.ALL_CLASSES, Mode.KCOLUMN, Mode.CLASSES_ON_THREADS})
MAP_REDUCED_MODES = frozenset({Mode.NEWTON_MAP_REDUCED, Mode.KCOLUMN_MAP_REDUCED,
                               Mode.MULTINOMIAL_MAP_REDUCED, Mode.L1_MAP_REDUCED})


@dataclass(frozen=True)
class Data:
    """The shape of a training set, as far as it is known. n_problems: the number of
    binary problems, or a function computing it (called only when a rule needs it, for
    classification only: a regression set has no class labels)."""
    n_samples: Optional[int] = None
    nnz: Optional[int] = None
    file_bytes: Optional[int] = None      # the training file, before it is read
    n_problems: Union[int, Callable[[], int], None] = None
    n_features: Optional[int] = None
    occurring_columns: Optional[int] = None
    columns_growth: Optional[float] = None    # cost_model.Workload's
    read_s: Optional[float] = None        # reading it in this process (one core)
    estimated: bool = False               # rows and nonzeros scaled from a sample
    value_bytes: Optional[int] = None     # as stored (a binary dataset's header); None: 8
    index_bytes: Optional[int] = None     # None: 4

    @property
    def nbytes(self) -> int:
        """The CSR size: a value and a column index a non-zero (12 bytes unless stored
        narrower), 16 a row (row pointer, label)."""
        return int(((self.value_bytes or 8) + (self.index_bytes or 4)) * self.nnz
                   + 16 * self.n_samples)

    @property
    def nnz_per_row(self) -> float:
        return self.nnz / max(1, self.n_samples)

    def problems(self) -> int:
        return self.n_problems() if callable(self.n_problems) else int(self.n_problems)


@dataclass(frozen=True)
class Cluster:
    """A Dask cluster: its workers and their smallest memory limit in bytes (0: none has
    one). running False: not started yet; `asked` False means dlinear may start a local
    one, where it was measured faster (dlinear-train without --workers or --scheduler)."""
    workers: int = 0
    memory: int = 0
    running: bool = True
    asked: bool = True


# The default backend of dlinear-train (BENCHMARKS.md, "Default backend"): a local cluster
# pays for starting worker processes and, for the CD solvers, a whole copy of the data on
# each worker, while in this process one-vs-rest classes and CV folds already run on one
# thread per core. Only a Newton training (-s 0, 2, 11: map-reduce over the workers' rows)
# may be faster there: dlinear.planning.cost_model predicts both (BENCHMARKS.md, "The default
# backend by a cost model").

# A worker trains on a copy only if the copy takes at most this share of its memory limit
# (the rest: Dask's own, the parts it already holds, the solver's state).
COPY_MEMORY_SHARE = 0.5

# In process, k-column Newton replaces one driver per class for -s 0 when each thread
# carries at least this many classes and the rows have at least this many nonzeros
# (measured on one core, BENCHMARKS.md "Multi-class Newton": faster from k = 8 at 70 and
# 300 nonzeros per row; slower at 10 nonzeros per row, where the per-row work of k columns
# is not repaid by a shorter pass, and no faster at k = 4).
KCOLUMN_MIN_CLASSES_PER_THREAD = 8
KCOLUMN_MIN_NNZ_PER_ROW = 50


def is_map_reduce(params: Params) -> bool:
    """Newton/TRON solvers train on data spread over the workers (map-reduce); the CD
    solvers need each binary problem whole on one worker."""
    return params.spec.partitioned and params.spec.newton and not params.primal_cd


def check_partitioned(params: Params):
    if not params.spec.partitioned_dual_cd:
        raise DlinearError(f"-s {params.solver_type} does not train partitioned (only "
                           f"{solvers_text(lambda s: s.partitioned_dual_cd)})")


def use_kcolumn(params: Params, n_problems: int, nnz_per_row: float,
                n_threads: int = 1) -> bool:
    """Whether the one-vs-rest problems of a Newton solver (-s 0, -s 2) share their passes
    over the data (k-column Newton) rather than run one driver each, in one process.

    Params(kcolumn=True / False) decides. By default (None), by measurement: -s 0 with at
    least KCOLUMN_MIN_CLASSES_PER_THREAD classes per thread (the classes are split over
    the n_threads threads, each group a k-column fit of its own) and at least
    KCOLUMN_MIN_NNZ_PER_ROW nonzeros per row. -s 2 stays per class: a row has curvature
    only in the classes whose margin it violates, so a k-column pass fetches a whole row
    of S for the few columns it uses, and one driver per class visiting only its own rows
    was as fast or faster (BENCHMARKS.md, "Multi-class Newton")."""
    if not params.spec.kcolumn or params.primal_cd or n_problems <= 1:
        return False
    if params.kcolumn is not None:
        return bool(params.kcolumn)
    return (params.spec.loss == "logistic_regression"
            and n_problems >= KCOLUMN_MIN_CLASSES_PER_THREAD * max(1, n_threads)
            and nnz_per_row >= KCOLUMN_MIN_NNZ_PER_ROW)


def use_kcolumn_on_cluster(params: Params, n_problems: int) -> bool:
    """On a cluster the classes share every actor round (k-column Newton) unless
    Params.kcolumn is False: rounds, not passes, are what costs there."""
    return (params.spec.kcolumn and n_problems > 1
            and params.kcolumn is not False)


def copy_fits(data: Data, cluster: Cluster) -> bool:
    """Whether a copy of the data fits one worker: it takes at most COPY_MEMORY_SHARE of
    the smallest worker memory limit (always, when no worker has a limit). The one memory
    rule of both cluster modes: the CD solvers' copy / partitioned, and Newton's copy /
    map-reduced."""
    return cluster.memory <= 0 or data.nbytes <= COPY_MEMORY_SHARE * cluster.memory


@dataclass(frozen=True)
class Choice:
    """A decided Mode; `params` with `partition` decided on a running cluster (and the
    primal fallback, -s 2, of the CLI's default -s 1 when that would train partitioned:
    default_replaced is then the default's -s; -s 2 --primal-cd that would train
    partitioned becomes map-reduced Newton: primal_cd_replaced True)."""
    mode: Mode
    params: Params
    workers: int = 0
    default_replaced: Optional[int] = None
    primal_cd_replaced: bool = False
    reason: Optional[Estimate] = None     # the backend's, when it was predicted

    def describe(self) -> str:
        """One line: how and where the fit runs (and why, when the cost model chose)."""
        p, n = self.params, self.workers
        s = f"-s {p.solver_type}"
        why = f" ({self.reason.describe()})" if self.reason is not None else ""
        if self.mode is Mode.IN_PROCESS:
            return "training in this process" + why
        if self.mode is Mode.CLUSTER:
            return (f"training on a local cluster of {n} workers" if n else
                    "training on a Dask cluster") + why
        if self.mode.in_process:
            return f"{s} in this process: {self.mode.value}{why}"
        if self.default_replaced is not None:
            d = self.default_replaced
            return (f"{s} (the primal of the default -s {d}: the same model) map-reduced "
                    f"over the parts on {n} worker(s): the data does not fit one "
                    f"worker, where -s {d} would train partitioned dual CD, which is slower "
                    f"(BENCHMARKS.md, \"Partitioned dual CD\")")
        if self.primal_cd_replaced:
            return (f"{s} --primal-cd walks columns, which needs every row on one worker: "
                    f"training {s} by Newton map-reduced over the parts on {n} worker(s) "
                    "instead (the same optimum)")
        if self.mode is Mode.L1_MAP_REDUCED:
            return (f"{s} map-reduced over the parts on {n} worker(s) by OWL-QN (the "
                    "optimum of the in-process solver, LIBLINEAR's stopping rule)")
        if self.mode in MAP_REDUCED_MODES:
            return f"{s} map-reduced over the parts on {n} worker(s)"
        if self.mode is Mode.PARTITIONED_DUAL_CD:
            method = ("Crammer-Singer's sequential dual CD on each worker's own rows, "
                      "their k-column steps of W combined" if p.spec.all_classes else
                      "one-class dual CD on each worker's own rows, each keeping its share "
                      "of sum(alpha), mass moved between workers by the max-violating pair"
                      if p.spec.kind == "oneclass" else "dual CD on each worker's own rows")
            return f"{s} partitioned: {method} ({n} worker(s), rule {p.partition_rule})"
        if is_map_reduce(p):        # Newton on copies, its classes in groups
            return (f"{s} on a copy of the data per worker ({n} worker(s)), the "
                    "one-vs-rest classes in groups, one per worker thread, no messages "
                    "between Newton rounds")
        return f"{s} on a copy of the data per worker ({n} worker(s))"


def choose(params: Params, data: Data, cluster: Optional[Cluster] = None, *,
           n_threads: int = 1, job: str = "train", solver_named: bool = True) -> Choice:
    """The mode of a fit of `params` on `data`: in this process (cluster None) on
    n_threads threads, or on `cluster`. job: "train", or "cv" / "search" (their folds
    are tasks of their own: only a training goes to a cluster by the size rule).
    solver_named False (dlinear-train without -s): the default -s 1 that would train
    partitioned is replaced by the distributed -s 2, the same optimum measured several
    times faster on 2 workers (BENCHMARKS.md, "Partitioned dual CD");
    an explicit -s 1 or --partition keeps the dual."""
    named = params
    params = params.resolved()
    if cluster is not None and not cluster.running:
        if cluster.asked:
            return Choice(Mode.CLUSTER, params)
        predicted = None
        if is_map_reduce(params) and job == "train":
            predicted = newton_estimate(params, data, cluster.workers or n_threads, n_threads)
            if predicted is not None and predicted.cluster_pays:
                return Choice(Mode.CLUSTER, params, predicted.workers, reason=predicted)
        return Choice(Mode.IN_PROCESS, params, reason=predicted)
    if cluster is None:
        return Choice(_in_process_mode(params, data, n_threads), params)

    classification = params.spec.kind == "classification"
    if params.primal_cd and _over_one_worker(params, data, cluster):
        newton = choose(replace(named, primal_cd=False, online=False, max_updates=0,
                                partition=True), data, cluster)
        return replace(newton, primal_cd_replaced=True)
    if params.spec.partitioned_owlqn and _over_one_worker(params, data, cluster):
        return Choice(Mode.L1_MAP_REDUCED, replace(params, partition=True), cluster.workers)
    if is_map_reduce(params):
        if params.partition is not None:
            copies = not params.partition
        else:
            copies = (classification and not params.multinomial and data.problems() > 1
                      and copy_fits(data, cluster))
        params = replace(params, partition=not copies)
        if copies:
            one = not classification or params.multinomial or data.problems() == 1
            mode = Mode.WHOLE_ON_WORKER if one else Mode.NEWTON_GROUPS_ON_COPIES
        elif params.multinomial:
            mode = Mode.MULTINOMIAL_MAP_REDUCED
        elif classification and use_kcolumn_on_cluster(params, data.problems()):
            mode = Mode.KCOLUMN_MAP_REDUCED
        else:
            mode = Mode.NEWTON_MAP_REDUCED
        return Choice(mode, params, cluster.workers)

    partitioned = _partitioned(params, data, cluster)
    fallback = params.spec.fallback
    if (partitioned and not solver_named and named.partition is None
            and fallback is not None and SOLVERS[fallback].newton):
        primal = choose(replace(named, solver_type=fallback), data, cluster)
        return replace(primal, default_replaced=params.solver_type)
    if not partitioned and params.partition is None and not copy_fits(data, cluster):
        raise DlinearError(_no_partitioned_method(params, data, cluster))
    params = replace(params, partition=partitioned)
    if partitioned:
        mode = Mode.PARTITIONED_DUAL_CD
    elif not classification or params.spec.all_classes:
        mode = Mode.WHOLE_ON_WORKER
    else:
        mode = Mode.CLASSES_ON_COPIES
    return Choice(mode, params, cluster.workers)


def _over_one_worker(params: Params, data: Data, cluster: Cluster) -> bool:
    """Whether a fit trains on the partitioned rows: when asked (params.partition), by
    default when a copy of the data does not fit one worker (copy_fits)."""
    if params.partition is not None:
        return bool(params.partition)
    return not copy_fits(data, cluster)


def _no_partitioned_method(params: Params, data: Data, cluster: Cluster) -> str:
    """The one line of a solver with no method on partitioned rows, whose data a worker
    cannot hold a copy of: said before any copy is made (which would kill the workers one
    after another)."""
    variant = (" --cd-block 2" if params.cd_block == 2 else
               " --online" if params.online else "")
    return (f"-s {params.solver_type}{variant} needs a copy of the data on one worker "
            f"(it has no method on partitioned rows), but the data ({data.nbytes / 2**20:.1f}"
            f" MiB) is more than {COPY_MEMORY_SHARE:.0%} of a worker's memory limit "
            f"({cluster.memory / 2**20:.1f} MiB); give the workers more memory, or train "
            "in this process")


def newton_estimate(params: Params, data: Data, workers: int, n_threads: int
                    ) -> Optional[Estimate]:
    """The cost model's seconds of a Newton training of `data` in this process (on
    n_threads) and on a local cluster of `workers`; None while its shape is unknown."""
    if data.n_samples is None or data.nnz is None or data.n_features is None:
        return None
    problems = data.problems() if (params.spec.kind == "classification"
                                   and data.n_problems is not None) else 1
    workload = Workload(
        data.n_samples, data.nnz, data.n_features, problems=problems,
        occurring_columns=data.occurring_columns, columns_growth=data.columns_growth,
        read_s=data.read_s if data.read_s is not None
        else (data.file_bytes or 0) / TEXT_BYTES_PER_S, text_bytes=data.file_bytes or 0)
    return estimate(workload, workers, n_threads)


def _in_process_mode(params: Params, data: Data, n_threads: int) -> Mode:
    spec = params.spec
    if data.n_samples is None:
        return Mode.IN_PROCESS
    if spec.kind in ("regression", "oneclass"):
        return Mode.ONE_PROBLEM
    if params.multinomial:
        return Mode.MULTINOMIAL
    if spec.all_classes:
        return Mode.ALL_CLASSES
    if use_kcolumn(params, data.problems(), data.nnz_per_row, n_threads):
        return Mode.KCOLUMN
    return Mode.CLASSES_ON_THREADS


def _partitioned(params: Params, data: Data, cluster: Cluster) -> bool:
    """Whether the CD solvers train partitioned (each worker solves its own rows; -s 1,
    3, 7, 12, 13): when asked (params.partition True), or, by default (None), when a copy
    of the data would take more than COPY_MEMORY_SHARE of the smallest worker memory
    limit."""
    if params.partition is not None:
        if params.partition:
            check_partitioned(params)
        return bool(params.partition)
    if not params.spec.partitioned_dual_cd or params.cd_block != 1 or params.online:
        return False
    return not copy_fits(data, cluster)
