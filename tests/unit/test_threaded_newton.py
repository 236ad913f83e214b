"""The Newton passes of a binary or regression fit on threads (-s 0, 2, 11; line search
and TRON): fixed row chunks, their partial sums added in chunk order, so the model is the
same to the bit on any number of threads."""
import threading

import numpy as np
import pytest

from dlinear import Params, Problem, train
from dlinear.cli.train_predict import parse_train_args, UsageError
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.solvers import primal_objectives as PO
from dlinear.solvers.primal_objectives import LOSS_OF_SOLVER, LossTerm, row_chunks


@pytest.fixture(scope="module")
def binary():
    p = make_rcv1_like(3000, n_features=800, nnz_per_row=20, seed=41)
    w = np.random.default_rng(5).uniform(0.2, 3.0, size=p.n_samples)
    return Problem(p.indptr, p.indices, p.data, p.y, p.n_features, sample_weight=w)


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of a few hundred rows, so the test data has many."""
    monkeypatch.setattr(PO, "CHUNK_NNZ", 3000)
    monkeypatch.setattr(PO, "NNZ_PER_PART", 1)


def _regression(problem):
    y = problem.to_scipy() @ np.random.default_rng(0).normal(size=problem.n_features)
    return Problem(problem.indptr, problem.indices, problem.data, y, problem.n_features,
                   sample_weight=problem.sample_weight)


@pytest.mark.parametrize("solver", [0, 2, 11])
@pytest.mark.parametrize("driver", ["linesearch", "tron"])
@pytest.mark.parametrize("bias,R", [(-1.0, True), (1.0, True), (1.0, False)])
def test_same_model_on_1_2_and_3_threads(solver, driver, bias, R, binary, small_chunks):
    data = _regression(binary) if solver == 11 else binary
    params = Params(solver_type=solver, newton=driver, bias=bias, regularize_bias=R,
                    C=2.0, eps=1e-4 if solver == 11 else 1e-3,
                    class_weights=[] if solver == 11 else [(1, 2.5)])
    logs = {t: [] for t in (1, 2, 3)}
    models = {t: train(data, params, log=logs[t].append, n_threads=t) for t in (1, 2, 3)}
    for t in (2, 3):
        np.testing.assert_array_equal(models[t].w, models[1].w)
        assert logs[t] == logs[1]


def test_chunks_depend_on_the_data_only(binary, small_chunks):
    chunks = row_chunks(binary.indptr, binary.indices, binary.n_features, 1.0)
    assert len(chunks) > 5
    assert chunks[0][0] == 0 and chunks[-1][1] == binary.n_samples
    assert all(a[1] == b[0] for a, b in zip(chunks[:-1], chunks[1:]))
    for t in (1, 2, 3):
        term = LossTerm(binary, binary.y, np.ones(binary.n_samples), 1.0, 0, n_threads=t)
        assert len(term._chunks.views) == len(chunks)


@pytest.mark.parametrize("solver", [0, 2, 11])
def test_chunked_values_agree_with_one_pass(solver, binary, small_chunks):
    """The chunked sums are the one-pass sums up to rounding; the row state is equal."""
    y = binary.y
    C = np.random.default_rng(1).uniform(0.5, 2.0, size=binary.n_samples)
    one = LossTerm(binary, y, C, 1.0, LOSS_OF_SOLVER[solver], p=0.1)
    two = LossTerm(binary, y, C, 1.0, LOSS_OF_SOLVER[solver], p=0.1, n_threads=2)
    rng = np.random.default_rng(3)
    w = rng.normal(size=one.n_variables) * 0.1
    s = rng.normal(size=one.n_variables) * 0.1
    assert two.at(w) == pytest.approx(one.at(w), rel=1e-12)
    np.testing.assert_array_equal(two._z, one._z)
    for a, b in zip(two.grad_precond(), one.grad_precond()):
        np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(two.hv(s), one.hv(s), rtol=1e-11, atol=1e-12)
    assert two.along(s, 0.5) == pytest.approx(one.along(s, 0.5), rel=1e-12)
    assert two.loss_along(0.25) == pytest.approx(one.loss_along(0.25), rel=1e-12)
    two.close()


def test_a_binary_fit_uses_the_threads_it_is_given(binary, small_chunks, monkeypatch):
    seen = set()
    real_grad_precond = PO.K.grad_precond

    def recording(*args):
        seen.add(threading.get_ident())
        return real_grad_precond(*args)

    monkeypatch.setattr(PO.K, "grad_precond", recording)
    train(binary, Params(solver_type=0, eps=1e-3), n_threads=2)
    assert len(seen) == 2
    seen.clear()
    train(binary, Params(solver_type=0, eps=1e-3), n_threads=1)
    assert seen == {threading.get_ident()}


def test_cli_m_sets_the_threads():
    _, opts, _, _ = parse_train_args(["-m", "3", "data.txt"])
    assert opts["threads"] == 3
    _, opts, _, _ = parse_train_args(["data.txt"])
    assert opts["threads"] is None              # default: one per core
    for bad in ("0", "two"):
        with pytest.raises(UsageError):
            parse_train_args(["-m", bad, "data.txt"])


@pytest.mark.parametrize("n_classes", [1, 3])
def test_kcolumn_passes_on_threads_give_the_same_bits(n_classes):
    """k-column Newton (-s 0, by columns): a round of one group splits its passes by row
    chunks and feature ranges over the threads; the models are those of one thread."""
    from dlinear.planning.class_plan import order_labels, first_appearance, targets, weighted_class_C
    from dlinear.solvers.kcolumn import fit_one_vs_rest_kcolumn
    data = make_rcv1_like(2000, n_features=600, n_classes=4, nnz_per_row=20, seed=7)
    params = Params(solver_type=0, eps=1e-3, bias=1.0).resolved()
    label = order_labels(first_appearance(data.y))
    weighted_C = weighted_class_C(label, params, lambda line: None)
    Y, C = targets(data.y, None, label, weighted_C, params)
    Y, C = Y[:, :n_classes], C[:, :n_classes]
    fits = {t: fit_one_vs_rest_kcolumn(data, Y, C, params, [None] * n_classes, n_threads=t)
            for t in (1, 2, 3)}
    for t in (2, 3):
        for a, b in zip(fits[t], fits[1]):
            np.testing.assert_array_equal(a.w, b.w)
            assert a.log == b.log


def test_one_chunk_adds_straight_into_the_output(binary, monkeypatch):
    """Wide data (chunks of at least 8 x n nonzeros) may have one chunk: no parts kept,
    the same values as the one-pass term."""
    monkeypatch.setattr(PO, "CHUNK_NNZ", binary.nnz * 2)
    C = np.ones(binary.n_samples)
    one = LossTerm(binary, binary.y, C, 1.0, 0)
    chunked = LossTerm(binary, binary.y, C, 1.0, 0, n_threads=2)
    assert len(chunked._chunks.views) == 1 and chunked._chunks.parts.size == 0
    w = np.random.default_rng(4).normal(size=one.n_variables) * 0.1
    assert chunked.at(w) == one.at(w)
    for a, b in zip(chunked.grad_precond(), one.grad_precond()):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(chunked.hv(w), one.hv(w))
