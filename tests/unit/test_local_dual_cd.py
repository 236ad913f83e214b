"""The local scheme's round (dlinear.kernels.local_dual_cd): parts that write only their
own copy of w, the merge, and the fraction that keeps a round from increasing the dual
when the parts' steps add up beyond their sigma."""
import numpy as np
import pytest

from dlinear.kernels.local_dual_cd import (local_sweep_part, merge_parts, part_copies,
                                           round_terms, safe_fraction, scale_round)
from dlinear.kernels.parallel_dual_cd_svc import dual_state
from dlinear.threads import stop_flag

INF = np.inf


def two_equal_rows():
    """Two copies of the row x = (1), y = +1, L1 loss with C = 10 (U = 10): the dual
    0.5 (a1 + a2)^2 - a1 - a2, whose minimum is on a1 + a2 = 1."""
    indptr = np.array([0, 1, 2], dtype=np.int64)
    indices = np.array([0, 0], dtype=np.int32)
    data = np.array([1.0, 1.0])
    return indptr, indices, data


def one_round(sigma):
    indptr, indices, data = two_equal_rows()
    w = np.zeros(1)
    alpha = np.zeros(2)
    inst, index, n = dual_state(indptr, indices, data, 1, -1.0, np.ones(2), np.full(2, 10.0),
                                False, alpha, w)
    copies = part_copies(2, 1)
    step = np.empty(2)
    parts = [local_sweep_part(indptr, indices, data, 1, -1.0, False, inst, index, k, k + 1,
                              INF, -INF, w, copies[k], sigma, step, stop_flag())
             for k in range(2)]
    return inst, index, w, copies, step, parts


def test_parts_write_only_their_copies_and_merge_adds_their_changes():
    inst, index, w, copies, step, parts = one_round(2.0)
    assert w[0] == 0.0                                   # read only during the round
    # sigma = 2: each part's step is -G / (2 ||x||^2) = 0.5, its copy moves by 2 * 0.5
    np.testing.assert_array_equal(inst[:, 0], [0.5, 0.5])
    np.testing.assert_array_equal(copies[:, 0], [1.0, 1.0])
    np.testing.assert_array_equal(step, [0.5, 0.5])
    assert [p[3] for p in parts] == [-0.5, -0.5]          # linear terms: -d (L1 loss)
    w_dW, dW2, parts2 = round_terms(w, copies, 2, 2.0)
    assert (w_dW, dW2, parts2) == (0.0, 1.0, 0.5)
    assert safe_fraction(w_dW, dW2, -1.0, 0.0) == 1.0     # sigma = K: the whole step
    merge_parts(w, copies, 2, 2.0)
    assert w[0] == 1.0                                    # = sum_i alpha_i y_i x_i


def test_a_round_beyond_its_sigma_is_cut_back_to_the_best_fraction():
    # sigma = 1: both parts step to alpha = 1, together to a1 + a2 = 2, where the dual
    # is back at its start (0); the best fraction of that step is 1/2
    inst, index, w, copies, step, parts = one_round(1.0)
    np.testing.assert_array_equal(inst[:, 0], [1.0, 1.0])
    w_dW, dW2, parts2 = round_terms(w, copies, 2, 1.0)
    assert dW2 / parts2 == 2.0                            # rho: the next round's sigma
    gamma = safe_fraction(w_dW, dW2, sum(p[3] for p in parts), sum(p[4] for p in parts))
    assert gamma == pytest.approx(0.5)
    scale_round(inst, index, step, 0, 2, gamma, False)
    merge_parts(w, copies, 2, 1.0 / gamma)
    np.testing.assert_allclose(inst[:, 0], [0.5, 0.5])
    assert w[0] == pytest.approx(1.0)
    a = inst[:, 0]
    assert 0.5 * a.sum() ** 2 - a.sum() == pytest.approx(-0.5)   # the dual's minimum


def test_safe_fraction_stays_in_zero_one():
    assert safe_fraction(0.0, 0.0, 0.0, 0.0) == 1.0
    assert safe_fraction(1.0, 1.0, 0.0, 0.0) == 0.0       # an ascent direction: no step
    assert safe_fraction(-5.0, 1.0, 0.0, 0.0) == 1.0


@pytest.mark.parametrize("l2_loss", [True, False])
@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_set_up_and_rebuild_on_threads_match_one_thread(l2_loss, bias):
    """The local scheme's records and w of a warm start, and its final w from alpha, on
    3 threads: the records the serial pass makes, w the same sums in another order."""
    from dlinear.datasets.rcv1_like import make_rcv1_like
    from dlinear.kernels.parallel_dual_cd_svc import w_from_alpha
    from dlinear.solvers.parallel_dual_cd import dual_state_on_threads, w_from_alpha_on_threads
    from dlinear.threads import PassPool

    X = make_rcv1_like(900, n_features=300, nnz_per_row=15, seed=5)
    rng = np.random.default_rng(0)
    y = np.where(X.y > 0, 1.0, -1.0)
    C = rng.uniform(0.5, 2.0, X.n_samples)
    C[::7] = 0.0                                       # rows left out
    alpha = np.where(rng.random(X.n_samples) < 0.5, rng.uniform(0, 0.4, X.n_samples), 0.0)
    w_size = X.n_features + (1 if bias >= 0 else 0)
    w_one = np.zeros(w_size)
    inst_one, index_one, n_one = dual_state(X.indptr, X.indices, X.data, X.n_features, bias,
                                            y, C, l2_loss, alpha, w_one)
    pool = PassPool(3, "test")
    try:
        copies = part_copies(3, w_size)
        w = np.full(w_size, np.nan)
        inst, index, n = dual_state_on_threads(pool, X, bias, y, C, l2_loss, alpha, w,
                                               copies)
        np.testing.assert_array_equal(inst, inst_one)
        assert n == n_one
        np.testing.assert_array_equal(index[:n], index_one[:n_one])
        np.testing.assert_allclose(w, w_one, rtol=1e-12, atol=1e-13)
        assert np.any(w != 0.0)

        inst[:, 0] = np.where(C > 0, rng.uniform(0, 1, X.n_samples), 0.0)
        w_from_alpha(X.indptr, X.indices, X.data, X.n_features, bias, inst, w_one)
        w_from_alpha_on_threads(pool, X, bias, inst, w, copies)
        np.testing.assert_allclose(w, w_one, rtol=1e-12, atol=1e-13)
    finally:
        pool.close()
