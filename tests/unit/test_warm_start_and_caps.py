"""Warm starts of the dual SVC solvers in every variant (the -C search), and a distinct
message for each kind of cap a solver can reach."""
import warnings
from dataclasses import replace

import numpy as np
import pytest

from dlinear import ConvergenceWarning, Params
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.in_process.model_selection import PathRequest, run_fold_path
from dlinear.solvers import FitResult, fit_task
from dlinear.solvers.l1r import fit_l1r
from dlinear.planning.class_plan import (assemble_model, first_appearance, order_labels, subproblem,
                                        warn_about_status)
from dlinear.solvers import status as status_module
from dlinear.solvers.status import LINES, Status, log_line, warning_text
from dlinear.in_process.train import cv_folds, train_one

VARIANTS = [{}, {"cd_block": 2}, {"online": True}]
VARIANT_IDS = ["one-variable", "cd-block-2", "online"]


@pytest.fixture(scope="module")
def binary():
    return make_rcv1_like(600, n_features=300, nnz_per_row=15, seed=7)


def _task(problem, params):
    label = order_labels(first_appearance(problem.y))
    return subproblem(problem, label, 0, np.full(2, params.C), params)


@pytest.mark.slow
@pytest.mark.parametrize("solver", [1, 3])
@pytest.mark.parametrize("variant", VARIANTS, ids=VARIANT_IDS)
def test_dual_svc_starts_from_the_given_alpha(binary, solver, variant):
    """From the optimum's alpha, every variant stops within a few passes (cold: 60 to 200)
    at the same w; it returns its alpha for the next warm start."""
    params = Params(solver_type=solver, C=4.0, eps=1e-4, **variant)
    task = _task(binary, params)
    cold = fit_task(task, params)
    warm = fit_task(replace(task, alpha0=cold.alpha), params)
    assert cold.alpha is not None and warm.alpha is not None
    assert cold.n_iter >= 50
    assert warm.n_iter <= 3
    np.testing.assert_allclose(warm.w, cold.w, atol=1e-4)


@pytest.mark.parametrize("solver", [1, 3])
@pytest.mark.parametrize("variant", VARIANTS, ids=VARIANT_IDS)
def test_search_path_warm_starts_every_variant(binary, solver, variant):
    """A fold's C path (the -C search) passes each C's alpha to the next: fewer passes in
    all than the same C's trained cold (which a path ignoring the warm start equals
    exactly: the seeds do not depend on C)."""
    perm, starts = cv_folds(binary.n_samples, 3, 1, lambda line: None)
    Cs = [0.25 * 2 ** k for k in range(6)]
    params = Params(solver_type=solver, **variant).resolved()
    warm = run_fold_path(binary, perm, starts[0], starts[1], params, Cs, PathRequest(0, 0))
    cold = [run_fold_path(binary, perm, starts[0], starts[1], params, [C],
                          PathRequest(0, 0)).n_iter[0] for C in Cs]
    assert warm.alpha is not None and all(a is not None for a in warm.alpha)
    assert warm.n_iter[0] == cold[0]
    assert sum(warm.n_iter[1:]) < sum(cold[1:])


