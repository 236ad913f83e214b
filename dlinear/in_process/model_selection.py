"""-C: LIBLINEAR 2.50's warm-start parameter search (find_parameters in linear.cpp).

-s 0 and -s 2 (C), -s 11 (C and p); Chu, Ho, Tsai, Lin and Lin 2015, "Warm start for
parameter selection of linear classifiers" (KDD). As LIBLINEAR does it:

- Folds: one split for the whole search (dlinear.in_process.train.cv_folds: LIBLINEAR's fold
  boundaries i*l/nr_fold over a permutation drawn from --seed).
- C grid: C = start_C, 2 start_C, 4 start_C, ... while C <= max_C (1024 for -s 0/-s 2,
  2^20 for -s 11). start_C is `-c` when given, else calc_start_C: 2^floor(log2(min_C))
  with min_C = 1/(l max ||x_i||^2) for -s 0, 1/(2 l max ||x_i||^2) for -s 2, and for
  -s 11 0.1^2 sum_i max(|y_i| - p, 0)^2 / (8 (sum_i |y_i|)^2 max ||x_i||^2) (infinite,
  so start at max_C, when that sum is 0); ||x_i|| includes the -B bias feature. It is
  capped at max_C.
- Warm start: in each fold, the model at C is the starting point of the model at 2C.
- Stopping: after each C, if some fold's w moved by more than 1e-15 (2-norm of the
  difference over all classes) the count of unchanged C's restarts at 0, else it goes
  up by one; the first C counts as unchanged. The search stops when the count reaches 5,
  or after the largest C <= max_C ("WARNING: maximum C reached.").
- Score: CV accuracy (-s 0, -s 2) or mean squared error (-s 11); the best is the first
  C reaching the highest accuracy (lowest MSE).
- -s 11: p = i max|y_i| / 20 for i = 19, 18, ..., 0 (from i = min(floor(start_p /
  (max|y_i| / 20)), 19) when `-p` is given), a whole C search for each p, each with its
  own warm starts; ties keep the larger p.

Folds run in parallel, which LIBLINEAR does not: each (fold, p) task carries its own
sequence of warm-started C's, on a thread here or as a task on a Dask cluster
(dlinear.cluster.search). A fold cannot know when the others stop, so it stops by itself
when its own count of unchanged C's (which never trails the count over all folds) reaches
5; the client replays LIBLINEAR's rule over all folds as results come in, and if a fold
stopped before the search does, continues it from its last w with the count so far. The
C's tried, the log lines and the result are LIBLINEAR's, whichever order the tasks run in.
Given LIBLINEAR's own folds, -s 0 and -s 2 print LIBLINEAR's lines exactly
(tests/parity/test_model_selection.py rebuilds them from the C library's rand()).
"""
from __future__ import annotations

import math
import queue
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Callable, Optional

import numpy as np
from numba import njit

from ..data.libsvm_reader import Problem, arrays_nbytes
from ..problem import facts_shared
from ..errors import DlinearError, surfacing_interrupts
from ..params import Params, check_parameter, class_C
from ..predict import predict
from ..progress import progress_bar
from ..solver_table import solvers_text
from ..solvers.vectors import norm
from ..planning.class_plan import assemble_model, first_appearance, n_problems, order_labels, subproblem
from .train import cv_folds, train_one
from ..threads import available_cores

# the solvers with a -C search and what each C starts from: SolverSpec.search
SEARCH_SOLVER_ERROR = ("Warm-start parameter search only available for "
                       + solvers_text(lambda s: s.search is not None))
C_RATIO = 2.0                 # the C grid is geometric with this ratio
MAX_C = 1024.0                # -s 0, -s 2
MAX_C_SVR = 1048576.0         # -s 11
NUM_P_STEPS = 20              # -s 11: p = i max|y| / 20, i = 19 .. 0
UNCHANGED_LIMIT = 5           # stop after this many C's without a change of w
W_CHANGE_TOL = 1e-15          # ||w_C - w_{C/2}||_2 above this is a change
SVR_DELTA = 0.1               # calc_start_C's delta for -s 11
MAX_C_WARNING = "WARNING: maximum C reached."


