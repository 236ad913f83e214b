"""Training parameters, LIBLINEAR's command-line options and its check_parameter."""
from __future__ import annotations

import numbers
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Optional

from .errors import DlinearError
from .solver_table import DUAL_MAX_ITER, PARTITION_RULES, SOLVERS, solvers_text

if TYPE_CHECKING:       # NumPy loads where it is used: a command's checks come first
    import numpy as np


INT64_MAX = 2**63 - 1


@dataclass
class Params:
    """LIBLINEAR's parameters, plus dlinear's options.

    Each field is an option of ``dlinear-train``, whose help (``dlinear-train -h``, the
    command-line page of the documentation) says what it does and for which solvers;
    the defaults are the same. ``dlinear.params.check_parameter`` checks a combination with
    LIBLINEAR's words.

    Parameters
    ----------
    solver_type : int, default 1
        ``-s``: the solver, a key of :data:`dlinear.SOLVERS`.
    C : float, default 1.0
        ``-c``.
    eps : float or None, default None
        ``-e``, the stopping tolerance; None is the solver's default (LIBLINEAR's).
    p : float, default 0.1
        ``-p``, the epsilon of the SVR loss.
    nu : float, default 0.5
        ``-n``, nu of the one-class SVM.
    bias : float, default -1.0
        ``-B``; below 0, no bias feature.
    regularize_bias : bool, default True
        False is ``-R`` (needs ``bias=1``).
    class_weights : list of (label, weight)
        ``-wi weight``, in the order given.
    max_iter : int, default 300
        ``--max-iter``: outer iterations of the dual CD solvers and of primal CD. The
        other solvers' caps are LIBLINEAR's, fixed.
    seed : int, default 1
        ``--seed``: the random permutations and CV folds.
    cd_block : {1, 2}, default 1
        ``--cd-block``.
    primal_cd : bool, default False
        ``--primal-cd``.
    online : bool, default False
        ``--online``.
    max_updates : int, default 0
        ``--max-updates``; 0 is max_iter passes' worth.
    newton : {"linesearch", "tron"}, default "linesearch"
        ``--newton``.
    max_newton_iter : int or None, default None
        -s 0, 2, 11 (and multinomial): a cap on the Newton iterations below LIBLINEAR's
        fixed 1000 (the estimators' ``max_iter``); None is 1000.
    kcolumn : bool or None, default None
        -s 0, -s 2 one-vs-rest: True makes all classes share each pass over the data
        (k-column Newton), False fits one class at a time, None chooses by measurement
        in process and takes k-column Newton on a cluster. The model is the same.
    multinomial : bool, default False
        ``--multinomial``.
    partition : bool or None, default None
        ``--partition`` (True) and ``--no-partition`` (False); None chooses by the data's
        size against the workers' memory.
    partition_rule : {"adaptive", "linesearch", "cocoa"} or None, default None
        ``--partition-rule``; None is the solver's default.
    init_sol : Model, numpy.ndarray or None, default None
        The warm start (``-i``, LIBLINEAR's ``init_sol``; docs/guide/warm_start.rst): a
        Model (checked against the data: features, labels, bias, problem family), or
        weights shaped like ``Model.w``, (w_size, 1) or (w_size,) for a binary or
        regression model, (w_size, k) for k classes.
    l1_ratio : float or None, default None
        ``--l1-ratio`` of -s 6 (the elastic net); None is LIBLINEAR's L1.
    checkpoint : str or None, default None
        ``--checkpoint DIR``: save the solver's state in DIR and resume from it
        (docs/guide/checkpoints.rst).
    checkpoint_every : float, default 10.0
        ``--checkpoint-every``: seconds of training between two checkpoints.
    """

    solver_type: int = 1
    C: float = 1.0
    eps: float | None = None
    p: float = 0.1
    nu: float = 0.5
    bias: float = -1.0
    regularize_bias: bool = True
    class_weights: list = field(default_factory=list)
    max_iter: int = DUAL_MAX_ITER
    seed: int = 1
    cd_block: int = 1
    primal_cd: bool = False
    online: bool = False
    max_updates: int = 0
    newton: str = "linesearch"
    max_newton_iter: Optional[int] = None
    kcolumn: Optional[bool] = None
    multinomial: bool = False
    partition: Optional[bool] = None
    partition_rule: Optional[str] = None
    init_sol: Optional[np.ndarray] = None
    l1_ratio: Optional[float] = None
    checkpoint: Optional[str] = None
    checkpoint_every: float = 10.0
    # The #weights of the Newton steps' CG cap max(#weights, 5) when it is not the fit's
    # own: a fit on the columns that occur (dlinear.data.columns) keeps the cap of all the
    # columns, so it stops where the fit on all of them stops. None: the fit's #weights.
    cg_cap_weights: Optional[int] = None
    # Newton solvers: ||grad f(0)|| / C of each binary problem (Model.gnorm0_per_C of a fit
    # on the same rows, labels and weights at another C; the gradient at 0 is linear in
    # C), the stopping rule's scale, which a warm-started fit then takes instead of a pass
    # at w = 0 (a path of C's: dlinear.in_process.model_selection). None: computed.
    gnorm0_per_C: Optional[tuple] = None
    # SVC dual CD (-s 1, -s 3): each binary problem's starting duals, rows in the data's
    # order (a path of C's: the duals at the C's before, dlinear.in_process.model_selection),
    # taken before init_sol's consistent duals; and keep_duals, the model keeps its duals
    # (Model.duals) for the next fit of such a path, or for a warm start from the model
    # after rows are appended (--keep-duals saves them beside the model file;
    # class_plan.incremental_duals). Neither is LIBLINEAR's.
    init_duals: Optional[tuple] = None
    keep_duals: bool = False

    @property
    def spec(self):
        """The solver's ``SolverSpec`` in :data:`dlinear.SOLVERS`."""
        return SOLVERS[self.solver_type]

    def resolved(self) -> "Params":
        """A copy with eps and the partition rule filled in from the solver's defaults.

        Returns
        -------
        Params
        """
        changes = {}
        if self.eps is None:
            changes["eps"] = self.spec.default_eps
        if self.partition_rule is None:
            changes["partition_rule"] = self.spec.partition_rule
        return replace(self, **changes) if changes else self


