"""k-column Newton (dlinear.solvers.kcolumn): the one-vs-rest classes of -s 0 / -s 2
sharing every pass over the data give the per-class drivers' models, logs and counts."""
from dataclasses import replace

import numpy as np
import pytest

from dlinear import Params, Problem
from dlinear.kernels import kcolumn_ops as KK
from dlinear.kernels import primal_ops as K
from dlinear.solvers.kcolumn import KColumnLossTerm, fit_one_vs_rest_together
from dlinear.train import (class_targets, fit_class, order_labels, first_appearance,
                           train_in_process, weighted_class_C)


def weighted(problem, seed=3):
    w = np.random.default_rng(seed).uniform(0.2, 3.0, size=problem.n_samples)
    return Problem(problem.indptr, problem.indices, problem.data, problem.y,
                   problem.n_features, sample_weight=w)


@pytest.mark.parametrize("solver", [0, 2])
@pytest.mark.parametrize("driver", ["linesearch", "tron"])
@pytest.mark.parametrize("bias,R,weights", [(-1.0, True, False), (1.0, True, True),
                                            (1.0, False, False)])
def test_classes_together_equal_one_driver_per_class(solver, driver, bias, R, weights,
                                                     multiclass_split):
    train_set = multiclass_split[0]
    if weights:
        train_set = weighted(train_set)
    params = Params(solver_type=solver, newton=driver, bias=bias, regularize_bias=R,
                    C=2.0, class_weights=[(2, 3.0)] if weights else []).resolved()
    label = order_labels(first_appearance(train_set.y))
    weighted_C = weighted_class_C(label, params, lambda line: None)
    one_by_one = [fit_class(train_set, label, k, weighted_C, params)
                  for k in range(len(label))]
    Y, C = class_targets(train_set.y, train_set.sample_weight, label, weighted_C, params)
    together = fit_one_vs_rest_together(train_set, Y, C, params, [None] * len(label))
    for a, b in zip(one_by_one, together):
        # bit-identical: the same iterates, so the same log lines, Newton and CG counts
        assert a.log == b.log
        assert a.n_iter == b.n_iter
        np.testing.assert_array_equal(a.w, b.w)
    assert any(line.startswith("iter") for line in together[0].log)


def test_train_switch_and_warm_start(multiclass_split, monkeypatch):
    train_set = multiclass_split[0]
    base = Params(solver_type=0, C=1.0)
    per = train_in_process(train_set, replace(base, kcolumn=False), n_threads=2)
    tog = train_in_process(train_set, replace(base, kcolumn=True), n_threads=1)
    np.testing.assert_array_equal(per.w, tog.w)
    assert per.n_iter == tog.n_iter
    # the classes split over two threads: each column's arithmetic is unchanged
    two = train_in_process(train_set, replace(base, kcolumn=True), n_threads=2)
    np.testing.assert_array_equal(two.w, tog.w)
    # and in blocks of columns, one pass per block
    from dlinear.solvers import kcolumn
    monkeypatch.setattr(kcolumn, "COLUMN_BLOCK", 3)
    blocks = train_in_process(train_set, replace(base, kcolumn=True), n_threads=1)
    np.testing.assert_array_equal(blocks.w, tog.w)
    # more blocks than threads: blocks served at once each have their own scratch arrays
    blocks2 = train_in_process(train_set, replace(base, kcolumn=True), n_threads=2)
    np.testing.assert_array_equal(blocks2.w, tog.w)
    # warm start from the optimum: every class stops at once, the active set empties
    warm = train_in_process(train_set, replace(base, kcolumn=True, init_sol=tog.w))
    assert all(n == 0 for n in warm.n_iter)


