"""-s 6's elastic net (Params.l1_ratio, `--l1-ratio`, LogisticRegression(penalty=
"elasticnet")):  min_w  rho ||w||_1 + (1 - rho)/2 ||w||^2 + sum_i C_i log(1 + exp(-y_i w.x_i)).

LIBLINEAR has no elastic net, so the reference is scikit-learn's saga solved to a tight
tolerance (its objective is this one divided by C l). Objectives, non-zero patterns,
one-vs-rest classes against binary saga fits, rho = 1 against -s 6, rho = 0 against
LIBLINEAR's -s 0, the model file through LIBLINEAR's predict, the command line, the
parameter checks and a cluster fit."""
import functools
import warnings

import numpy as np
import pytest

from dlinear import DlinearError, Params, predict, save_model, train
from dlinear.datasets.rcv1_like import make_rcv1_like, make_rcv1_like_split
from dlinear.params import check_parameter
from dlinear.predict import predict_probability
from dlinear.solvers.primal_objective_values import primal_objective
from tests.support.liblinear_oracle import assert_near_optimum, f_star, liblinear_train
from tests.support.measures import jaccard, rel_diff

# Relative objective gap to saga's optimum allowed at -e 3e-4 (EPS): the largest gap
# measured there over these tests is 1.5e-7, so 4e-7 (the issue asks for 1e-6); at
# -e 3e-3 (the 10x-loose mutation) the gaps are 2.4e-7 to 2.2e-4 and 11 of the 14
# precision tests fail (docs/contributing.rst, "Parity tolerances").
EPS = 3e-4
TOL = 4e-7
SAGA_TOL = 1e-10        # saga's own gap to the optimum is < 1e-13 here


@functools.lru_cache(maxsize=None)
def data_set(name):
    """(Problem, C) of the small text-shaped sets."""
    if name == "a":
        return make_rcv1_like(600, n_features=400, nnz_per_row=20, seed=31), 1.0
    if name == "b":
        return make_rcv1_like(500, n_features=700, nnz_per_row=15, seed=32), 4.0
    if name == "three":
        return make_rcv1_like(450, n_features=300, n_classes=3, nnz_per_row=15, seed=33), 2.0
    raise KeyError(name)


def enet_objective(X, ysign, w, b, rho, C):
    """The elastic-net objective of (w, b) with per-row C (numpy, independent of dlinear)."""
    z = X @ w + b
    return float(rho * np.abs(w).sum() + 0.5 * (1.0 - rho) * (w @ w)
                 + (C * np.logaddexp(0.0, -ysign * z)).sum())


@functools.lru_cache(maxsize=None)
def saga(name, rho, fit_intercept, positive=None, weighted=False):
    """scikit-learn's saga elastic net on data set `name` (binary: its labels; with
    `positive`, the one-vs-rest problem of that class): (w, b, its objective, C per row)."""
    from sklearn.linear_model import LogisticRegression
    problem, C = data_set(name)
    X = problem.to_scipy()
    target = problem.y if positive is None else (problem.y == positive).astype(np.float64)
    sample_weight = instance_weights(problem) if weighted else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # saga's deprecation and convergence notes
        model = LogisticRegression(l1_ratio=rho, solver="saga", C=C, tol=SAGA_TOL,
                                   max_iter=100_000, fit_intercept=fit_intercept)
        model.fit(X, target, sample_weight=sample_weight)
    w = model.coef_.ravel()
    b = float(model.intercept_[0]) if fit_intercept else 0.0
    ysign = np.where(target == model.classes_[1], 1.0, -1.0)
    Ci = C * (sample_weight if weighted else 1.0)
    return w, b, enet_objective(X, ysign, w, b, rho, Ci)


def instance_weights(problem):
    return np.random.default_rng(7).uniform(0.2, 3.0, problem.n_samples)