# ----------------------------------------------------------------------------- the grid

@njit(cache=True, nogil=True)
def _max_squared_row_norm(indptr, data, bias):
    """max_i ||x_i||^2 summed in row order (then the bias feature last), as
    calc_start_C does."""
    best = 0.0
    for i in range(len(indptr) - 1):
        s = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            v = data[k]
            s += v * v
        if bias >= 0:
            s += bias * bias
        if s > best:
            best = s
    return best


def calc_start_C(problem: Problem, params: Params) -> float:
    """LIBLINEAR's calc_start_C: the first C of the search (a power of 2, or inf for
    -s 11 when no target lies outside the p-tube)."""
    l = problem.n_samples
    max_xTx = float(_max_squared_row_norm(problem.indptr, problem.data, float(params.bias)))
    if max_xTx == 0:         # all x_i = 0: LIBLINEAR's 1 / 0 is inf
        return math.inf
    spec = params.spec
    if spec.loss in ("logistic_regression", "hinge"):   # hinge: LR's start (dlinear's choice)
        min_C = 1.0 / (l * max_xTx)
    elif spec.loss == "squared_hinge":                  # -s 1 solves -s 2's problem, dual
        min_C = 1.0 / (2 * l * max_xTx)
    elif spec.loss == "squared_epsilon_insensitive":
        y_abs = np.abs(problem.y)
        sum_y = 0.0
        loss = 0.0
        for v in y_abs.tolist():            # sequential sums, as LIBLINEAR adds them
            sum_y += v
            d = max(v - params.p, 0.0)
            loss += d * d
        if loss > 0:
            min_C = SVR_DELTA * SVR_DELTA * loss / (8 * sum_y * sum_y * max_xTx)
        else:
            return math.inf
    else:
        min_C = 1.0
    if not math.isfinite(min_C):
        return math.inf
    return math.pow(2, math.floor(math.log(min_C) / math.log(2.0)))


def calc_max_p(problem: Problem) -> float:
    """LIBLINEAR's calc_max_p: max |y_i|."""
    return float(np.max(np.abs(problem.y))) if problem.n_samples else 0.0


def c_grid(start_C: float, max_C: float) -> list:
    """start_C, 2 start_C, ... while <= max_C (start_C capped at max_C first)."""
    C = min(start_C, max_C)
    grid = []
    while C <= max_C:
        grid.append(C)
        C *= C_RATIO
    return grid


def search_plan(problem: Problem, params: Params, start_C: Optional[float] = None,
                start_p: Optional[float] = None) -> list:
    """[(p, [C, ...]), ...]: the p values in LIBLINEAR's order, each with its C grid. For
    a classification solver, one entry whose p is -1 (LIBLINEAR's best_p there)."""
    given_C = start_C is not None and start_C > 0
    if params.spec.kind != "regression":
        C0 = start_C if given_C else calc_start_C(problem, params)
        return [(-1.0, c_grid(C0, MAX_C))]
    max_p = calc_max_p(problem)
    i = NUM_P_STEPS - 1
    if start_p is not None and start_p > 0 and max_p > 0:
        i = min(int(start_p / (max_p / NUM_P_STEPS)), i)
    plan = []
    for k in range(i, -1, -1):
        p = k * max_p / NUM_P_STEPS
        C0 = start_C if given_C else calc_start_C(problem, replace(params, p=p))
        plan.append((p, c_grid(C0, MAX_C_SVR)))
    return plan


# ------------------------------------------------------------------- one fold's C path

@dataclass
class PathRequest:
    """Run fold `fold` for the C's of group `group` (one p value) from grid index `start`,
    warm-started from w0 (the fold's solution at the previous C), with LIBLINEAR's count
    of unchanged C's at `counter` before it."""
    group: int
    fold: int
    start: int = 0
    counter: int = 0
    w0: Optional[np.ndarray] = None
    alpha0: Optional[list] = None   # dual solvers: each binary problem's alpha at that C


