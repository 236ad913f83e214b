"""Multinomial (softmax) logistic regression: scikit-learn's optimum, local and on a
cluster; the model file, -b 1 softmax probabilities, the CLI and the estimator."""
import subprocess
import sys

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression as SkLogisticRegression

from dlinear import DlinearError, Params, Problem, load_model, save_model
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.data.libsvm_reader import write_libsvm
from dlinear.predict import predict_probability
from dlinear.planning.class_plan import group_rows
from dlinear.in_process.train import train_in_process
from tests.support.cli import run_in_process


def softmax_objective(problem, model, C, class_weight=None, regularize_bias=True):
    """0.5 ||W||^2 (without the bias row for -R) + sum_i C_i -log softmax(W^T x_i)_{y_i}."""
    X = problem.to_scipy()
    W = model.w
    if model.bias >= 0:
        X = np.hstack([X.toarray(), np.full((problem.n_samples, 1), model.bias)])
    Z = X @ W
    Z = Z - Z.max(axis=1, keepdims=True)
    y = group_rows(model.label, problem.y)
    nll = np.log(np.exp(Z).sum(axis=1)) - Z[np.arange(len(y)), y]
    Ci = np.full(len(y), C)
    if class_weight:
        for lab, wt in class_weight.items():
            Ci[problem.y == lab] *= wt
    if problem.sample_weight is not None:
        Ci *= problem.sample_weight
    reg = W[:-1] if not regularize_bias else W
    return 0.5 * float((reg * reg).sum()) + float((Ci * nll).sum())


def sklearn_model_w(problem, C, model, fit_intercept=False, class_weight=None):
    sk = SkLogisticRegression(C=C, fit_intercept=fit_intercept, tol=1e-12, max_iter=20000,
                              class_weight=class_weight)
    sk.fit(problem.to_scipy(), problem.y, sample_weight=problem.sample_weight)
    W = sk.coef_.T
    if fit_intercept:
        W = np.vstack([W, sk.intercept_[None, :]])
    if W.shape[1] == 1:                  # binary: scikit-learn keeps w_1 - w_0 only
        W = np.column_stack([-W[:, 0] / 2, W[:, 0] / 2])
    position = np.searchsorted(sk.classes_, model.label)
    return W[:, position]


@pytest.mark.parametrize("seed,n_classes,C,nnz", [(1, 3, 1.0, 20), (2, 5, 0.3, 10),
                                                  (3, 4, 8.0, 40), (4, 7, 2.0, 15)])
def test_objective_matches_scikit_learn(seed, n_classes, C, nnz):
    problem = make_rcv1_like(1500, n_features=400, n_classes=n_classes, nnz_per_row=nnz,
                             seed=seed)
    model = train_in_process(problem, Params(solver_type=0, C=C, multinomial=True,
                                             eps=1e-6))
    assert model.multinomial and model.w.shape == (400, n_classes)
    reference = model.__class__(**{**model.__dict__,
                                   "w": sklearn_model_w(problem, C, model)})
    f, f_sk = softmax_objective(problem, model, C), softmax_objective(problem, reference, C)
    assert abs(f - f_sk) <= 1e-6 * f_sk
    # the default tolerance is looser but already close
    loose = train_in_process(problem, Params(solver_type=0, C=C, multinomial=True))
    assert softmax_objective(problem, loose, C) <= f_sk * (1 + 1e-3)


@pytest.mark.parametrize("driver", ["linesearch", "tron"])
def test_weights_and_unregularized_bias_match_scikit_learn(driver):
    problem = make_rcv1_like(1200, n_features=300, n_classes=3, nnz_per_row=20, seed=9)
    w = np.random.default_rng(0).uniform(0.3, 2.0, problem.n_samples)
    problem = Problem(problem.indptr, problem.indices, problem.data, problem.y,
                      problem.n_features, sample_weight=w)
    cw = {2: 3.0}
    params = Params(solver_type=0, C=2.0, multinomial=True, eps=1e-6, bias=1.0,
                    regularize_bias=False, class_weights=list(cw.items()), newton=driver)
    model = train_in_process(problem, params)
    reference = model.__class__(**{**model.__dict__, "w": sklearn_model_w(
        problem, 2.0, model, fit_intercept=True, class_weight=cw)})
    f = softmax_objective(problem, model, 2.0, cw, regularize_bias=False)
    f_sk = softmax_objective(problem, reference, 2.0, cw, regularize_bias=False)
    assert abs(f - f_sk) <= 1e-6 * f_sk


def test_two_classes_and_model_file(tmp_path):
    problem = make_rcv1_like(800, n_features=200, n_classes=2, nnz_per_row=15, seed=4)
    model = train_in_process(problem, Params(solver_type=0, C=1.0, multinomial=True,
                                             eps=1e-6, bias=1.0))
    assert model.w.shape == (201, 2)
    path = tmp_path / "m.model"
    save_model(path, model)
    assert path.read_text().splitlines()[0] == "solver_type L2R_LR_MULTINOMIAL"
    back = load_model(path)
    assert back.multinomial and back.nr_w == 2
    np.testing.assert_array_equal(back.w, model.w)
    p = predict_probability(back, problem)
    Z = problem.to_scipy() @ model.w[:-1] + model.w[-1]
    expected = np.exp(Z) / np.exp(Z).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(p, expected, rtol=1e-12)
    # LIBLINEAR's own load_model refuses the file rather than misreading it
    from liblinear import liblinearutil
    assert liblinearutil.load_model(str(path)) is None


