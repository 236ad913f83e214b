"""dlinear-train -C --path-models DIR: every C of the search's grid, trained on the whole
set, warm-started along C, written as DIR/model.C=<C>; each equals a fresh fit at its C
within the solver's tolerance."""
import numpy as np
import pytest
from sklearn.datasets import make_classification

import dlinear
from dlinear.cli.train_predict import train_main
from dlinear.in_process.model_selection import calc_start_C, c_grid, MAX_C
from dlinear.solvers.primal_objective_values import primal_objective


@pytest.fixture
def train_file(tmp_path):
    X, y = make_classification(120, 6, random_state=0)
    path = tmp_path / "train"
    dlinear.write_libsvm(path, X, np.where(y > 0, 1, -1))
    return path


@pytest.mark.parametrize("solver", ["0", "2", "1"])
def test_every_C_of_the_search_is_written_and_equals_a_fresh_fit(tmp_path, train_file,
                                                                solver, capsys):
    out = tmp_path / "path"
    assert train_main(["-s", solver, "-C", "-e", "1e-6", "--path-models", str(out),
                       str(train_file)]) == 0
    assert "Best C = " in capsys.readouterr().out
    problem = dlinear.read_libsvm(train_file)
    params = dlinear.Params(solver_type=int(solver), eps=1e-6)
    grid = c_grid(calc_start_C(problem, params.resolved()), MAX_C)
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted("model.C=%g" % C for C in grid)
    for C in (grid[0], grid[len(grid) // 2], grid[-1]):
        written = dlinear.load_model(out / ("model.C=%g" % C))
        at_C = dlinear.Params(solver_type=int(solver), C=C, eps=1e-6)
        fresh = dlinear.train(problem, at_C)
        assert written.solver_type == int(solver)
        # the same optimum, each to its stopping rule: the objectives agree
        assert primal_objective(problem, at_C, written) == pytest.approx(
            primal_objective(problem, at_C, fresh), rel=1e-4)


def test_path_models_needs_C(tmp_path, train_file, capsys):
    assert train_main(["--path-models", str(tmp_path / "p"), str(train_file)]) != 0
    assert "--path-models needs -C" in capsys.readouterr().err
    assert not (tmp_path / "p").exists()


@pytest.mark.parametrize("solver, extrapolated", [(0, True), (11, True), (1, False)])
def test_newton_fits_start_on_the_line_through_the_two_models_before(solver, extrapolated):
    """Newton's warm start along C is w extrapolated in log C from the two models before;
    the dual solvers start from the last model (its duals)."""
    from dlinear.in_process.model_selection import train_path

    class Fitted:
        def __init__(self, w):
            self.w = w

    starts = []

    def fit(problem, at_C, init):
        starts.append(init)
        return Fitted(np.array([at_C.C, -at_C.C ** 2]))

    train_path(None, dlinear.Params(solver_type=solver), [8.0, 2.0, 1.0], fit)
    assert starts[0] is None and list(starts[1].w) == [1.0, -1.0]
    if extrapolated:    # log2 C: 0, 1, 3 -> two steps along the line through C = 1, 2
        np.testing.assert_allclose(starts[2], [2.0 + 2 * 1.0, -4.0 + 2 * -3.0])
    else:
        assert list(starts[2].w) == [2.0, -4.0]


@pytest.mark.parametrize("solver", [0, 2, 11])
def test_newton_path_takes_the_gradient_at_zero_once(solver, monkeypatch):
    """The stopping rule's ||grad f(0)|| is linear in C: the path's first fit computes it,
    the others take it scaled (no pass at w = 0), and stop where they would have stopped
    computing it again (on a doubling grid the scaled norm is the computed one, bit for
    bit, so the models are)."""
    from dataclasses import replace
    from dlinear.in_process.model_selection import train_path
    from dlinear.solvers.primal_objectives import LossTerm
    X, y = make_classification(300, 8, random_state=1)
    if solver == 11:
        y = X @ np.arange(8.0) + 0.1 * np.arange(300) % 3
    problem = dlinear.Problem.from_arrays(X, y)
    params = dlinear.Params(solver_type=solver, bias=1.0)
    Cs = [2.0 ** k for k in range(-6, 4)]
    at_zero = []
    at = LossTerm.at

    def counting_at(term, w):
        at_zero.append(not np.any(w))
        return at(term, w)
    monkeypatch.setattr(LossTerm, "at", counting_at)
    path = train_path(problem, params, Cs, lambda p, at_C, init: dlinear.train(
        p, at_C, init=init))
    assert sum(at_zero) == 1
    assert all(m.gnorm0_per_C == path[0].gnorm0_per_C for m in path)
    at_zero.clear()
    computed = train_path(problem, params, Cs, lambda p, at_C, init: dlinear.train(
        p, replace(at_C, gnorm0_per_C=None), init=init))
    assert sum(at_zero) == len(Cs)
    for scaled, fresh in zip(path, computed):
        assert scaled.n_iter == fresh.n_iter
        np.testing.assert_array_equal(scaled.w, fresh.w)


@pytest.mark.parametrize("solver, regularize_bias, n_classes, log2_C",
                         [(1, True, 3, -7), (3, True, 3, -11), (3, False, 2, -7)])
def test_dual_path_starts_from_the_duals_before(solver, regularize_bias, n_classes,
                                                 log2_C):
    """-s 1 along C starts from the duals of the C's before, extrapolated in log C
    (clipped at 0; with -R, where y^T alpha = 0 must hold, the last duals as they are);
    -s 3 from the last duals as they are; each model is the fresh fit's optimum; the
    models returned keep no duals."""
    import warnings
    from dlinear.errors import ConvergenceWarning
    from dlinear.in_process.model_selection import extrapolated_start, train_path
    X, y = make_classification(240, 8, n_informative=5, n_classes=n_classes,
                               random_state=2)
    problem = dlinear.Problem.from_arrays(X, y)
    params = dlinear.Params(solver_type=solver, eps=1e-2, bias=1.0,
                            regularize_bias=regularize_bias)
    Cs = [2.0 ** k for k in range(log2_C, log2_C + 7)]     # where -s 3 converges
    seen = []

    def fit(p, at_C, init):
        model = dlinear.train(p, at_C, init=init)
        seen.append((at_C.init_duals, model.duals))
        return model
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        path = train_path(problem, params, Cs, fit)
    assert seen[0][0] is None and len(seen[0][1]) == (1 if n_classes == 2 else n_classes)
    for k in range(1, len(Cs)):
        start, (last, before) = seen[k][0], (seen[k - 1][1], seen[k - 2][1])
        for c, alpha in enumerate(start):
            if k == 1 or not regularize_bias or solver == 3:
                expected = last[c]
            else:
                expected = np.maximum(extrapolated_start(before[c], last[c], Cs[k - 2],
                                                         Cs[k - 1], Cs[k]), 0.0)
            np.testing.assert_array_equal(alpha, expected)
    for C, model in zip(Cs, path):
        assert model.duals == ()
        at_C = dlinear.Params(solver_type=solver, C=C, eps=1e-2, bias=1.0,
                              regularize_bias=regularize_bias)
        fresh = dlinear.train(problem, at_C)
        assert primal_objective(problem, at_C, model) == pytest.approx(
            primal_objective(problem, at_C, fresh), rel=1e-3)
    assert not any(issubclass(w.category, ConvergenceWarning) for w in caught)


@pytest.mark.parametrize("solver", [1, 3])
def test_dual_search_starts_each_C_as_the_path_does(solver, monkeypatch):
    """A fold of the -C search (-s 1 / -s 3) starts each C from the duals start_duals
    makes of the two C's before (-s 1: extrapolated in log C), and its last duals are
    those of its last C (what a continuation on a cluster starts from)."""
    from dlinear.in_process import model_selection as ms
    X, y = make_classification(240, 8, n_informative=5, random_state=3)
    problem = dlinear.Problem.from_arrays(X, y)
    params = dlinear.Params(solver_type=solver, eps=1e-2).resolved()
    Cs = [2.0 ** k for k in range(-8, -2)]
    fits = []
    real = ms.train_one

    def recording(task, at_C):
        result = real(task, at_C)
        fits.append((task.alpha0, result.alpha))
        return result
    monkeypatch.setattr(ms, "train_one", recording)
    result = ms.run_fold_path(problem, np.arange(240), 0, 120, params, Cs,
                              ms.PathRequest(group=0, fold=0))
    assert len(fits) == len(Cs) and fits[0][0] is None
    assert fits[1][0] is fits[0][1]                     # one C before: its duals
    for j in range(2, len(Cs)):
        expected = fits[j - 1][1]
        if solver == 1:
            expected = np.maximum(ms.extrapolated_start(fits[j - 2][1], fits[j - 1][1],
                                                        Cs[j - 2], Cs[j - 1], Cs[j]), 0.0)
        np.testing.assert_array_equal(fits[j][0], expected)
    assert result.alpha[0] is fits[-1][1]


def test_starting_duals_of_another_shape_are_one_clear_error():
    from dlinear.errors import DlinearError
    X, y = make_classification(30, 4, random_state=0)
    problem = dlinear.Problem.from_arrays(X, y)
    params = dlinear.Params(solver_type=1, init_duals=(np.zeros(29),))
    with pytest.raises(DlinearError, match="starting duals of problem 0 have shape"):
        dlinear.train(problem, params)


def test_kcolumn_newton_path_scales_the_gradient_at_zero(monkeypatch):
    """k-column Newton (one-vs-rest classes in lockstep) takes the path's scaled
    ||grad f(0)|| per class too: a pass less per C after the first, the same models."""
    from dataclasses import replace
    from dlinear.in_process.model_selection import train_path
    from dlinear.solvers.kcolumn import KColumnLossTerm
    X, y = make_classification(300, 8, n_informative=5, n_classes=3, random_state=3)
    problem = dlinear.Problem.from_arrays(X, y)
    params = dlinear.Params(solver_type=0, bias=1.0, kcolumn=True)
    Cs = [2.0 ** k for k in range(-4, 3)]
    passes = []
    close = KColumnLossTerm.close

    def counting_close(term):
        passes.append(term.n_passes)
        close(term)
    monkeypatch.setattr(KColumnLossTerm, "close", counting_close)
    path = train_path(problem, params, Cs, lambda p, at_C, init: dlinear.train(
        p, at_C, init=init))
    scaled = sum(passes)
    passes.clear()
    computed = train_path(problem, params, Cs, lambda p, at_C, init: dlinear.train(
        p, replace(at_C, gnorm0_per_C=None), init=init))
    assert len(passes) == len(Cs) and scaled <= sum(passes) - (len(Cs) - 1)
    for a, b in zip(path, computed):
        assert a.n_iter == b.n_iter
        np.testing.assert_array_equal(a.w, b.w)


@pytest.mark.parametrize("solver", [0, 1])
def test_a_path_makes_the_problems_labels_and_columns_once(monkeypatch, solver):
    """Along train_path the fits share the problem's labels and occurring columns (made
    once, problem.facts_shared) and give the models they give when each fit makes its
    own."""
    import contextlib
    import scipy.sparse as sp
    import dlinear.in_process.model_selection as ms
    from dlinear.data import columns
    from dlinear.planning import class_plan

    rng = np.random.default_rng(0)
    X = sp.random(300, 20000, density=0.002, random_state=1, format="csr")
    X = X[:, np.flatnonzero(X.getnnz(axis=0))[:60]]          # few of many columns
    X = sp.hstack([X, sp.csr_matrix((300, 20000))], format="csr")
    y = np.where(X @ rng.standard_normal(X.shape[1]) > 0, 1, -1)
    problem = dlinear.Problem.from_arrays(X, y)
    Cs = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0]

    def path():
        return ms.train_path(problem, dlinear.Params(solver_type=solver), Cs,
                             lambda p, at_C, init: dlinear.train(p, at_C, init=init))

    calls = {"scan": 0, "labels": 0}
    scan, labels = columns._compact_problem, class_plan._first_appearance
    monkeypatch.setattr(columns, "_compact_problem",
                        lambda *a: calls.__setitem__("scan", calls["scan"] + 1) or scan(*a))
    monkeypatch.setattr(class_plan, "_first_appearance",
                        lambda *a: calls.__setitem__("labels", calls["labels"] + 1)
                        or labels(*a))
    shared = path()
    assert calls == {"scan": 1, "labels": 1}
    monkeypatch.setattr(ms, "facts_shared", contextlib.nullcontext)
    alone = path()
    assert calls["scan"] == 1 + len(Cs) and calls["labels"] == 1 + len(Cs)
    for a, b in zip(shared, alone):
        assert np.array_equal(a.w, b.w)