@dataclass
class PathResult:
    group: int
    fold: int
    start: int
    scores: list = field(default_factory=list)    # per C: #correct, or sum of squared errors
    changed: list = field(default_factory=list)   # per C: w moved by more than 1e-15
    n_iter: list = field(default_factory=list)    # per C: solver iterations (all classes)
    w: Optional[np.ndarray] = None                # (w_size, #binary problems) at the last C
    alpha: Optional[list] = None                  # dual solvers: alphas at the last C

    def __sizeof__(self) -> int:    # dask.sizeof: a path's result stays on its worker
        return object.__sizeof__(self) + arrays_nbytes(self.w, self.alpha)


def _next_count(count: int, changed: bool) -> int:
    """LIBLINEAR's num_unchanged_w after one C (set to -1 on a change, then ++)."""
    return 0 if changed else count + 1


def run_fold_path(problem: Problem, perm: np.ndarray, begin: int, end: int, params: Params,
                  Cs: list, request: PathRequest,
                  on_step: Optional[Callable] = None) -> PathResult:
    """Trains on all rows but perm[begin:end] at C = Cs[start], Cs[start + 1], ..., each
    warm-started from the one before, and scores each model on perm[begin:end]. Stops
    after the last C, or when its own count of unchanged C's reaches 5 (the count over
    all folds is never higher, so the search does not stop earlier). on_step(request,
    index, score, changed) is called after each C. Runs here or on a Dask worker."""
    held = perm[begin:end]
    train_part = problem.subset(np.concatenate([perm[:begin], perm[end:]]))
    test_part = problem.subset(held)
    regression = params.spec.kind == "regression"
    label = None if regression else order_labels(first_appearance(train_part.y))
    result = PathResult(request.group, request.fold, request.start)
    W = request.w0
    warm_dual = params.spec.search == "dual"
    A = request.alpha0 if warm_dual else None    # the duals each C starts from
    # the duals at the last C trained (a continuation's alpha0 is those at Cs[start - 1])
    last_duals = A
    last_C = float(Cs[request.start - 1]) if request.start > 0 else None
    count = request.counter
    gnorm0_per_C = None      # the Newton solvers' ||grad f(0)|| / C, once a C has made it
    for j in range(request.start, len(Cs)):
        at_C = replace(params, C=float(Cs[j]), gnorm0_per_C=gnorm0_per_C)
        # without train's warning on unknown weight labels: LIBLINEAR silences train()'s
        # output during the search
        weighted_C = class_C(label, at_C)[0] if not regression else None
        fits = []
        for k in range(n_problems(label)):
            task = subproblem(train_part, label, k, weighted_C, at_C)
            if A is not None:
                task = replace(task, alpha0=A[k])
            elif W is not None and not warm_dual:
                task = replace(task, w0=W[:, k])
            fits.append(train_one(task, at_C))
        if warm_dual:
            duals = [f.alpha for f in fits]
            A = duals
            if j + 1 < len(Cs) and last_duals:
                A = list(start_duals(last_duals, duals, last_C, float(Cs[j]),
                                     float(Cs[j + 1]), params))
            last_duals, last_C = duals, float(Cs[j])
        else:
            gnorm0_per_C = tuple(f.gnorm0 / at_C.C if f.gnorm0 is not None else None
                                 for f in fits)
        model = assemble_model(at_C, train_part.n_features, label, fits)
        W_new = model.w             # (w_size, nr_w)
        predicted = predict(model, test_part)
        if regression:
            score = float(np.sum((predicted - test_part.y) ** 2))
        else:
            score = int(np.count_nonzero(predicted == test_part.y))
        changed = W is not None and norm((W_new - W).ravel()) > W_CHANGE_TOL
        count = _next_count(count, changed)
        W = W_new
        result.scores.append(score)
        result.changed.append(changed)
        result.n_iter.append(sum(f.n_iter for f in fits))
        if on_step is not None:
            on_step(request, j, score, changed)
        if count >= UNCHANGED_LIMIT:
            break
    result.w = W
    result.alpha = last_duals
    return result


# ------------------------------------------------------------ LIBLINEAR's rule over folds

