"""OWL-QN (dlinear.solvers.owlqn) in process on a LossTerm: its pseudo-gradient, LIBLINEAR's
stopping rule at the point it returns, and the optimum of the in-process -s 5 / -s 6."""
import numpy as np
import pytest

from dlinear import Params, train
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.solvers.newton import primal_solver_tol
from dlinear.solvers.owlqn import fit_owlqn, minimize_owlqn, pseudo_gradient
from dlinear.solvers.primal_objective_values import primal_objective
from dlinear.solvers.primal_objectives import LOSS_CODE, LossTerm


def test_pseudo_gradient_is_the_minimum_norm_subgradient():
    w = np.array([1.0, -2.0, 0.0, 0.0, 0.0, 0.0])
    g = np.array([0.5, 0.5, 0.3, -1.5, 2.0, 0.7])
    l1 = np.array([1.0, 1.0, 1.0, 1.0, 1.0, 0.0])     # the last one unpenalised
    np.testing.assert_array_equal(pseudo_gradient(w, g, l1),
                                  [1.5, -0.5, 0.0, -0.5, 1.0, 0.7])


@pytest.fixture(scope="module")
def problem():
    return make_rcv1_like(800, n_features=500, nnz_per_row=15, seed=51)


def _term(problem, params, positive):
    y = np.where(problem.y == positive, 1.0, -1.0)
    return y, LossTerm(problem, y, np.full(len(y), params.C), params.bias,
                       LOSS_CODE[params.spec.loss])


def _evaluate(term):
    def evaluate(w):
        loss = term.at(w)
        return loss, term.grad_precond()[0]
    return evaluate


@pytest.mark.parametrize("solver,extra", [(5, {}), (6, {}), (6, {"l1_ratio": 0.3}),
                                          (6, {"regularize_bias": False})])
def test_owlqn_reaches_the_in_process_optimum(problem, solver, extra):
    params = Params(solver_type=solver, eps=1e-4, bias=1.0, C=2.0, **extra).resolved()
    local = train(problem, params)
    y, term = _term(problem, params, local.label[0])     # the model's first label is +1
    counts = (int(np.count_nonzero(y > 0)), len(y))
    result = fit_owlqn(_evaluate(term), term.n_variables, counts, params,
                       not params.regularize_bias)
    spread = local.__class__(**{**vars(local), "w": result.w.copy()})
    f_owlqn = primal_objective(problem, params, spread)
    f_local = primal_objective(problem, params, local)
    assert abs(f_owlqn - f_local) <= 1e-5 * abs(f_local), (f_owlqn, f_local)
    assert np.count_nonzero(result.w) < 0.7 * len(result.w)       # sparse
    assert result.log[-1] == f"#nonzeros/#features = {np.count_nonzero(result.w)}/501"


def test_it_stops_on_liblinears_rule(problem):
    params = Params(solver_type=6, eps=1e-3, bias=1.0).resolved()
    y, term = _term(problem, params, 1.0)
    tol = primal_solver_tol(params.eps, y, regression=False)
    l1 = np.ones(term.n_variables)
    w, n_iter, _, evaluations, stalled = minimize_owlqn(_evaluate(term), term.n_variables,
                                                        l1, 0 * l1, tol)
    assert not stalled and evaluations >= n_iter + 1

    def violation(w):
        return np.abs(pseudo_gradient(w, _evaluate(term)(w)[1], l1)).sum()

    v0 = violation(np.zeros(term.n_variables))
    assert violation(w) <= tol * v0
    # one iteration fewer does not meet it
    w_before, *_ = minimize_owlqn(_evaluate(term), term.n_variables, l1, 0 * l1, tol,
                                  max_iter=n_iter - 1)
    assert violation(w_before) > tol * v0


class SupportOnlyRounds:
    """The workers' side of support-only rounds, in process: the support taken from the
    point evaluated last, X w computed anew on each round, the gradient returned on the
    support only."""

    def __init__(self, term, unpenalized_last):
        self.term, self.unpenalized_last = term, unpenalized_last
        self.point, self.support, self.carried, self.full_rounds = None, None, [], 0

    def _round(self, w):
        self.point = w
        loss = self.term.at(w)
        return loss, self.term.grad_precond()[0]

    def evaluate(self, w):
        self.full_rounds += 1
        self.support = None
        return self._round(w)

    def restrict(self, support):
        nonzeros = np.flatnonzero(self.point)
        if self.unpenalized_last:
            nonzeros = np.union1d(nonzeros, [len(self.point) - 1])
        np.testing.assert_array_equal(support, nonzeros)
        self.support = support

    def loss_gradient_on_support(self, w_support):
        w = np.zeros(self.term.n_variables)
        w[self.support] = w_support
        self.carried.append(len(self.support))
        loss, g = self._round(w)
        return loss, g[self.support]


@pytest.mark.parametrize("solver,extra", [(5, {}), (6, {}), (6, {"l1_ratio": 0.3}),
                                          (6, {"regularize_bias": False})])
def test_support_only_rounds_reach_the_same_optimum(problem, solver, extra):
    """Once the orthant settles the rounds carry w's nonzeros; the stop is still
    LIBLINEAR's rule over all coordinates (a full round checks it), and the optimum is
    the in-process one."""
    params = Params(solver_type=solver, eps=1e-4, bias=1.0, C=2.0, **extra).resolved()
    local = train(problem, params)
    y, term = _term(problem, params, local.label[0])
    counts = (int(np.count_nonzero(y > 0)), len(y))
    rounds = SupportOnlyRounds(term, not params.regularize_bias)
    result = fit_owlqn(rounds.evaluate, term.n_variables, counts, params,
                       not params.regularize_bias, support_rounds=rounds)
    assert rounds.carried and max(rounds.carried) < 0.7 * term.n_variables
    assert rounds.support is None            # the last round was a full one
    spread = local.__class__(**{**vars(local), "w": result.w.copy()})
    f_owlqn = primal_objective(problem, params, spread)
    f_local = primal_objective(problem, params, local)
    assert abs(f_owlqn - f_local) <= 1e-5 * abs(f_local), (f_owlqn, f_local)
    rho = 1.0 if params.l1_ratio is None else params.l1_ratio
    l1 = np.full(term.n_variables, rho)
    l1[-1] *= params.regularize_bias
    g = _evaluate(term)(result.w)[1] + (1.0 - rho) * (l1 > 0) * result.w
    v0 = pseudo_gradient(np.zeros_like(result.w), _evaluate(term)(0 * result.w)[1], l1)
    tol = primal_solver_tol(params.eps, None, False, counts)
    assert np.abs(pseudo_gradient(result.w, g, l1)).sum() <= tol * np.abs(v0).sum()
