"""Warm starts (-i, init=) on a Dask cluster, in every mode: the partitioned dual CD from
each worker's duals consistent with the weights, map-reduced Newton and OWL-QN from the
weights, the copy modes as in process. A fit started from the model of the same data is
at its optimum from the first round: it takes a fraction of a fresh fit's rounds and ends
at the fresh fit's objective."""
import re
from dataclasses import replace

import numpy as np
import pytest

from dlinear import DlinearError, Params, Problem, train
from dlinear.cluster import Dataset
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.model import load_model, save_model
from dlinear.solvers.primal_objective_values import primal_objective
from tests.support.problems import regression_on

distributed = pytest.importorskip("distributed")

# fresh and warm fits stop by the same rule at eps; their objectives differ by what
# that eps leaves (measured below 2e-4 relative on these sets at -e 1e-3)
EPS = 1e-3
TOL = 1e-3


@pytest.fixture(scope="module")
def problems():
    binary = make_rcv1_like(1500, n_features=700, nnz_per_row=20, seed=71)
    return {"binary": binary,
            "three": make_rcv1_like(1200, n_features=600, n_classes=3, nnz_per_row=15,
                                    seed=72),
            "regression": regression_on(binary, 73)}


def _iterations(lines) -> int:
    """The largest iteration count the fit's log states (rounds of the partitioned dual
    CD, OWL-QN's or Newton's iterations)."""
    counts = [int(m.group(1)) for line in lines
              for m in [re.search(r"#iter\s*=\s*(\d+)", line)
                        or re.match(r"iter\s+(\d+)", line.strip())] if m]
    return max(counts, default=0)


CASES = [  # (data, solver, partition, mode in fit_stats)
    ("binary", 1, True, "partitioned"),
    ("three", 1, True, "partitioned"),
    ("binary", 7, True, "partitioned"),
    ("three", 0, True, "map-reduce"),
    ("binary", 6, True, "map-reduce"),
]


@pytest.mark.cluster
@pytest.mark.parametrize("name,solver,partition,mode", CASES)
def test_a_fit_from_its_own_model_starts_at_the_optimum(client, problems, name, solver,
                                                        partition, mode):
    problem = problems[name]
    data = Dataset.from_arrays(problem, None, client, n_parts=4)
    params = Params(solver_type=solver, eps=EPS, bias=1.0, C=0.5, partition=partition)
    fresh_log, warm_log = [], []
    fresh = train(data, params, log=fresh_log.append)
    assert fresh.fit_stats["mode"] == mode
    warm = train(data, params, log=warm_log.append, init=fresh)
    assert warm.fit_stats["mode"] == mode
    f_fresh = primal_objective(problem, params, fresh)
    f_warm = primal_objective(problem, params, warm)
    assert abs(f_warm - f_fresh) <= TOL * abs(f_fresh), (f_warm, f_fresh)
    fresh_iter, warm_iter = _iterations(fresh_log), _iterations(warm_log)
    assert fresh_iter >= 3, fresh_log
    # a start ignored would take the fresh fit's rounds again
    assert warm_iter <= fresh_iter // 2, (warm_iter, fresh_iter)


def _old_model(problem, params):
    """The model of the first 80% of the rows, trained in process."""
    return train(problem.subset(np.arange(problem.n_samples * 4 // 5)),
                 replace(params, partition=None))


@pytest.mark.cluster
@pytest.mark.parametrize("solver,partition", [(1, False), (3, False), (4, None)])
def test_the_copy_modes_warm_start_as_in_process(client, problems, solver, partition):
    """A copy per worker trains as this process does: from the same start, the same model
    (-s 3's and -s 4's duals from w save few iterations, so the start is told by the
    model it leads to, not by their count)."""
    problem = problems["three"]
    data = Dataset.from_arrays(problem, None, client, n_parts=4)
    params = Params(solver_type=solver, eps=EPS, bias=1.0, C=0.5, partition=partition)
    old = _old_model(problem, params)
    warm = train(data, params, init=old)
    assert warm.fit_stats["mode"] == "copy"
    here = train(problem, replace(params, partition=None), init=old, n_threads=1)
    np.testing.assert_allclose(warm.w, here.w, rtol=1e-12, atol=1e-12)
    fresh = train(problem, replace(params, partition=None), n_threads=1)
    assert not np.allclose(warm.w, fresh.w, rtol=1e-9, atol=1e-12)


@pytest.mark.cluster
@pytest.mark.parametrize("name,solver", [("three", 1), ("regression", 12)])
def test_a_partitioned_warm_start_reaches_the_optimum_of_more_rows(client, problems,
                                                                   name, solver):
    """Tsai, Lin & Lin's incremental case: the model of 80% of the rows, then all."""
    problem = problems[name]
    params = Params(solver_type=solver, eps=EPS, bias=1.0, C=0.5, partition=True)
    data = Dataset.from_arrays(problem, None, client, n_parts=4)
    warm = train(data, params, init=_old_model(problem, params))
    assert warm.fit_stats["mode"] == "partitioned"
    optimum = train(problem, replace(params, partition=None, eps=1e-6))
    f_warm = primal_objective(problem, params, warm)
    f_opt = primal_objective(problem, params, optimum)
    assert abs(f_warm - f_opt) <= TOL * abs(f_opt), (f_warm, f_opt)


@pytest.mark.cluster
def test_a_model_of_other_labels_is_one_clear_error(client, problems):
    three = problems["three"]
    data = Dataset.from_arrays(three, None, client, n_parts=4)
    params = Params(solver_type=1, bias=1.0, partition=True)
    two = Problem.from_arrays(three.to_scipy(), np.where(three.y == 1, 1.0, -1.0),
                              n_features=three.n_features)
    with pytest.raises(DlinearError, match="labels"):
        train(data, params, init=train(two, replace(params, partition=None)))


@pytest.mark.cluster
@pytest.mark.slow
def test_the_command_line_warm_starts_on_the_workers(tmp_path, problems, client, capsys):
    """dlinear-train in this process on the session's 2 workers (--scheduler)."""
    from dlinear.data.libsvm_writer import write_libsvm
    from tests.support.cli import run_in_process
    data_file = tmp_path / "all.svm"
    write_libsvm(data_file, problems["binary"])
    params = Params(solver_type=1, bias=1)
    save_model(tmp_path / "old.model", train(problems["binary"].subset(np.arange(1200)),
                                             params))
    run = run_in_process(capsys, "train", "-s", "1", "-B", "1", "--scheduler",
                         client.scheduler.address, "--partition", "-i",
                         tmp_path / "old.model", data_file, tmp_path / "warm.model")
    assert run.returncode == 0, run.stderr
    warm = load_model(tmp_path / "warm.model")
    f_warm = primal_objective(problems["binary"], params, warm)
    f_fresh = primal_objective(problems["binary"], params, train(problems["binary"], params))
    assert abs(f_warm - f_fresh) <= 1e-2 * abs(f_fresh), (f_warm, f_fresh)