class _Group:
    """The folds of one p value: steps in, LIBLINEAR's lines and best C out."""

    def __init__(self, p: float, Cs: list, nr_fold: int, regression: bool):
        self.p = p
        self.Cs = Cs
        self.steps = [dict() for _ in range(nr_fold)]    # fold -> {index: (score, changed)}
        self.w = [None] * nr_fold                         # fold -> w at its last C
        self.alpha = [None] * nr_fold                     # fold -> alphas (dual solvers)
        self.busy = [True] * nr_fold
        self.next = 0            # first C not yet scored over all folds
        self.count = 0           # LIBLINEAR's num_unchanged_w after C's [0, next)
        self.finished = False
        self.max_C_reached = False
        self.regression = regression
        self.best_C = Cs[0] if Cs else math.nan
        self.best_score = math.inf if regression else 0.0
        self.lines = []

    def advance(self, l: int) -> None:
        while not self.finished and all(self.next in s for s in self.steps):
            j = self.next
            total = sum(s[j][0] for s in self.steps)
            changed = any(s[j][1] for s in self.steps)
            C = self.Cs[j]
            log2c = math.log(C) / math.log(2.0)
            if self.regression:
                error = total / l
                if error < self.best_score:
                    self.best_C, self.best_score = C, error
                self.lines.append("log2c=%7.2f\tp=%7.2f\tMean squared error=%g"
                                  % (log2c, self.p, error))
            else:
                rate = total / l
                if rate > self.best_score:
                    self.best_C, self.best_score = C, rate
                self.lines.append("log2c=%7.2f\trate=%g" % (log2c, 100.0 * rate))
            self.count = _next_count(self.count, changed)
            self.next += 1
            if self.count >= UNCHANGED_LIMIT:
                self.finished = True
            elif self.next == len(self.Cs):
                self.finished = self.max_C_reached = True
        if not self.Cs:
            self.finished = self.max_C_reached = True


class _Search:
    """Collects fold results (from any thread), prints LIBLINEAR's lines in its order,
    and says which folds must go on."""

    def __init__(self, plan: list, nr_fold: int, l: int, regression: bool, emit, bar):
        self.groups = [_Group(p, Cs, nr_fold, regression) for p, Cs in plan]
        self.nr_fold = nr_fold
        self.l = l
        self.emit = emit
        self.bar = bar
        self.printed = 0         # groups whose lines are all out
        self.lines_out = 0       # lines out of group `printed`
        self._lock = threading.RLock()

    @property
    def total_steps(self) -> int:
        return sum(len(g.Cs) for g in self.groups) * self.nr_fold

    def initial_requests(self) -> list:
        return [PathRequest(g, i) for g in range(len(self.groups))
                for i in range(self.nr_fold)]

    def record_step(self, request: PathRequest, index: int, score, changed: bool) -> None:
        with self._lock:
            group = self.groups[request.group]
            if index in group.steps[request.fold]:
                return
            group.steps[request.fold][index] = (score, changed)
            self.bar.update()
            self._advance(group)

    def path_done(self, result: PathResult) -> list:
        """Records a finished path; returns the continuations now needed."""
        with self._lock:
            group = self.groups[result.group]
            for offset, (score, changed) in enumerate(zip(result.scores, result.changed)):
                index = result.start + offset
                if index not in group.steps[result.fold]:
                    group.steps[result.fold][index] = (score, changed)
                    self.bar.update()
            group.w[result.fold] = result.w
            group.alpha[result.fold] = result.alpha
            group.busy[result.fold] = False
            self._advance(group)
            return self._continuations(result.group)

    def _advance(self, group: _Group) -> None:
        was_finished = group.finished
        group.advance(self.l)
        if group.finished and not was_finished:
            done = sum(len(s) for s in group.steps)
            self.bar.update(len(group.Cs) * self.nr_fold - done)
        self._flush()

    def _continuations(self, g: int) -> list:
        group = self.groups[g]
        if group.finished:
            return []
        out = []
        for i, steps in enumerate(group.steps):
            if not group.busy[i] and len(steps) == group.next:
                group.busy[i] = True
                out.append(PathRequest(g, i, group.next, group.count, group.w[i],
                                       group.alpha[i]))
        return out

    def _flush(self) -> None:
        """Prints the lines of each group in order, a group only after those before it."""
        while self.printed < len(self.groups):
            group = self.groups[self.printed]
            while self.lines_out < len(group.lines):
                self.bar.emit(self.emit, group.lines[self.lines_out])
                self.lines_out += 1
            if not group.finished:
                return
            if group.max_C_reached:
                self.bar.emit(self.emit, MAX_C_WARNING)
            self.printed += 1
            self.lines_out = 0

    def result(self):
        """(best_C, best_p, best_score) as LIBLINEAR's find_parameters."""
        if len(self.groups) == 1 and not self.groups[0].regression:
            g = self.groups[0]
            return g.best_C, -1.0, g.best_score
        best = (math.nan, -1.0, math.inf)
        for g in self.groups:
            if g.best_score < best[2]:
                best = (g.best_C, g.p, g.best_score)
        return best


