"""Warm start from a model (dlinear.train(init=), dlinear-train -i): every solver that
takes one reaches the optimum of a fresh fit (LIBLINEAR's, liblinear-official at a tight
tolerance) in fewer iterations after 10% more rows; a model that does not fit the data
is one clear error."""
from __future__ import annotations

import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

from dlinear import Params, train
from dlinear.data.libsvm_reader import Problem
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.errors import DlinearError
from dlinear.model import load_model, save_model
from dlinear.solver_table import SOLVERS
from dlinear.solvers.primal_objective_values import primal_objective
from tests.support.liblinear_oracle import f_star

WARM = [s.id for s in SOLVERS.values() if s.init_sol]


@pytest.fixture(scope="module")
def binary():
    return make_rcv1_like(3000, n_features=2000, n_classes=2, nnz_per_row=30, seed=3)


@pytest.fixture(scope="module")
def regression(binary):
    noise = np.random.default_rng(0).normal(size=binary.n_samples) * 0.1
    return replace(binary, y=binary.y + noise)


def test_every_solver_but_s13_takes_a_warm_start():
    # -s 13: dlinear.solvers.dual_start says why not
    assert set(WARM) == {0, 1, 2, 3, 4, 5, 6, 7, 11, 12, 21}

# Crammer-Singer's duals from W (and its L1-loss kin -s 3 at -e 0.01, even from the old
# fit's own duals) save no sweeps here: the optimum is checked, not the count
NOT_FEWER = {4}


@pytest.mark.parametrize("solver", WARM)
def test_warm_start_after_more_rows_reaches_the_optimum_in_fewer_iterations(
        solver, binary, regression):
    data = regression if SOLVERS[solver].kind == "regression" else binary
    params = Params(solver_type=solver, bias=-1 if SOLVERS[solver].kind == "oneclass" else 1)
    old = train(data.subset(np.arange(2700)), params)     # 10% more rows come after
    fresh = train(data, params)
    warm = train(data, params, init=old)
    optimum = f_star(data, params)

    def gap(model):
        return abs(primal_objective(data, params, model) - optimum) / abs(optimum)
    # the same optimum, to the solver's tolerance (the fresh fit's own distance to it)
    assert gap(warm) <= max(3 * gap(fresh), 1e-4), (gap(warm), gap(fresh))
    if solver not in NOT_FEWER:
        assert sum(warm.n_iter) < sum(fresh.n_iter), (warm.n_iter, fresh.n_iter)


@pytest.mark.parametrize("solver", [0, 1])
def test_one_vs_rest_columns_follow_the_labels_whatever_their_order(solver):
    data = make_rcv1_like(1500, n_features=800, n_classes=3, nnz_per_row=20, seed=7)
    params = Params(solver_type=solver, bias=1, eps=1e-4 if solver == 0 else 1e-3)
    first = train(data, params)
    # the rows reversed: the labels appear in another order, so the classes' columns do
    reordered = data.subset(np.arange(data.n_samples)[::-1])
    again = train(reordered, params, init=first)
    assert not np.array_equal(again.label, first.label)
    columns = [list(first.label).index(c) for c in again.label]
    np.testing.assert_allclose(again.w, first.w[:, columns], atol=2e-2)
    fresh = train(reordered, params)
    assert sum(again.n_iter) < sum(fresh.n_iter)


def test_binary_labels_in_the_other_order_negate_w(binary):
    params = Params(solver_type=0, bias=1, eps=1e-6)
    first = train(binary, params)
    flipped = replace(first, label=first.label[::-1].copy(), w=-first.w)
    again = train(binary, params, init=flipped)
    assert max(again.n_iter) <= 1        # the same w: it starts at the optimum
    np.testing.assert_allclose(again.w, first.w, atol=1e-6)


