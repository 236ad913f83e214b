"""The mode chooser (dlinear.planning.modes.choose) on explicit shapes, without a cluster, and the
class plan's (dlinear.planning.class_plan) targets and seeds."""
import numpy as np
import pytest

from dlinear import DlinearError, Params
from dlinear.planning.modes import (COPY_MEMORY_SHARE, KCOLUMN_MIN_CLASSES_PER_THREAD,
                           KCOLUMN_MIN_NNZ_PER_ROW, Cluster, Data, Mode,
                           choose)
from dlinear.planning.class_plan import block_seeds, plan_classes, problem_seed, targets

ROWS, NNZ = 1000, 1000 * KCOLUMN_MIN_NNZ_PER_ROW
BYTES = 12 * NNZ + 16 * ROWS


def shape(n_problems):
    def count():
        if n_problems is None:
            raise AssertionError("a rule read the classes of a regression set")
        return n_problems
    return Data(ROWS, NNZ, n_problems=count)


FITS = Cluster(workers=2, memory=int(BYTES / COPY_MEMORY_SHARE))       # a copy just fits
TOO_SMALL = Cluster(workers=2, memory=int(BYTES / COPY_MEMORY_SHARE) - 1)


@pytest.mark.parametrize("params, n_problems, n_threads, mode", [
    (Params(solver_type=11), None, 4, Mode.ONE_PROBLEM),
    (Params(solver_type=21), None, 4, Mode.ONE_PROBLEM),
    (Params(solver_type=0, multinomial=True), 5, 4, Mode.MULTINOMIAL),
    (Params(solver_type=4), 5, 4, Mode.ALL_CLASSES),
    (Params(solver_type=0), KCOLUMN_MIN_CLASSES_PER_THREAD, 1, Mode.KCOLUMN),
    (Params(solver_type=0), KCOLUMN_MIN_CLASSES_PER_THREAD, 2, Mode.CLASSES_ON_THREADS),
    (Params(solver_type=2), 4 * KCOLUMN_MIN_CLASSES_PER_THREAD, 1, Mode.CLASSES_ON_THREADS),
    (Params(solver_type=2, kcolumn=True), 2, 1, Mode.KCOLUMN),
    (Params(solver_type=1), 5, 4, Mode.CLASSES_ON_THREADS),
])
def test_in_process_modes(params, n_problems, n_threads, mode):
    assert choose(params, shape(n_problems), n_threads=n_threads).mode is mode


