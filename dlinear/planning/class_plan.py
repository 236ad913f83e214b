"""The class plan: what every fit derives from the labels, wherever it runs.

LIBLINEAR's train() before and after its solvers: labels in order of first appearance (a
binary -1/+1 set whose first label is -1 is swapped so +1 is the positive class), -wi
weights on C, one binary problem per class for k > 2 (positive: that class with its
weighted C; negative: the rest with the plain C), a seed per binary problem, and the
model assembled from the fits in class order. The process (dlinear.train), the cluster
engine on the client and the actors on the workers all call these functions, so a model
does not depend on where its parts were computed.
"""
from __future__ import annotations

import warnings
from typing import Callable, NamedTuple, Optional

import numpy as np

from ..data.libsvm_reader import Problem
from ..problem import shared_fact
from ..errors import ConvergenceWarning, DataError, WarmStartError
from ..model import Model, nr_w_of
from ..params import Params, class_C
from ..solvers.status import warning_texts
from ..solvers.task import SharedColumns, SubProblem


def first_appearance(y: np.ndarray) -> np.ndarray:
    """Distinct integer labels of y in order of first appearance (made once for the same
    y along a path: problem.shared_fact)."""
    return shared_fact("labels", (y,), lambda: _first_appearance(y))


def _first_appearance(y: np.ndarray) -> np.ndarray:
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


def n_problems(label) -> int:
    """Binary problems of `label`, or 1 for regression and one-class (label None)."""
    return 1 if label is None else n_binary_problems(len(label))


class ClassPlan(NamedTuple):
    """The classes of a fit: labels in LIBLINEAR's order and each class's weighted C, both
    None for regression and one-class problems (one problem on the labels as they are)."""
    label: Optional[np.ndarray]
    weighted_C: Optional[np.ndarray]

    @property
    def n_problems(self) -> int:
        return n_problems(self.label)


def plan_classes(params: Params, labels_seen: Callable[[], np.ndarray], emit) -> ClassPlan:
    """The ClassPlan of a fit. `labels_seen()` gives the distinct labels in order of first
    appearance (first_appearance of the rows' labels, or a cluster Dataset's); it is called
    for classification only, so regression targets are never read as labels. Unknown -wi
    labels warn (weighted_class_C)."""
    if params.spec.kind != "classification":
        return ClassPlan(None, None)
    label = order_labels(labels_seen())
    return ClassPlan(label, weighted_class_C(label, params, emit))


def targets(y, sample_weight, label, weighted_C, params: Params, ks=None):
    """(Y, C), each (rows, len(ks)), C-contiguous: column j holds the targets and the
    per-instance C of binary problem ks[j] (default: every problem of `label`), or of the
    regression / one-class problem (the labels as they are, C everywhere) when label is
    None. Needs only the rows' labels and weights, so a worker holding some of the rows
    computes the columns of those."""
    if ks is None:
        ks = range(n_problems(label))
    columns = [_target_column(y, sample_weight, label, k, weighted_C, params) for k in ks]
    return (np.ascontiguousarray(np.column_stack([t for t, _ in columns])),
            np.ascontiguousarray(np.column_stack([c for _, c in columns])))


def target_column(y, sample_weight, label, k, weighted_C, params: Params):
    """Column k of targets() as two 1-D arrays of their own (the regression targets a copy
    of y): one binary problem's (y, C) without building (and copying) the (rows, 1)
    arrays, whose freed copies would stay in the heap at the solver's peak."""
    target, C = _target_column(y, sample_weight, label, k, weighted_C, params)
    return (np.array(target) if target is y else target), C


def _target_column(y, sample_weight, label, k, weighted_C, params: Params):
    if label is None:
        target = y
        C = np.full(len(y), params.C)
    else:
        target = np.where(y == label[k], 1.0, -1.0)
        if len(label) == 2:
            Cp, Cn = weighted_C[0], weighted_C[1]
        else:
            Cp, Cn = weighted_C[k], params.C
        C = np.where(target > 0, Cp, Cn)
    if sample_weight is not None:
        C = C * sample_weight
    return target, C


def lean_targets(y, C, classification: bool):
    """One binary or regression problem's (y, C) as the Newton solvers' kernels take them,
    in fewer bytes a row: the +1/-1 labels as int8 (exact in the kernels' float64
    arithmetic) and, where every row has the same C (no instance weights), that value
    broadcast over the rows (a read-only view of one float64): 1 byte a row instead of 16."""
    if classification:
        y = y.astype(np.int8)
    if len(C) and bool((C == C[0]).all()):
        C = np.broadcast_to(C[:1].copy(), C.shape)
    return y, C