def run_search(plan: list, nr_fold: int, l: int, regression: bool, submit, completed,
               emit) -> tuple:
    """The search over `plan`, with fold paths run by submit(request, search) -> future
    and finished futures taken from `completed`, an iterator with add(future) that yields
    futures as they finish (distributed.as_completed on a cluster, _Completed here).
    Returns (best_C, best_p, best_score)."""
    with progress_bar(sum(len(Cs) for _, Cs in plan) * nr_fold, "-C search") as bar:
        search = _Search(plan, nr_fold, l, regression, emit, bar)
        for request in search.initial_requests():
            completed.add(submit(request, search))
        for future in completed:
            for request in search.path_done(future.result()):
                completed.add(submit(request, search))
        return search.result()


class _Completed:
    """concurrent.futures futures in the order they finish; more may be added while
    iterating (as distributed.as_completed allows)."""

    def __init__(self):
        self._done = queue.SimpleQueue()
        self._waiting = 0

    def add(self, future) -> None:
        self._waiting += 1
        future.add_done_callback(self._done.put)

    def __iter__(self):
        while self._waiting:
            future = self._done.get()
            self._waiting -= 1
            yield future


def checked_search_params(params: Params, nr_fold: int) -> Params:
    """The checks of train -C, for either backend; returns the resolved Params."""
    check_parameter(params)
    if params.spec.search is None:
        raise DlinearError(SEARCH_SOLVER_ERROR)
    if params.multinomial:
        raise DlinearError("-C (parameter search) does not support --multinomial yet")
    if nr_fold < 2:
        raise DlinearError("n-fold cross validation: n must >= 2")
    return params.resolved()


def find_parameters_in_process(problem: Problem, params: Params, nr_fold: int,
                               start_C: Optional[float] = None,
                               start_p: Optional[float] = None,
                               log: Optional[Callable[[str], None]] = None,
                               n_threads: Optional[int] = None) -> tuple:
    """LIBLINEAR 2.50's find_parameters (train -C) on a Problem in this process, the folds
    on n_threads threads (default: one per core); see dlinear.api.find_parameters."""
    params = checked_search_params(params, nr_fold)
    if problem.n_samples == 0:
        raise DlinearError("the training set is empty")
    emit = log or (lambda line: None)
    plan = search_plan(problem, params, start_C, start_p)
    perm, fold_start = cv_folds(problem.n_samples, nr_fold, params.seed, emit)
    nr_fold = len(fold_start) - 1
    group_params = [replace(params, p=p) if p >= 0 else params for p, _ in plan]
    if n_threads is None:
        n_threads = available_cores()
    pool = ThreadPoolExecutor(max_workers=max(1, n_threads))

    def submit(request, search):
        return pool.submit(run_fold_path, problem, perm, fold_start[request.fold],
                           fold_start[request.fold + 1], group_params[request.group],
                           plan[request.group][1], request, search.record_step)

    try:
        return run_search(plan, nr_fold, problem.n_samples,
                          params.spec.kind == "regression", submit, _Completed(), emit)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


