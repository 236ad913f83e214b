"""Training in this process: LIBLINEAR's train() and train_one().

train_in_process(problem, params) -> Model. The public dlinear.train (dlinear.api) calls
it for a Problem, and the cluster engine calls it on its workers. The classes, their C,
targets and seeds come from the class plan (dlinear.planning.class_plan), the way the fit runs (one
problem, the classes on threads, k-column Newton, ...) from the mode chooser
(dlinear.planning.modes). train_one is LIBLINEAR's: the dual solvers' iteration cap with its
warning, and the switch to the primal solver where LIBLINEAR switches.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Callable, Optional

import numpy as np

from ..data.columns import compact_problem, fits_on_occurring_columns, weight_rows
from ..data.libsvm_reader import Problem
from ..errors import DataError, DlinearError
from ..model import Model
from ..planning.modes import Data, Mode, choose
from ..params import Params, check_parameter
from ..planning.class_plan import (assemble_model, first_appearance, group_rows, initial_w, multinomial_C,
                   known_gnorm0, n_binary_problems, n_problems, plan_classes, problem_seed,
                   incremental_duals, subproblem, targets, warm_start_columns)
from ..predict import predict
from ..progress import progress_bar
from ..solver_table import SOLVERS, solvers_text
from ..solvers import FitResult, SharedColumns, SubProblem, fit_all_classes, fit_task
from ..solvers import kcolumn
from ..solvers.checkpoint import CheckpointDir, check_checkpoint, fingerprint
from ..solvers.multinomial import fit_multinomial
from ..solvers.status import Status, note
from ..threads import available_cores


def fit_class(problem: Problem, label, k: int, weighted_C, params: Params,
              shared_columns: Optional[SharedColumns] = None,
              n_threads: Optional[int] = None,
              checkpoints: Optional[CheckpointDir] = None) -> FitResult:
    """train_one on binary problem k (or, with label None, the regression / one-class
    problem). n_threads: the fit's only problem, its passes on that many threads
    (SubProblem.n_threads); None for one class among others. checkpoints: the fit's
    checkpoint directory, where problem k saves its solver's state."""
    task = subproblem(problem, label, k, weighted_C, params, shared_columns)
    checkpoint = None if checkpoints is None else checkpoints.problem(k)
    return train_one(replace(task, n_threads=n_threads, checkpoint=checkpoint), params)


def train_one(task: SubProblem, params: Params) -> FitResult:
    """LIBLINEAR's train_one: run the solver; at the dual iteration cap, warn and, where
    LIBLINEAR does, continue from the dual's w with the primal solver at a tighter
    tolerance."""
    result = fit_task(task, params)
    checkpoint = None if task.checkpoint is None else task.checkpoint.stage("primal")
    return after_dual_cap(result, params, lambda primal, w0: fit_task(
        replace(task, w0=w0, checkpoint=checkpoint), primal))


def after_dual_cap(result: FitResult, params: Params, fit_primal: Callable) -> FitResult:
    """LIBLINEAR's handling of a dual CD solver that reached its iteration cap: the warning
    and, where LIBLINEAR switches, `fit_primal(primal_params, w0)` from the dual's w at the
    tighter tolerance (the fallback solver's params). Local and partitioned runs share it."""
    spec = SOLVERS[params.solver_type]
    if spec.dual_cd and result.hit_max_iter:
        lines = []
        capped = note(lines, Status.MAX_ITER)
        if spec.fallback is not None and SOLVERS[spec.fallback].available:
            lines.append(f"Switching to use -s {spec.fallback}")
            primal = replace(params, solver_type=spec.fallback,
                             eps=params.eps * spec.fallback_tol_scale)
            second = fit_primal(primal, result.w)
            # alpha stays the dual's (where it stopped): the -C search warm-starts the
            # dual of the next C from it, as it does when the dual converged
            result = replace(second, log=result.log + lines + second.log,
                             n_iter=result.n_iter + second.n_iter, alpha=result.alpha,
                             switched_to=spec.fallback)
        else:
            hint = spec.fallback if spec.fallback is not None else spec.faster_hint
            if hint is not None:
                lines.append(f"Using -s {hint} may be faster (also see FAQ)")
            result.log.extend(lines)
            result.status |= capped
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


