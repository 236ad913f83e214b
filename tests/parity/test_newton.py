"""-s 0, -s 2 and -s 11: the Newton drivers, the primal objectives and parity with
LIBLINEAR 2.50 (liblinear-official)."""
import re
import warnings

import numpy as np
import pytest

from dlinear import ConvergenceWarning, DlinearError, Params, Problem, predict, train
from dlinear.kernels import primal_ops
from dlinear.params import check_parameter
from dlinear.predict import evaluate
from dlinear.solvers import SOLVERS, SubProblem
from dlinear.solvers.newton import (fit_newton, linesearch_by_fun, newton,
                                    primal_solver_tol, tron)
from dlinear.solvers.primal_objective_values import primal_objective
from dlinear.planning.class_plan import assemble_model
from dlinear.solvers.primal_objectives import LOSS_OF_SOLVER, LossTerm, PrimalObjective
from tests.support.liblinear_oracle import (assert_near_optimum, f_star, liblinear_train,
                                            liblinear_train_logged)
from tests.support.measures import accuracy, rel_diff

# dlinear's line-search Newton takes LIBLINEAR 2.50's iterates: the same log line for line
# (so the same Newton iterations and CG steps), objectives equal to 1e-14 here
SAME_ITERATES = 1e-12
# TRON (LIBLINEAR 2.20-2.30's driver, not in 2.50): relative gap to f* allowed at -e 1e-4,
# 2-3x the gap reached (-s 0: 2.8e-9, -s 2: 6.4e-8); at -e 1e-3: 4.7e-7 and 8.1e-6
TRON_GAP = {0: 1e-8, 2: 2e-7}


@pytest.fixture(scope="module")
def regression_split(binary_split):
    """The binary split's rows with real-valued targets of a planted linear model."""
    train_set, test_set = binary_split
    rng = np.random.default_rng(5)
    beta = rng.normal(size=train_set.n_features) * 3.0

    def with_targets(p, seed):
        noise = np.random.default_rng(seed).normal(size=p.n_samples) * 0.1
        return Problem(p.indptr, p.indices, p.data, p.to_scipy() @ beta + 0.5 + noise,
                       p.n_features)
    return with_targets(train_set, 1), with_targets(test_set, 2)


# --------------------------------------------------------------------------- objectives

def tiny_problem(seed=0, l=25, n=7):
    rng = np.random.default_rng(seed)
    dense = rng.normal(size=(l, n)) * (rng.random((l, n)) < 0.5)
    return Problem.from_arrays(dense, np.where(rng.random(l) < 0.5, 1.0, -1.0)), rng