def enet_params(rho, fit_intercept, C, eps=EPS):
    """-s 6 --l1-ratio rho, with an unpenalized intercept (-B 1 -R) as saga has."""
    return Params(solver_type=6, l1_ratio=rho, eps=eps, C=C,
                  bias=1.0 if fit_intercept else -1.0, regularize_bias=not fit_intercept)


def weights_and_bias(model, k=0):
    w = model.w[:, k]
    return (w[:-1], float(w[-1]) * model.bias) if model.bias >= 0 else (w, 0.0)


# ------------------------------------------------------------------ against saga

@pytest.mark.slow
@pytest.mark.parametrize("name,rho,fit_intercept,weighted,eps", [
    ("a", 0.0, False, False, EPS), ("a", 0.5, False, False, EPS),
    ("a", 0.5, True, False, EPS), ("a", 0.8, True, True, EPS),
    ("b", 0.2, False, False, EPS), ("b", 0.8, False, False, EPS),
    ("b", 0.3, True, False, EPS), ("b", 0.5, False, True, EPS),
    # rho = 1 is LIBLINEAR's -s 6 operation for operation, and stops as loosely: at -e 1e-3
    # it is 1.1e-5 above saga's optimum on this set, so it is held at -e 1e-4
    ("b", 1.0, False, False, 1e-4),
])
def test_objective_and_sparsity_match_saga(name, rho, fit_intercept, weighted, eps):
    problem, C = data_set(name)
    if weighted:
        from dataclasses import replace
        problem = replace(problem, sample_weight=instance_weights(problem))
    params = enet_params(rho, fit_intercept, C, eps=eps)
    model = train(problem, params)
    w_saga, _, f_saga = saga(name, rho, fit_intercept, weighted=weighted)

    f_ours = primal_objective(problem, params, model)
    assert_near_optimum(f_ours, f_saga, TOL)
    # primal_objective is the formula above, the intercept outside the penalty
    w, b = weights_and_bias(model)
    ysign = np.where(problem.y == model.label[0], 1.0, -1.0)
    Ci = C * (problem.sample_weight if weighted else 1.0)
    assert rel_diff(enet_objective(problem.to_scipy(), ysign, w, b, rho, Ci), f_ours) < 1e-12

    # the same features selected (saga's coefficients face classes_[1], ours label[0])
    jac = jaccard(w, w_saga)
    print(f"{name} rho={rho} intercept={fit_intercept} weighted={weighted}: Jaccard "
          f"{jac:.4f}, nnz {np.count_nonzero(w)} vs saga {np.count_nonzero(w_saga)} of "
          f"{w.size}; gap {rel_diff(f_ours, f_saga):.1e}")
    assert jac >= 0.97
    if rho > 0:
        assert np.count_nonzero(w) < w.size        # the L1 part selects
    else:
        assert np.count_nonzero(w) == np.count_nonzero(problem.to_scipy().getnnz(axis=0))


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_one_vs_rest_classes_match_binary_saga_fits(fit_intercept):
    """Three classes one-vs-rest: each column solves the binary problem of its class,
    which saga solves alone (saga itself would fit the multinomial loss)."""
    rho = 0.6
    problem, C = data_set("three")
    params = enet_params(rho, fit_intercept, C)
    model = train(problem, params, n_threads=2)
    assert model.nr_w == 3
    X = problem.to_scipy()
    total_saga = 0.0
    for k, label in enumerate(model.label):
        w, b = weights_and_bias(model, k)
        ysign = np.where(problem.y == label, 1.0, -1.0)
        f_ours = enet_objective(X, ysign, w, b, rho, C)
        w_saga, _, f_saga = saga("three", rho, fit_intercept, positive=label)
        assert_near_optimum(f_ours, f_saga, TOL)
        assert jaccard(w, w_saga) >= 0.97
        total_saga += f_saga
    assert_near_optimum(primal_objective(problem, params, model), total_saga, TOL)


# ------------------------------------------------------------------ the ends of rho