def class_C(label, params: Params, C: Optional[float] = None):
    """LIBLINEAR's weighted_C: for each class of `label` (in that order), C (params.C by
    default) times its -wi weights, applied in the order given; and the weight labels that
    match no class (LIBLINEAR warns about them)."""
    import numpy as np
    label = np.asarray(label)
    weighted_C = np.full(len(label), float(params.C if C is None else C))
    unknown = []
    for weight_label, weight in params.class_weights:
        hits = np.flatnonzero(label == weight_label)
        if len(hits) == 0:
            unknown.append(weight_label)
        else:
            weighted_C[hits[0]] *= weight
    return weighted_C, unknown


def check_parameter(params: Params) -> None:
    """LIBLINEAR's check_parameter, with its wording, plus dlinear's own checks."""
    if params.solver_type not in SOLVERS:
        raise DlinearError("unknown solver type")
    spec = SOLVERS[params.solver_type]
    if params.eps is not None and not params.eps > 0:
        raise DlinearError("eps <= 0")
    if not params.C > 0:
        raise DlinearError("C <= 0")
    if params.p < 0 and spec.kind == "regression":
        raise DlinearError("p < 0")
    if params.bias >= 0 and spec.kind == "oneclass":
        raise DlinearError("prob->bias >=0, but this is ignored in ONECLASS_SVM")
    if spec.kind == "oneclass" and not 0 < params.nu <= 1:
        raise DlinearError("nu <= 0 or nu > 1")
    if not params.regularize_bias:
        if params.bias != 1.0:
            raise DlinearError("To not regularize bias, must specify -B 1 along with -R")
        if not spec.regularize_bias_optional:
            raise DlinearError("-R option supported only for solver L2R_LR, "
                               "L2R_L2LOSS_SVC_DUAL, L2R_L2LOSS_SVC, L2R_L1LOSS_SVC_DUAL, "
                               "L1R_L2LOSS_SVC, L1R_LR, and L2R_L2LOSS_SVR")
        if spec.dual_cd and (params.cd_block == 2 or params.online):
            raise DlinearError(f"-R with {solvers_text(_dual_cd_with_R, 'or')} solves the "
                               "dual with the bias constraint by its own two-variable CD; it "
                               "cannot be combined with --cd-block 2 or --online")
    if params.init_sol is not None and not spec.init_sol:
        # LIBLINEAR's words, with the solvers dlinear warm-starts
        raise DlinearError(f"Initial-solution specification supported only for solvers "
                           f"{solvers_text(lambda s: s.init_sol)}")
    if params.keep_duals and not spec.two_variable_cd:
        raise DlinearError(f"--keep-duals is for {solvers_text(lambda s: s.two_variable_cd)} "
                           f"(the SVC dual) only")
    if params.max_iter < 1:
        raise DlinearError("max_iter < 1")
    # the kernels take these as int64
    if params.max_iter > INT64_MAX or params.max_updates > INT64_MAX:
        raise DlinearError(f"max_iter or max_updates > {INT64_MAX}")
    if not 0 <= params.seed:
        raise DlinearError("seed < 0")
    _check_cd_options(params)
    if params.multinomial and not spec.multinomial:
        raise DlinearError(f"--multinomial is only for "
                           f"{solvers_text(lambda s: s.multinomial)} (logistic regression)")
    _check_l1_ratio(params)
    if not spec.available:
        raise DlinearError(f"solver -s {spec.id} ({spec.name}) is not available in this "
                           f"version of dlinear; available: "
                           f"{', '.join(str(s.id) for s in SOLVERS.values() if s.available)}")


