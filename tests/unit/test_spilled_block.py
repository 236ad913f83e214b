"""A partitioned dual CD block kept on disk (dlinear.in_process.spilled_block), in process:
its rounds reach the in-memory blocks' optimum, its warm start and w(alpha) are the
in-memory block's, and its file lives as long as the block."""
import os

import numpy as np
import pytest

from dlinear import Params
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.errors import DlinearError
from dlinear.in_process.simulated import train_partitioned_in_process
from dlinear.in_process.spilled_block import SPILL_PREFIX, SpilledBlockState
from dlinear.solvers.partitioned_dual_cd import BlockState
from dlinear.solvers.primal_objective_values import primal_objective

# At -e 1e-5 the two paths' objectives (measured 6e-13 and 2e-8 apart): the in-memory
# partitioned fit's own distance from LIBLINEAR at that eps (tests/parity, TIGHT_EPS_TOL)
TIGHT = {1: 1e-10, 3: 2e-6}
BUDGET = 400_000      # about 7 sub-blocks of each of the 2 blocks below


@pytest.fixture(scope="module")
def problem():
    return make_rcv1_like(3000, n_features=1000, nnz_per_row=30, seed=3)


@pytest.mark.parametrize("solver", [1, 3])
def test_blocks_on_disk_reach_the_in_memory_optimum(problem, tmp_path, solver):
    params = Params(solver_type=solver, eps=1e-5, max_iter=5000)
    in_memory = train_partitioned_in_process(problem, params, 2)
    on_disk = train_partitioned_in_process(problem, params, 2, spill_to=(tmp_path, BUDGET))
    f = primal_objective(problem, params, on_disk)
    f_ref = primal_objective(problem, params, in_memory)
    assert abs(f - f_ref) <= TIGHT[solver] * f_ref, (f, f_ref)
    assert os.listdir(tmp_path) == []       # each block's file gone with the fit


def _states(problem, directory, budget):
    Y = np.where(problem.y == problem.y[0], 1.0, -1.0)[:, None]
    C = np.full((problem.n_samples, 1), 0.5)
    parts = [problem.subset(np.arange(0, 1000)), problem.subset(np.arange(1000, 3000))]
    memory = BlockState(parts, Y, C, 1.0, problem.n_features, 1, [11])
    disk = SpilledBlockState(parts, Y, C, 1.0, problem.n_features, 1, [11], directory,
                             budget)
    return memory, disk


def test_warm_start_and_w_of_alpha_are_the_in_memory_blocks(problem, tmp_path):
    memory, disk = _states(problem, tmp_path, BUDGET)
    try:
        assert disk.n_sub_blocks > 2
        [spilled] = os.listdir(tmp_path)
        assert spilled.startswith(SPILL_PREFIX)
        W0 = np.random.default_rng(0).normal(size=(problem.n_features + 1, 1)) * 0.05
        memory.start_from(W0)
        disk.start_from(W0)
        np.testing.assert_array_equal(disk.alpha[0], memory.alpha[0])
        assert np.count_nonzero(disk.alpha[0]) > 0
        np.testing.assert_allclose(disk.w_of_alpha(), memory.w_of_alpha(), rtol=1e-12,
                                   atol=1e-12)
    finally:
        disk.close()
    assert os.listdir(tmp_path) == []


def test_a_budget_without_room_for_a_sub_block_is_one_line(problem, tmp_path):
    """100 kB, where the 3000 rows' state takes 256 kB: one line, no file written."""
    with pytest.raises(DlinearError, match="leaves no room for a block of its 3000 rows") as e:
        _states(problem, tmp_path, 100_000)
    assert "\n" not in str(e.value)
    assert os.listdir(tmp_path) == []


def test_a_worker_spills_a_share_over_half_its_limit_with_half_as_budget():
    from dlinear.cluster.partitioned_cd import SPILL_SHARE, budget_on_disk
    assert SPILL_SHARE == 0.5
    assert budget_on_disk(10**9, 0) is None                 # no limit: in memory
    assert budget_on_disk(100 << 20, 200 << 20) is None     # half: still in memory
    assert budget_on_disk((100 << 20) + 1, 200 << 20) == 100 << 20
