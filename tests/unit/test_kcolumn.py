"""k-column Newton (dlinear.solvers.kcolumn): the one-vs-rest classes of -s 0 / -s 2
sharing every pass over the data give the per-class drivers' models, logs and counts."""
from dataclasses import replace

import numpy as np
import pytest

from dlinear import Params, Problem
from dlinear.kernels import kcolumn_ops as KK
from dlinear.kernels import primal_ops as K
from dlinear.solvers.kcolumn import KColumnLossTerm, fit_one_vs_rest_kcolumn
from dlinear.planning.class_plan import first_appearance, order_labels, targets, weighted_class_C
from dlinear.in_process.train import fit_class, train_in_process


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
    Y, C = targets(train_set.y, train_set.sample_weight, label, weighted_C, params)
    together = fit_one_vs_rest_kcolumn(train_set, Y, C, params, [None] * len(label))
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
        gm = np.zeros((n, 2))
        rows, coef = np.empty(l, dtype=np.int64), np.empty(l)
        m = K.grad_precond(K.L2SVC, P.indptr, P.indices, P.data, P.n_features, 1.0,
                           Y[:, c].copy(), C[:, c].copy(), z, 0.0, gm, rows, coef)
        np.testing.assert_array_equal(grads[c][0], gm[:, 0])
        np.testing.assert_array_equal(grads[c][1], gm[:, 1])
        s_hs = np.zeros((n, 2))
        s_hs[:, 0] = W[(c + 1) % k]
        K.hess_vec(P.indptr, P.indices, P.data, P.n_features, 1.0, rows, coef, m, s_hs)
        np.testing.assert_array_equal(hv[c], s_hs[:, 1])
    assert term.n_passes == 3           # one pass per kind for all columns


def test_in_process_default_follows_the_measured_rule(monkeypatch):
    from dlinear.datasets.rcv1_like import make_rcv1_like
    from dlinear.solvers import kcolumn
    from dlinear.planning.modes import (KCOLUMN_MIN_CLASSES_PER_THREAD, KCOLUMN_MIN_NNZ_PER_ROW,
                               use_kcolumn)
    k, dense = KCOLUMN_MIN_CLASSES_PER_THREAD, KCOLUMN_MIN_NNZ_PER_ROW
    s0, s2 = Params(solver_type=0), Params(solver_type=2)
    assert use_kcolumn(s0, k, dense, n_threads=1)
    assert not use_kcolumn(s0, k - 1, dense, n_threads=1)
    assert not use_kcolumn(s0, k, dense - 1, n_threads=1)
    assert not use_kcolumn(s0, k, dense, n_threads=2)       # k / 2 per thread
    assert use_kcolumn(s0, 2 * k, dense, n_threads=2)
    assert not use_kcolumn(s2, 4 * k, 10 * dense, n_threads=1)
    assert not use_kcolumn(replace(s0, kcolumn=False), 4 * k, 10 * dense)
    assert use_kcolumn(replace(s2, kcolumn=True), 2, 1.0)
    assert not use_kcolumn(replace(s0, primal_cd=False, solver_type=1), 4 * k, dense)

    # a set the rule picks: the default fit goes through k-column Newton, and its model
    # is the per-class drivers' to the last bit
    P = make_rcv1_like(400, n_features=3000, n_classes=k, nnz_per_row=dense + 10, seed=2)
    assert P.nnz / P.n_samples >= dense and len(np.unique(P.y)) == k
    calls = []
    real = kcolumn.fit_one_vs_rest_kcolumn

    def spy(*args, **kwargs):
        calls.append(args[2].shape)
        return real(*args, **kwargs)

    monkeypatch.setattr(kcolumn, "fit_one_vs_rest_kcolumn", spy)
    default = train_in_process(P, s0, n_threads=1)
    assert calls == [(P.n_samples, k)]
    per_class = train_in_process(P, replace(s0, kcolumn=False), n_threads=1)
    assert len(calls) == 1
    np.testing.assert_array_equal(default.w, per_class.w)
    assert default.n_iter == per_class.n_iter


def test_progress_bar_counts_the_classes_of_a_k_column_fit(monkeypatch):
    import io
    import sys

    from dlinear.datasets.rcv1_like import make_rcv1_like

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


def test_lockstep_serves_one_request_of_each_running_class_per_round():
    """serve_in_lockstep: a round carries one request of every generator still running,
    a move travels with the next round, and each generator gets its own answers."""
    from dlinear.solvers.requests import serve_in_lockstep

    def steps(c, n):
        total = 0.0
        for t in range(n):
            total += yield ("at", (c, t))
            if t == 0:
                answer = yield ("move", (0.5 * (c + 1),))
                assert answer is None
        return c, total

    calls = []

    def execute(moves, requests):
        calls.append((dict(moves), dict(requests)))
        return {c: 10.0 * c + args[1] for c, (_, args) in requests.items()}

    done = []
    results, rounds = serve_in_lockstep([steps(0, 3), steps(1, 1), steps(2, 2)], execute,
                                        done.append)
    assert results == [(0, 0.0 + 1.0 + 2.0), (1, 10.0), (2, 20.0 + 21.0)]
    assert rounds.n_rounds == 3 and rounds.columns_per_round == [3, 2, 1]
    assert [sorted(r) for _, r in calls] == [[0, 1, 2], [0, 2], [0]]
    # class 1 left right after its move: the move still travels with the next round
    assert [m for m, _ in calls] == [{}, {0: 0.5, 1: 1.0, 2: 1.5}, {}]
    assert sorted(done) == [0, 1, 2]


def test_pass_pool_runs_each_part_once_and_keeps_their_order():
    import threading

    from dlinear.threads import PassPool

    pool = PassPool(3, "test")
    names = set()

    def part(q, x):
        names.add(threading.current_thread().name)
        return q * x

    assert pool.run(part, [(q, 2.0) for q in range(40)]) == [2.0 * q for q in range(40)]
    assert len(names) <= 3
    # three parts that wait for each other: they run at once, the calling thread one
    barrier = threading.Barrier(3)
    names.clear()
    assert pool.run(lambda q: (barrier.wait(timeout=30), part(q, 1.0))[1],
                    [(q,) for q in range(3)]) == [0.0, 1.0, 2.0]
    assert threading.current_thread().name in names and len(names) == 3
    with pytest.raises(ZeroDivisionError):
        pool.run(lambda q: 1 / q, [(1,), (0,), (2,)])
    pool.close()
    assert PassPool(1, "test").run(part, [(2, 3.0)]) == [6.0]