def _dual_cd_with_R(spec) -> bool:
    return spec.dual_cd and spec.regularize_bias_optional


def _check_cd_options(params: Params) -> None:
    """--cd-block, --primal-cd, --online, --max-updates, --partition, --newton."""
    spec = params.spec
    if params.cd_block not in (1, 2):
        raise DlinearError("--cd-block must be 1 or 2")
    if params.cd_block == 2 and not spec.two_variable_cd:
        raise DlinearError(f"--cd-block 2 (two-variable block dual CD) is for "
                           f"{solvers_text(lambda s: s.two_variable_cd)} only")
    if params.primal_cd and not spec.primal_cd:
        raise DlinearError(f"--primal-cd (primal coordinate descent) is for "
                           f"{solvers_text(lambda s: s.primal_cd)} only")
    if params.online:
        if not (spec.online or params.primal_cd):
            raise DlinearError(f"--online is for {solvers_text(lambda s: s.online)}, and "
                               f"{solvers_text(lambda s: s.primal_cd)} with --primal-cd")
        if params.cd_block == 2:
            raise DlinearError("--online updates one variable at a time; "
                               "it cannot be combined with --cd-block 2")
    if params.max_updates < 0:
        raise DlinearError("max_updates < 0")
    if params.max_updates > 0 and not params.online:
        raise DlinearError("--max-updates needs --online")
    if params.partition_rule not in (None,) + PARTITION_RULES:
        raise DlinearError(f"--partition-rule must be {', '.join(PARTITION_RULES[:-1])} or "
                           f"{PARTITION_RULES[-1]}, got {params.partition_rule!r}")
    if params.partition and not (
            (spec.partitioned_dual_cd and params.cd_block == 1 and not params.online)
            or (spec.partitioned and spec.newton) or spec.partitioned_owlqn):
        raise DlinearError(
            f"--partition is for {solvers_text(lambda s: s.partitioned and s.newton)} "
            f"(Newton map-reduced over the parts; --primal-cd too, by Newton), "
            f"{solvers_text(lambda s: s.partitioned_owlqn)} (OWL-QN map-reduced) and "
            f"{solvers_text(lambda s: s.partitioned_dual_cd)} (partitioned dual CD, "
            f"one-variable, not --online) only")
    if params.newton not in ("linesearch", "tron"):
        raise DlinearError(f"--newton must be linesearch or tron, got {params.newton!r}")


def _check_l1_ratio(params: Params) -> None:
    """--l1-ratio: the elastic net of -s 6, a number in [0, 1]."""
    ratio = params.l1_ratio
    if ratio is None:
        return
    if not params.spec.elastic_net:
        raise DlinearError(f"--l1-ratio (elastic net) is only for "
                           f"{solvers_text(lambda s: s.elastic_net)}")
    if isinstance(ratio, bool) or not isinstance(ratio, numbers.Real) \
            or not 0.0 <= ratio <= 1.0:
        raise DlinearError(f"l1_ratio < 0 or l1_ratio > 1 (got {ratio!r})")