@pytest.mark.parametrize("solver", [0, 2, 11])
@pytest.mark.parametrize("bias,reg_bias", [(-1.0, True), (1.0, True), (1.0, False)])
def test_objective_value_gradient_and_hessian(solver, bias, reg_bias):
    problem, rng = tiny_problem(seed=solver)
    y = rng.normal(size=problem.n_samples) if solver == 11 else problem.y
    C = rng.uniform(0.5, 2.0, size=problem.n_samples)
    obj = PrimalObjective(problem, y, C, bias, LOSS_OF_SOLVER[solver], p=0.1,
                          regularize_bias=reg_bias)
    n = obj.n_variables
    w = rng.normal(size=n) * 0.7

    # the value against a direct NumPy formula
    X = problem.to_scipy().toarray()
    if bias >= 0:
        X = np.hstack([X, np.full((problem.n_samples, 1), bias)])
    z = X @ w
    if solver == 0:
        loss = np.logaddexp(0.0, -y * z)
    elif solver == 2:
        loss = np.maximum(0.0, 1.0 - y * z) ** 2
    else:
        loss = np.maximum(0.0, np.abs(z - y) - 0.1) ** 2
    wr = w[:-1] if not reg_bias else w
    assert obj.fun(w) == pytest.approx(0.5 * wr @ wr + C @ loss, rel=1e-12)

    g = obj.grad(w)
    h = 1e-6
    fd = np.array([(obj.fun(w + h * e) - obj.fun(w - h * e)) / (2 * h) for e in np.eye(n)])
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-7)

    # Hv at the w of the last grad: set that state again after the FD evaluations
    obj.fun(w)
    g = obj.grad(w)
    s = rng.normal(size=n)
    Hs = obj.hv(s)
    grad_at = []
    for sign in (1, -1):
        obj.fun(w + sign * h * s)
        grad_at.append(obj.grad(w + sign * h * s))
    np.testing.assert_allclose(Hs, (grad_at[0] - grad_at[1]) / (2 * h), rtol=1e-5, atol=1e-6)

    # the preconditioner is diag(H) (state at w again)
    obj.fun(w)
    obj.grad(w)
    diag = np.array([obj.hv(e) @ e for e in np.eye(n)])
    np.testing.assert_allclose(obj.diag_precond(), diag, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("solver", [0, 2, 11])
def test_fast_line_search_matches_the_one_by_fun(solver):
    problem, rng = tiny_problem(seed=10 + solver, l=40, n=9)
    y = rng.normal(size=problem.n_samples) if solver == 11 else problem.y
    C = rng.uniform(0.5, 2.0, size=problem.n_samples)
    w_start = rng.normal(size=problem.n_features + 1)
    results = []
    for fast in (True, False):
        obj = PrimalObjective(problem, y, C, 1.0, LOSS_OF_SOLVER[solver], p=0.1)
        w = w_start.copy()
        f = obj.fun(w)
        g = obj.grad(w)
        s = -g * 3.0                                       # too long: backtracks
        search = obj.linesearch_and_update if fast else (
            lambda *a: linesearch_by_fun(obj, *a))
        step, f_new = search(w, s, f, g, 1.0)
        results.append((step, f_new, w.copy(), obj.fun(w)))
    (s1, f1, w1, fw1), (s2, f2, w2, _) = results
    assert 0 < s1 < 1 and s1 == s2
    assert f1 == pytest.approx(f2, rel=1e-12)
    np.testing.assert_allclose(w1, w2, rtol=1e-15)
    assert fw1 == pytest.approx(f1, rel=1e-12)      # the state moved with w


def test_interface_carries_only_n_vectors(binary_split):
    """The protocol of a distributed backend: nothing of size l crosses it; the values
    that do are the L2-loss SVC's, computed here with NumPy."""
    train_set, _ = binary_split
    sub = train_set.subset(np.arange(500))
    obj = PrimalObjective(sub, sub.y, np.ones(500), 1.0, primal_ops.L2SVC)
    X = np.hstack([sub.to_scipy().toarray(), np.ones((500, 1))])      # -B 1

    def f(w):
        return 0.5 * w @ w + np.sum(np.maximum(0.0, 1.0 - sub.y * (X @ w)) ** 2)

    n = obj.n_variables
    assert n == sub.n_features + 1
    w = np.zeros(n)
    f0 = obj.fun(w)
    assert isinstance(f0, float) and f0 == pytest.approx(f(w), rel=1e-14)     # = l
    g = obj.grad(w)
    np.testing.assert_allclose(g, -2.0 * X.T @ sub.y, rtol=1e-12)
    assert obj.hv(g).shape == (n,) and obj.diag_precond().shape == (n,)
    step, f1 = obj.linesearch_and_update(w, -g, f0, g, 1.0)
    assert isinstance(step, float) and isinstance(f1, float)
    # w moved in place by step * (-g), to a point of lower objective, as f1 says
    assert 0 < step <= 1
    np.testing.assert_allclose(w, -step * g, rtol=1e-15)
    assert f1 == pytest.approx(f(w), rel=1e-12) and f1 < f0


@pytest.mark.parametrize("solver", [0, 2, 11])
def test_loss_term_over_several_blocks_equals_one_block(solver, binary_split):
    """A worker's parts are used as a list of blocks, never concatenated: every method
    gives what the same rows as one block give (the X^T kernels accumulate over blocks).
    The blocks' own n_features are smaller than the data set's."""
    train_set, _ = binary_split
    rows = train_set.subset(np.arange(900))
    y = np.where(rows.y == rows.y[0], 1.0, -1.0)
    C = np.random.default_rng(2).uniform(0.5, 2.0, size=rows.n_samples)
    blocks = [Problem(indptr=b.indptr, indices=b.indices, data=b.data, y=b.y,
                      n_features=int(b.indices.max()) + 1)
              for b in (rows.subset(np.arange(a, z)) for a, z in ((0, 300), (300, 301),
                                                                  (301, 900)))]
    one = LossTerm(rows, y, C, 1.0, LOSS_OF_SOLVER[solver], p=0.1)
    several = LossTerm(blocks, y, C, 1.0, LOSS_OF_SOLVER[solver], p=0.1,
                       n_features=rows.n_features)
    assert several.n_variables == one.n_variables
    rng = np.random.default_rng(3)
    w, s = rng.normal(size=(2, one.n_variables)) * 0.1
    assert several.at(w) == pytest.approx(one.at(w), rel=1e-12)
    for a, b in zip(several.grad_precond(), one.grad_precond()):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(several.hv(s), one.hv(s), rtol=1e-10, atol=1e-12)
    assert several.along(s, 0.5) == pytest.approx(one.along(s, 0.5), rel=1e-12)
    several.move(0.5)
    one.move(0.5)
    assert several.at(w + 0.5 * s) == pytest.approx(one.loss_along(0.0), rel=1e-10)


def test_kernels_release_the_gil_and_do_not_write_inputs(binary_split):
    for name in ("xv", "loss_sum", "loss_sum_along", "grad_precond", "hess_vec"):
        assert getattr(primal_ops, name).targetoptions.get("nogil"), name
    train_set, _ = binary_split
    sub = train_set.subset(np.arange(300))
    arrays = [sub.indptr.copy(), sub.indices.copy(), sub.data.copy(), sub.y.copy()]
    for a in arrays:
        a.setflags(write=False)         # as blocks from Dask may be
    ro = Problem(arrays[0], arrays[1], arrays[2], arrays[3], sub.n_features)
    C = np.ones(300)
    C.setflags(write=False)
    result = fit_newton(SubProblem(ro, arrays[3], C, 1.0, 0), Params(solver_type=2, eps=1e-3))
    expected = fit_newton(SubProblem(sub, sub.y, np.ones(300), 1.0, 0),
                          Params(solver_type=2, eps=1e-3))
    np.testing.assert_array_equal(result.w, expected.w)


# --------------------------------------------------------------------------- drivers

def test_log_lines_and_tolerance_follow_liblinear(binary_split):
    train_set, _ = binary_split
    lines = []
    train(train_set, Params(solver_type=0, eps=1e-3), log=lines.append)
    assert lines == liblinear_train_logged(train_set, "-s 0 -e 0.001")[2]
    assert re.fullmatch(r"init f \d\.\d{3}e[+-]\d\d \|g\| \d\.\d{3}e[+-]\d\d", lines[0])
    it = re.compile(r"iter +\d+ f \d\.\d{3}e[+-]\d\d \|g\| \d\.\d{3}e[+-]\d\d CG +\d+ "
                    r"step_size \d\.\d\de[+-]\d\d")
    assert len(lines) >= 3 and all(it.fullmatch(line) for line in lines[1:]), lines
    # the stopping rule: |g| <= eps * max(min(pos, neg), 1) / l * |g0|
    y = np.where(train_set.y == train_set.y[0], 1.0, -1.0)
    pos = int((y > 0).sum())
    assert primal_solver_tol(1e-3, y, False) == 1e-3 * min(pos, len(y) - pos) / len(y)
    assert primal_solver_tol(1e-3, y, True) == 1e-3
    gnorms = [float(re.search(r"\|g\| (\S+)", line).group(1)) for line in lines]
    g0 = np.linalg.norm(np.asarray(train_set.to_scipy().T @ (-0.5 * y)))  # LR at w = 0
    assert gnorms[-1] <= primal_solver_tol(1e-3, y, False) * g0 * 1.001 < gnorms[-2]


@pytest.mark.parametrize("solver", [0, 2, 11])
def test_both_drivers_reach_the_same_optimum(solver, binary_split, regression_split):
    train_set = (regression_split if solver == 11 else binary_split)[0]
    y = train_set.y if solver == 11 else np.where(train_set.y > 0, 1.0, -1.0)
    task = SubProblem(train_set, y, np.full(len(y), 0.5), 1.0, 0)
    ws = {}
    for drv in ("linesearch", "tron"):
        ws[drv] = fit_newton(task, Params(solver_type=solver, C=0.5, eps=1e-7, bias=1.0,
                                          newton=drv)).w
    assert np.abs(ws["linesearch"] - ws["tron"]).max() <= 1e-4 * np.abs(ws["tron"]).max()


@pytest.mark.parametrize("drv", ["linesearch", "tron"])
@pytest.mark.parametrize("solver", [0, 2])
def test_warm_start_from_the_optimum_converges_at_once(drv, solver, binary_split):
    train_set, _ = binary_split
    y = np.where(train_set.y > 0, 1.0, -1.0)
    task = SubProblem(train_set, y, np.ones(len(y)), 1.0, 0)
    params = Params(solver_type=solver, eps=1e-4, bias=1.0, newton=drv)
    cold = fit_newton(task, params)
    assert cold.n_iter >= 3
    warm = fit_newton(SubProblem(train_set, y, np.ones(len(y)), 1.0, 0, w0=cold.w), params)
    assert warm.n_iter <= 1
    np.testing.assert_allclose(warm.w, cold.w, atol=1e-3 * np.abs(cold.w).max())


def test_iteration_cap_warns(binary_split):
    train_set, _ = binary_split
    y = np.where(train_set.y > 0, 1.0, -1.0)
    task = SubProblem(train_set, y, np.ones(len(y)), -1.0, 0)
    for drv in ("linesearch", "tron"):
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)  # logged; train warns
            r = fit_newton(task, Params(solver_type=2, eps=1e-8, newton=drv), max_newton_iter=2)
        assert r.n_iter == 2 and r.hit_max_iter
        assert r.log[-1] == "WARNING: reaching max number of Newton iterations"
        with pytest.warns(ConvergenceWarning, match="reaching max number of Newton iterations"):
            assemble_model(Params(solver_type=2), train_set.n_features, np.array([1, -1]),
                           [r])


