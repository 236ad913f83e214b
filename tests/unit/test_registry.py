"""The solver registry (dlinear.solver_table): its rows agree with LIBLINEAR's names and
with dlinear's documented options, and every table, check and mode derived from it says
what the rows say."""
import re

import numpy as np
import pytest

from dlinear import DlinearError, Params
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.model import nr_w_of
from dlinear.in_process.model_selection import SEARCH_SOLVER_ERROR, checked_search_params
from dlinear.planning.modes import check_partitioned, is_map_reduce, use_kcolumn, use_kcolumn_on_cluster
from dlinear.params import check_parameter
from dlinear.solver_table import METHODS, PARTITION_RULES, SEARCH_WARM_STARTS, SOLVERS
from dlinear.solvers.primal_objective_values import _loss
from dlinear.solvers.primal_objectives import LOSS_OF_SOLVER, PrimalObjective

AVAILABLE = [s for s in SOLVERS.values() if s.available]
LOSS_OF_NAME = {"LR": "logistic_regression", "L2LOSS_SVC": "squared_hinge",
                "L1LOSS_SVC": "hinge", "L2LOSS_SVR": "squared_epsilon_insensitive",
                "L1LOSS_SVR": "epsilon_insensitive"}


def ids(test):
    return {s.id for s in AVAILABLE if test(s)}


@pytest.mark.parametrize("spec", list(SOLVERS.values()), ids=lambda s: s.name)
def test_a_row_says_what_liblinears_name_says(spec):
    """L2R_L2LOSS_SVC_DUAL: penalty l2, squared hinge, dual; and the rows' own rules."""
    match = re.fullmatch(r"(L[12])R_(.+?)(_DUAL)?", spec.name)
    if match and match[2] in LOSS_OF_NAME:
        assert (spec.penalty, spec.loss, spec.dual) == \
            (match[1].lower(), LOSS_OF_NAME[match[2]], bool(match[3]))
    assert spec.method in METHODS and spec.partition_rule in PARTITION_RULES
    assert spec.search in (None,) + SEARCH_WARM_STARTS
    assert spec.probability == (spec.loss == "logistic_regression")
    assert spec.dual == spec.method.endswith("dual_cd")
    if spec.fallback is not None:        # the same problem, in the primal
        primal = SOLVERS[spec.fallback]
        assert (primal.loss, primal.penalty, primal.dual) == (spec.loss, spec.penalty, False)
    if spec.search == "dual":
        assert spec.dual_cd
    if spec.search == "primal":
        assert spec.init_sol
    if spec.kcolumn or spec.multinomial:
        assert spec.newton and spec.kind == "classification"


def test_the_options_each_solver_takes():
    """dlinear's documented options, solver by solver (README, `dlinear-train` help)."""
    assert ids(lambda s: s.newton) == {0, 2, 11}
    assert ids(lambda s: s.dual_cd) == {1, 3, 7, 12, 13}
    assert ids(lambda s: s.partitioned_dual_cd) == {1, 3, 4, 7, 12, 13, 21}
    assert ids(lambda s: s.partitioned) == {0, 1, 2, 3, 4, 5, 6, 7, 11, 12, 13, 21}
    assert ids(lambda s: s.partitioned_owlqn) == {5, 6}
    assert ids(lambda s: s.search == "primal") == {0, 2, 11}
    assert ids(lambda s: s.search == "dual") == {1, 3}
    assert ids(lambda s: s.partition_rule == "adaptive") == {1, 3, 4, 21}
    assert ids(lambda s: s.kcolumn) == {0, 2}
    assert ids(lambda s: s.multinomial) == {0}
    assert ids(lambda s: s.elastic_net) == {6}
    assert ids(lambda s: s.two_variable_cd) == ids(lambda s: s.online) == {1, 3}
    assert ids(lambda s: s.primal_cd) == {2}
    assert ids(lambda s: s.all_classes) == {4}


def accepted(**options) -> set:
    """The solvers check_parameter accepts with these options."""
    out = set()
    for spec in AVAILABLE:
        params = Params(solver_type=spec.id, **options)
        if spec.kind == "oneclass":
            params.bias = -1.0
        try:
            check_parameter(params)
        except DlinearError:
            continue
        out.add(spec.id)
    return out


def test_the_parameter_checks_follow_the_rows():
    assert accepted() == ids(lambda s: True)
    assert accepted(cd_block=2) == ids(lambda s: s.two_variable_cd)
    assert accepted(primal_cd=True) == ids(lambda s: s.primal_cd)
    assert accepted(online=True) == ids(lambda s: s.online)
    assert accepted(primal_cd=True, online=True) == ids(lambda s: s.primal_cd)
    assert accepted(partition=True) == ids(lambda s: s.partitioned)
    assert accepted(partition=True, online=True) == set()
    assert accepted(multinomial=True) == ids(lambda s: s.multinomial)
    assert accepted(l1_ratio=0.5) == ids(lambda s: s.elastic_net)
    assert accepted(bias=1.0, regularize_bias=False) == \
        ids(lambda s: s.regularize_bias_optional)
    assert accepted(bias=1.0, regularize_bias=False, cd_block=2) == set()
    assert accepted(init_sol=np.zeros(3)) == ids(lambda s: s.init_sol)


def test_the_modes_and_the_search_follow_the_rows():
    for spec in AVAILABLE:
        params = Params(solver_type=spec.id)
        assert params.resolved().eps == spec.default_eps
        assert params.resolved().partition_rule == spec.partition_rule
        assert is_map_reduce(params) == (spec.newton and spec.partitioned)
        assert use_kcolumn_on_cluster(params, 3) == spec.kcolumn
        assert use_kcolumn(Params(solver_type=spec.id, kcolumn=True), 3, 100.0) == \
            spec.kcolumn
        assert nr_w_of(spec.id, 2) == (2 if spec.all_classes else 1)
        try:
            check_partitioned(params)
            partitioned = True
        except DlinearError:
            partitioned = False
        assert partitioned == spec.partitioned_dual_cd
        try:
            checked_search_params(params, 3)
            searched = True
        except DlinearError as e:
            assert str(e) == SEARCH_SOLVER_ERROR
            searched = False
        assert searched == (spec.search is not None)
    assert SEARCH_SOLVER_ERROR.endswith("for -s 0, 1, 2, 3 and 11")


def test_the_newton_kernels_minimise_the_rows_loss():
    """LOSS_OF_SOLVER's kernel code computes the loss the row names (the loss the primal
    objective values of dlinear.solvers.primal_objective_values use)."""
    assert set(LOSS_OF_SOLVER) == ids(lambda s: s.newton)
    problem = make_rcv1_like(40, n_features=30, nnz_per_row=6, seed=3)
    rng = np.random.default_rng(0)
    X = problem.to_scipy()
    C = rng.uniform(0.5, 2.0, problem.n_samples)
    w = rng.normal(size=problem.n_features)
    for sid, code in LOSS_OF_SOLVER.items():
        spec = SOLVERS[sid]
        if spec.kind == "regression":
            y = rng.normal(size=problem.n_samples)
            margin = X @ w - y
        else:
            y = np.where(problem.y > 0, 1.0, -1.0)
            margin = y * (X @ w)
        objective = PrimalObjective(problem, y, C, -1.0, code, p=0.1)
        expected = 0.5 * w @ w + np.sum(C * _loss(spec.loss, margin, 0.1))
        assert objective.fun(w.copy()) == pytest.approx(expected, rel=1e-12), spec.name
