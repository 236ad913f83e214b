"""Partitioned dual CD (-s 1, 3, 12, 13): K blocks simulated in one process reach LIBLINEAR's
objective; rounds advance all classes. On Dask workers: tests/cluster/test_partitioned_cd_cluster.py."""
import warnings

import numpy as np
import pytest

from dlinear import ConvergenceWarning, Params, train
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.errors import DlinearError
from dlinear.solvers import partitioned_dual_cd as P
from dlinear.solvers.primal_objective_values import primal_objective
from dlinear.in_process.simulated import train_partitioned_in_process
from tests.support.liblinear_oracle import f_star, liblinear_train

# Relative primal objective tolerances, just above the largest distance measured with K = 1,
# 2 and 3 blocks, both rules, simulated (binary_split, multiclass_split, the regression set
# below; SVR: the cocoa rule) and on the workers (other row layouts; the tests below).
#
# At the default eps: (reference, bound). -s 1 and -s 7 against liblinear-official at its
# default eps (measured up to 5.9e-4 and 3.3e-5 since each local pass is one order over
# all of a worker's parts; 5.2e-4 and 2.6e-5 before). For -s 3, 12 and 13 LIBLINEAR's stopping
# rule is loose at its default eps: LIBLINEAR itself stops 1.6e-3 (-s 3), 1.9e-3 (-s 12)
# and 2.9e-2 (-s 13) above the optimum f*, and the partitioned runs, which meet the same
# rule at other points, 3.0e-3 (K = 1, plain CD without shrinking) to 7.6e-3 (-s 3),
# 4.6e-3 to 1.33e-2 (-s 12) and 4.4e-2 to 6.8e-2 (-s 13): so these are held against f*.
DEFAULT_EPS = {1: ("liblinear", 7e-4), 3: ("optimum", 8e-3), 7: ("liblinear", 5e-5),
               12: ("optimum", 1.5e-2), 13: ("optimum", 7.5e-2)}
# At -e 1e-5, against liblinear-official at -e 1e-5 (measured up to 9.3e-12, 1.2e-6,
# 1.1e-12, 2.2e-10 and 5.4e-6; LIBLINEAR's -s 13 is the one further from f*).
TIGHT_EPS_TOL = {1: 1e-10, 3: 2e-6, 7: 2e-12, 12: 1e-9, 13: 8e-6}


def relative_gap(problem, params, model, reference):
    f = primal_objective(problem, params, model)
    f_ref = primal_objective(problem, params, reference)
    return (f - f_ref) / abs(f_ref)


def default_eps_gap(problem, params, model):
    """(relative distance of `model`'s objective from DEFAULT_EPS's reference, bound)."""
    params = params.resolved()
    reference, bound = DEFAULT_EPS[params.solver_type]
    f = primal_objective(problem, params, model)
    if reference == "liblinear":
        f_ref = primal_objective(problem, params,
                                 liblinear_train(problem, f"-s {params.solver_type}")[1])
    else:
        f_ref = f_star(problem, params)
    return (f - f_ref) / abs(f_ref), bound


def assert_tight_parity(problem, params, model):
    """`model` (trained at -e 1e-5) against liblinear-official at -e 1e-5."""
    _, theirs = liblinear_train(problem, f"-s {params.solver_type} -c {params.C} -e 1e-5")
    gap = relative_gap(problem, params, model, theirs)
    assert abs(gap) <= TIGHT_EPS_TOL[params.solver_type], (params.solver_type, gap)


@pytest.mark.slow
@pytest.mark.parametrize("solver", [1, 3, 7])
@pytest.mark.parametrize("rule", ["adaptive", "cocoa", "linesearch"])
@pytest.mark.parametrize("n_blocks", [1, 2, 3])
def test_simulated_blocks_reach_liblinear(binary_split, solver, rule, n_blocks):
    train_set, _ = binary_split
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)    # no cap, no switch
        params = Params(solver_type=solver, partition_rule=rule, max_iter=3000)
        model = train_partitioned_in_process(train_set, params, n_blocks, rule=rule)
        gap, bound = default_eps_gap(train_set, params, model)
        assert abs(gap) <= bound, gap
        tight = Params(solver_type=solver, eps=1e-5, max_iter=3000)
        model = train_partitioned_in_process(train_set, tight, n_blocks, rule=rule)
        assert_tight_parity(train_set, tight, model)


@pytest.fixture(scope="module")
def regression():
    problem = make_rcv1_like(3000, n_features=1500, nnz_per_row=25, seed=33)
    problem.y = problem.to_scipy() @ np.random.default_rng(0).normal(size=1500)
    return problem


@pytest.mark.slow
@pytest.mark.parametrize("solver", [12, 13])
@pytest.mark.parametrize("n_blocks", [1, 2, 3])
def test_simulated_svr_reaches_liblinear(regression, solver, n_blocks):
    """SVR's stopping rule is LIBLINEAR's: relative to the first round's violation."""
    for eps in (None, 1e-5):
        params = Params(solver_type=solver, eps=eps, max_iter=3000)
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            model = train_partitioned_in_process(regression, params, n_blocks)
        if eps is None:
            gap, bound = default_eps_gap(regression, params, model)
            assert abs(gap) <= bound, gap
        else:
            assert_tight_parity(regression, params, model)


