"""Instance weights (LIBLINEAR's -W weight_file extension) for every solver: integer
weights give the model of the data with the rows repeated, checked against LIBLINEAR 2.50
(liblinear-official) trained on the repeated rows; the CLI's -W end to end and on a local
Dask cluster; sample_weight in the scikit-learn estimators."""
import warnings

import numpy as np
import pytest

from dlinear import ConvergenceWarning, Params, Problem, load_model, train
from dlinear.cli.train_predict import train_main
from dlinear.data.libsvm_reader import write_libsvm
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.solvers.primal_objective_values import primal_objective
from tests.support.cli import run_in_process
from tests.support.liblinear_oracle import assert_near_optimum, f_star


def repeated(problem: Problem, weights: np.ndarray) -> Problem:
    rows = np.repeat(np.arange(problem.n_samples), weights.astype(np.int64))
    X = problem.to_scipy()[rows]
    return Problem.from_arrays(X, problem.y[rows], problem.n_features)


def weighted(problem: Problem, weights) -> Problem:
    return Problem(problem.indptr, problem.indices, problem.data, problem.y,
                   problem.n_features, np.asarray(weights, dtype=np.float64))


@pytest.fixture(scope="module")
def data():
    binary = make_rcv1_like(300, n_features=200, nnz_per_row=15, seed=31)
    multi = make_rcv1_like(300, n_features=200, n_classes=3, nnz_per_row=15, seed=32)
    rng = np.random.default_rng(33)
    reg_y = binary.to_scipy() @ rng.normal(size=binary.n_features) + 0.1 * rng.normal(
        size=binary.n_samples)
    regression = Problem(binary.indptr, binary.indices, binary.data, reg_y,
                         binary.n_features)
    weights = rng.integers(1, 4, size=binary.n_samples).astype(np.float64)
    return {"binary": binary, "multi": multi, "regression": regression, "weights": weights}


# -s, dlinear's options, data set
CASES = [
    (0, "-e 1e-8 -B 1", "multi"), (1, "-e 1e-6 -B 1", "binary"), (2, "-e 1e-8", "multi"),
    (3, "-e 1e-6 -B 1", "multi"), (4, "-e 1e-6", "multi"), (5, "-e 1e-6 -B 1", "binary"),
    (6, "-e 1e-6", "multi"), (7, "-e 1e-6 -B 1", "binary"), (11, "-e 1e-8 -B 1", "regression"),
    (12, "-e 1e-6", "regression"), (13, "-e 1e-6 -B 1", "regression"),
    (21, "-e 1e-6 -n 0.3", "binary"),
]
# dlinear's other algorithms for the same -s (same LIBLINEAR reference)
VARIANTS = [(1, "-e 1e-6 -B 1", "binary", {"cd_block": 2}),
            (3, "-e 1e-6 -B 1", "multi", {"online": True}),
            (2, "-e 1e-8 -B 1", "binary", {"primal_cd": True}),
            (0, "-e 1e-8 -B 1", "multi", {"newton": "tron"}),
            (11, "-e 1e-8 -B 1", "regression", {"newton": "tron"})]
ALL_CASES = [c + ({},) for c in CASES] + VARIANTS
# relative gap to f* (LIBLINEAR at a tight eps on the rows repeated) allowed, per case: 3x
# the gap reached, with a floor of 1e-14 (rounding); at 10x dlinear's eps the gap is larger
# where shown (->). The Newton runs at -e 1e-8 end at the same point at 1e-7 (quadratic
# convergence), so no tolerance tells those two apart.
GAP = {"s0": 1e-14, "s0-newton": 1e-14, "s2": 1e-14, "s2-primal_cd": 1e-14, "s11": 1e-14,
       "s1": 1.5e-14,                                                 # 5.3e-15 -> 3.4e-13
       "s1-cd_block": 2.5e-14,                                        # 7.9e-15 -> 4.5e-13
       "s3": 1.2e-7,                                                  # 3.7e-8 -> 5.0e-7
       "s3-online": 1.2e-7,                                           # 4.3e-8 -> 5.2e-7
       "s4": 3e-7,                                                    # 1.1e-7 -> 1.2e-6
       "s5": 2.5e-12,                                                 # 8.9e-13 -> 8.6e-11
       "s6": 5e-13,                                                   # 1.7e-13 -> 6.6e-12
       "s7": 1e-14,                                                   # 3.7e-16 -> 1.1e-13
       "s11-newton": 5e-15,                                           # 1.2e-15 -> 1.2e-13
       "s12": 3e-13,                                                  # 1.0e-13 -> 6.7e-12
       "s13": 1e-6,                                                   # 3.5e-7 -> 1.1e-5
       "s21": 2e-8}                                                   # 7.5e-9 -> 5.8e-8


def case_id(solver, extra):
    return f"s{solver}" + "".join(f"-{k}" for k in extra)


def params_of(solver, options, extra=None):
    tokens = options.split()
    values = dict(zip(tokens[::2], tokens[1::2]))
    return Params(solver_type=solver, eps=float(values["-e"]),
                  bias=float(values.get("-B", -1)), nu=float(values.get("-n", 0.5)),
                  C=0.5, max_iter=100000, **(extra or {}))


@pytest.mark.parametrize("solver,options,which,extra", ALL_CASES,
                         ids=[case_id(c[0], c[3]) for c in ALL_CASES])