def fit_kcolumn(problem: Problem, label, weighted_C, params: Params, n_threads: int = 1,
                ks=None) -> list:
    """The one-vs-rest problems ks (default: all) of -s 0 / -s 2 by k-column Newton: the
    same models, logs and counts as fit_class on each, with one pass over the rows for
    all classes (split by class over n_threads threads)."""
    if ks is None:
        ks = list(range(n_binary_problems(len(label))))
    Y, C = targets(problem.y, problem.sample_weight, label, weighted_C, params, ks)
    w0s = [initial_w(params, k) for k in ks]
    with progress_bar(Y.shape[1], "classes") as bar:
        return kcolumn.fit_one_vs_rest_kcolumn(problem, Y, C, params, w0s, n_threads,
                                               on_class_done=bar.update,
                                               gnorm0s=[known_gnorm0(params, k) for k in ks])


def fit_class_group(problem: Problem, label, ks, weighted_C, params: Params) -> list:
    """The one-vs-rest problems ks (a group of the classes) on one thread, in the mode
    the chooser picks for len(ks) classes on one thread: one k-column Newton fit for the
    group, or one driver per class. What a cluster worker runs on its copy of the data
    (dlinear.cluster.engine, the copy mode of -s 0 / -s 2); the models are those of
    train_in_process."""
    ks = list(ks)
    shape = Data(problem.n_samples, problem.nnz, n_problems=len(ks))
    if choose(params, shape, n_threads=1).mode is Mode.KCOLUMN:
        return fit_kcolumn(problem, label, weighted_C, params, 1, ks)
    return [fit_class(problem, label, k, weighted_C, params) for k in ks]


def train_in_process(problem: Problem, params: Params,
                     log: Optional[Callable[[str], None]] = None,
                     n_threads: Optional[int] = None, *, compact: bool = True,
                     own_data: bool = False, full_w: bool = True) -> Model:
    """Trains a LIBLINEAR model on a Problem in this process, one-vs-rest classes (or the
    passes of a multinomial fit, split by rows and features, or the Newton or dual CD
    passes of the only problem) on `n_threads` threads (default: one per core). `log`
    receives LIBLINEAR-style progress lines. With `compact` (default), the fit runs on the
    columns that occur (dlinear.data.columns) where that gives the same model, bit for bit; the
    model has all the columns. What dlinear-train asks, which holds no copy of its data:
    own_data, the problem is the caller's to give up (its column indices are renumbered
    in place, and it is not to be used again); full_w=False, a model of a fit on the
    occurring columns keeps its weights on those (Model.rows), as save_model writes them."""
    check_parameter(params)
    check_checkpoint(params)
    params = params.resolved()
    if problem.n_samples == 0:
        raise DlinearError("the training set is empty")
    checkpoints = None
    if params.checkpoint is not None:
        checkpoints = CheckpointDir(params.checkpoint, fingerprint(problem, params),
                                    params.checkpoint_every)
    if n_threads is None:
        n_threads = available_cores()
    emit = log or (lambda line: None)
    label, weighted_C = plan_classes(params, lambda: first_appearance(problem.y), emit)
    if params.init_sol is not None:
        params = replace(params, init_sol=warm_start_columns(params.init_sol,
                                                             problem.n_features, label,
                                                             params),
                         init_duals=incremental_duals(params.init_sol, problem.n_samples,
                                                      label, params) or params.init_duals)
    shape = Data(problem.n_samples, problem.nnz,
                 n_problems=None if label is None else n_binary_problems(len(label)))
    mode = choose(params, shape, n_threads=n_threads).mode
    if checkpoints is not None and mode is Mode.KCOLUMN:    # the same model, class by class
        mode = Mode.CLASSES_ON_THREADS
    compacted = (_on_occurring_columns(problem, params, mode, label, own_data) if compact
                 else None)
    if compacted is None:
        results = _fit_in_mode(mode, problem, params, label, weighted_C, n_threads,
                               checkpoints)
        model = assemble_model(params, problem.n_features, label, results, emit)
    else:
        columns, fit_params = compacted
        results = _fit_in_mode(mode, columns.problem, fit_params, label, weighted_C,
                               n_threads, checkpoints)
        model = assemble_model(fit_params, columns.problem.n_features, label, results, emit)
        if full_w:
            model = replace(model, nr_feature=columns.n_features,
                            w=columns.expand_rows(model.w, params.bias))
        else:
            model = replace(model, nr_feature=columns.n_features,
                            rows=weight_rows(columns.used, columns.n_features, params.bias))
    if checkpoints is not None:     # the fit has ended: its model replaces its states
        checkpoints.remove()
    return model


