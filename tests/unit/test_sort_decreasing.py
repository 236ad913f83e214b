"""-s 4's in-kernel heapsort against NumPy's sort."""
import numpy as np
import pytest

from dlinear.kernels.mcsvm_cs import sort_decreasing


@pytest.mark.parametrize("n", [0, 1, 2, 3, 33, 100, 257])
def test_sort_decreasing_sorts_the_prefix_only(n):
    rng = np.random.default_rng(n)
    D = rng.normal(size=n + 5)
    D[: n // 3] = np.round(D[: n // 3])          # repeated values
    before = D.copy()
    sort_decreasing(D, n)
    np.testing.assert_array_equal(D[:n], np.sort(before[:n])[::-1])
    np.testing.assert_array_equal(D[n:], before[n:])