def test_drivers_minimise_a_plain_quadratic():
    """The drivers need nothing but the protocol: a dense quadratic with fun-only line
    search."""
    rng = np.random.default_rng(3)
    A = rng.normal(size=(30, 12))
    H = A.T @ A + np.eye(12)
    b = rng.normal(size=12)

    class Quadratic:
        n_variables = 12

        def fun(self, w):
            return 0.5 * w @ H @ w - b @ w

        def grad(self, w):
            return H @ w - b

        def hv(self, s):
            return H @ s

        def diag_precond(self):
            return np.diag(H).copy()

        def linesearch_and_update(self, w, s, f, g, alpha):
            return linesearch_by_fun(self, w, s, f, g, alpha)

    for driver in (newton, tron):
        w = np.zeros(12)
        res = driver(Quadratic(), w, 1e-7)
        assert res.converged
        np.testing.assert_allclose(w, np.linalg.solve(H, b), rtol=1e-6)


# --------------------------------------------------------------------------- parity

@pytest.mark.parametrize("solver", [0, 2])
@pytest.mark.parametrize("split,bias,R", [
    ("binary_split", -1.0, False), ("binary_split", 1.0, False), ("binary_split", 1.0, True),
    ("multiclass_split", -1.0, False), ("multiclass_split", 1.0, False)])