# ------------------------------------------------------------- every C's model (--path-models)

@surfacing_interrupts      # one Ctrl-C watcher for the path, not a thread started per fit
def train_path(problem: Problem, params: Params, Cs, train_fn,
               init_of: Callable = lambda model: model) -> list:
    """The models on all of `problem` at each C of Cs (ascending), each fit warm-started
    from the models at the C's before it: the Newton solvers from w extrapolated from the
    two models before (extrapolated_start), with the stopping rule's ||grad f(0)|| scaled
    from the first fit's (Params.gnorm0_per_C) rather than computed again; the SVC dual
    solvers (-s 1, 3) from their duals, extrapolated alike (_path_duals); the others from
    the model before (the other dual solvers: duals consistent with its w).
    train_fn(problem, params, init) trains one model (dlinear.train with its options);
    init_of(model) is the warm start a fit takes from the model before (the model itself
    in process, its weights on a cluster, None where there is none). The models returned
    keep no duals."""
    with facts_shared():        # the problem's labels and columns, made once
        return _train_path(problem, params, Cs, train_fn, init_of)


def _train_path(problem, params, Cs, train_fn, init_of) -> list:
    models = []
    Cs = sorted(float(c) for c in Cs)
    svc_dual = params.spec.search == "dual"
    for k, C in enumerate(Cs):
        init = None if k == 0 else init_of(models[-1])
        at_C = replace(params, C=C, keep_duals=svc_dual)
        if k >= 1 and init is not None and params.spec.newton:
            if k >= 2:
                init = extrapolated_start(models[-2].w, models[-1].w, Cs[k - 2], Cs[k - 1],
                                          C)
            known = getattr(models[-1], "gnorm0_per_C", None)    # () where none reported
            at_C = replace(at_C, gnorm0_per_C=known or None)
        elif k >= 1 and svc_dual and getattr(models[-1], "duals", ()):
            at_C = replace(at_C, init_duals=_path_duals(models, Cs, k, params))
            init = None
        models.append(train_fn(problem, at_C, init))
        if k >= 2:          # duals are l values a problem: only the last two are used
            models[k - 2] = _without_duals(models[k - 2])
    models[-2:] = [_without_duals(m) for m in models[-2:]]
    return models


def _without_duals(model):
    return replace(model, duals=()) if getattr(model, "duals", ()) else model


def _path_duals(models, Cs, k, params):
    """The SVC dual's start at Cs[k] from the duals of the models before it
    (start_duals)."""
    before = models[-2].duals if k >= 2 else ()
    return start_duals(before, models[-1].duals, Cs[k - 2] if k >= 2 else None,
                       Cs[k - 1], Cs[k], params)


def start_duals(before, last, C_before, C_last, C, params):
    """The SVC dual's start at C, each binary problem's duals from those at the two C's
    before (`before` empty where there is one): -s 1's extrapolated in log C through both
    (clipped at 0), as extrapolated_start does w; -s 3's, and with -R (whose duals must
    keep y^T alpha = 0: scaling keeps it, clipping would not), the last C's as they are.
    Along -C's doubling grid on rcv1-shaped rows (40k, 20 C's), -s 1's dual CD iterations
    were 630 from the duals consistent with the last w at the new C, 316 from the last
    duals, 152 extrapolated; -s 3's 698, 211 and 241 (python -m
    scripts.benchmarks.c_path)."""
    if not before or not params.regularize_bias or params.spec.loss != "squared_hinge":
        return last
    return tuple(np.maximum(extrapolated_start(a, b, C_before, C_last, C), 0.0)
                 for a, b in zip(before, last))


def extrapolated_start(w_before, w_last, C_before, C_last, C):
    """w at C predicted on the line through the two models before it in log C. Along
    -C's doubling grid on rcv1-shaped rows (40k, 20 C's) the path's Newton iterations
    went from 31 to 22 for -s 0 and from 32 to 25 for -s 2 against starting from the
    last model (python -m scripts.benchmarks.c_path)."""
    step = np.log(C / C_last) / np.log(C_last / C_before)
    return w_last + step * (w_last - w_before)