@pytest.mark.parametrize("params, n_problems, cluster, mode, partition", [
    # Newton: a copy per worker for one-vs-rest when it fits, else map-reduced
    (Params(solver_type=0), 5, FITS, Mode.NEWTON_GROUPS_ON_COPIES, False),
    (Params(solver_type=0), 5, TOO_SMALL, Mode.KCOLUMN_MAP_REDUCED, True),
    (Params(solver_type=0, kcolumn=False), 5, TOO_SMALL, Mode.NEWTON_MAP_REDUCED, True),
    (Params(solver_type=0), 1, FITS, Mode.NEWTON_MAP_REDUCED, True),
    (Params(solver_type=0, partition=False), 1, FITS, Mode.WHOLE_ON_WORKER, False),
    (Params(solver_type=0, multinomial=True), 5, FITS, Mode.MULTINOMIAL_MAP_REDUCED, True),
    (Params(solver_type=11), None, FITS, Mode.NEWTON_MAP_REDUCED, True),
    (Params(solver_type=2, partition=True), 5, FITS, Mode.KCOLUMN_MAP_REDUCED, True),
    # the CD solvers: a copy per worker when it fits, else partitioned where they can be
    (Params(solver_type=1), 5, FITS, Mode.CLASSES_ON_COPIES, False),
    (Params(solver_type=1), 5, TOO_SMALL, Mode.PARTITIONED_DUAL_CD, True),
    (Params(solver_type=1, partition=False), 5, TOO_SMALL, Mode.CLASSES_ON_COPIES, False),
    (Params(solver_type=12), None, TOO_SMALL, Mode.PARTITIONED_DUAL_CD, True),
    (Params(solver_type=13), None, FITS, Mode.WHOLE_ON_WORKER, False),
    (Params(solver_type=1, cd_block=2), 5, FITS, Mode.CLASSES_ON_COPIES, False),
    (Params(solver_type=4), 5, FITS, Mode.WHOLE_ON_WORKER, False),
    (Params(solver_type=21), None, FITS, Mode.WHOLE_ON_WORKER, False),
    (Params(solver_type=4, partition=False), 5, TOO_SMALL, Mode.WHOLE_ON_WORKER, False),
    # Crammer-Singer: partitioned by row blocks when a copy does not fit, or when asked
    (Params(solver_type=4), 5, TOO_SMALL, Mode.PARTITIONED_DUAL_CD, True),
    (Params(solver_type=4, partition=True), 5, FITS, Mode.PARTITIONED_DUAL_CD, True),
    (Params(solver_type=21), None, TOO_SMALL, Mode.PARTITIONED_DUAL_CD, True),
    (Params(solver_type=21, partition=False), None, TOO_SMALL, Mode.WHOLE_ON_WORKER, False),
    # the L1 solvers: a copy per worker when it fits, else OWL-QN map-reduced
    (Params(solver_type=5), 5, FITS, Mode.CLASSES_ON_COPIES, False),
    (Params(solver_type=5), 5, TOO_SMALL, Mode.L1_MAP_REDUCED, True),
    (Params(solver_type=6, l1_ratio=0.5), 1, TOO_SMALL, Mode.L1_MAP_REDUCED, True),
    (Params(solver_type=6, partition=True), 5, FITS, Mode.L1_MAP_REDUCED, True),
    (Params(solver_type=6, partition=False), 5, TOO_SMALL, Mode.CLASSES_ON_COPIES, False),
    # --primal-cd: on copies when they fit, else -s 2's map-reduced Newton
    (Params(solver_type=2, primal_cd=True), 5, FITS, Mode.CLASSES_ON_COPIES, False),
    (Params(solver_type=2, primal_cd=True), 5, TOO_SMALL, Mode.KCOLUMN_MAP_REDUCED, True),
    (Params(solver_type=2, primal_cd=True, partition=True), 1, FITS,
     Mode.NEWTON_MAP_REDUCED, True),
])
def test_cluster_modes(params, n_problems, cluster, mode, partition):
    choice = choose(params, shape(n_problems), cluster)
    assert choice.mode is mode and choice.params.partition is partition


@pytest.mark.parametrize("params, n_problems", [
    (Params(solver_type=1, cd_block=2), 5), (Params(solver_type=3, online=True), 5)])
def test_a_solver_with_no_partitioned_method_refuses_data_over_a_worker(params, n_problems):
    """One line, raised by the chooser: before any copy is sent to a worker."""
    with pytest.raises(DlinearError) as error:
        choose(params, shape(n_problems), TOO_SMALL)
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith(f"-s {params.solver_type}")
    assert "no method on partitioned rows" in message and "memory limit" in message


def test_crammer_singer_and_oneclass_partitioned_say_their_method():
    choice = choose(Params(solver_type=4), shape(5), TOO_SMALL)
    assert choice.describe() == (
        "-s 4 partitioned: Crammer-Singer's sequential dual CD on each worker's own rows, "
        "their k-column steps of W combined (2 worker(s), rule adaptive)")
    choice = choose(Params(solver_type=21), shape(None), TOO_SMALL)
    assert choice.describe() == (
        "-s 21 partitioned: one-class dual CD on each worker's own rows, each keeping its "
        "share of sum(alpha), mass moved between workers by the max-violating pair "
        "(2 worker(s), rule adaptive)")


def test_primal_cd_over_a_worker_says_it_trains_newton():
    choice = choose(Params(solver_type=2, primal_cd=True, online=True), shape(1), TOO_SMALL)
    assert choice.mode is Mode.NEWTON_MAP_REDUCED and not choice.params.primal_cd
    assert not choice.params.online and choice.params.solver_type == 2
    assert choice.describe() == (
        "-s 2 --primal-cd walks columns, which needs every row on one worker: training "
        "-s 2 by Newton map-reduced over the parts on 2 worker(s) instead (the same "
        "optimum)")


def test_the_default_s1_that_would_train_partitioned_becomes_s2():
    choice = choose(Params(), shape(5), TOO_SMALL, solver_named=False)
    assert choice.mode is Mode.KCOLUMN_MAP_REDUCED and choice.params.solver_type == 2
    assert choice.params.eps == 0.01 and choice.describe().startswith("-s 2 (the primal")
    named = choose(Params(), shape(5), TOO_SMALL)
    assert named.mode is Mode.PARTITIONED_DUAL_CD
    assert named.describe() == ("-s 1 partitioned: dual CD on each worker's own rows "
                                "(2 worker(s), rule adaptive)")
    assert choose(Params(), shape(5), FITS, solver_named=False).params.solver_type == 1