def test_kernels_equal_one_column_kernels(multiclass_split):
    P = multiclass_split[0]
    rng = np.random.default_rng(0)
    l, n, k = P.n_samples, P.n_features + 1, 3
    Y = np.where(rng.random((l, k)) < 0.4, 1.0, -1.0)
    C = rng.uniform(0.5, 2.0, size=(l, k))
    term = KColumnLossTerm(P, Y, C, 1.0, K.L2SVC, n_features=P.n_features)
    W = [rng.normal(size=n) * 0.1 for _ in range(k)]
    res = term.execute({}, {c: ("at", (W[c],)) for c in range(k)})
    grads = term.execute({}, {c: ("grad_precond", ()) for c in range(k)})
    hv = term.execute({}, {c: ("hv", (W[(c + 1) % k],)) for c in range(k)})
    for c in range(k):
        z = np.empty(l)
        K.xv(P.indptr, P.indices, P.data, P.n_features, 1.0, W[c], z)
        assert res[c] == K.loss_sum(K.L2SVC, Y[:, c].copy(), C[:, c].copy(), z, 0.0)
        g, M = np.zeros(n), np.zeros(n)
        rows, coef = np.empty(l, dtype=np.int64), np.empty(l)
        m = K.grad_precond(K.L2SVC, P.indptr, P.indices, P.data, P.n_features, 1.0,
                           Y[:, c].copy(), C[:, c].copy(), z, 0.0, g, M, rows, coef)
        np.testing.assert_array_equal(grads[c][0], g)
        np.testing.assert_array_equal(grads[c][1], M)
        out = np.zeros(n)
        K.hess_vec(P.indptr, P.indices, P.data, P.n_features, 1.0, rows, coef, m,
                   W[(c + 1) % k], out)
        np.testing.assert_array_equal(hv[c], out)
    assert term.n_passes == 3           # one pass per kind for all columns


def test_in_process_default_follows_the_measured_rule(monkeypatch):
    from dlinear.datasets import make_rcv1_like
    from dlinear.solvers import kcolumn
    from dlinear.train import (KCOLUMN_MIN_CLASSES_PER_THREAD, KCOLUMN_MIN_NNZ_PER_ROW,
                               classes_together)
    k, dense = KCOLUMN_MIN_CLASSES_PER_THREAD, KCOLUMN_MIN_NNZ_PER_ROW
    s0, s2 = Params(solver_type=0), Params(solver_type=2)
    assert classes_together(s0, k, dense, n_threads=1)
    assert not classes_together(s0, k - 1, dense, n_threads=1)
    assert not classes_together(s0, k, dense - 1, n_threads=1)
    assert not classes_together(s0, k, dense, n_threads=2)       # k / 2 per thread
    assert classes_together(s0, 2 * k, dense, n_threads=2)
    assert not classes_together(s2, 4 * k, 10 * dense, n_threads=1)
    assert not classes_together(replace(s0, kcolumn=False), 4 * k, 10 * dense)
    assert classes_together(replace(s2, kcolumn=True), 2, 1.0)
    assert not classes_together(replace(s0, primal_cd=False, solver_type=1), 4 * k, dense)

    # a set the rule picks: the default fit goes through k-column Newton, and its model
    # is the per-class drivers' to the last bit
    P = make_rcv1_like(400, n_features=3000, n_classes=k, nnz_per_row=dense + 10, seed=2)
    assert P.nnz / P.n_samples >= dense and len(np.unique(P.y)) == k
    calls = []
    real = kcolumn.fit_one_vs_rest_together

    def spy(*args, **kwargs):
        calls.append(args[2].shape)
        return real(*args, **kwargs)

    monkeypatch.setattr(kcolumn, "fit_one_vs_rest_together", spy)
    default = train_in_process(P, s0, n_threads=1)
    assert calls == [(P.n_samples, k)]
    per_class = train_in_process(P, replace(s0, kcolumn=False), n_threads=1)
    assert len(calls) == 1
    np.testing.assert_array_equal(default.w, per_class.w)
    assert default.n_iter == per_class.n_iter


def test_progress_bar_counts_the_classes_of_a_k_column_fit(monkeypatch):
    import io
    import sys

    from dlinear.datasets import make_rcv1_like

    class FakeTerminal(io.StringIO):
        def isatty(self):
            return True

    P = make_rcv1_like(300, n_features=2000, n_classes=8, nnz_per_row=60, seed=4)
    params = Params(solver_type=0, kcolumn=True)
    plain = train_in_process(P, params, n_threads=1)
    tty = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", tty)
    with_bar = train_in_process(P, params, n_threads=1)
    assert "classes |" in tty.getvalue() and "8/8" in tty.getvalue()
    assert tty.getvalue().endswith("\r")                 # erased when done
    np.testing.assert_array_equal(with_bar.w, plain.w)