def test_classification_matches_liblinear(solver, split, bias, R, request):
    train_set, test_set = request.getfixturevalue(split)
    params = Params(solver_type=solver, eps=1e-4, bias=bias, regularize_bias=not R)
    lines = []
    ours = train(train_set, params, log=lines.append)
    _, theirs, lib_lines = liblinear_train_logged(
        train_set, f"-s {solver} -e 0.0001 -B {bias:g}" + (" -R" if R else ""))
    assert lines == lib_lines                    # every Newton iteration and CG count
    np.testing.assert_array_equal(ours.label, theirs.label)
    f_ours = primal_objective(train_set, params, ours)
    f_theirs = primal_objective(train_set, params, theirs)
    assert rel_diff(f_ours, f_theirs) <= SAME_ITERATES, (f_ours, f_theirs)
    np.testing.assert_array_equal(predict(ours, test_set), predict(theirs, test_set))
    if R:   # our bias weight is LIBLINEAR's with -R, not the one without
        _, plain = liblinear_train(train_set, f"-s {solver} -e 0.0001 -B {bias:g}")
        b_ours, b_R, b_plain = ours.w[-1, 0], theirs.w[-1, 0], plain.w[-1, 0]
        assert abs(b_ours - b_R) < 0.1 * abs(b_R - b_plain), (b_ours, b_R, b_plain)