def test_descriptions():
    assert choose(Params(solver_type=3), shape(5), FITS).describe() == (
        "-s 3 on a copy of the data per worker (2 worker(s))")
    assert choose(Params(solver_type=0), shape(5), TOO_SMALL).describe() == (
        "-s 0 map-reduced over the parts on 2 worker(s)")
    assert "classes in groups" in choose(Params(solver_type=2), shape(5), FITS).describe()
    assert choose(Params(solver_type=6), shape(5), TOO_SMALL).describe() == (
        "-s 6 map-reduced over the parts on 2 worker(s) by OWL-QN (the optimum of the "
        "in-process solver, LIBLINEAR's stopping rule)")


# rcv1-shaped, its text parsed in 40 s on one core; click-shaped (2^24 hashed columns)
NARROW = Data(677000, 47_400_000, n_problems=1, n_features=47236, read_s=40.0)
WIDE = Data(3_200_000, 124_800_000, n_problems=1, n_features=1 << 24,
            occurring_columns=1_740_000, read_s=8.0)


@pytest.mark.parametrize("options, data, job, expected", [
    (dict(solver_type=0), NARROW, "train", Mode.CLUSTER),
    (dict(solver_type=0), WIDE, "train", Mode.IN_PROCESS),
    (dict(solver_type=0), Data(20000, 1_400_000, n_problems=1, n_features=47236,
                               read_s=1.0), "train", Mode.IN_PROCESS),
    (dict(solver_type=0), NARROW, "cv", Mode.IN_PROCESS),
    (dict(solver_type=2, primal_cd=True), NARROW, "train", Mode.IN_PROCESS),
    (dict(solver_type=1), NARROW, "train", Mode.IN_PROCESS),
    (dict(solver_type=11), Data(), "train", Mode.IN_PROCESS),
])
def test_backend_rule_of_an_offered_local_cluster(options, data, job, expected):
    offered = Cluster(running=False, asked=False, workers=2)
    choice = choose(Params(**options), data, offered, job=job, n_threads=2)
    assert choice.mode.in_process == expected.in_process
    if job == "train" and data.n_samples and Params(**options).spec.newton \
            and not options.get("primal_cd"):
        assert "predicted" in choice.describe()
    assert choose(Params(**options), data, Cluster(running=False)).mode is Mode.CLUSTER
    assert choose(Params(**options), data, None).mode.in_process


def test_targets_of_one_problem_are_that_column_of_all():
    rng = np.random.default_rng(0)
    y = rng.choice([3.0, 1.0, 7.0], size=50)
    weights = rng.uniform(0.5, 2.0, size=50)
    params = Params(C=2.0, class_weights=[(7, 3.0)])
    label, weighted_C = plan_classes(params, lambda: np.array([3, 1, 7]), lambda line: None)
    Y, C = targets(y, weights, label, weighted_C, params)
    assert Y.shape == C.shape == (50, 3) and Y.flags.c_contiguous
    for k in range(3):
        y_k, c_k = targets(y, weights, label, weighted_C, params, [k])
        np.testing.assert_array_equal(y_k[:, 0], Y[:, k])
        np.testing.assert_array_equal(c_k[:, 0], C[:, k])
    np.testing.assert_array_equal(Y[:, 2], np.where(y == 7, 1.0, -1.0))
    np.testing.assert_array_equal(C[:, 2], np.where(y == 7, 6.0, 2.0) * weights)
    regression, C1 = targets(y, None, None, None, params)
    np.testing.assert_array_equal(regression[:, 0], y)
    np.testing.assert_array_equal(C1[:, 0], np.full(50, 2.0))


def test_seeds_are_those_of_one_scheme():
    def reference(*entropy):
        state = np.random.SeedSequence(list(entropy)).generate_state(1, dtype=np.uint64)[0]
        return int(state & np.uint64(0x7FFFFFFFFFFFFFFF))
    assert problem_seed(1, 4) == reference(1, 4)
    assert block_seeds(1, 2, 3) == [reference(1, k, 2) for k in range(3)]
    assert problem_seed(1, 0, 2) != problem_seed(1, 0)
