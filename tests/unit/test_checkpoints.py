"""Checkpoints (--checkpoint DIR, checkpoint=): a fit killed after a checkpoint and run
again with the same directory gives the uninterrupted fit's model; another fit's
directory, and the solvers and modes without checkpoints, are refused in one line."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import scipy.sparse as sp

import dlinear
from dlinear import Params, load_model
from dlinear.data.libsvm_writer import write_libsvm
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.errors import DlinearError
from dlinear.solvers import checkpoint as checkpoints


class Killed(BaseException):
    """Stands for the kill of a process, in process: raised after a save."""


@pytest.fixture(scope="module")
def problem():
    return make_rcv1_like(3000, n_features=2000, nnz_per_row=30, seed=3)


def _train(problem, **options):
    return dlinear.train(problem, Params(**options))


def _killed_after_saves(monkeypatch, n_saves):
    save = checkpoints.ProblemCheckpoint.save

    def save_then_die(self, state):
        save(self, state)
        if self.saves >= n_saves:
            raise Killed
    monkeypatch.setattr(checkpoints.ProblemCheckpoint, "save", save_then_die)


@pytest.mark.parametrize("options", [
    dict(solver_type=0, eps=1e-4), dict(solver_type=2, eps=1e-4, newton="tron"),
    dict(solver_type=1, eps=1e-3), dict(solver_type=3, eps=1e-3),
    dict(solver_type=5, eps=1e-4), dict(solver_type=5, eps=1e-4, bias=1.0,
                                        regularize_bias=False),
    dict(solver_type=6, eps=1e-4), dict(solver_type=6, eps=1e-4, l1_ratio=0.5, bias=1.0)],
    ids=["s0", "s2-tron", "s1", "s3", "s5", "s5-R", "s6", "s6-elastic-net"])
def test_resumed_fit_gives_the_uninterrupted_model(problem, tmp_path, monkeypatch, options):
    uninterrupted = _train(problem, **options)
    with monkeypatch.context() as m:
        _killed_after_saves(m, 2)
        with pytest.raises(Killed):
            _train(problem, checkpoint=str(tmp_path), checkpoint_every=1e-9, **options)
    assert (tmp_path / "problem-0.npz").exists()
    resumed = _train(problem, checkpoint=str(tmp_path), checkpoint_every=1e-9, **options)
    np.testing.assert_allclose(resumed.w, uninterrupted.w, rtol=1e-9, atol=1e-12)
    assert np.array_equal(dlinear.predict(resumed, problem),
                          dlinear.predict(uninterrupted, problem))
    assert os.listdir(tmp_path) == []       # a fit that ended leaves no state


def test_one_vs_rest_classes_resume_each(tmp_path, monkeypatch):
    problem = make_rcv1_like(1500, n_features=800, n_classes=3, nnz_per_row=20, seed=5)
    uninterrupted = _train(problem, solver_type=0, eps=1e-4)
    with monkeypatch.context() as m:
        _killed_after_saves(m, 1)
        with pytest.raises(Killed):
            dlinear.train(problem, Params(solver_type=0, eps=1e-4, checkpoint_every=1e-9),
                          checkpoint=tmp_path, n_threads=1)
    resumed = dlinear.train(problem, Params(solver_type=0, eps=1e-4, checkpoint_every=1e-9),
                            checkpoint=tmp_path, n_threads=1)
    np.testing.assert_allclose(resumed.w, uninterrupted.w, rtol=1e-7, atol=1e-10)


def test_checkpoint_of_other_data_or_options_is_refused(problem, tmp_path, monkeypatch):
    with monkeypatch.context() as m:
        _killed_after_saves(m, 1)
        with pytest.raises(Killed):
            _train(problem, solver_type=2, checkpoint=str(tmp_path), checkpoint_every=1e-9)
    with pytest.raises(DlinearError, match="written for other data or options"):
        _train(problem, solver_type=2, C=2.0, checkpoint=str(tmp_path))
    with pytest.raises(DlinearError, match="written for other data or options"):
        _train(problem.subset(np.arange(100)), solver_type=2, checkpoint=str(tmp_path))


@pytest.mark.parametrize("options, words", [
    (dict(solver_type=7), "--checkpoint is for -s 0, 1, 2, 3, 5, 6 and 11"),
    (dict(solver_type=1, cd_block=2), "--cd-block 2"),
    (dict(solver_type=0, multinomial=True), "--multinomial"),
])
def test_solvers_without_checkpoints_are_refused(problem, tmp_path, options, words):
    with pytest.raises(DlinearError, match=words):
        _train(problem, checkpoint=str(tmp_path), **options)


def test_cross_validation_with_checkpoint_is_refused(problem, tmp_path):
    with pytest.raises(DlinearError, match="cannot be combined with cross validation"):
        dlinear.cross_validation(problem, Params(solver_type=2, checkpoint=str(tmp_path)), 3)


def _primal_objective_l2svc(model, problem, C=1.0):
    y = np.where(np.asarray(problem.y) == model.label[0], 1.0, -1.0)
    margins = 1.0 - y * dlinear.decision_values(model, problem).ravel()
    return 0.5 * float(model.w.ravel() @ model.w.ravel()) + C * float(
        np.sum(np.maximum(margins, 0.0) ** 2))


def test_sigkilled_run_resumes_to_the_uninterrupted_model(tmp_path):
    """dlinear-train killed by SIGKILL once its first checkpoint is there, then run
    again with the same --checkpoint: the model of the run that was not killed."""
    problem = make_rcv1_like(20000, n_features=5000, nnz_per_row=40, seed=7)
    data = tmp_path / "train.txt"
    write_libsvm(data, problem)
    state_dir = tmp_path / "state"
    options = ["-s", "1", "-e", "1e-4", "--max-iter", "3000", "-q"]

    def command(model, *extra):
        return [sys.executable, "-m", "dlinear", "train", *options, *extra, str(data),
                str(model)]
    subprocess.run(command(tmp_path / "plain.model"), check=True, timeout=600)
    run = subprocess.Popen(command(tmp_path / "resumed.model", "--checkpoint",
                                   str(state_dir), "--checkpoint-every", "0.01"))
    state = state_dir / "problem-0.npz"
    while not state.exists() and run.poll() is None:
        time.sleep(0.01)
    if run.poll() is not None:
        pytest.skip("the run ended before its first checkpoint")
    run.send_signal(signal.SIGKILL)
    assert run.wait(timeout=60) == -signal.SIGKILL
    assert not (tmp_path / "resumed.model").exists()
    subprocess.run(command(tmp_path / "resumed.model", "--checkpoint", str(state_dir)),
                   check=True, timeout=600)
    plain = load_model(tmp_path / "plain.model")
    resumed = load_model(tmp_path / "resumed.model")
    assert _primal_objective_l2svc(resumed, problem) == pytest.approx(
        _primal_objective_l2svc(plain, problem), rel=1e-6)
    assert np.array_equal(dlinear.predict(resumed, problem), dlinear.predict(plain, problem))
    assert not state.exists()


def _estimator(name, **options):
    from dlinear import estimators
    return getattr(estimators, name)(**options)


@pytest.mark.parametrize("name, options", [
    ("LogisticRegression", dict(tol=1e-4)), ("LinearSVC", {}), ("LinearSVR", {})])
def test_estimators_take_a_checkpoint_directory(problem, tmp_path, monkeypatch, name,
                                                options):
    X = sp.csr_matrix((problem.data, problem.indices, problem.indptr),
                      shape=(problem.n_samples, problem.n_features))
    y = np.asarray(problem.y)
    plain = _estimator(name, **options).fit(X, y)
    with monkeypatch.context() as m:
        m.setattr(checkpoints.ProblemCheckpoint, "save_if_due",
                  lambda self, make_state: self.save(make_state()))
        _killed_after_saves(m, 1)
        with pytest.raises(Killed):
            _estimator(name, checkpoint=tmp_path, **options).fit(X, y)
    assert (tmp_path / "problem-0.npz").exists()
    resumed = _estimator(name, checkpoint=tmp_path, **options).fit(X, y)
    np.testing.assert_allclose(resumed.coef_, plain.coef_, rtol=1e-9, atol=1e-12)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("solver", [5, 6])
def test_l1_solvers_resume_on_threads(problem, tmp_path, monkeypatch, solver):
    """-s 5 and -s 6 with their steps split by rows over two threads (the thresholds
    lowered so that this small problem is split): each part's state is restored."""
    from dlinear.solvers import l1r
    monkeypatch.setattr(l1r, "MIN_NNZ_PER_THREAD", 1)
    monkeypatch.setattr(l1r, "MIN_COLUMN_ENTRIES_PER_THREAD", 1)
    monkeypatch.setattr(l1r, "available_cores", lambda: 2)
    params = dict(solver_type=solver, eps=1e-4)
    uninterrupted = dlinear.train(problem, Params(**params), n_threads=2)
    with monkeypatch.context() as m:
        _killed_after_saves(m, 2)
        with pytest.raises(Killed):
            dlinear.train(problem, Params(checkpoint_every=1e-9, **params),
                          checkpoint=tmp_path, n_threads=2)
    resumed = dlinear.train(problem, Params(checkpoint_every=1e-9, **params),
                            checkpoint=tmp_path, n_threads=2)
    np.testing.assert_allclose(resumed.w, uninterrupted.w, rtol=1e-9, atol=1e-12)


def test_cli_refuses_a_solver_without_checkpoints_in_one_line(tmp_path):
    data = tmp_path / "train.txt"
    write_libsvm(data, make_rcv1_like(50, n_features=20, nnz_per_row=5, seed=1))
    r = subprocess.run([sys.executable, "-m", "dlinear", "train", "-s", "7", "--checkpoint",
                        str(tmp_path / "state"), str(data), str(tmp_path / "m")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1
    assert r.stderr.count("\n") == 1 and "--checkpoint is for -s 0, 1, 2, 3, 5, 6" in r.stderr
    assert not (tmp_path / "m").exists()