def multinomial_C(class_of_row, sample_weight, weighted_C):
    """Per-row C of the multinomial loss: the row's class's (weighted) C x its weight."""
    C = np.asarray(weighted_C, dtype=np.float64)[class_of_row]
    return C * sample_weight if sample_weight is not None else C


def problem_seed(seed: int, k: int, block: Optional[int] = None) -> int:
    """The seed of binary problem k (of its rows in `block`, for a fit split by rows), so
    a result depends neither on the order tasks run in nor on where a block runs."""
    entropy = [seed, k] if block is None else [seed, k, block]
    return int(np.random.SeedSequence(entropy).generate_state(1, dtype=np.uint64)[0]
               & np.uint64(0x7FFFFFFFFFFFFFFF))


def block_seeds(seed: int, block: int, n_problems: int) -> list:
    """problem_seed of each binary problem on one block of rows."""
    return [problem_seed(seed, k, block) for k in range(n_problems)]


def _family(spec, multinomial: bool) -> str:
    """The space a model's weights live in: warm starts move only within one."""
    if spec.kind != "classification":
        return spec.kind
    if multinomial:
        return "multinomial"
    return "crammer_singer" if spec.all_classes else "one-vs-rest"


def warm_start_columns(init, n_features: int, label, params: Params) -> np.ndarray:
    """The warm start `init` (a Model, or weights shaped like Model.w) as the fit's
    init_sol: (w_size, nr_w), its columns in the order of this fit's `label` (None for
    regression and one-class). A Model with fewer features than the data is extended
    with zero weights; more features, other labels, another bias or a solver of another
    problem family is a DlinearError."""
    w_size = n_features + (1 if params.bias >= 0 else 0)
    if not isinstance(init, Model):
        W = np.asarray(init, dtype=np.float64)
        if W.ndim not in (1, 2) or W.shape[0] != w_size:
            raise WarmStartError(f"the initial weights have shape {W.shape}, the fit needs "
                               f"{w_size} rows ({n_features} features"
                               f"{' and the bias' if params.bias >= 0 else ''})")
        return W
    model = init
    family = _family(params.spec, params.multinomial)
    model_family = _family(model.spec, model.multinomial)
    if family != model_family:
        raise WarmStartError(f"the initial model is -s {model.solver_type} "
                           f"({model_family}); -s {params.solver_type} trains a "
                           f"{family} model: warm-start from a model of the same kind")
    if float(model.bias) != float(params.bias):
        raise WarmStartError(f"the initial model has bias {model.bias:g}, this fit -B "
                           f"{params.bias:g}: give the model's -B")
    if model.nr_feature > n_features:
        raise WarmStartError(f"the initial model has {model.nr_feature} features, the data "
                           f"{n_features}: a warm start needs the model's features in the "
                           "data")
    W = np.asarray(model.w, dtype=np.float64).reshape(model.w_size, model.nr_w)
    if model.nr_feature < n_features:       # the new features start at weight 0
        W = np.vstack([W[:model.nr_feature], np.zeros((n_features - model.nr_feature,
                                                       model.nr_w)),
                       W[model.nr_feature:]])
    if label is None:
        return W
    model_label = np.asarray(model.label, dtype=np.int64)
    if len(model_label) != len(label) or set(model_label.tolist()) != set(
            np.asarray(label).tolist()):
        raise WarmStartError(f"the initial model's labels {sorted(model_label.tolist())} are "
                           f"not the data's {sorted(np.asarray(label).tolist())}")
    if W.shape[1] == 1:                     # one binary problem: label[0] is positive
        return W if model_label[0] == label[0] else -W
    where = {int(c): j for j, c in enumerate(model_label)}
    return np.ascontiguousarray(W[:, [where[int(c)] for c in label]])


def incremental_duals(init, n_rows: int, label, params: Params):
    """The duals a Model `init` kept (Model.duals: a -s 1 / -s 3 fit with keep_duals, or
    its file's dlinear.model.DUALS_SUFFIX file) as this -s 1 / -s 3 fit's init_duals, in
    the order of this fit's `label`: each binary problem's duals on the model's rows, the
    data's first rows, then 0 on the rows appended since, as Tsai, Lin & Lin start the
    dual CD after an increment. Any duals >= 0 are a start of these duals (clipped to -s
    3's box), so rows other than the model's cost iterations, never the optimum. None
    where the model kept none or saw more rows than the data has, or for another solver
    (which starts from the model's w) and for -R (whose start must keep y^T alpha = 0)."""
    if (not isinstance(init, Model) or not init.duals or not params.spec.two_variable_cd
            or not params.regularize_bias or params.init_duals is not None
            or len(init.duals[0]) > n_rows):
        return None
    order = range(len(init.duals))
    if len(init.duals) > 1:             # one column per class: the model's label order
        where = {int(c): j for j, c in enumerate(init.label)}
        order = [where[int(c)] for c in label]
    return tuple(np.concatenate([np.maximum(init.duals[j], 0.0),
                                 np.zeros(n_rows - len(init.duals[j]))]) for j in order)