@pytest.mark.parametrize("bias,regularize_bias", [(-1.0, True), (1.0, True), (1.0, False)])
@pytest.mark.parametrize("name", ["b", "three"])
def test_ratio_one_is_liblinears_l1_solver_bit_for_bit(name, bias, regularize_bias):
    problem, C = data_set(name)
    plain = Params(solver_type=6, C=C, bias=bias, regularize_bias=regularize_bias)
    one = Params(solver_type=6, C=C, bias=bias, regularize_bias=regularize_bias,
                 l1_ratio=1.0)
    lines_plain, lines_one = [], []
    a, b = train(problem, plain, log=lines_plain.append), train(problem, one,
                                                                 log=lines_one.append)
    np.testing.assert_array_equal(a.w, b.w)
    assert lines_plain == lines_one
    assert primal_objective(problem, one, b) == primal_objective(problem, plain, a)


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_ratio_zero_reaches_liblinears_l2_optimum(fit_intercept):
    """rho = 0 is L2-regularized logistic regression, LIBLINEAR's -s 0 problem, which
    the same newGLMNET iterations solve."""
    from dataclasses import replace
    problem, C = data_set("a")
    ours = train(problem, enet_params(0.0, fit_intercept, C))
    l2 = Params(solver_type=0, C=C, bias=1.0 if fit_intercept else -1.0,
                regularize_bias=not fit_intercept)
    as_l2 = primal_objective(problem, l2, replace(ours, solver_type=0))
    assert_near_optimum(as_l2, f_star(problem, l2), TOL)
    assert rel_diff(as_l2, primal_objective(problem, enet_params(0.0, fit_intercept, C),
                                            ours)) < 1e-14


def test_mixed_penalty_lies_between_and_moves_sparsity():
    """More L1 weight, fewer non-zero weights (on the same data and C)."""
    problem, C = data_set("b")
    nnz = [np.count_nonzero(train(problem, enet_params(rho, False, C)).w)
           for rho in (0.0, 0.2, 0.5, 0.8, 1.0)]
    assert nnz == sorted(nnz, reverse=True) and nnz[0] > 2 * nnz[-1], nnz


# ------------------------------------------------------------------ model files, LIBLINEAR

def test_model_file_is_an_l1r_lr_file_liblinear_predicts(tmp_path):
    from liblinear import liblinearutil
    train_set, test_set = make_rcv1_like_split(600, 300, n_features=400, n_classes=3,
                                               nnz_per_row=20, seed=34)
    model = train(train_set, enet_params(0.4, True, 2.0))
    path = tmp_path / "enet.model"
    save_model(path, model)
    assert "solver_type L1R_LR\n" in path.read_text()
    lib_model = liblinearutil.load_model(str(path))
    labels, _, proba = liblinearutil.predict(test_set.y, test_set.to_scipy(), lib_model,
                                             "-b 1 -q")
    np.testing.assert_array_equal(labels, predict(model, test_set))
    np.testing.assert_allclose(proba, predict_probability(model, test_set), rtol=1e-12,
                               atol=1e-15)


def test_elastic_net_differs_from_what_liblinear_solves():
    """A fractional ratio is a different problem from both of LIBLINEAR's: its optimum is
    below both -s 6's and -s 0's models under the elastic-net objective."""
    problem, C = data_set("a")
    params = enet_params(0.5, False, C, eps=1e-4)
    f_ours = primal_objective(problem, params, train(problem, params))
    for options in ("-s 6 -e 1e-6", "-s 0 -e 1e-6"):
        _, theirs = liblinear_train(problem, f"{options} -c {C}")
        w = theirs.w[:, 0]
        ysign = np.where(problem.y == theirs.label[0], 1.0, -1.0)
        f_theirs = enet_objective(problem.to_scipy(), ysign, w, 0.0, 0.5, C)
        assert f_theirs > f_ours * (1 + 1e-3), (options, f_theirs, f_ours)


