"""-s 1 / -s 3 with -B 1 -R: the dual SVM with a true bias (y^T alpha = 0), solved by
two-variable CD. Checked against scikit-learn's SVC(kernel="linear") (libsvm, true bias)
for -s 3, against LIBLINEAR's primal Newton -s 2 -B 1 -R for -s 1, and through
liblinear-official's predict for the saved model."""
import os

import numpy as np
import pytest

from dlinear import DlinearError, Params, Problem, load_model, predict, save_model, train
from dlinear.data.libsvm_reader import read_libsvm
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.model import Model
from dlinear.solvers import SubProblem
from dlinear.solvers.dual_cd import fit_bias_dual_cd_svc
from dlinear.solvers.primal_objective_values import primal_objective
from tests.support.liblinear_oracle import liblinear_decision_values, liblinear_train
from tests.support.measures import rel_diff, warm_and_cold_fold_paths

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")


def sparse_set():
    return make_rcv1_like(1500, 400, nnz_per_row=20, seed=31)


def dense_set():
    """Few dense features, planted labels with 10% flipped and an offset: the bias matters."""
    rng = np.random.default_rng(32)
    X = rng.normal(size=(800, 6))
    y = np.where(X @ rng.normal(size=6) + 1.5 + 0.3 * rng.normal(size=800) > 0, 1.0, -1.0)
    y[rng.random(800) < 0.1] *= -1
    return Problem.from_arrays(X, y)


def example_set():
    return read_libsvm(os.path.join(EXAMPLES, "rcv1_small.train"))


def sklearn_svc_objective(problem, params, class_weight=None):
    """The -s 3 -B 1 -R primal of scikit-learn's SVC(kernel="linear") solution."""
    from sklearn.svm import SVC
    svc = SVC(kernel="linear", C=params.C, tol=1e-6, class_weight=class_weight)
    svc.fit(problem.to_scipy(), problem.y)
    coef = svc.coef_.toarray().ravel() if hasattr(svc.coef_, "toarray") else svc.coef_.ravel()
    # sklearn's decision function is positive for classes_[1]
    label = np.array([svc.classes_[1], svc.classes_[0]], dtype=np.int64)
    model = Model(3, 2, label, problem.n_features, 1.0,
                  np.append(coef, svc.intercept_[0]).reshape(-1, 1))
    return primal_objective(problem, params, model)


@pytest.mark.parametrize("data,C", [("sparse", 1.0), ("sparse", 16.0), ("dense", 1.0),
                                    ("dense", 0.05), ("example", 1.0)])
def test_s3_true_bias_equals_sklearn_svc(data, C):
    problem = {"sparse": sparse_set, "dense": dense_set, "example": example_set}[data]()
    params = Params(solver_type=3, C=C, eps=1e-4, bias=1.0, regularize_bias=False,
                    max_iter=2000)     # C = 16 needs about 500 iterations
    model = train(problem, params)
    f_ours = primal_objective(problem, params, model)
    f_svc = sklearn_svc_objective(problem, params)
    assert rel_diff(f_ours, f_svc) <= 1e-4, (f_ours, f_svc)
    assert model.w[-1, 0] != 0.0       # a bias was fitted


def test_s3_true_bias_class_weights_equal_sklearn():
    problem = sparse_set()
    params = Params(solver_type=3, C=2.0, eps=1e-4, bias=1.0, regularize_bias=False,
                    class_weights=((1, 3.0),))
    f_ours = primal_objective(problem, params, train(problem, params))
    f_svc = sklearn_svc_objective(problem, params, class_weight={1: 3.0})
    assert rel_diff(f_ours, f_svc) <= 1e-4, (f_ours, f_svc)


@pytest.mark.parametrize("data", ["sparse", "dense", "example"])
def test_s1_true_bias_equals_primal_newton(data):
    problem = {"sparse": sparse_set, "dense": dense_set, "example": example_set}[data]()
    params = Params(solver_type=1, eps=1e-4, bias=1.0, regularize_bias=False, max_iter=2000)
    lines = []
    ours = train(problem, params, log=lines.append)
    assert not any("Switching to use -s 2" in line for line in lines)   # the dual's own w
    _, newton = liblinear_train(problem, "-s 2 -e 1e-6 -B 1 -R")
    f_ours = primal_objective(problem, params, ours)
    f_newton = primal_objective(problem, params, newton)
    assert rel_diff(f_ours, f_newton) <= 1e-6, (f_ours, f_newton)


@pytest.mark.parametrize("solver", [1, 3])
def test_stop_rule_and_constraint_hold_at_the_end(solver):
    """y^T alpha = 0, 0 <= alpha <= U, w = sum alpha_i y_i x_i, and the maximal violation
    max_{I_up} -y G - min_{I_low} -y G is at most eps when the solver stops."""
    problem = sparse_set()
    y = np.where(problem.y > 0, 1.0, -1.0)
    C = np.ones(problem.n_samples)
    eps = 0.01
    params = Params(solver_type=solver, eps=eps, bias=1.0, regularize_bias=False)
    result = fit_bias_dual_cd_svc(SubProblem(problem, y, C, 1.0, seed=1), params)
    alpha = result.alpha
    X = problem.to_scipy()
    assert abs(y @ alpha) <= 1e-9 * alpha.sum()
    U = np.inf if solver == 1 else 1.0
    assert alpha.min() >= 0.0 and alpha.max() <= U
    w = X.T @ (alpha * y)
    np.testing.assert_allclose(result.w[:-1], w, atol=1e-10)
    D = 0.5 if solver == 1 else 0.0          # 1 / (2 C)
    G = y * (X @ w) - 1.0 + D * alpha
    v = -y * G
    up = ((y > 0) & (alpha < U)) | ((y < 0) & (alpha > 0))
    low = ((y < 0) & (alpha < U)) | ((y > 0) & (alpha > 0))
    assert 0.0 < v[up].max() - v[low].min() <= eps
    # b lies between the two sides (it is the mean of v over the free variables)
    b = result.w[-1]
    assert v[up].max() - eps <= b <= v[low].min() + eps
    assert not result.hit_max_iter


