"""The SVC dual's incremental start (docs/guide/warm_start.rst): a -s 1 / -s 3 model that
kept its duals (Params.keep_duals, dlinear-train --keep-duals) starts a fit on its rows
and appended ones from those duals and 0, as Tsai, Lin & Lin do, reaching the fresh
fit's optimum in fewer sweeps than from zero."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from dlinear import Params, train
from dlinear.cli.train_predict import train_main
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.errors import DlinearError
from dlinear.model import DUALS_SUFFIX, load_duals, load_model_and_duals, save_model
from dlinear.planning.class_plan import incremental_duals
from dlinear.solvers.primal_objective_values import primal_objective

OLD_ROWS = 2700


@pytest.fixture(scope="module")
def binary():
    return make_rcv1_like(3000, n_features=2000, n_classes=2, nnz_per_row=30, seed=3)


@pytest.mark.parametrize("solver", [1, 3])
def test_kept_duals_start_the_appended_rows_in_fewer_sweeps_at_the_same_optimum(
        solver, binary):
    params = Params(solver_type=solver, bias=1)
    old = train(binary.subset(np.arange(OLD_ROWS)), replace(params, keep_duals=True))
    assert len(old.duals) == 1 and old.duals[0].shape == (OLD_ROWS,)
    fresh = train(binary, params)
    from_duals = train(binary, params, init=old)
    from_w = train(binary, params, init=replace(old, duals=()))
    assert from_duals.n_iter[0] < fresh.n_iter[0], (from_duals.n_iter, fresh.n_iter)
    # another start than w's duals (which on sets this small cost about as many sweeps;
    # on 220,000 rows 25 against 19, docs/guide/warm_start.rst)
    assert not np.array_equal(from_duals.w, from_w.w)
    f_fresh = primal_objective(binary, params, fresh)
    assert abs(primal_objective(binary, params, from_duals) - f_fresh) <= 1e-3 * f_fresh


def test_the_duals_follow_the_labels_and_zero_the_appended_rows():
    model = train(make_rcv1_like(300, n_features=100, n_classes=3, nnz_per_row=10, seed=1),
                  Params(solver_type=1, keep_duals=True))
    reordered = list(model.label[::-1])
    duals = incremental_duals(model, 320, reordered, Params(solver_type=1))
    for k, c in enumerate(reordered):
        np.testing.assert_array_equal(duals[k][:300], model.duals[list(model.label).index(c)])
        assert not duals[k][300:].any()
    # fewer rows than the model saw, another solver, -R: the start from w
    assert incremental_duals(model, 299, reordered, Params(solver_type=1)) is None
    assert incremental_duals(model, 320, reordered, Params(solver_type=2)) is None
    assert incremental_duals(model, 320, reordered, Params(
        solver_type=1, bias=1, regularize_bias=False)) is None


def test_the_command_line_keeps_the_duals_beside_the_model(tmp_path, binary):
    from dlinear.data.libsvm_writer import write_libsvm
    old_file, all_file = tmp_path / "old.svm", tmp_path / "all.svm"
    write_libsvm(old_file, binary.subset(np.arange(OLD_ROWS)))
    write_libsvm(all_file, binary)
    old_model, warm_model = tmp_path / "old.model", tmp_path / "warm.model"
    args = ["-q", "-s", "1", "-B", "1", "-m", "1", "--keep-duals"]
    assert train_main([*args, str(old_file), str(old_model)]) == 0
    old = load_model_and_duals(old_model)
    assert old.duals[0].shape == (OLD_ROWS,) and old.duals[0].any()
    assert train_main([*args, "-i", str(old_model), str(all_file), str(warm_model)]) == 0
    params = Params(solver_type=1, bias=1)
    expected = train(binary, params, init=old, n_threads=1)
    warm = load_model_and_duals(warm_model)
    np.testing.assert_array_equal(warm.w, expected.w)
    assert warm.duals[0].shape == (binary.n_samples,)
    # duals beside a model file that another fit has overwritten are not its duals
    save_model(old_model, train(binary, params))
    assert load_duals(old_model, load_model_and_duals(old_model)) == ()
    assert (tmp_path / ("old.model" + DUALS_SUFFIX)).exists()


def test_keeping_duals_is_for_the_svc_dual_only(binary):
    with pytest.raises(DlinearError, match="--keep-duals is for -s 1 and 3"):
        train(binary, Params(solver_type=2, keep_duals=True))


def test_keep_duals_of_a_fit_that_kept_none_writes_nothing(tmp_path, binary):
    """As on a cluster or out of core: the error comes before the model file."""
    model = train(binary, Params(solver_type=1))
    with pytest.raises(DlinearError, match="kept no duals"):
        save_model(tmp_path / "m", model, keep_duals=True)
    assert list(tmp_path.iterdir()) == []
