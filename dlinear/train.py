"""Training in this process: class grouping, per-class C, binary / one-vs-rest dispatch.

train_in_process(problem, params) -> Model. The public dlinear.train (dlinear.api) calls
it for a Problem, and the cluster engine calls it on its workers.

This is LIBLINEAR's train() and train_one(): labels in order of first appearance (a binary
-1/+1 set whose first label is -1 is swapped so +1 is the positive class), -wi weights on
C, one binary problem per class for k > 2 (positive: that class with its weighted C;
negative: the rest with the plain C), and the dual solvers' iteration cap with LIBLINEAR's
warning (and switch to the primal solver where LIBLINEAR switches).
"""
from __future__ import annotations

import os
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Callable, Optional

import numpy as np

from .data import Problem
from .errors import ConvergenceWarning, DataError, DlinearError
from .model import Model, nr_w_of
from .params import Params, check_parameter, class_C
from .predict import predict
from .progress import progress_bar
from .solver_table import SOLVERS
from .solvers import FitResult, SharedColumns, SubProblem, fit_all_classes, fit_task


def first_appearance(y: np.ndarray) -> np.ndarray:
    """Distinct integer labels of y in order of first appearance."""
    with np.errstate(invalid="ignore"):     # a label beyond int64 is caught just below
        labels_int = y.astype(np.int64)
    if not np.array_equal(labels_int, y):
        bad = int(np.flatnonzero(labels_int != y)[0])
        raise DataError(f"label {float(y[bad])!r} of instance {bad + 1} is not an integer; "
                        "classification needs integer labels (-s 11, 12, 13 do regression)")
    uniq, first = np.unique(labels_int, return_index=True)
    return uniq[np.argsort(first, kind="stable")]


def order_labels(labels_in_first_appearance: np.ndarray) -> np.ndarray:
    """LIBLINEAR's label order: first appearance, but a -1/+1 set puts +1 first."""
    label = np.asarray(labels_in_first_appearance, dtype=np.int64)
    if len(label) == 2 and label[0] == -1 and label[1] == 1:
        label = label[::-1].copy()
    return label


def group_classes(y: np.ndarray):
    """(labels in LIBLINEAR's order, index of each row's class in that order)."""
    label = order_labels(first_appearance(y))
    return label, group_rows(label, y)


