"""The partitioned dual CD's warm start (BlockState.start_from): each block's duals from
its rows' optimality conditions at w, so that at the optimum w* the blocks' summed
w(alpha) is w* again, whatever the split; the driver starts from that sum."""
from dataclasses import replace

import numpy as np
import pytest

from dlinear import Params, train
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.in_process.simulated import train_partitioned_in_process
from dlinear.planning.class_plan import block_seeds, first_appearance, plan_classes, targets
from dlinear.solvers.partitioned_dual_cd import BlockState, SimulatedBlocks
from tests.support.problems import regression_on


@pytest.fixture(scope="module")
def binary():
    return make_rcv1_like(900, n_features=400, nnz_per_row=15, seed=81)


def _blocks(problem, params, n_blocks):
    plan = plan_classes(params, lambda: first_appearance(problem.y), lambda line: None)
    bounds = np.linspace(0, problem.n_samples, n_blocks + 1).astype(np.int64)
    blocks = []
    for b in range(n_blocks):
        rows = np.arange(bounds[b], bounds[b + 1])
        Y, C = targets(problem.y[rows], None, plan.label, plan.weighted_C, params)
        blocks.append(BlockState([problem.subset(rows)], Y, C, params.bias,
                                 problem.n_features, params.solver_type,
                                 block_seeds(params.seed, b, Y.shape[1]), params.p))
    return blocks


@pytest.mark.parametrize("solver", [1, 7, 12])
def test_the_duals_of_the_optimum_give_the_optimum_back(binary, solver):
    problem = regression_on(binary, 82) if solver == 12 else binary
    params = Params(solver_type=solver, bias=1.0, C=0.5, p=0.1, eps=1e-10).resolved()
    optimum = train(problem, replace(params, solver_type={1: 2, 7: 0, 12: 11}[solver]),
                    n_threads=1)
    w_star = np.asarray(optimum.w, dtype=np.float64).reshape(-1)
    blocks = _blocks(problem, params, 3)
    for block in blocks:
        block.start_from(w_star)
    w_of_alpha = SimulatedBlocks(blocks).w_of_alpha()[0]
    np.testing.assert_allclose(w_of_alpha, w_star, rtol=1e-4,
                               atol=1e-4 * np.abs(w_star).max())
    # and from zeros the duals are LIBLINEAR's start, not these
    fresh = _blocks(problem, params, 3)
    assert not np.allclose(SimulatedBlocks(fresh).w_of_alpha()[0], w_star, atol=1e-3)


def test_the_simulated_partitioned_fit_starts_from_the_model(binary):
    params = Params(solver_type=1, bias=1.0, C=0.5, eps=1e-3)
    fresh_log, warm_log = [], []
    fresh = train_partitioned_in_process(binary, params, 3, log=fresh_log.append)
    warm = train_partitioned_in_process(binary, replace(params, init_sol=fresh), 3,
                                        log=warm_log.append)

    def rounds(lines):
        return [int(line.split("#iter = ")[1].split()[0]) for line in lines
                if "#iter = " in line][0]
    assert rounds(warm_log) <= rounds(fresh_log) // 2, (warm_log, fresh_log)
