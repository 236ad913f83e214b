"""-s 21's working-set selection (dlinear.kernels.oneclass._select) against a sort of the
candidates in its total order, with many tied gradients."""
import numpy as np
import pytest

from dlinear.kernels.oneclass import _select


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("largest", [True, False])
def test_select_takes_the_k_most_extreme_in_value_then_instance_order(seed, largest):
    rng = np.random.default_rng(seed)
    l = 200
    G = np.round(rng.normal(size=l), 1)            # few distinct values: many ties
    n = int(rng.integers(1, l))
    cand = rng.permutation(l)[:n].astype(np.int64)
    k = int(rng.integers(1, n + 1))
    out = np.full(l, -1, dtype=np.int64)
    _select(cand, np.int64(n), G, np.int64(k), np.bool_(largest), out)
    order = sorted(cand.tolist(), key=lambda i: (-G[i], i), reverse=largest)
    assert out[:k].tolist() == order[:k]
    assert (out[k:] == -1).all()