def test_a_model_with_fewer_features_is_extended_with_zeros(binary):
    X, y = binary.to_scipy(), binary.y
    narrow = Problem.from_arrays(X[:, :1500], y)
    params = Params(solver_type=2, bias=1)
    small = train(narrow, params)
    assert small.nr_feature == 1500
    warm = train(binary, params, init=small)
    fresh = train(binary, params)
    assert warm.nr_feature == binary.n_features
    assert abs(primal_objective(binary, params, warm) - primal_objective(binary, params, fresh)) \
        <= 1e-3 * abs(primal_objective(binary, params, fresh))


def test_a_model_that_does_not_fit_is_one_clear_error(binary, regression):
    params = Params(solver_type=1, bias=1)
    model = train(binary, params)
    X = binary.to_scipy()
    cases = [
        (Problem.from_arrays(X[:, :1000], binary.y), params, "2000 features, the data 1000"),
        (binary, replace(params, bias=-1), "bias 1, this fit -B -1"),
        (regression, replace(params, solver_type=11), "-s 11 trains a regression model"),
        (replace(binary, y=np.where(binary.y > 0, 2.0, -1.0)), params,
         r"labels \[-1, 1\] are not the data's \[-1, 2\]"),
        (regression, replace(params, solver_type=13), "supported only for solvers -s 0, 1, 2, "
                                                      "3, 4, 5, 6, 7, 11, 12 and 21"),
        (binary, params, r"initial weights have shape \(7,\)"),
    ]
    for data, p, message in cases:
        init = np.zeros(7) if "weights" in message else model
        with pytest.raises(DlinearError, match=message):
            train(data, p, init=init)


def test_the_command_line_takes_the_model_file(tmp_path, binary):
    from dlinear.data.libsvm_writer import write_libsvm
    old_file, all_file = tmp_path / "old.svm", tmp_path / "all.svm"
    write_libsvm(old_file, binary.subset(np.arange(2700)))
    write_libsvm(all_file, binary)
    params = Params(solver_type=1, bias=1)
    save_model(tmp_path / "old.model", train(binary.subset(np.arange(2700)), params))
    run = subprocess.run(["dlinear-train", "-q", "-s", "1", "-B", "1", "-i",
                          str(tmp_path / "old.model"), str(all_file),
                          str(tmp_path / "warm.model")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    from dlinear.data.libsvm_reader import read_libsvm
    expected = train(read_libsvm(all_file), params,
                     init=load_model(tmp_path / "old.model"))
    np.testing.assert_array_equal(load_model(tmp_path / "warm.model").w, expected.w)
    for extra, message in ((["-B", "-1"], "old.model: the initial model has bias 1"),
                           (["-v", "3"], "cannot be combined with -v or -C")):
        run = subprocess.run(["dlinear-train", "-s", "1", "-B", "1", *extra, "-i",
                              str(tmp_path / "old.model"), str(all_file),
                              str(tmp_path / "bad.model")], capture_output=True, text=True)
        assert run.returncode == 1 and message in run.stderr, run.stderr
        assert len(run.stderr.strip().splitlines()) == 1
        assert not (tmp_path / "bad.model").exists()


@pytest.mark.parametrize("solver,variant", [
    (1, dict(regularize_bias=False)), (3, dict(regularize_bias=False)),   # y^T alpha = 0
    (1, dict(cd_block=2)), (3, dict(online=True))])
def test_the_dual_variants_start_from_the_duals_too(solver, variant, binary):
    params = Params(solver_type=solver, bias=1, **variant)
    old = train(binary.subset(np.arange(2700)), params)
    fresh = train(binary, params)
    warm = train(binary, params, init=old)
    tight = Params(solver_type=2 if solver == 1 else 3, bias=1, eps=1e-8,
                   regularize_bias=params.regularize_bias)
    optimum = primal_objective(binary, params, train(binary, tight))

    def gap(model):
        return abs(primal_objective(binary, params, model) - optimum) / optimum
    assert gap(warm) <= max(3 * gap(fresh), 1e-3), (gap(warm), gap(fresh))