@pytest.mark.parametrize("bias,R", [(-1.0, False), (1.0, False), (1.0, True)])
def test_regression_matches_liblinear(bias, R, regression_split):
    train_set, test_set = regression_split
    params = Params(solver_type=11, eps=1e-4, bias=bias, p=0.1, regularize_bias=not R)
    lines = []
    ours = train(train_set, params, log=lines.append)
    _, theirs, lib_lines = liblinear_train_logged(
        train_set, f"-s 11 -e 0.0001 -p 0.1 -B {bias:g}" + (" -R" if R else ""))
    assert lines == lib_lines                    # every Newton iteration and CG count
    f_ours = primal_objective(train_set, params, ours)
    f_theirs = primal_objective(train_set, params, theirs)
    assert rel_diff(f_ours, f_theirs) <= SAME_ITERATES, (f_ours, f_theirs)
    mse_ours = evaluate(test_set.y, predict(ours, test_set))[1]
    mse_theirs = evaluate(test_set.y, predict(theirs, test_set))[1]
    assert mse_ours == pytest.approx(mse_theirs, rel=1e-9)
    assert mse_ours < 0.5 * np.var(test_set.y)     # it learnt something


@pytest.mark.parametrize("drv", ["linesearch", "tron"])
@pytest.mark.parametrize("solver", [0, 2])
def test_class_and_instance_weights_match_liblinear(solver, drv, multiclass_split):
    train_set, test_set = multiclass_split
    weights = [(2, 3.0), (4, 0.5)]
    params = Params(solver_type=solver, eps=1e-4, C=0.5, class_weights=weights, bias=1.0,
                    newton=drv)
    lines = []
    ours = train(train_set, params, log=lines.append)
    _, theirs, lib_lines = liblinear_train_logged(
        train_set, f"-s {solver} -e 0.0001 -c 0.5 -w2 3 -w4 0.5 -B 1")
    f_ours = primal_objective(train_set, params, ours)
    if drv == "linesearch":
        assert lines == lib_lines
        assert rel_diff(f_ours, primal_objective(train_set, params, theirs)) <= SAME_ITERATES
    else:
        assert_near_optimum(f_ours, f_star(train_set, params), TRON_GAP[solver])
    unweighted = primal_objective(train_set, Params(solver_type=solver, C=0.5, bias=1.0),
                                  train(train_set, Params(solver_type=solver, eps=1e-4,
                                                          C=0.5, bias=1.0)))
    assert abs(unweighted - f_ours) > 1e-2 * abs(f_ours)
    assert abs(accuracy(ours, test_set) - accuracy(theirs, test_set)) <= 0.5

    # instance weights: weight 2 on a row is the row twice
    sub = train_set.subset(np.arange(400))
    sw = np.where(np.arange(400) % 3 == 0, 2.0, 1.0)
    weighted = Problem(sub.indptr, sub.indices, sub.data, sub.y, sub.n_features,
                       sample_weight=sw)
    doubled = train_set.subset(np.concatenate([np.arange(400), np.arange(0, 400, 3)]))
    p = Params(solver_type=solver, eps=1e-6, C=0.5)
    np.testing.assert_allclose(train(weighted, p).w, train(doubled, p).w, atol=1e-5)


# relative gap to f* after the switch, 3x the gap reached (-s 1: 1.3e-9, -s 7: 2.7e-9,
# -s 12: 1.5e-8); with 10x the eps: 4.4e-6, 1.0e-7, 0.27
CAP_SWITCH_GAP = {1: 4e-9, 7: 8e-9, 12: 5e-8}


@pytest.mark.parametrize("dual,primal", [(1, 2), (7, 0), (12, 11)])
def test_dual_cap_switches_to_newton(dual, primal, binary_split, regression_split):
    """A dual solver at its iteration cap continues with the primal Newton solver (warm
    start, tolerance scaled as in LIBLINEAR's train_one) to the primal solver's optimum;
    no ConvergenceWarning, since the model is at that optimum."""
    train_set = (regression_split if dual == 12 else binary_split)[0]
    lines = []
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = train(train_set, Params(solver_type=dual, eps=1e-3 if dual != 12 else 0.1,
                                        max_iter=3), log=lines.append)
    assert f"Switching to use -s {primal}" in lines
    assert any(line.startswith("init f") for line in lines)
    assert model.n_iter[0] > 3                  # the Newton iterations were added
    params = Params(solver_type=primal)
    assert_near_optimum(primal_objective(train_set, params, model), f_star(train_set, params),
                        CAP_SWITCH_GAP[dual])