@pytest.mark.slow
def test_cli_and_softmax_probabilities(tmp_path, capsys):
    problem = make_rcv1_like(900, n_features=200, n_classes=4, nnz_per_row=15, seed=6)
    data, model_file, out = tmp_path / "d.train", tmp_path / "m.model", tmp_path / "out"
    write_libsvm(data, problem)

    def run(*args):
        return subprocess.run([sys.executable, "-m", "dlinear", *map(str, args)],
                              capture_output=True, text=True)
    # train and predict in this process (the files they write are the check); the refused
    # option below is a process of its own (its exit status)
    r = run_in_process(capsys, "train", "-s", "0", "--multinomial", "-q", data, model_file)
    assert r.returncode == 0, r.stderr
    model = load_model(model_file)
    assert model.multinomial
    r = run_in_process(capsys, "predict", "-b", "1", data, model_file, out)
    assert r.returncode == 0, r.stderr
    lines = out.read_text().splitlines()
    assert lines[0].split()[1:] == [str(v) for v in model.label]
    probs = np.array([[float(v) for v in line.split()[1:]] for line in lines[1:]])
    np.testing.assert_allclose(probs, predict_probability(model, problem), atol=1e-6)
    r = run("train", "-s", "2", "--multinomial", data, model_file)
    assert r.returncode != 0 and "--multinomial is only for -s 0" in r.stderr


def test_estimator_switch():
    from dlinear.estimators import LogisticRegression
    problem = make_rcv1_like(900, n_features=200, n_classes=4, nnz_per_row=15, seed=7)
    X, y = problem.to_scipy(), problem.y
    est = LogisticRegression(multi_class="multinomial", C=1.0, fit_intercept=False,
                             tol=1e-6).fit(X, y)
    sk = SkLogisticRegression(C=1.0, fit_intercept=False, tol=1e-10, max_iter=10000).fit(X, y)
    np.testing.assert_allclose(est.coef_, sk.coef_, atol=1e-4)
    np.testing.assert_allclose(est.predict_proba(X), sk.predict_proba(X), atol=1e-5)
    assert (est.predict(X) == sk.predict(X)).mean() > 0.99
    ovr = LogisticRegression(C=1.0, fit_intercept=False).fit(X, y)
    assert not np.allclose(ovr.predict_proba(X), est.predict_proba(X), atol=1e-3)
    with pytest.raises(ValueError, match="multinomial"):
        LogisticRegression(multi_class="multinomial", penalty="l1").fit(X, y)


@pytest.mark.parametrize("bias,regularize_bias", [(-1.0, True), (1.0, True), (1.0, False)])
def test_two_phase_passes_and_threads_give_the_same_bits(bias, regularize_bias, monkeypatch):
    """The passes by rows then by X's columns (the default), split over 1-3 threads, sum
    every entry in the one-pass kernels' order: the same model, log and counts to the
    bit, also with the rows in two blocks (a cluster worker's parts)."""
    from dlinear.solvers.multinomial import (MultinomialTerm, fit_multinomial_objective,
                                             multinomial_objective)
    from dlinear.planning.class_plan import group_classes
    problem = make_rcv1_like(2500, n_features=900, n_classes=6, nnz_per_row=25, seed=11)
    _, class_of_row = group_classes(problem.y)
    C = np.random.default_rng(0).uniform(0.5, 2.0, problem.n_samples)
    params = Params(solver_type=0, multinomial=True, eps=1e-4, bias=bias,
                    regularize_bias=regularize_bias).resolved()
    blocks = [problem.subset(np.arange(0, 1000)),
              problem.subset(np.arange(1000, problem.n_samples))]
    fits = []
    import dlinear.solvers.kcolumn as kcolumn
    for by_columns, n_threads, chunk_rows in ((False, 1, None), (True, 1, None),
                                              (True, 2, None), (True, 3, None),
                                              (True, 2, 170)):
        if chunk_rows:          # more chunks of rows than threads
            monkeypatch.setattr(kcolumn, "CHUNK_BYTES", chunk_rows * 8 * 6)
        term = MultinomialTerm(blocks, class_of_row, C, 6, bias, problem.n_features,
                               n_threads=n_threads, by_columns=by_columns)
        assert term.by_columns == by_columns
        if chunk_rows:
            assert [len(c[3]) - 1 for c in term._by_columns()] == [6, 10]
        fits.append(fit_multinomial_objective(multinomial_objective(term, regularize_bias),
                                              term.counts(), params))
    for fit in fits[1:]:
        assert np.array_equal(fit.w, fits[0].w) and fit.log == fits[0].log
    assert fits[0].n_iter > 2
    # and train_in_process on 1 and 2 threads agree to the bit
    full = Params(solver_type=0, multinomial=True, eps=1e-4, bias=bias,
                  regularize_bias=regularize_bias)
    one, two = (train_in_process(problem, full, n_threads=n) for n in (1, 2))
    assert np.array_equal(one.w, two.w)


def test_only_for_logistic_regression():
    problem = make_rcv1_like(100, n_features=20, n_classes=3, nnz_per_row=5, seed=1)
    with pytest.raises(DlinearError, match="multinomial"):
        train_in_process(problem, Params(solver_type=2, multinomial=True))


def test_parameter_search_refuses_multinomial():
    from dlinear import find_parameters
    problem = make_rcv1_like(200, n_features=30, n_classes=3, nnz_per_row=5, seed=2)
    with pytest.raises(DlinearError, match="multinomial"):
        find_parameters(problem, Params(solver_type=0, multinomial=True), 3)
