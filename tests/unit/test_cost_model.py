"""The default backend's cost model (dlinear.planning.cost_model): what its terms depend on, what the
other branches' switches change, and its choices on the shapes measured for it."""
import pytest

from dlinear.planning import cost_model as cm
from dlinear.planning.modes import Cluster, Data, Mode, choose
from dlinear.params import Params

WIDE = cm.Workload(3_200_000, 124_800_000, 1 << 24, occurring_columns=1_740_000, read_s=8.0)
NARROW = cm.Workload(542_000, 40_647_024, 47236, occurring_columns=47236, read_s=19.0)


def test_rounds_ship_only_the_workers_occurring_columns(monkeypatch):
    # a worker's columns: at most those occurring, at most its nonzeros
    assert WIDE.columns_per_worker(2) == 1_740_000
    assert WIDE.columns_per_worker(1000) == 124_800
    compacted = cm.cluster_seconds(WIDE, 2)
    monkeypatch.setattr(cm, "CLUSTER_SHIPS_OCCURRING_COLUMNS", False)   # dense n-vectors
    assert WIDE.columns_per_worker(2) == 1 << 24
    unused = (1 << 24) - 1_740_000
    saved = cm.NEWTON_PASSES * (2 * 2 * 8 * unused / cm.ROUND_BYTES_PER_S
                                + unused * cm.PASS_S_PER_COLUMN)
    assert cm.cluster_seconds(WIDE, 2) == pytest.approx(compacted + saved)


def test_a_workers_columns_follow_heaps_law_when_its_exponent_is_known():
    w = cm.Workload(3_200_000, 124_800_000, 1 << 24, occurring_columns=1_740_000,
                    columns_growth=0.5)
    assert w.columns_per_worker(4) == 870_000                   # 4 ** -0.5 of them
    assert w.columns_per_worker(1) == 1_740_000
    flat = cm.Workload(1000, 5000, 100, occurring_columns=100, columns_growth=0.0)
    assert flat.columns_per_worker(8) == 100                    # every part uses all
    assert cm.cluster_seconds(w, 4) < cm.cluster_seconds(
        cm.Workload(3_200_000, 124_800_000, 1 << 24, occurring_columns=1_740_000), 4)


def test_columns_seen_extrapolates_the_samples_growth_and_caps_it():
    # 1000 columns in 1000 rows, 1414 in 2000: exponent 0.5; 8x the rows: 2x the columns
    occurring, growth = cm.columns_seen((1000, 2000), (1000, 1414), 16_000, 1 << 24, 10**9)
    assert growth == pytest.approx(0.5, abs=1e-3)
    assert occurring == pytest.approx(1414 * 8 ** 0.5, rel=1e-3)
    # never more than n nor the nonzeros
    assert cm.columns_seen((1000, 2000), (1000, 1414), 16_000, 3000, 10**9)[0] == 3000
    assert cm.columns_seen((1000, 2000), (1000, 2000), 10**6, 1 << 24, 50_000)[0] == 50_000
    # every column seen in the first half again in the second: no growth
    assert cm.columns_seen((1000, 2000), (47, 47), 10**6, 47, 10**7) == (47, 0.0)


def test_columns_growth_of_parts_from_their_columns_and_their_union():
    # four parts of 100 columns each, 200 in all: a quarter of the rows holds 4 ** -0.5
    assert cm.columns_growth_of_parts([100, 100, 100, 100], 200) == pytest.approx(0.5)
    assert cm.columns_growth_of_parts([47, 47], 47) == 0.0
    assert cm.columns_growth_of_parts([100], 100) is None       # one part: unknown


def test_the_cluster_wins_where_it_should():
    # text whose parsing dominates (long values), a pass cheap: the workers parse it in
    # parallel where a process on one thread parses it alone
    text = cm.Workload(2_000_000, 160_000_000, 47236, occurring_columns=47236,
                       read_s=60.0, text_bytes=4 << 30)
    assert cm.estimate(text, 2, 1).cluster_pays
    e8 = cm.estimate(text, 8, 1)
    assert e8.cluster_pays and e8.cluster_s < cm.estimate(text, 2, 1).cluster_s
    # a process on as many threads as there are workers parses it as fast, without the
    # cluster's start and its scan for line starts
    assert not cm.estimate(text, 2, 2).cluster_pays


