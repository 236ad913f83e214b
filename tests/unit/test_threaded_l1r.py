"""-s 5 and -s 6 on threads. -s 6's gradient pass runs in ranges of columns: the same
numbers on any number of threads. -s 5's steps, and -s 6's coordinate descent and line
search, run on threads that each take a range of rows and meet inside the kernel to add
their partial sums: the same steps and stop, the model equal but for the rounding of
those sums, and the same to the bit for a number of threads. On a small problem (under
a million nonzeros a thread) those stay on one thread, and the model is the one-thread
model to the bit."""
import numpy as np
import pytest
import scipy.sparse as sp

from dlinear import Params, Problem, train
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.solvers import l1r
from dlinear.threads import nonzero_ranges


@pytest.fixture(scope="module")
def binary():
    p = make_rcv1_like(3000, n_features=800, nnz_per_row=20, seed=43)
    w = np.random.default_rng(7).uniform(0.2, 3.0, size=p.n_samples)
    return Problem(p.indptr, p.indices, p.data, p.y, p.n_features, sample_weight=w)


@pytest.mark.parametrize("solver,extra", [(6, {}), (6, {"l1_ratio": 0.5})])
@pytest.mark.parametrize("bias,R", [(-1.0, True), (1.0, True), (1.0, False)])
def test_same_model_on_1_2_and_3_threads(solver, extra, bias, R, binary, monkeypatch):
    params = Params(solver_type=solver, bias=bias, regularize_bias=R, eps=1e-4, C=0.5,
                    **extra)
    ranges = []
    real = l1r.nonzero_ranges
    monkeypatch.setattr(l1r, "nonzero_ranges",
                        lambda *a: ranges.append(real(*a)) or ranges[-1])
    models = [train(binary, params, n_threads=t) for t in (1, 2, 3)]
    for m in models[1:]:
        np.testing.assert_array_equal(models[0].w, m.w)
    # the gradient pass's column ranges (the other calls split rows)
    assert [len(r) for r in ranges if r[-1][1] != binary.n_samples] == [1, 2, 3]


def objective(problem, params, w):
    """The primal objective of -s 5 (squared hinge) or -s 6 (logistic, elastic net by
    l1_ratio) at w, the -B bias weight penalized unless -R."""
    X = sp.csr_matrix((problem.data, problem.indices, problem.indptr),
                      shape=(problem.n_samples, problem.n_features))
    if params.bias >= 0:
        X = sp.hstack([X, np.full((problem.n_samples, 1), params.bias)]).tocsr()
    penalized = w[:-1] if params.bias >= 0 and not params.regularize_bias else w
    rho = 1.0 if params.l1_ratio is None else params.l1_ratio
    reg = rho * np.abs(penalized).sum() + (1 - rho) / 2 * penalized @ penalized
    margin = np.where(problem.y > 0, 1.0, -1.0) * (X @ w)
    C = params.C * problem.sample_weight
    if params.solver_type == 5:
        return reg + np.sum(C * np.maximum(0.0, 1.0 - margin) ** 2)
    return reg + np.sum(C * np.logaddexp(0.0, -margin))


@pytest.mark.parametrize("solver,extra", [(5, {}), (6, {}), (6, {"l1_ratio": 0.5})])
@pytest.mark.parametrize("bias,R", [(-1.0, True), (1.0, True), (1.0, False)])
def test_steps_on_2_and_3_threads_are_one_threads(solver, extra, bias, R, binary,
                                                  monkeypatch):
    """-s 5's steps, and -s 6's coordinate descent and line search, on threads that each
    take a range of rows: the same iterations and objective as one thread."""
    monkeypatch.setattr(l1r, "MIN_NNZ_PER_THREAD", 1)
    monkeypatch.setattr(l1r, "MIN_COLUMN_ENTRIES_PER_THREAD", 1)
    monkeypatch.setattr(l1r, "available_cores", lambda: 3)  # 3 threads on any machine
    parts = []
    real = l1r.part_starts
    monkeypatch.setattr(l1r, "part_starts",
                        lambda c, r, bounds: parts.append(len(bounds) - 1) or real(c, r, bounds))
    params = Params(solver_type=solver, bias=bias, regularize_bias=R, eps=1e-4, C=0.5,
                    **extra)
    one, two, three, two_again = [train(binary, params, n_threads=t) for t in (1, 2, 3, 2)]
    assert parts == [1, 2, 3, 2]
    np.testing.assert_array_equal(two.w, two_again.w)
    f1 = objective(binary, params, one.w.ravel())
    scale = np.abs(one.w).max()
    for m in (two, three):
        assert m.n_iter == one.n_iter
        assert abs(objective(binary, params, m.w.ravel()) - f1) <= 1e-12 * f1
        assert np.abs(m.w - one.w).max() <= 1e-7 * scale
        assert np.count_nonzero(m.w) == np.count_nonzero(one.w)


def test_row_split_threads_follow_the_columns_length(monkeypatch):
    monkeypatch.setattr(l1r, "available_cores", lambda: 16)
    rcv1 = (40_647_024, 47_236)         # the 542k-row rcv1-shaped set: 860 entries a column
    assert l1r.row_split_threads(2, *rcv1) == 2
    assert l1r.row_split_threads(8, *rcv1) == 3
    assert l1r.row_split_threads(None, *rcv1) == 1
    assert l1r.row_split_threads(2, 117_000_000, 1 << 24) == 1   # click-shaped: 7 a column
    assert l1r.row_split_threads(2, 900_000, 100) == 1            # small
    monkeypatch.setattr(l1r, "available_cores", lambda: 2)
    assert l1r.row_split_threads(8, *rcv1) == 2                    # one a core at most


def test_part_starts_split_each_column_at_the_row_bounds():
    X = sp.random(50, 7, density=0.3, random_state=4, format="csc")
    X.sort_indices()
    bounds = np.array([0, 10, 11, 37, 50], dtype=np.int64)
    starts = l1r.part_starts(X.indptr.astype(np.int64), X.indices.astype(np.int32), bounds)
    assert starts.shape == (3, 7)
    for j in range(7):
        rows = X.indices[X.indptr[j]:X.indptr[j + 1]]
        for t in range(1, 4):
            assert starts[t - 1, j] == X.indptr[j] + np.count_nonzero(rows < bounds[t])


def test_nonzero_ranges_cover_the_columns_by_non_zeros():
    col_ptr = np.array([0, 10, 10, 11, 30, 31, 40], dtype=np.int64)
    for n in (1, 2, 3, 4, 10):
        ranges = nonzero_ranges(col_ptr, n)
        assert ranges[0][0] == 0 and ranges[-1][1] == 6
        assert all(a[1] == b[0] and a[0] < a[1] for a, b in zip(ranges, ranges[1:]))
        assert len(ranges) <= n
    assert nonzero_ranges(np.zeros(1, dtype=np.int64), 2) == [(0, 0)]