def test_integer_weights_match_liblinear_on_repeated_rows(data, solver, options, which, extra):
    problem, w = data[which], data["weights"]
    params = params_of(solver, options, extra)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ours = train(weighted(problem, w), params, n_threads=1)
    # f*: LIBLINEAR at a tight eps on the rows repeated
    f_theirs = f_star(repeated(problem, w), params)
    f_ours = primal_objective(weighted(problem, w), params, ours)
    assert_near_optimum(f_ours, f_theirs, GAP[case_id(solver, extra)])
    # the unweighted model is clearly worse on the weighted objective: the weights count
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        plain = train(problem, params, n_threads=1)
    f_plain = primal_objective(weighted(problem, w), params, plain)
    assert f_plain - f_ours > 1e-3 * abs(f_theirs)


# ------------------------------------------------------------------ the CLI's -W

@pytest.fixture(scope="module")
def files(tmp_path_factory, data):
    d = tmp_path_factory.mktemp("weights")
    write_libsvm(d / "multi.train", data["multi"])
    np.savetxt(d / "w.txt", data["weights"], fmt="%g")
    return d


@pytest.mark.parametrize("solver", [1, 0])
def test_cli_weight_file_gives_the_api_model(files, data, capsys, solver):
    model_file = files / f"s{solver}.model"
    # dlinear-train in this process: the model it writes is the check
    r = run_in_process(capsys, "train", "-s", solver, "-B", 1, "-W", files / "w.txt",
                       files / "multi.train", model_file)
    assert r.returncode == 0, r.stderr
    expected = train(weighted(data["multi"], data["weights"]),
                     Params(solver_type=solver, bias=1))
    np.testing.assert_array_equal(load_model(model_file).w, expected.w)
    plain = train(data["multi"], Params(solver_type=solver, bias=1))
    assert np.abs(plain.w - expected.w).max() > 1e-3


@pytest.mark.parametrize("content,message", [
    ("1\n2\nabc\n", "line 3: 'abc' is not a number"),
    ("1\n-2\n", "line 2: weight -2 is negative"),
    ("1\nnan\n", "line 2: weight 'nan' is not finite"),
    ("1\n2\n", "line 3: missing weight"),
    (None, "line 301: more weights than the 300 instances"),
])
def test_cli_weight_file_errors_name_file_and_line(files, tmp_path, capsys, content, message):
    path = tmp_path / "bad.w"
    if content is None:
        content = "1\n" * 301
    path.write_text(content)
    model_file = tmp_path / "m.model"
    assert train_main(["-W", str(path), str(files / "multi.train"), str(model_file)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"ERROR: {path}: {message}"), err
    assert len(err.strip().splitlines()) == 1
    assert not model_file.exists()


def test_cli_missing_weight_file(files, tmp_path, capsys):
    args = ["-W", str(tmp_path / "nope"), str(files / "multi.train"), str(tmp_path / "m.model")]
    assert train_main(args) == 1
    assert "can't open weight file" in capsys.readouterr().err


def test_cli_help_lists_W(capsys):
    assert train_main(["-h"]) == 0
    assert "-W weight_file" in capsys.readouterr().out


# ------------------------------------------------------------------ zero weights

ZERO_CASES = [(s, {}) for s in (0, 1, 2, 3, 4, 5, 6, 7, 11, 12, 13, 21)] + [
    (1, {"cd_block": 2}), (3, {"online": True}), (2, {"primal_cd": True})]


@pytest.mark.parametrize("solver,extra", ZERO_CASES,
                         ids=[f"s{s}" + "".join(f"-{k}" for k in e) for s, e in ZERO_CASES])
def test_zero_weight_is_a_removed_row(data, solver, extra):
    which = "regression" if solver in (11, 12, 13) else "multi"
    problem = data[which]
    w = data["weights"].copy()
    w[::7] = 0.0
    params = Params(solver_type=solver, eps=1e-6, bias=-1 if solver == 21 else 1,
                    max_iter=100000, **extra)
    keep = np.flatnonzero(w > 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        with_zeros = train(weighted(problem, w), params, n_threads=1)
        removed = train(weighted(problem.subset(keep), w[keep]), params, n_threads=1)
    f_zeros = primal_objective(weighted(problem, w), params, with_zeros)
    f_removed = primal_objective(weighted(problem, w), params, removed)
    assert abs(f_zeros - f_removed) <= 1e-3 * abs(f_removed)


# ------------------------------------------------------------------ the estimators

def test_estimator_sample_weight_matches_train(data):
    from dlinear.estimators import LinearSVR, LogisticRegression
    multi, reg, w = data["multi"], data["regression"], data["weights"]
    est = LogisticRegression(tol=1e-8).fit(multi.to_scipy(), multi.y, sample_weight=w)
    model = train(weighted(multi, w), Params(solver_type=0, bias=1, eps=1e-8))
    np.testing.assert_allclose(est.decision_function(multi.to_scipy()),
                               dlinear_decision(model, multi)[:, np.argsort(model.label)],
                               atol=1e-10)
    svr = LinearSVR().fit(reg.to_scipy(), reg.y, sample_weight=w)
    model = train(weighted(reg, w), Params(solver_type=11, bias=1))
    np.testing.assert_allclose(svr.predict(reg.to_scipy()), dlinear_decision(model, reg)[:, 0],
                               atol=1e-10)


def dlinear_decision(model, problem):
    from dlinear import decision_values
    return decision_values(model, problem)