def test_text_cut_into_parts_is_read_on_the_process_threads():
    large = cm.Workload(1000, 20_000, 47236, read_s=8.0, text_bytes=1 << 30)
    assert cm.in_process_read_seconds(large, 2) == pytest.approx(4.0)
    assert cm.in_process_read_seconds(large, 1) == pytest.approx(8.0)
    small = cm.Workload(1000, 20_000, 47236, read_s=0.1, text_bytes=1 << 20)
    assert cm.in_process_read_seconds(small, 2) == pytest.approx(0.1)   # one part
    binary = cm.Workload(1000, 20_000, 47236, read_s=0.1)
    assert cm.in_process_read_seconds(binary, 2) == pytest.approx(0.1)


def test_the_cluster_wins_with_k_workers_beyond_the_cores_of_this_process(monkeypatch):
    # K workers on their own machines against one process's 2 threads, at constants
    # where a round is cheap (a fast network): the passes split K ways
    monkeypatch.setattr(cm, "ROUND_LATENCY_S", 0.001)
    monkeypatch.setattr(cm, "ROUND_BYTES_PER_S", 1.25e9)
    wide = cm.Workload(3_200_000, 124_800_000, 1 << 24, occurring_columns=1_740_000,
                       columns_growth=0.7, read_s=0.5)        # a binary dataset
    assert not cm.estimate(wide, 2, 2).cluster_pays
    assert cm.estimate(wide, 16, 2).cluster_pays
    assert cm.cluster_seconds(wide, 16) < cm.cluster_seconds(wide, 4) \
        < cm.cluster_seconds(wide, 2)


def test_threads_in_process_divide_a_single_problems_passes(monkeypatch):
    two = cm.in_process_seconds(NARROW, 2)
    work = cm.NEWTON_PASSES * NARROW.nnz * cm.PASS_S_PER_NONZERO
    assert cm.in_process_seconds(NARROW, 1) == pytest.approx(two + work / 2)
    monkeypatch.setattr(cm, "NEWTON_PASSES_ON_THREADS", False)   # one problem, one thread
    assert cm.in_process_seconds(NARROW, 2) == pytest.approx(two + work / 2)


def test_more_workers_read_and_pass_faster_but_pay_per_round():
    assert cm.cluster_seconds(NARROW, 4) < cm.cluster_seconds(NARROW, 2)
    tiny = cm.Workload(1000, 20_000, 47236, read_s=0.01)
    assert not cm.estimate(tiny, 2, 2).cluster_pays         # the start is not repaid


def test_the_choice_line_says_both_predictions():
    data = Data(542_000, 40_647_024, n_problems=1, n_features=47236, read_s=19.0)
    choice = choose(Params(solver_type=0), data, Cluster(running=False, asked=False,
                                                          workers=2), n_threads=2)
    e = cm.estimate(NARROW, 2, 2)
    assert choice.mode is (Mode.CLUSTER if e.cluster_pays else Mode.IN_PROCESS)
    line = choice.describe()
    assert f"predicted {e.process_s:.1f} s in this process, {e.cluster_s:.1f} s on a " \
           "local cluster of 2" in line


# `python -m scripts.benchmarks.backend_cost check` (BENCHMARKS.md, "The default backend by a
# cost model"): each shape as the CLI read it, and the CPU seconds
# measured on each path's critical path (held out: none was used for the constants)
MEASURED = [  # shape (rows, nonzeros, n, occurring, growth, read s, text bytes), process s,
    # cluster s (2026-11-26 12:38-12:41 UTC)
    ((799937, 31197557, 16777143, 838441, 0.7147, 1.684, 262330479), 4.24, 9.76),  # click
    ((542000, 40647024, 47236, 47236, 0.006584, 0.1423, 0), 1.91, 4.39),   # rcv1, binary
    ((541493, 40644621, 47232, 47232, 0.5322, 3.534, 1043686428), 4.22, 6.69),     # rcv1
    ((3199709, 124788664, 16777143, 2258349, 0.7147, 7.503, 1049308764), 22.94, 27.89),
]


@pytest.mark.parametrize("shape, process_s, cluster_s", MEASURED)
def test_the_choice_on_the_measured_shapes_is_within_ten_percent(shape, process_s,
                                                                 cluster_s):
    rows, nnz, n, occurring, growth, read_s, text_bytes = shape
    w = cm.Workload(rows, nnz, n, occurring_columns=occurring, read_s=read_s,
                    text_bytes=text_bytes, columns_growth=growth)
    chosen = cluster_s if cm.estimate(w, 2, 2).cluster_pays else process_s
    assert chosen <= 1.10 * min(process_s, cluster_s)