def test_svr_round_cap_switches_to_s11(regression):
    lines = []
    with warnings.catch_warnings():       # -s 11 converged: no warning of the dual cap
        warnings.simplefilter("error", ConvergenceWarning)
        train_partitioned_in_process(regression, Params(solver_type=12, max_iter=2), 2,
                                     log=lines.append)
    assert "Switching to use -s 11" in lines


def test_one_block_is_the_local_solver_without_shrinking(binary_split):
    """K = 1 with sigma' = 1 is plain dual CD: objective as the local solver's, to eps."""
    train_set, _ = binary_split
    params = Params(solver_type=1, eps=1e-6)
    local = train(train_set, params)
    one = train_partitioned_in_process(train_set, params, 1)
    assert abs(relative_gap(train_set, params, one, local)) <= 1e-9


@pytest.mark.parametrize("solver", [1, 3, 7, 12, 13])
def test_a_block_of_several_parts_needs_the_rounds_of_one_part(binary_split, regression,
                                                               solver):
    """A worker's block is several CSR parts; each local pass must be one random order
    over all of them. Visiting the parts one after another (each in its own random order)
    took up to 3.4x the rounds on 20k rows (-s 1, one block: 7 rounds as 1 part, 15 as 2,
    24 as 8) and on this set, one block, 9 rounds as 1 part, 13 as 2, 15 as 4 (-s 1; -s 3
    10, 14, 13; -s 7 on 3 blocks 7, 9, 10). With one order the rounds are the same."""
    problem = regression if solver in (12, 13) else binary_split[0]
    params = Params(solver_type=solver)
    for n_blocks in (1, 3):
        rounds = {}
        for parts in (1, 2, 4):
            model = train_partitioned_in_process(problem, params, n_blocks,
                                                 parts_per_block=parts)
            rounds[parts] = int(np.max(model.n_iter))
        assert max(rounds.values()) <= rounds[1] + 1, (n_blocks, rounds)


def test_a_pickled_block_reads_its_own_parts(binary_split):
    """The kernels reach the parts by address: a BlockState copied by pickle (to another
    process, say) must rebuild those addresses, not keep the original's."""
    import pickle
    from dlinear.planning.class_plan import block_seeds, targets
    problem = binary_split[0]
    params = Params(solver_type=1).resolved()
    parts = [problem.subset(np.arange(0, 1000)), problem.subset(np.arange(1000, 3000))]
    Y, C = targets(problem.y, None, np.array([1, -1]), np.ones(2), params)
    state = P.BlockState(parts, Y, C, params.bias, problem.n_features, 1,
                         block_seeds(params.seed, 0, 1))
    copy = pickle.loads(pickle.dumps(state))
    assert all(address == getattr(part, name).ctypes.data
               for part, addresses in zip(copy.parts, copy.layout)
               for address, name in zip(addresses[:3], ("indptr", "indices", "data")))
    W = np.zeros((1, problem.n_features + 1))
    args = (W, [0], np.zeros(1), 1.0, 1)
    dW, stats = state.round(*args)
    dW_copy, stats_copy = copy.round(*args)
    np.testing.assert_array_equal(dW, dW_copy)
    np.testing.assert_array_equal(stats, stats_copy)


class CountingBlocks(P.SimulatedBlocks):
    """Counts rounds and their classes, and keeps each round's statistics of class 0."""
    def __init__(self, blocks):
        super().__init__(blocks)
        self.calls = 0
        self.classes_per_call = []
        self.stats = []

    def round(self, W, classes, *args):
        self.calls += 1
        self.classes_per_call.append(len(classes))
        dW, stats = super().round(W, classes, *args)
        self.stats.append(stats[0].copy())
        return dW, stats


@pytest.fixture
def recorded_blocks(monkeypatch):
    """The CountingBlocks of each in-process partitioned fit, in order."""
    made = []

    def recording(blocks):
        made.append(CountingBlocks(blocks))
        return made[-1]

    monkeypatch.setattr(P, "SimulatedBlocks", recording)
    return made


def test_all_classes_advance_in_each_round(multiclass_split, recorded_blocks):
    train_set, _ = multiclass_split
    params = Params(solver_type=1)
    model = train_partitioned_in_process(train_set, params, 3)
    counter = recorded_blocks[0]
    assert len(model.n_iter) == 4
    # one call per round of the slowest class, not one per class and round
    assert counter.calls == max(model.n_iter)
    assert counter.classes_per_call[0] == 4
    gap, bound = default_eps_gap(train_set, params, model)
    assert abs(gap) <= bound, gap