def test_one_vs_rest_on_threads_is_deterministic(multiclass_split):
    train_set, _ = multiclass_split
    params = Params(solver_type=0, eps=1e-3)
    a = train(train_set, params, n_threads=1)
    b = train(train_set, params, n_threads=2)
    np.testing.assert_array_equal(a.w, b.w)


# --------------------------------------------------------------------------- options

def test_options_of_s0_s2_s11_are_liblinears():
    """An initial solution is accepted exactly where LIBLINEAR's check_parameter accepts
    it, with its message, and -R wherever LIBLINEAR accepts it; --newton chooses the
    driver."""
    import ctypes

    import scipy.sparse as sp
    from liblinear import liblinear, liblinearutil
    from dlinear.cli.train_predict import parse_train_args

    def lib_error(options, init_sol=False):
        prob = liblinearutil.problem([1, -1, 1], sp.csr_matrix(np.eye(3)))
        if "-B 1" in options:
            prob.set_bias(1)
        param = liblinear.parameter(options)
        if init_sol:
            param.init_sol = ctypes.cast((ctypes.c_double * 4)(), ctypes.POINTER(ctypes.c_double))
        error = liblinear.liblinear.check_parameter(prob, param)
        return error and error.decode()

    def our_error(params):
        try:
            check_parameter(params)
        except DlinearError as e:
            return str(e)
        return None

    for sid in (0, 1, 2, 3, 4, 5, 6, 7, 11, 12, 13):
        # refused where LIBLINEAR refuses it, but dlinear adds -R for -s 1 / -s 3
        # (tests/unit/test_bias_dual.py) and so names them in its message
        if sid not in (1, 3):
            refused = our_error(Params(solver_type=sid, bias=1.0, regularize_bias=False))
            assert (refused is None) == (lib_error(f"-s {sid} -B 1 -R") is None), sid
        # accepted where LIBLINEAR accepts it, and by dlinear's dual solvers too
        # (tests/unit/test_warm_start_from_model.py), which its message names
        refused = our_error(Params(solver_type=sid, init_sol=np.zeros(4)))
        if lib_error(f"-s {sid}", init_sol=True) is None:
            assert refused is None, sid
        assert (refused is None) == SOLVERS[sid].init_sol, sid
        if refused is not None:
            assert refused.startswith("Initial-solution specification supported only for "
                                      "solvers -s 0, 1, 2"), refused
    with pytest.raises(DlinearError, match="--newton"):
        check_parameter(Params(solver_type=0, newton="bfgs"))
    params, _, _, _ = parse_train_args(["-s", "0", "--newton", "tron", "f.svm"])
    assert params.newton == "tron"
    with pytest.raises(DlinearError):
        parse_train_args(["--newton", "bfgs", "f.svm"])
    assert parse_train_args(["-s", "0", "f.svm"])[0].newton == "linesearch"  # LIBLINEAR 2.50's


def test_primal_cd_branch_of_s2_still_runs(binary_split):
    train_set, _ = binary_split
    sub = train_set.subset(np.arange(300))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        cd = train(sub, Params(solver_type=2, primal_cd=True, eps=1e-4))
    p = Params(solver_type=2)
    # 2.5x the gap reached (6.9e-9); at -e 1e-3: 8.7e-7
    assert_near_optimum(primal_objective(sub, p, cd), f_star(sub, p), 2e-8)


@pytest.mark.parametrize("solver", [0, 2])
def test_init_sol_in_the_api_warm_starts_every_class(solver):
    from dataclasses import replace

    from dlinear.datasets.rcv1_like import make_rcv1_like
    problem = make_rcv1_like(1500, n_features=800, n_classes=3, nnz_per_row=20, seed=7)
    params = Params(solver_type=solver, eps=1e-4, bias=1)
    first = train(problem, params)
    assert min(first.n_iter) >= 2
    again = train(problem, replace(params, init_sol=first.w))
    assert max(again.n_iter) <= 1                       # each class starts at its optimum
    np.testing.assert_allclose(again.w, first.w, atol=1e-6)
    with pytest.raises(DlinearError, match="Initial-solution specification"):
        train(problem, Params(solver_type=13, bias=1, init_sol=first.w))