@pytest.mark.parametrize("solver", [1, 3])
def test_model_file_is_read_by_liblinear_predict(solver, tmp_path):
    from liblinear import liblinearutil
    problem = dense_set()
    params = Params(solver_type=solver, eps=1e-3, bias=1.0, regularize_bias=False,
                    max_iter=2000)
    model = train(problem, params)
    path = str(tmp_path / "m.model")
    save_model(path, model)
    lib_model = liblinearutil.load_model(path)
    labels, values = liblinear_decision_values(lib_model, problem)
    np.testing.assert_array_equal(labels, predict(model, problem))
    X = problem.to_scipy()
    ours = X @ model.w[:-1, 0] + model.w[-1, 0]
    sign = 1.0 if model.label[0] == 1 else -1.0
    np.testing.assert_allclose(values.ravel(), ours, rtol=1e-6, atol=1e-9)
    assert np.mean(labels == problem.y) > 0.8       # 10% of the labels are flipped
    # the bias carries the planted offset: dropping it changes predictions
    assert np.mean(np.where(sign * (X @ model.w[:-1, 0]) > 0, 1, -1) != labels) > 0.01
    np.testing.assert_array_equal(load_model(path).w, model.w)


def test_cli_trains_s3_with_true_bias(tmp_path):
    from dlinear.cli.main import main
    path = os.path.join(EXAMPLES, "rcv1_small.train")
    out = str(tmp_path / "m.model")
    assert main(["train", "-s", "3", "-B", "1", "-R", "-e", "0.01", "-q", path, out]) in (0, None)
    model = load_model(out)
    assert model.solver_type == 3 and model.bias == 1.0 and model.w[-1, 0] != 0.0


@pytest.mark.parametrize("kwargs,fragment", [
    (dict(solver_type=3, bias=-1.0), "must specify -B 1 along with -R"),
    (dict(solver_type=1, bias=2.0), "must specify -B 1 along with -R"),
    (dict(solver_type=3, bias=1.0, cd_block=2), "cannot be combined"),
    (dict(solver_type=1, bias=1.0, online=True), "cannot be combined"),
    (dict(solver_type=7, bias=1.0), "-R option supported only for solver"),
    (dict(solver_type=4, bias=1.0), "-R option supported only for solver"),
    (dict(solver_type=13, bias=1.0), "-R option supported only for solver"),
])
def test_minus_R_is_refused_where_it_makes_no_sense(kwargs, fragment):
    with pytest.raises(DlinearError, match=fragment):
        train(dense_set(), Params(regularize_bias=False, **kwargs))


@pytest.mark.parametrize("solver", [1, 3])
def test_warm_start_from_another_C_is_feasible_and_reaches_the_cold_optimum(solver):
    """The solution at C = 4 as the start at C = 0.5 (-s 3's box shrinks: scaled back into
    it, y^T alpha = 0 kept) and at C = 8: the warm runs reach the cold runs' objective
    in fewer iterations."""
    from dataclasses import replace

    from dlinear.solvers.dual_cd import feasible_warm_start
    problem = sparse_set()
    y = np.where(problem.y > 0, 1.0, -1.0)
    params = Params(solver_type=solver, eps=1e-3, bias=1.0, regularize_bias=False)

    def task(C):
        return SubProblem(problem, y, np.full(problem.n_samples, C), 1.0, seed=1)

    at_1 = fit_bias_dual_cd_svc(task(1.0), params).alpha
    for C in (0.25, 2.0):
        start = feasible_warm_start(replace(task(C), alpha0=at_1), params)
        assert abs(y @ start) <= 1e-9 * start.sum()
        assert start.min() >= 0.0 and (solver == 1 or start.max() <= C)
        cold = fit_bias_dual_cd_svc(task(C), params)
        warm = fit_bias_dual_cd_svc(replace(task(C), alpha0=at_1), params)
        assert cold.n_iter < params.max_iter
        if C > 1.0:
            assert warm.n_iter < cold.n_iter, (warm.n_iter, cold.n_iter)
        obj = [float(line.split("= ")[1]) for r in (cold, warm) for line in r.log
               if line.startswith("Objective value")]
        assert rel_diff(obj[1], obj[0]) <= 1e-6, (C, obj)


@pytest.mark.parametrize("solver", [1, 3])
def test_true_bias_search_warm_starts_alpha(solver, monkeypatch):
    """-C with -B 1 -R: each C starts from the previous C's alpha. Against cold starts on
    the same fold: fewer iterations, the same held-out counts to a few rows."""
    data = make_rcv1_like(3000, n_features=1500, nnz_per_row=25, seed=41)
    params = Params(solver_type=solver, bias=1.0, regularize_bias=False).resolved()
    Cs, warm, cold, _ = warm_and_cold_fold_paths(data, params, monkeypatch)
    assert len(warm.scores) == len(cold.scores) == len(Cs)
    assert sum(warm.n_iter) < 0.8 * sum(cold.n_iter), (warm.n_iter, cold.n_iter)
    assert max(abs(a - b) for a, b in zip(warm.scores, cold.scores)) <= 6   # of 600 rows