def group_rows(label: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Index in `label` of each row's class."""
    class_of_row = np.searchsorted(np.sort(label), y.astype(np.int64))
    return np.argsort(label)[class_of_row]


def weighted_class_C(label: np.ndarray, params: Params, emit) -> np.ndarray:
    """C of each class after the -wi weights (params.class_C); unknown labels warn as
    LIBLINEAR does."""
    weighted_C, unknown = class_C(label, params)
    for weight_label in unknown:
        message = f"WARNING: class label {weight_label} specified in weight is not found"
        warnings.warn(message)
        emit(message)
    return weighted_C


def n_binary_problems(nr_class: int) -> int:
    return 1 if nr_class <= 2 else nr_class


def task_targets(y, sample_weight, label, k, weighted_C, params: Params):
    """(targets, per-instance C) of binary problem k, or of the regression / one-class
    problem when label is None; see binary_task and single_task. Needs only the rows'
    labels and weights, so a worker holding some of the rows can call it on those."""
    if label is None:
        targets = y
        C = np.full(len(y), params.C)
    else:
        targets = np.where(y == label[k], 1.0, -1.0)
        if len(label) == 2:
            Cp, Cn = weighted_C[0], weighted_C[1]
        else:
            Cp, Cn = weighted_C[k], params.C
        C = np.where(targets > 0, Cp, Cn)
    if sample_weight is not None:
        C = C * sample_weight
    return targets, C


def binary_task(problem: Problem, label: np.ndarray, k: int, weighted_C: np.ndarray,
                params: Params, shared_columns: Optional[SharedColumns] = None) -> SubProblem:
    """The k-th binary problem: class label[k] against the rest (for two classes, label[0]
    against label[1] with both weighted C's; one class is trained as all-positive, as
    LIBLINEAR does). Also used on Dask workers, on their local copy of the data."""
    y_sign, C = task_targets(problem.y, problem.sample_weight, label, k, weighted_C, params)
    return SubProblem(problem, y_sign, C, float(params.bias), task_seed(params.seed, k),
                      w0=initial_w(params, k), shared_columns=shared_columns)


def initial_w(params: Params, k: int):
    """Column k of params.init_sol (the warm start of binary problem k), or None."""
    if params.init_sol is None:
        return None
    w0 = np.asarray(params.init_sol, dtype=np.float64)
    if w0.ndim == 1:
        w0 = w0[:, None]
    return w0[:, k if w0.shape[1] > 1 else 0].copy()


def single_task(problem: Problem, params: Params) -> SubProblem:
    """Regression and one-class problems: one task on the labels as they are."""
    y, C = task_targets(problem.y, problem.sample_weight, None, 0, None, params)
    return SubProblem(problem, y, C, float(params.bias), task_seed(params.seed, 0),
                      w0=initial_w(params, 0))


def fit_class(problem: Problem, label: np.ndarray, k: int, weighted_C: np.ndarray,
              params: Params, shared_columns: Optional[SharedColumns] = None) -> FitResult:
    return train_one(binary_task(problem, label, k, weighted_C, params, shared_columns),
                     params)


# The solver log lines that become a ConvergenceWarning: (start of the line, warning),
# in LIBLINEAR's words where LIBLINEAR prints one. Each cap has its own line.
CONVERGENCE_WARNINGS = (
    # the outer cap of the CD solvers (-s 1, 3, 4, 5, 6, 7, 12, 13, 21, --primal-cd)
    ("WARNING: reaching max number of iterations",
     "WARNING: reaching max number of iterations"),
    # the Newton / TRON iteration cap (-s 0, 2, 11)
    ("WARNING: reaching max number of Newton iterations",
     "WARNING: reaching max number of Newton iterations"),
    # one Newton step's CG iterations capped at max(n, 5)
    ("WARNING: reaching maximal number of CG steps",
     "WARNING: reaching maximal number of CG steps"),
    # -s 6: the coordinate-descent passes of a Newton step capped
    ("WARNING: reaching max number of inner iterations",
     "WARNING: reaching max number of inner iterations"),
    # --online: the update budget (--max-updates) spent (dlinear's own option)
    ("WARNING: reaching max number of updates",
     "WARNING: reaching max number of updates (--max-updates) before the stopping "
     "tolerance"),
    ("WARNING: line search fails", "WARNING: line search fails"),
)


def warn_about_logs(lines, stacklevel=2):
    """One ConvergenceWarning per kind of solver warning in the log lines (an iteration,
    CG-step, inner-iteration or update cap reached by any solver or class, or a failed
    line search; see CONVERGENCE_WARNINGS). The solvers only log them, since they may
    run on threads or Dask workers; the caller of train sees this."""
    raised = set()
    for line in lines:
        for start, message in CONVERGENCE_WARNINGS:
            if line.startswith(start) and message not in raised:
                raised.add(message)
                warnings.warn(message, ConvergenceWarning, stacklevel=stacklevel + 1)


def assemble_model(params: Params, n_features: int, label, results: list) -> Model:
    """The Model from the fitted binary problems, in class order; their log lines go to
    `log` and the iteration-cap warnings are raised here, where the caller sees them."""
    w_size = n_features + (1 if params.bias >= 0 else 0)
    warn_about_logs([line for r in results for line in r.log], stacklevel=3)
    if label is None:
        nr_class = 2
    else:
        nr_class = len(label)
    nr_w = nr_class if getattr(params, "multinomial", False) else nr_w_of(params.solver_type,
                                                                           nr_class)
    # by the column count, not -1: a training set without features has w_size 0
    W = np.column_stack([r.w for r in results]).reshape(w_size, nr_w)
    rho = results[0].rho if params.spec.kind == "oneclass" else 0.0
    return Model(params.solver_type, nr_class, label, n_features, float(params.bias), W,
                 rho=rho, n_iter=tuple(r.n_iter for r in results),
                 multinomial=bool(getattr(params, "multinomial", False)))


def task_seed(seed: int, index: int) -> int:
    """A seed per binary problem, so results do not depend on the order tasks run in."""
    return int(np.random.SeedSequence([seed, index]).generate_state(1, dtype=np.uint64)[0]
               & np.uint64(0x7FFFFFFFFFFFFFFF))


def train_one(task: SubProblem, params: Params) -> FitResult:
    """LIBLINEAR's train_one: run the solver; at the dual iteration cap, warn and, where
    LIBLINEAR does, continue from the dual's w with the primal solver at a tighter
    tolerance."""
    result = fit_task(task, params)
    return after_dual_cap(result, params, lambda primal, w0: fit_task(replace(task, w0=w0),
                                                                      primal))


def after_dual_cap(result: FitResult, params: Params, fit_primal: Callable) -> FitResult:
    """LIBLINEAR's handling of a dual CD solver that reached its iteration cap: the warning
    and, where LIBLINEAR switches, `fit_primal(primal_params, w0)` from the dual's w at the
    tighter tolerance (the fallback solver's params). Local and partitioned runs share it."""
    spec = SOLVERS[params.solver_type]
    if spec.dual_cd and result.hit_max_iter:
        lines = ["WARNING: reaching max number of iterations"]
        if spec.fallback is not None and SOLVERS[spec.fallback].available:
            lines.append(f"Switching to use -s {spec.fallback}")
            primal = replace(params, solver_type=spec.fallback,
                             eps=params.eps * spec.fallback_tol_scale)
            second = fit_primal(primal, result.w)
            # alpha stays the dual's (where it stopped): the -C search warm-starts the
            # dual of the next C from it, as it does when the dual converged
            result = replace(second, log=result.log + lines + second.log,
                             n_iter=result.n_iter + second.n_iter, alpha=result.alpha)
        else:
            hint = spec.fallback if spec.fallback is not None else spec.faster_hint
            if hint is not None:
                lines.append(f"Using -s {hint} may be faster (also see FAQ)")
            result.log.extend(lines)
    return result


def _run_all(fn: Callable, items: list, n_threads: int, label: str = "tasks") -> list:
    """Kernels release the GIL, so one-vs-rest problems run on threads in one process.
    On a terminal, a progress bar counts the finished items (dlinear.progress)."""
    with progress_bar(len(items), label) as bar:
        if n_threads <= 1 or len(items) <= 1:
            results = []
            for it in items:
                results.append(fn(it))
                bar.update()
            return results
        with ThreadPoolExecutor(max_workers=n_threads) as pool:
            futures = [pool.submit(fn, it) for it in items]
            for f in futures:
                f.add_done_callback(lambda _: bar.update())
            return [f.result() for f in futures]


# In process, k-column Newton replaces one driver per class for -s 0 when each thread
# carries at least this many classes and the rows have at least this many nonzeros
# (measured on one core, BENCHMARKS.md "Multi-class Newton": whole fits 1.2-1.7x faster
# from k = 8 at 70 and 300 nonzeros per row; slower at 10 nonzeros per row, where the
# per-row work of k columns is not repaid by a shorter pass, and for k <= 4).
KCOLUMN_MIN_CLASSES_PER_THREAD = 8
KCOLUMN_MIN_NNZ_PER_ROW = 50


def classes_together(params: Params, n_problems: int, nnz_per_row: float,
                     n_threads: int = 1) -> bool:
    """Whether the one-vs-rest problems of a Newton solver (-s 0, -s 2) share their passes
    over the data (k-column Newton) rather than run one driver each, in this process.

    Params(kcolumn=True / False) decides. By default (None), by measurement: -s 0 with at
    least KCOLUMN_MIN_CLASSES_PER_THREAD classes per thread (the classes are split over
    the n_threads threads, each group a k-column fit of its own) and at least
    KCOLUMN_MIN_NNZ_PER_ROW nonzeros per row. -s 2 stays per class: a row has curvature
    only in the classes whose margin it violates, so a k-column pass fetches a whole row
    of S for the few columns it uses, and one driver per class visiting only its own rows
    was as fast or faster (BENCHMARKS.md)."""
    if params.solver_type not in (0, 2) or params.primal_cd or n_problems <= 1:
        return False
    if params.kcolumn is not None:
        return bool(params.kcolumn)
    return (params.solver_type == 0
            and n_problems >= KCOLUMN_MIN_CLASSES_PER_THREAD * max(1, n_threads)
            and nnz_per_row >= KCOLUMN_MIN_NNZ_PER_ROW)


def class_targets(y, sample_weight, label, weighted_C, params: Params, ks=None):
    """(Y, C), (l, K): task_targets of the one-vs-rest problems ks (default: all) as
    columns."""
    if ks is None:
        ks = range(n_binary_problems(len(label)))
    pairs = [task_targets(y, sample_weight, label, k, weighted_C, params) for k in ks]
    return (np.ascontiguousarray(np.column_stack([t for t, _ in pairs])),
            np.ascontiguousarray(np.column_stack([c for _, c in pairs])))


def fit_classes_together(problem: Problem, label, weighted_C, params: Params,
                         n_threads: int = 1, ks=None) -> list:
    """The one-vs-rest problems ks (default: all) of -s 0 / -s 2 by k-column Newton: the
    same models, logs and counts as fit_class on each, with one pass over the rows for
    all classes (split by class over n_threads threads)."""
    from .solvers.kcolumn import fit_one_vs_rest_together
    if ks is None:
        ks = list(range(n_binary_problems(len(label))))
    Y, C = class_targets(problem.y, problem.sample_weight, label, weighted_C, params, ks)
    w0s = [initial_w(params, k) for k in ks]
    with progress_bar(Y.shape[1], "classes") as bar:
        return fit_one_vs_rest_together(problem, Y, C, params, w0s, n_threads,
                                        on_class_done=bar.update)


def fit_class_group(problem: Problem, label, ks, weighted_C, params: Params) -> list:
    """The one-vs-rest problems ks (a group of the classes) on one thread, by the
    in-process rule (classes_together for len(ks) classes on one thread): one k-column
    Newton fit for the group, or one driver per class. What a cluster worker runs on its
    copy of the data (dlinear.cluster.engine, the copy mode of -s 0 / -s 2); the models
    are those of train_in_process."""
    ks = list(ks)
    if classes_together(params, len(ks), problem.nnz / max(1, problem.n_samples), 1):
        return fit_classes_together(problem, label, weighted_C, params, 1, ks)
    return [fit_class(problem, label, k, weighted_C, params) for k in ks]


def multinomial_C(class_of_row, sample_weight, weighted_C):
    """Per-row C of the multinomial loss: the row's class's (weighted) C x its weight."""
    C = np.asarray(weighted_C, dtype=np.float64)[class_of_row]
    return C * sample_weight if sample_weight is not None else C


def fit_multinomial_problem(problem: Problem, label, class_of_row, weighted_C,
                            params: Params, n_threads: int = 1) -> FitResult:
    from .solvers.multinomial import fit_multinomial
    C = multinomial_C(class_of_row, problem.sample_weight, weighted_C)
    return fit_multinomial(problem, class_of_row, C, len(label), params, params.init_sol,
                           n_threads=n_threads)


def train_in_process(problem: Problem, params: Params,
                     log: Optional[Callable[[str], None]] = None,
                     n_threads: Optional[int] = None) -> Model:
    """Trains a LIBLINEAR model on a Problem in this process, one-vs-rest classes (or the
    passes of a multinomial fit, split by rows and features) on `n_threads` threads
    (default: one per core). `log` receives LIBLINEAR-style progress lines."""
    check_parameter(params)
    params = params.resolved()
    spec = params.spec
    if problem.n_samples == 0:
        raise DlinearError("the training set is empty")
    if n_threads is None:
        n_threads = os.cpu_count() or 1
    emit = log or (lambda line: None)

    if spec.kind in ("regression", "oneclass"):
        results = [train_one(single_task(problem, params), params)]
        label = None
    elif params.multinomial:
        label, class_of_row = group_classes(problem.y)
        weighted_C = weighted_class_C(label, params, emit)
        results = [fit_multinomial_problem(problem, label, class_of_row, weighted_C, params,
                                           n_threads)]
    elif spec.all_classes:
        label, class_of_row = group_classes(problem.y)
        weighted_C = weighted_class_C(label, params, emit)
        results = [fit_all_classes(problem, class_of_row, weighted_C, params,
                                   task_seed(params.seed, 0))]
    else:
        label = order_labels(first_appearance(problem.y))
        weighted_C = weighted_class_C(label, params, emit)
        n_problems = n_binary_problems(len(label))
        if classes_together(params, n_problems, problem.nnz / problem.n_samples, n_threads):
            results = fit_classes_together(problem, label, weighted_C, params, n_threads)
        else:
            columns = SharedColumns()     # transposed at most once for all classes
            results = _run_all(lambda k: fit_class(problem, label, k, weighted_C, params,
                                                   columns),
                               list(range(n_problems)), n_threads, "classes")
    for r in results:
        for line in r.log:
            emit(line)
    return assemble_model(params, problem.n_features, label, results)


def cv_folds(l: int, nr_fold: int, seed: int, emit):
    """LIBLINEAR's cross_validation split: one random permutation, fold i holding
    perm[i*l/nr_fold : (i+1)*l/nr_fold]."""
    if l < 2:       # a fold would train on nothing
        raise DataError(f"cross validation needs at least 2 instances, the training set "
                        f"has {l}")
    if nr_fold > l:
        emit("WARNING: # folds > # data. Will use # folds = # data instead "
             "(i.e., leave-one-out cross validation)")
        nr_fold = l
    perm = np.random.default_rng(seed).permutation(l)
    return perm, [i * l // nr_fold for i in range(nr_fold + 1)]


def run_cv_fold(problem: Problem, perm: np.ndarray, begin: int, end: int, params: Params):
    """Train on all rows but perm[begin:end], predict those: (held rows, predictions)."""
    held = perm[begin:end]
    kept = np.concatenate([perm[:begin], perm[end:]])
    model = train_in_process(problem.subset(kept), params, n_threads=1)
    return held, predict(model, problem.subset(held))


def cross_validation_in_process(problem: Problem, params: Params, nr_fold: int,
                                log: Optional[Callable[[str], None]] = None,
                                n_threads: Optional[int] = None) -> np.ndarray:
    """Predicted label (or value) of every row by the model of the folds without it.
    Folds run in parallel on threads."""
    check_parameter(params)
    params = params.resolved()
    perm, fold_start = cv_folds(problem.n_samples, nr_fold, params.seed,
                                log or (lambda line: None))
    if n_threads is None:
        n_threads = os.cpu_count() or 1
    target = np.empty(problem.n_samples)
    folds = _run_all(lambda i: run_cv_fold(problem, perm, fold_start[i], fold_start[i + 1],
                                           params),
                     list(range(len(fold_start) - 1)), n_threads, "CV folds")
    for held, predicted in folds:
        target[held] = predicted
    return target


def block_seeds(seed: int, block: int, n_problems: int) -> list:
    """Seeds of one block's permutations, one per binary problem: independent of where
    the block runs and of the other blocks."""
    return [int(np.random.SeedSequence([seed, k, block]).generate_state(1, dtype=np.uint64)[0]
                & np.uint64(0x7FFFFFFFFFFFFFFF)) for k in range(n_problems)]


def n_partitioned_problems(label) -> int:
    """Binary problems of `label`, or 1 for regression (label None)."""
    return 1 if label is None else n_binary_problems(len(label))


def partition_targets(y, sample_weight, label, weighted_C, params: Params):
    """(Y, C), each (rows, #binary problems): targets and per-instance C of every binary
    problem on some rows (a block's)."""
    pairs = [task_targets(y, sample_weight, label, k, weighted_C, params)
             for k in range(n_partitioned_problems(label))]
    return np.column_stack([t for t, _ in pairs]), np.column_stack([c for _, c in pairs])


def check_partitioned(params: Params):
    from .solvers.partitioned_dual_cd import PARTITIONED_SOLVERS
    if params.solver_type not in PARTITIONED_SOLVERS:
        raise DlinearError(f"-s {params.solver_type} does not train partitioned (only -s "
                           + ", ".join(str(s) for s in PARTITIONED_SOLVERS) + ")")


def train_partitioned_in_process(problem: Problem, params: Params, n_blocks: int,
                                 rule: Optional[str] = None, n_passes: Optional[int] = None,
                                 log: Optional[Callable[[str], None]] = None,
                                 on_round: Optional[Callable] = None,
                                 parts_per_block: int = 1) -> Model:
    """The partitioned dual CD (solvers.partitioned_dual_cd) with the rows split into
    `n_blocks` contiguous blocks held in this process: the same rounds, steps and model as
    n_blocks workers would make, without the cores. For tests and rounds-vs-K studies.
    parts_per_block: each block made of that many contiguous CSR parts, as a worker
    holding several of a Dataset's parts has them."""
    from .solvers import partitioned_dual_cd as P
    check_parameter(params)
    params = params.resolved()
    check_partitioned(params)
    emit = log or (lambda line: None)
    if params.spec.kind == "regression":
        label = weighted_C = None
    else:
        label = order_labels(first_appearance(problem.y))
        weighted_C = weighted_class_C(label, params, emit)
    k = n_partitioned_problems(label)
    bounds = [i * problem.n_samples // n_blocks for i in range(n_blocks + 1)]
    blocks = []
    for b in range(n_blocks):
        cuts = np.linspace(bounds[b], bounds[b + 1], parts_per_block + 1).astype(np.int64)
        parts = [problem.subset(np.arange(cuts[q], cuts[q + 1]))
                 for q in range(parts_per_block)]
        rows = slice(bounds[b], bounds[b + 1])
        weights = None if problem.sample_weight is None else problem.sample_weight[rows]
        Y, C = partition_targets(problem.y[rows], weights, label, weighted_C, params)
        blocks.append(P.BlockState(parts, Y, C, params.bias, problem.n_features,
                                   params.solver_type, block_seeds(params.seed, b, k),
                                   params.p))
    w_size = problem.n_features + (1 if params.bias >= 0 else 0)
    results = P.fit_partitioned_dual_cd(P.SimulatedBlocks(blocks), k, w_size, params,
                                        rule or params.partition_rule,
                                        n_passes or P.DEFAULT_LOCAL_PASSES, on_round)

    def primal_fitter(c):
        task = (single_task(problem, params) if label is None
                else binary_task(problem, label, c, weighted_C, params))
        return lambda primal, w0: fit_task(replace(task, w0=w0), primal)

    results = [after_dual_cap(r, params, primal_fitter(c)) for c, r in enumerate(results)]
    for r in results:
        for line in r.log:
            emit(line)
    return assemble_model(params, problem.n_features, label, results)