def initial_w(params: Params, k: int):
    """Column k of params.init_sol (the warm start of binary problem k), or None."""
    if params.init_sol is None:
        return None
    w0 = np.asarray(params.init_sol, dtype=np.float64)
    if w0.ndim == 1:
        w0 = w0[:, None]
    return w0[:, k if w0.shape[1] > 1 else 0].copy()


def initial_duals(params: Params, k: int, n_rows: int) -> np.ndarray:
    """params.init_duals of binary problem k, checked against the problem's rows."""
    if k >= len(params.init_duals):
        raise WarmStartError(f"starting duals for {len(params.init_duals)} problems, "
                             f"not for problem {k}")
    alpha = np.asarray(params.init_duals[k], dtype=np.float64)
    if alpha.shape != (n_rows,):
        raise WarmStartError(f"the starting duals of problem {k} have shape {alpha.shape}, "
                             f"the problem has {n_rows} rows")
    return alpha


def known_gnorm0(params: Params, k: int):
    """||grad f(0)|| of binary problem k at params.C from params.gnorm0_per_C, or None."""
    known = params.gnorm0_per_C
    if not known or k >= len(known) or known[k] is None:
        return None
    return float(known[k]) * float(params.C)


def subproblem(problem: Problem, label, k: int, weighted_C, params: Params,
               shared_columns: Optional[SharedColumns] = None) -> SubProblem:
    """Binary problem k: class label[k] against the rest (for two classes, label[0]
    against label[1] with both weighted C's; one class is trained as all-positive, as
    LIBLINEAR does); or, with label None, the regression / one-class problem. Used in
    process and on Dask workers, on their local copy of the data."""
    y, C = target_column(problem.y, problem.sample_weight, label, k, weighted_C, params)
    if params.spec.newton and not params.primal_cd:
        y, C = lean_targets(y, C, classification=label is not None)
    alpha0 = None if params.init_duals is None else initial_duals(params, k, problem.n_samples)
    return SubProblem(problem, y, C, float(params.bias), problem_seed(params.seed, k),
                      w0=initial_w(params, k), alpha0=alpha0, shared_columns=shared_columns,
                      gnorm0=known_gnorm0(params, k))


def warn_about_status(results, stacklevel=2):
    """One ConvergenceWarning per kind of cap or failure in the results' statuses (an
    iteration, CG-step, inner-iteration or update cap reached by any solver or class, or a
    failed line search; dlinear.solvers.status). The solvers only record them, since they
    may run on threads or Dask workers; the caller of train sees this.

    A dual solver's cap followed by LIBLINEAR's switch to the primal solver is no warning
    of its own (the model is the primal solver's, at its optimum unless it warns); the
    primal solver's warnings then say that it ran after the switch."""
    raised = set()
    after_switch = ""
    for result in results:
        if result.switched_to is not None:
            after_switch = (f" (the dual solver reached its iteration cap and switched to "
                            f"the primal solver -s {result.switched_to})")
        for message in warning_texts(result.status):
            if message not in raised:
                raised.add(message)
                warnings.warn(message + after_switch, ConvergenceWarning,
                              stacklevel=stacklevel + 1)


def assemble_model(params: Params, n_features: int, label, results: list,
                   emit: Optional[Callable[[str], None]] = None) -> Model:
    """The Model from the fitted binary problems, in class order. Their log lines go to
    `emit` (when given) in that order, and the iteration-cap warnings are raised here,
    where the caller sees them."""
    if emit is not None:
        for r in results:
            for line in r.log:
                emit(line)
    w_size = n_features + (1 if params.bias >= 0 else 0)
    warn_about_status(results, stacklevel=3)
    nr_class = 2 if label is None else len(label)
    nr_w = nr_class if params.multinomial else nr_w_of(params.solver_type, nr_class)
    # by the column count, not -1: a training set without features has w_size 0
    W = np.column_stack([r.w for r in results]).reshape(w_size, nr_w)
    rho = results[0].rho if params.spec.kind == "oneclass" else 0.0
    gnorm0s = [r.gnorm0 for r in results]
    gnorm0_per_C = (tuple(g / params.C for g in gnorm0s)
                    if params.C > 0 and None not in gnorm0s else ())
    duals = [r.alpha for r in results] if params.keep_duals else []
    return Model(params.solver_type, nr_class, label, n_features, float(params.bias), W,
                 rho=rho, n_iter=tuple(r.n_iter for r in results),
                 multinomial=bool(params.multinomial), gnorm0_per_C=gnorm0_per_C,
                 duals=tuple(duals) if duals and all(a is not None for a in duals) else ())