def test_switch_to_primal_keeps_the_dual_alpha(binary):
    """After LIBLINEAR's dual-to-primal switch (-s 1 at its cap continues with -s 2), the
    result still carries the dual's alpha, so the next C of a search warm-starts."""
    params = Params(solver_type=1, C=4.0, eps=1e-4, max_iter=2)
    task = _task(binary, params)
    dual_alone = fit_task(task, params)
    result = train_one(task, params)
    assert "Switching to use -s 2" in result.log
    np.testing.assert_array_equal(result.alpha, dual_alone.alpha)
    perm, starts = cv_folds(binary.n_samples, 3, 1, lambda line: None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        path = run_fold_path(binary, perm, starts[0], starts[1], params.resolved(),
                             [0.5, 1.0, 2.0], PathRequest(0, 0))
    assert all(a is not None for a in path.alpha)


def _result(status=Status.CONVERGED, switched_to=None):
    return FitResult(w=np.zeros(2), n_iter=1, status=Status(status), switched_to=switched_to)


def _warned(results):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        warn_about_status(results)
    return [str(w.message) for w in seen if issubclass(w.category, ConvergenceWarning)]


def test_each_cap_has_its_own_warning():
    """LIBLINEAR's wording for each cap; one warning per kind, however many results meet it."""
    every = Status(0)
    for flag in LINES:
        every |= flag
    assert _warned([_result(Status.MAX_CG_STEPS), _result(every)]) == [
        "WARNING: reaching maximal number of CG steps",
        "WARNING: reaching max number of Newton iterations",
        "WARNING: reaching max number of inner iterations",
        "WARNING: reaching max number of iterations",
        "WARNING: reaching max number of updates (--max-updates) before the stopping tolerance",
        "WARNING: line search fails"]
    assert set(LINES) == set(Status) - {Status.CONVERGED}   # every bit has its line
    assert Status.MAX_ITER == 1 and Status.CONVERGED == 0     # scipy.optimize's convention
    assert log_line(Status.MAX_UPDATES, budget=1000) == (
        "WARNING: reaching max number of updates (1000) before the stopping tolerance")
    assert _warned([_result()]) == []


def test_dual_cap_then_switch_warns_only_when_the_primal_solver_does():
    """The dual cap followed by LIBLINEAR's switch is no warning when the primal solver
    converged (the model is at its optimum); a primal cap after the switch says so."""
    assert _warned([_result(switched_to=2)]) == []
    assert _warned([_result(Status.MAX_NEWTON_ITER, switched_to=2)]) == [
        "WARNING: reaching max number of Newton iterations (the dual solver reached its "
        "iteration cap and switched to the primal solver -s 2)"]
    # without a switch (LIBLINEAR's hint instead), the dual cap is the model's
    assert _warned([_result(Status.MAX_ITER)]) == ["WARNING: reaching max number of iterations"]


@pytest.mark.parametrize("solver_type, capped", [(2, Status.MAX_NEWTON_ITER),
                                                 (3, Status.MAX_ITER), (5, Status.MAX_ITER)])
def test_the_warning_comes_from_the_status_not_the_log_text(binary, monkeypatch, solver_type,
                                                            capped):
    """Reworded log lines keep their warnings: train warns from the results' statuses, and
    the solvers log whatever text dlinear.solvers.status holds."""
    reworded = {flag: f"NOTE: cap {int(flag)} met" for flag in LINES}
    monkeypatch.setattr(status_module, "LINES", reworded)
    params = Params(solver_type=solver_type, C=4.0, eps=1e-12, max_iter=1,
                    max_newton_iter=1)
    task = _task(binary, params.resolved())
    result = train_one(task, params.resolved())
    assert result.status & capped
    assert f"NOTE: cap {int(capped)} met" in result.log
    assert not any(line.startswith("WARNING: reaching") for line in result.log)
    with pytest.warns(ConvergenceWarning) as seen:
        assemble_model(params.resolved(), binary.n_features, np.array([1, -1]), [result])
    assert warning_text(capped) in [str(w.message) for w in seen]


def test_l1r_lr_inner_and_outer_caps_are_told_apart(binary):
    """-s 6: an inner (coordinate-descent) cap alone warns as an inner cap; the Newton
    iteration cap as LIBLINEAR's outer one."""
    params = Params(solver_type=6, C=4.0, eps=1e-6).resolved()
    task = _task(binary, params)
    inner = fit_l1r(task, params, max_inner_iter=1)
    assert any(line.startswith("WARNING: reaching max number of inner iterations")
               for line in inner.log)
    assert not inner.hit_max_iter
    with pytest.warns(ConvergenceWarning) as seen:
        assemble_model(params, binary.n_features, np.array([1, -1]), [inner])
    assert [str(w.message) for w in seen] == ["WARNING: reaching max number of inner iterations"]
    outer = fit_l1r(task, params, max_newton_iter=1)
    assert outer.hit_max_iter
    with pytest.warns(ConvergenceWarning) as seen:
        assemble_model(params, binary.n_features, np.array([1, -1]), [outer])
    assert "WARNING: reaching max number of iterations" in [str(w.message) for w in seen]
