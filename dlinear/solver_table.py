"""The solver registry: LIBLINEAR's `-s` numbers and everything each one implies.

One SolverSpec per solver holds every fact the code asks about it: the problem (loss,
penalty, primal or dual, in scikit-learn's words), the method, which dlinear options and
modes it takes (partitioned training, the -C search and its warm start, k-column Newton,
--multinomial, --l1-ratio, the CD variants), its default tolerance and partitioned rule,
LIBLINEAR's handling of its iteration cap, and its fit function. CLI help, parameter
checks, model files, the training modes, the search, the primal objective values and the
parity tests read these rows: every other table is derived from them, and no other
module compares solver numbers (tests/unit/test_layers.py checks that).

The rows are plain data at the bottom of the layers, so model files and parameter checks
know the solvers without importing them. A fit function lives above (dlinear.solvers) and
is bound to its row there with bind_fits: a row cannot name a function of a layer above
it without importing upwards. Adding a solver means one kernel, one fit function, its row
here and its binding in dlinear.solvers.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

# SolverSpec.method: how the solver minimises (the docs' solver table shows these texts)
METHODS = {
    "newton": "primal Newton with preconditioned CG (LIBLINEAR 2.40+) or TRON",
    "dual_cd": "dual coordinate descent, one variable per step, with random permutation "
               "and shrinking (Hsieh et al. 2008)",
    "primal_cd": "primal coordinate descent with a line search (Fan et al. 2008, App. F)",
    "newglmnet": "newGLMNET: Newton steps solved by coordinate descent "
                 "(Fan et al. 2008, App. G)",
    "multiclass_dual_cd": "Crammer and Singer's dual, one row's k variables per step "
                          "(Fan et al. 2008, App. E)",
    "oneclass_dual_cd": "two-variable dual coordinate descent under the one-class equality "
                        "constraint (LIBLINEAR 2.50)",
}
# SolverSpec.search: what each C of the -C search starts from
SEARCH_WARM_STARTS = ("primal", "dual")
# how the partitioned dual CD combines its blocks' steps (solvers.partitioned_dual_cd)
PARTITION_RULES = ("adaptive", "linesearch", "cocoa")


@dataclass(frozen=True)
class SolverSpec:
    id: int
    name: str             # as in LIBLINEAR model files
    description: str      # as in LIBLINEAR's `train` help
    kind: str             # "classification", "regression" or "oneclass"
    default_eps: float
    # the problem, in scikit-learn's words where it has them
    loss: str             # logistic_regression, squared_hinge, hinge, squared_epsilon_insensitive,
                          # epsilon_insensitive, crammer_singer, oneclass
    penalty: str          # "l2" or "l1"
    dual: bool            # solved in the dual (dual variables per row)
    method: str           # one of METHODS
    probability: bool = False     # -b 1 allowed (logistic regression)
    fallback: Optional[int] = None        # primal solver run when the dual cap is hit
    fallback_tol_scale: float = 1.0
    faster_hint: Optional[int] = None     # primal solver suggested when the dual cap is hit
    regularize_bias_optional: bool = False  # -R allowed
    # warm start from w0 (Params.init_sol, -i): LIBLINEAR's for -s 0, 2, 11; the dual
    # solvers start from duals consistent with w0 (dlinear.solvers.dual_start)
    init_sol: bool = False
    # A solver of all classes at once (Crammer-Singer): its fit function is
    # fit(problem, class_of_row, weighted_C, params, seed) -> FitResult whose w is
    # (w_size, nr_class); the others fit one task at a time, fit(task, params).
    all_classes: bool = False
    # trains on data spread over the workers (--partition): Newton map-reduced over the
    # parts, dual CD partitioned (each worker the dual variables of its own rows), the L1
    # solvers by OWL-QN map-reduced over the parts
    partitioned: bool = False
    # the partitioned dual CD's combination rule when none is named (one of
    # PARTITION_RULES): "adaptive" for the SVC duals -s 1 and -s 3, measured fastest
    # (BENCHMARKS.md, "Partitioned dual CD"); CoCoA+ elsewhere, where "adaptive" was not
    # measured (its earlier stop under the SVR rule relative to the first round left
    # -s 12 2.7% above the optimum at -e 0.1)
    partition_rule: str = "cocoa"
    # -C (warm-start parameter search): None, or what each C starts from, the previous
    # C's "primal" w (LIBLINEAR: -s 0, 2, 11) or its "dual" alpha (dlinear's extension
    # to -s 1 and 3; started at the optimum's alpha the kernel stops within 3 passes,
    # against 50 or more cold: tests/unit/test_warm_start_and_caps.py)
    search: Optional[str] = None
    # one-vs-rest classes may share each pass over the data (k-column Newton)
    kcolumn: bool = False
    multinomial: bool = False        # --multinomial (softmax) allowed
    elastic_net: bool = False        # --l1-ratio allowed
    # the CD variants a dual CD solver also runs as: --cd-block 2 (two-variable blocks)
    # and --online (random CD with replacement)
    two_variable_cd: bool = False
    online: bool = False
    # --primal-cd: the same problem by primal coordinate descent (Chang et al. 2008),
    # which also takes --online
    primal_cd: bool = False
    # False: a row known to model files and help texts, but with no fit function in this
    # version (tests/unit/test_layers.py checks that every available row has one)
    available: bool = True

    def __post_init__(self):
        for field_, value, allowed in (("method", self.method, METHODS),
                                       ("search", self.search, (None,) + SEARCH_WARM_STARTS),
                                       ("partition_rule", self.partition_rule,
                                        PARTITION_RULES)):
            if value not in allowed:
                raise ValueError(f"-s {self.id}: {field_} {value!r} is not one of "
                                 f"{tuple(allowed)}")

    @property
    def newton(self) -> bool:
        return self.method == "newton"

    @property
    def feature_wise(self) -> bool:
        """Walks the features one by one in a random order (primal CD, newGLMNET's CD)."""
        return self.method in ("primal_cd", "newglmnet")

    @property
    def squared_loss(self) -> bool:
        """The squared variant of a hinge or epsilon-insensitive loss (LIBLINEAR's
        L2LOSS), which the SVC and SVR kernels take as a flag."""
        return self.loss in ("squared_hinge", "squared_epsilon_insensitive")

    @property
    def dual_cd(self) -> bool:
        """A dual coordinate-descent solver: LIBLINEAR's iteration cap (max_iter)
        applies."""
        return self.method == "dual_cd"

    @property
    def partitioned_dual_cd(self) -> bool:
        """Trains by partitioned dual CD (dlinear.solvers.partitioned_dual_cd; -s 4 and
        -s 21 by dlinear.solvers.partitioned_crammer_singer and partitioned_oneclass)."""
        return self.partitioned and self.method in ("dual_cd", "multiclass_dual_cd",
                                                    "oneclass_dual_cd")

    @property
    def partitioned_owlqn(self) -> bool:
        """Trains on partitioned rows by OWL-QN, its loss and gradient map-reduced over
        the parts (dlinear.solvers.owlqn)."""
        return self.partitioned and self.penalty == "l1"

    @property
    def fit(self) -> Callable:
        """The fit function, bound by dlinear.solvers (bind_fits)."""
        try:
            return _FIT[self.id]
        except KeyError:
            raise LookupError(f"no fit function bound for -s {self.id} ({self.name}); "
                              "dlinear.solvers binds them when imported") from None


SOLVERS: dict[int, SolverSpec] = {s.id: s for s in [
    SolverSpec(0, "L2R_LR", "L2-regularized logistic regression (primal)",
               "classification", 0.01, "logistic_regression", "l2", False, method="newton",
               probability=True, regularize_bias_optional=True, init_sol=True,
               partitioned=True, search="primal", kcolumn=True, multinomial=True),
    SolverSpec(1, "L2R_L2LOSS_SVC_DUAL",
               "L2-regularized L2-loss support vector classification (dual)",
               "classification", 0.1, "squared_hinge", "l2", True, method="dual_cd",
               fallback=2, fallback_tol_scale=0.1, regularize_bias_optional=True,
               init_sol=True, partitioned=True, partition_rule="adaptive", search="dual",
               two_variable_cd=True, online=True),
    SolverSpec(2, "L2R_L2LOSS_SVC",
               "L2-regularized L2-loss support vector classification (primal)",
               "classification", 0.01, "squared_hinge", "l2", False, method="newton",
               regularize_bias_optional=True, init_sol=True, partitioned=True,
               search="primal", kcolumn=True, primal_cd=True),
    SolverSpec(3, "L2R_L1LOSS_SVC_DUAL",
               "L2-regularized L1-loss support vector classification (dual)",
               "classification", 0.1, "hinge", "l2", True, method="dual_cd", faster_hint=2,
               regularize_bias_optional=True, init_sol=True, partitioned=True,
               partition_rule="adaptive",
               search="dual", two_variable_cd=True, online=True),
    SolverSpec(4, "MCSVM_CS", "support vector classification by Crammer and Singer",
               "classification", 0.1, "crammer_singer", "l2", True,
               method="multiclass_dual_cd", init_sol=True, all_classes=True,
               partitioned=True, partition_rule="adaptive"),
    SolverSpec(5, "L1R_L2LOSS_SVC", "L1-regularized L2-loss support vector classification",
               "classification", 0.01, "squared_hinge", "l1", False, method="primal_cd",
               regularize_bias_optional=True, init_sol=True, partitioned=True),
    SolverSpec(6, "L1R_LR", "L1-regularized logistic regression",
               "classification", 0.01, "logistic_regression", "l1", False,
               method="newglmnet", probability=True, regularize_bias_optional=True,
               init_sol=True, elastic_net=True, partitioned=True),
    SolverSpec(7, "L2R_LR_DUAL", "L2-regularized logistic regression (dual)",
               "classification", 0.1, "logistic_regression", "l2", True, method="dual_cd",
               probability=True, fallback=0, fallback_tol_scale=0.1, init_sol=True,
               partitioned=True),
    SolverSpec(11, "L2R_L2LOSS_SVR", "L2-regularized L2-loss support vector regression (primal)",
               "regression", 0.0001, "squared_epsilon_insensitive", "l2", False,
               method="newton", regularize_bias_optional=True, init_sol=True,
               partitioned=True, search="primal"),
    SolverSpec(12, "L2R_L2LOSS_SVR_DUAL",
               "L2-regularized L2-loss support vector regression (dual)",
               "regression", 0.1, "squared_epsilon_insensitive", "l2", True,
               method="dual_cd", fallback=11, fallback_tol_scale=0.001, init_sol=True,
               partitioned=True),
    SolverSpec(13, "L2R_L1LOSS_SVR_DUAL",
               "L2-regularized L1-loss support vector regression (dual)",
               "regression", 0.1, "epsilon_insensitive", "l2", True, method="dual_cd",
               faster_hint=11, partitioned=True),
    SolverSpec(21, "ONECLASS_SVM", "one-class support vector machine (dual)",
               "oneclass", 0.01, "oneclass", "l2", True, method="oneclass_dual_cd",
               init_sol=True, partitioned=True, partition_rule="adaptive"),
]}

SOLVER_BY_NAME = {s.name: s for s in SOLVERS.values()}

# LIBLINEAR's cap on outer iterations of its dual CD solvers (train_one in linear.cpp)
DUAL_MAX_ITER = 300

# -s -> fit function, filled by dlinear.solvers (SolverSpec.fit)
_FIT: dict[int, Callable] = {}


def bind_fits(fits: dict) -> None:
    """Binds {-s: fit function} to the rows (SolverSpec.fit); a later binding of a row
    replaces the earlier (tests/conftest.py wraps the fit functions this way)."""
    for sid, fit in fits.items():
        if sid not in SOLVERS:
            raise KeyError(f"no solver -s {sid} in the registry")
        _FIT[sid] = fit


def solvers_text(test: Callable[[SolverSpec], bool], last: str = "and") -> str:
    """The rows for which test(spec) holds as messages name them: "-s 1, 3 and 7"."""
    ids = [str(s.id) for s in SOLVERS.values() if test(s)]
    return "-s " + (ids[0] if len(ids) == 1 else f"{', '.join(ids[:-1])} {last} {ids[-1]}")


def solver_ids(test: Callable[[SolverSpec], bool] = lambda spec: True) -> list:
    """The -s numbers of the available rows for which test(spec) holds, in registry order
    (help texts, case lists of tools and benchmarks)."""
    return [s.id for s in SOLVERS.values() if s.available and test(s)]
