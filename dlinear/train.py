"""train(problem, params) -> Model: class grouping, per-class C, binary / one-vs-rest dispatch.

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
from .errors import ConvergenceWarning, DlinearError
from .model import Model
from .params import Params, check_parameter
from .predict import predict
from .solvers import SOLVERS, BinaryTask, FitResult


def group_classes(y: np.ndarray):
    """(labels in LIBLINEAR's order, index of each row's class in that order)."""
    labels_int = y.astype(np.int64)
    if not np.array_equal(labels_int, y):
        bad = int(np.flatnonzero(labels_int != y)[0])
        raise DlinearError(f"label {y[bad]!r} of instance {bad + 1} is not an integer; "
                           "classification needs integer labels (-s 11, 12, 13 do regression)")
    uniq, first, inverse = np.unique(labels_int, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    label = uniq[order]
    class_of_row = rank[inverse]
    if len(label) == 2 and label[0] == -1 and label[1] == 1:
        label = label[::-1].copy()
        class_of_row = 1 - class_of_row
    return label, class_of_row


def task_seed(seed: int, index: int) -> int:
    """A seed per binary problem, so results do not depend on the order tasks run in."""
    return int(np.random.SeedSequence([seed, index]).generate_state(1, dtype=np.uint64)[0]
               & np.uint64(0x7FFFFFFFFFFFFFFF))


def fit_binary(task: BinaryTask, params: Params) -> FitResult:
    """train_one: run the solver; at the dual iteration cap, warn and, where LIBLINEAR does,
    continue from the dual's w with the primal solver at a tighter tolerance."""
    spec = SOLVERS[params.solver_type]
    result = spec.fit(task, params)
    if spec.dual_cd and result.hit_max_iter:
        lines = ["WARNING: reaching max number of iterations"]
        if spec.fallback is not None and SOLVERS[spec.fallback].available:
            lines.append(f"Switching to use -s {spec.fallback}")
            primal = replace(params, solver_type=spec.fallback,
                             eps=params.eps * spec.fallback_tol_scale)
            warm = replace(task, w0=result.w)
            second = SOLVERS[spec.fallback].fit(warm, primal)
            result = replace(second, log=result.log + lines + second.log,
                             n_iter=result.n_iter + second.n_iter)
        else:
            hint = spec.fallback if spec.fallback is not None else spec.faster_hint
            if hint is not None:
                lines.append(f"Using -s {hint} may be faster (also see FAQ)")
            result.log.extend(lines)
        warnings.warn(" ".join(lines), ConvergenceWarning, stacklevel=3)
    return result


def instance_C(y_sign: np.ndarray, Cp: float, Cn: float, sample_weight) -> np.ndarray:
    C = np.where(y_sign > 0, Cp, Cn)
    if sample_weight is not None:
        C = C * sample_weight
    return C


def _run_all(fn: Callable, items: list, n_threads: int) -> list:
    """Kernels release the GIL, so one-vs-rest problems run on threads in one process."""
    if n_threads <= 1 or len(items) <= 1:
        return [fn(it) for it in items]
    with ThreadPoolExecutor(max_workers=n_threads) as pool:
        return list(pool.map(fn, items))


def train(problem: Problem, params: Params, log: Optional[Callable[[str], None]] = None,
          n_threads: Optional[int] = None) -> Model:
    """Trains a LIBLINEAR model. `log` receives LIBLINEAR-style progress lines."""
    check_parameter(params)
    params = params.resolved()
    spec = params.spec
    if problem.n_samples == 0:
        raise DlinearError("the training set is empty")
    if n_threads is None:
        n_threads = os.cpu_count() or 1
    emit = log or (lambda line: None)
    bias = float(params.bias)
    w_size = problem.n_features + (1 if bias >= 0 else 0)
    sw = problem.sample_weight

    if spec.kind in ("regression", "oneclass"):
        C = np.full(problem.n_samples, params.C)
        if sw is not None:
            C = C * sw
        task = BinaryTask(problem, problem.y, C, bias, task_seed(params.seed, 0))
        result = fit_binary(task, params)
        for line in result.log:
            emit(line)
        return Model(params.solver_type, 2, None, problem.n_features, bias,
                     result.w.reshape(w_size, 1), rho=result.rho, n_iter=(result.n_iter,))

    label, class_of_row = group_classes(problem.y)
    nr_class = len(label)
    weighted_C = np.full(nr_class, params.C)
    for wl, wv in params.class_weights:
        hits = np.flatnonzero(label == wl)
        if len(hits) == 0:
            warnings.warn(f"WARNING: class label {wl} specified in weight is not found")
            emit(f"WARNING: class label {wl} specified in weight is not found")
        else:
            weighted_C[hits[0]] *= wv

    if spec.fit_all_classes is not None:
        result = spec.fit_all_classes(problem, class_of_row, weighted_C, params,
                                      task_seed(params.seed, 0))
        for line in result.log:
            emit(line)
        return Model(params.solver_type, nr_class, label, problem.n_features, bias,
                     result.w.reshape(w_size, nr_class), n_iter=(result.n_iter,))

    if nr_class <= 2:   # one class: LIBLINEAR trains it as all-positive; so do we
        y_sign = np.where(class_of_row == 0, 1.0, -1.0)
        Cn = weighted_C[1] if nr_class == 2 else params.C
        tasks = [BinaryTask(problem, y_sign, instance_C(y_sign, weighted_C[0], Cn, sw),
                            bias, task_seed(params.seed, 0))]
    else:
        tasks = []
        for k in range(nr_class):
            y_sign = np.where(class_of_row == k, 1.0, -1.0)
            tasks.append(BinaryTask(problem, y_sign,
                                    instance_C(y_sign, weighted_C[k], params.C, sw),
                                    bias, task_seed(params.seed, k)))

    results = _run_all(lambda t: fit_binary(t, params), tasks, n_threads)
    for r in results:
        for line in r.log:
            emit(line)
    W = np.column_stack([r.w for r in results])
    return Model(params.solver_type, nr_class, label, problem.n_features, bias, W,
                 n_iter=tuple(r.n_iter for r in results))


def cross_validation(problem: Problem, params: Params, nr_fold: int,
                     log: Optional[Callable[[str], None]] = None) -> np.ndarray:
    """LIBLINEAR's cross_validation: one random permutation, folds of l*i/nr_fold."""
    l = problem.n_samples
    emit = log or (lambda line: None)
    if nr_fold > l:
        emit("WARNING: # folds > # data. Will use # folds = # data instead "
             "(i.e., leave-one-out cross validation)")
        nr_fold = l
    perm = np.random.default_rng(params.seed).permutation(l)
    fold_start = [i * l // nr_fold for i in range(nr_fold + 1)]
    target = np.empty(l)
    for i in range(nr_fold):
        held = perm[fold_start[i]:fold_start[i + 1]]
        kept = np.concatenate([perm[:fold_start[i]], perm[fold_start[i + 1]:]])
        sub_model = train(problem.subset(kept), params, log=log)
        target[held] = predict(sub_model, problem.subset(held))
    return target