def test_shrinking_uses_global_bounds_and_stops_only_on_a_full_round(binary_split,
                                                                     recorded_blocks):
    """Rows leave the local passes once the global PG bounds allow it (so rounds sweep
    fewer rows), and the run stops only after a round over every row, as LIBLINEAR
    confirms convergence on the unshrunk set; the model is still LIBLINEAR's."""
    from dlinear.kernels.block_dual_cd import ACTIVE, ROWS
    train_set, _ = binary_split
    made = recorded_blocks
    for solver in (1, 3):
        made.clear()
        params = Params(solver_type=solver)
        model = train_partitioned_in_process(train_set, params, 3)
        active = np.array([st[ACTIVE] for st in made[0].stats])
        rows = made[0].stats[0][ROWS]
        assert rows == train_set.n_samples
        assert active.min() < 0.7 * rows           # shrinking took rows out
        assert active[-1] == rows                  # the stopping round saw every row
        gap, bound = default_eps_gap(train_set, params, model)
        assert abs(gap) <= bound, (solver, gap)


class BlockLostAtRound(P.SimulatedBlocks):
    """Simulated blocks that report, after round `at`, what the cluster backend reports
    when a worker is lost: fewer blocks and the restarted w (here w(alpha) itself, since
    no rows are really lost). Records the sigma' of every round."""
    def __init__(self, blocks, at):
        super().__init__(blocks)
        self.at, self.sigmas, self.restarted_w = at, [], None

    def round(self, W, classes, applied, sigma, *args):
        self.sigmas.append(np.array(sigma, dtype=float))
        out = super().round(W, classes, applied, sigma, *args)
        if len(self.sigmas) == self.at:
            self.n_blocks -= 1
            self.restarted_w = self.w_of_alpha()
        return out


@pytest.mark.parametrize("rule", ["cocoa", "adaptive"])
def test_sigma_follows_the_blocks_left_after_a_loss(binary_split, monkeypatch, rule):
    """CoCoA+'s safe sigma' is the number of blocks *now*: after a lost worker it drops to
    the new K (kept at the old K every step is cut more than it must be, which took -s 12
    over its round cap in the worker-kill test); adaptive's never exceeds the new K."""
    train_set, _ = binary_split
    made = []

    def losing(blocks):
        made.append(BlockLostAtRound(blocks, at=5))
        return made[-1]

    monkeypatch.setattr(P, "SimulatedBlocks", losing)
    train_partitioned_in_process(train_set, Params(solver_type=1, eps=1e-3), 3, rule=rule)
    sigmas = made[0].sigmas
    assert len(sigmas) > 6
    if rule == "cocoa":
        assert sigmas[0].max() == 3 and all(s.max() == 2 for s in sigmas[5:])
    else:
        assert all(s.max() <= 2 for s in sigmas[5:])


@pytest.mark.parametrize("solver", [1, 3])
def test_adaptive_rule_needs_fewer_rounds_than_either_paper_rule(binary_split, solver):
    """Rounds to LIBLINEAR's default eps on 8 blocks (deterministic: seeded
    permutations). Measured 33 / 81 / 883 (-s 1) and 30 / 73 / 516 (-s 3) for adaptive /
    cocoa / linesearch."""
    train_set, _ = binary_split
    rounds = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for rule in P.RULES:
            model = train_partitioned_in_process(
                train_set, Params(solver_type=solver, max_iter=3000), 8, rule=rule)
            rounds[rule] = model.n_iter[0]
    assert Params(solver_type=solver).resolved().partition_rule == "adaptive"
    assert 2 * rounds["adaptive"] <= rounds["cocoa"], rounds
    assert 4 * rounds["adaptive"] <= rounds["linesearch"], rounds


def test_round_cap_warns_and_switches_like_liblinear(binary_split):
    train_set, _ = binary_split
    lines = []
    with warnings.catch_warnings():       # -s 2 converged: no warning of the dual cap
        warnings.simplefilter("error", ConvergenceWarning)
        model = train_partitioned_in_process(train_set, Params(solver_type=1, max_iter=3), 2,
                                             log=lines.append)
    assert "Switching to use -s 2" in lines
    # the primal solver finished the job from the dual's w
    _, theirs = liblinear_train(train_set, "-s 2")      # its eps: 0.1 x 0.1, as the switch
    assert abs(relative_gap(train_set, Params(solver_type=1), model, theirs)) <= 1e-3
    lines = []
    with pytest.warns(ConvergenceWarning):
        train_partitioned_in_process(train_set, Params(solver_type=3, max_iter=3), 2,
                                     log=lines.append)
    assert "Using -s 2 may be faster (also see FAQ)" in lines


def test_unsupported_solver_and_rule_are_errors(binary_split):
    train_set, _ = binary_split
    with pytest.raises(DlinearError, match="-s 1, 3, 4, 7, 12, 13 and 21"):
        train_partitioned_in_process(train_set, Params(solver_type=5, partition=True), 2)
    with pytest.raises(DlinearError, match="partition-rule"):
        train_partitioned_in_process(train_set, Params(partition_rule="add"), 2)
    with pytest.raises(DlinearError, match="Dask cluster"):
        train(train_set, Params(), partition=True)