def _on_occurring_columns(problem: Problem, params: Params, mode: Mode, label,
                          in_place: bool = False):
    """(CompactProblem, the params of the fit on it) when a fit on the columns that occur
    gives the same model and few enough of them occur (columns.worth_compacting); else
    None. The fit keeps the Newton steps' CG cap of all the columns, and a warm start is
    taken to the columns that occur (None where it is nonzero on another)."""
    if not fits_on_occurring_columns(params):
        return None
    # in place only with no warm start: one nonzero on another column would send the
    # fit back to the problem, whose indices must then still be its own
    columns = compact_problem(problem, only_if_worth=True,
                              in_place=in_place and params.init_sol is None)
    if columns is None:
        return None
    changes = {}
    if params.init_sol is not None:
        changes["init_sol"] = columns.compact_rows(params.init_sol, params.bias)
        if changes["init_sol"] is None:
            return None
    w_size = problem.n_features + (1 if params.bias >= 0 else 0)
    changes["cg_cap_weights"] = w_size * (len(label) if mode is Mode.MULTINOMIAL else 1)
    return columns, replace(params, **changes)


def _fit_in_mode(mode: Mode, problem: Problem, params: Params, label, weighted_C,
                 n_threads: int, checkpoints: Optional[CheckpointDir] = None) -> list:
    """The FitResults of every binary problem (or of the one problem) in `mode`, saving
    their solvers' states in `checkpoints` when given."""
    if mode is Mode.ONE_PROBLEM:
        return [fit_class(problem, None, 0, None, params, n_threads=n_threads,
                          checkpoints=checkpoints)]
    if mode is Mode.MULTINOMIAL:
        class_of_row = group_rows(label, problem.y)
        C = multinomial_C(class_of_row, problem.sample_weight, weighted_C)
        return [fit_multinomial(problem, class_of_row, C, len(label), params,
                                params.init_sol, n_threads=n_threads)]
    if mode is Mode.ALL_CLASSES:
        return [fit_all_classes(problem, group_rows(label, problem.y), weighted_C, params,
                                problem_seed(params.seed, 0))]
    if mode is Mode.KCOLUMN:
        return fit_kcolumn(problem, label, weighted_C, params, n_threads)
    if n_problems(label) == 1:      # two classes: one binary problem, on all the threads
        return [fit_class(problem, label, 0, weighted_C, params, n_threads=n_threads,
                          checkpoints=checkpoints)]
    columns = SharedColumns()     # transposed at most once for all classes
    return _run_all(lambda k: fit_class(problem, label, k, weighted_C, params, columns,
                                        checkpoints=checkpoints),
                    list(range(n_problems(label))), n_threads, "classes")


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
    """Train on all rows but perm[begin:end], predict those: (held rows, predictions,
    the training's log lines, which LIBLINEAR's -v prints fold after fold)."""
    held = perm[begin:end]
    kept = np.concatenate([perm[:begin], perm[end:]])
    lines = []
    model = train_in_process(problem.subset(kept), params, log=lines.append, n_threads=1)
    return held, predict(model, problem.subset(held)), lines


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
        n_threads = available_cores()
    target = np.empty(problem.n_samples)
    folds = _run_all(lambda i: run_cv_fold(problem, perm, fold_start[i], fold_start[i + 1],
                                           params),
                     list(range(len(fold_start) - 1)), n_threads, "CV folds")
    for held, predicted, lines in folds:
        target[held] = predicted
        for line in lines if log else ():
            log(line)
    return target