# ------------------------------------------------------------------ parameters, CLI

@pytest.mark.parametrize("params,message", [
    (Params(solver_type=0, l1_ratio=0.5), "--l1-ratio (elastic net) is only for -s 6"),
    (Params(solver_type=5, l1_ratio=0.5), "--l1-ratio (elastic net) is only for -s 6"),
    (Params(solver_type=6, l1_ratio=-0.1), "l1_ratio < 0 or l1_ratio > 1"),
    (Params(solver_type=6, l1_ratio=1.5), "l1_ratio < 0 or l1_ratio > 1"),
    (Params(solver_type=6, l1_ratio=float("nan")), "l1_ratio < 0 or l1_ratio > 1"),
    (Params(solver_type=6, l1_ratio=True), "l1_ratio < 0 or l1_ratio > 1"),
])
def test_bad_ratio_is_refused(params, message):
    with pytest.raises(DlinearError, match=message.replace("(", r"\(").replace(")", r"\)")):
        check_parameter(params)
    check_parameter(Params(solver_type=6, l1_ratio=0))
    check_parameter(Params(solver_type=6, l1_ratio=1))


def test_command_line(tmp_path, capfd, monkeypatch):
    from dlinear import load_model
    from dlinear.cli.train_predict import train_main
    from dlinear.data.libsvm_reader import read_libsvm, write_libsvm
    from tests.support.cli import run_in_process
    problem, C = data_set("b")
    write_libsvm(tmp_path / "b.train", problem)
    monkeypatch.chdir(tmp_path)         # the paths as a user in that directory gives them
    # in this process: the model and the lines it prints are the check
    r = run_in_process(capfd, "train", "-s", "6", "--l1-ratio", "0.3", "-c", C, "-B", "1",
                       "-R", "b.train", "m")
    assert r.returncode == 0, r.stderr
    assert "optimization finished" in r.stdout
    expected = train(read_libsvm(tmp_path / "b.train"), enet_params(0.3, True, C, eps=0.01))
    np.testing.assert_array_equal(load_model(tmp_path / "m").w, expected.w)
    objective = float(next(s for s in r.stdout.splitlines()
                           if s.startswith("Objective value")).split("=")[1])
    assert objective == pytest.approx(primal_objective(problem, enet_params(0.3, True, C),
                                                       expected), rel=1e-6)

    assert train_main(["-h"]) == 0 and "--l1-ratio r : -s 6: elastic net" in capfd.readouterr().out
    for args, message in ((["-s", "0", "--l1-ratio", "0.5"], "only for -s 6"),
                          (["-s", "6", "--l1-ratio", "2"], "l1_ratio < 0 or l1_ratio > 1"),
                          (["-s", "6", "--l1-ratio", "half"], "option --l1-ratio needs")):
        assert train_main([*args, str(tmp_path / "b.train"), str(tmp_path / "bad")]) == 1
        err = capfd.readouterr().err
        assert message in err and err.count("\n") == 1 and err.startswith("ERROR: "), err
        assert not (tmp_path / "bad").exists()


def test_cross_validation_uses_the_ratio():
    from dlinear import cross_validation
    problem, C = data_set("b")
    enet = cross_validation(problem, enet_params(0.2, False, C), 3)
    l1 = cross_validation(problem, enet_params(1.0, False, C), 3)
    assert enet.shape == l1.shape == (problem.n_samples,)
    assert not np.array_equal(enet, l1)


# ------------------------------------------------------------------ the estimator

