"""-s 5 and -s 6 on threads (-s 6's gradient pass in ranges of columns; -s 5 has no
threaded part) give the same model to the bit on any number of threads."""
import numpy as np
import pytest

from dlinear import Params, Problem, train
from dlinear.datasets import make_rcv1_like
from dlinear.solvers import l1r
from dlinear.solvers.l1r import column_ranges


@pytest.fixture(scope="module")
def binary():
    p = make_rcv1_like(3000, n_features=800, nnz_per_row=20, seed=43)
    w = np.random.default_rng(7).uniform(0.2, 3.0, size=p.n_samples)
    return Problem(p.indptr, p.indices, p.data, p.y, p.n_features, sample_weight=w)


@pytest.mark.parametrize("solver,extra", [(6, {}), (6, {"l1_ratio": 0.5}), (5, {})])
@pytest.mark.parametrize("bias,R", [(-1.0, True), (1.0, True), (1.0, False)])
def test_same_model_on_1_2_and_3_threads(solver, extra, bias, R, binary, monkeypatch):
    params = Params(solver_type=solver, bias=bias, regularize_bias=R, eps=1e-4, C=0.5,
                    **extra)
    ranges = []
    real = l1r.column_ranges
    monkeypatch.setattr(l1r, "column_ranges",
                        lambda *a: ranges.append(real(*a)) or ranges[-1])
    models = [train(binary, params, n_threads=t) for t in (1, 2, 3)]
    for m in models[1:]:
        np.testing.assert_array_equal(models[0].w, m.w)
    if solver == 6:
        assert [len(r) for r in ranges] == [1, 2, 3]


def test_column_ranges_cover_the_columns_by_non_zeros():
    col_ptr = np.array([0, 10, 10, 11, 30, 31, 40], dtype=np.int64)
    for n in (1, 2, 3, 4, 10):
        ranges = column_ranges(col_ptr, n)
        assert ranges[0][0] == 0 and ranges[-1][1] == 6
        assert all(a[1] == b[0] and a[0] < a[1] for a, b in zip(ranges, ranges[1:]))
        assert len(ranges) <= n
    assert column_ranges(np.zeros(1, dtype=np.int64), 2) == [(0, 0)]