def test_estimator_elasticnet_is_sagas_problem():
    from dlinear import LogisticRegression
    problem, C = data_set("b")
    X, y = problem.to_scipy(), problem.y
    w_saga, b_saga, f_saga = saga("b", 0.3, True)
    for kw in ({"penalty": "elasticnet", "l1_ratio": 0.3, "solver": "saga"},
               {"l1_ratio": 0.3, "solver": "saga"}):           # scikit-learn 1.9's spelling
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)       # penalty is deprecated
            est = LogisticRegression(C=C, tol=EPS, **kw).fit(X, y)
        assert est.solver_type_ == 6 and est.model_.bias == 1.0
        ysign = np.where(y == est.classes_[1], 1.0, -1.0)
        f_ours = enet_objective(X, ysign, est.coef_.ravel(), float(est.intercept_[0]), 0.3, C)
        assert_near_optimum(f_ours, f_saga, TOL)
        assert jaccard(est.coef_.ravel(), w_saga) >= 0.97
        # the objective is flat along the intercept: at -e 1e-3 it is within 2% of saga's
        np.testing.assert_allclose(est.intercept_, [b_saga], rtol=2e-2)
    no_intercept = LogisticRegression(l1_ratio=0.3, C=C, tol=EPS, solver="saga",
                                      fit_intercept=False).fit(X, y)
    assert no_intercept.model_.bias == -1.0 and np.all(no_intercept.intercept_ == 0)
    f = enet_objective(X, ysign, no_intercept.coef_.ravel(), 0.0, 0.3, C)
    assert_near_optimum(f, saga("b", 0.3, False)[2], TOL)


@pytest.mark.parametrize("kw,message", [
    ({"penalty": "elasticnet", "l1_ratio": None},
     "l1_ratio must be specified when penalty is elasticnet"),
    ({"penalty": "elasticnet", "l1_ratio": 1.5}, "must be a float in the range"),
    ({"l1_ratio": 0.5, "solver": "lbfgs"}, "Solver lbfgs supports only 'l2' or None"),
    ({"l1_ratio": 0.5, "solver": "liblinear"}, "Only 'saga' solver supports elasticnet"),
    ({"l1_ratio": 0.5, "solver": "saga", "dual": True}, "supports only dual=False"),
    ({"l1_ratio": 0.5, "multi_class": "multinomial"}, "no multinomial elastic net"),
    ({"l1_ratio": 0.5, "solver": 0}, "solved by -s 6"),
])
def test_estimator_refuses_what_the_elastic_net_cannot_be(kw, message):
    from dlinear import LogisticRegression
    problem, _ = data_set("b")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with pytest.raises(ValueError, match=message):
            LogisticRegression(**kw).fit(problem.to_scipy(), problem.y)


def test_estimator_saga_elastic_net_on_three_classes():
    """saga's own multi-class elastic net is multinomial, which dlinear refuses;
    multi_class="ovr" trains the one-vs-rest classes, each saga's binary problem."""
    from dlinear import LogisticRegression
    problem, C = data_set("three")
    X, y = problem.to_scipy(), problem.y
    with pytest.raises(ValueError, match="multi_class='ovr' trains it one-vs-rest"):
        LogisticRegression(l1_ratio=0.6, solver="saga", C=C).fit(X, y)
    est = LogisticRegression(l1_ratio=0.6, solver="saga", C=C, tol=EPS,
                             multi_class="ovr").fit(X, y)
    assert est.coef_.shape == (3, problem.n_features) and est.model_.bias == 1.0
    for k, label in enumerate(est.classes_):
        ysign = np.where(y == label, 1.0, -1.0)
        f = enet_objective(X, ysign, est.coef_[k], float(est.intercept_[k]), 0.6, C)
        assert_near_optimum(f, saga("three", 0.6, True, positive=label)[2], TOL)


def test_estimator_ratio_with_l1_penalty_warns_as_sklearn():
    from dlinear import LogisticRegression
    problem, _ = data_set("b")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with pytest.warns(UserWarning, match="l1_ratio parameter is only used when penalty"):
            est = LogisticRegression(penalty="l1", l1_ratio=0.5).fit(problem.to_scipy(),
                                                                     problem.y)
    assert est.solver_type_ == 6 and est.model_.bias == 1.0     # LIBLINEAR's -s 6 -B 1
