"""Fitting on the columns that occur (dlinear.data.columns): the renumbering, and models bit for
bit those of the fit on all columns, for every solver where dlinear compacts."""
from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse as sp

from dlinear import Params, Problem
from dlinear.data.columns import (SORTED_BLOCK_NNZ, compact_columns, compact_problem,
                             count_columns, fits_on_occurring_columns)
from dlinear.model import save_model
from dlinear.solver_table import SOLVERS
from dlinear.solvers import primal_objectives as PO
from dlinear.solvers.primal_objectives import LOSS_OF_SOLVER, PrimalObjective
from dlinear.in_process.train import _on_occurring_columns, train_in_process
from dlinear.planning.modes import Mode
from tests.support.problems import same_bits


def wide_problem(l=300, n=4000, used=700, nnz_per_row=12, seed=0, n_classes=3,
                 regression=False):
    """Rows over `used` random columns of n (the others never occur)."""
    rng = np.random.default_rng(seed)
    columns = np.sort(rng.choice(n, used, replace=False))
    rows = [np.sort(rng.choice(columns, nnz_per_row, replace=False)) for _ in range(l)]
    indptr = np.arange(l + 1) * nnz_per_row
    indices = np.concatenate(rows).astype(np.int32)
    data = rng.normal(size=len(indices))
    X = sp.csr_matrix((data, indices, indptr), shape=(l, n))
    if regression:
        y = X @ rng.normal(size=n) + 0.1 * rng.normal(size=l)
    else:
        y = (X @ rng.normal(size=(n, n_classes))).argmax(axis=1).astype(float) + 1
    return Problem.from_arrays(X, y)


# ----------------------------------------------------------------- the renumbering

@pytest.mark.parametrize("n, nnz", [(50, SORTED_BLOCK_NNZ + 1),   # flags per column
                                    (1 << 24, SORTED_BLOCK_NNZ + 1),    # sorting: n >> nnz
                                    (50, 5000)])                    # sorting: a small block
def test_compact_columns_against_numpy(n, nnz):
    rng = np.random.default_rng(1)
    indices = rng.integers(0, n, size=nnz).astype(np.int32)
    indices[:3] = [0, n - 1, n - 1]
    indices.flags.writeable = False                 # as a block from Dask may be
    used, local = compact_columns(indices, n)
    expected = np.unique(indices)
    assert used.dtype == np.int32 and local.dtype == np.int32
    assert np.array_equal(used, expected)
    assert np.array_equal(used[local], indices)     # each index is its column's position


def test_compact_problem_none_when_every_column_occurs():
    p = Problem.from_arrays(np.eye(4) + 1.0, [1, 2, 1, 2])
    assert compact_problem(p) is None


@pytest.mark.parametrize("l", [40, SORTED_BLOCK_NNZ // 5 + 1])    # sorted; bitmap
def test_compact_problem_keeps_rows_and_renumbers(l):
    p = wide_problem(l=l, n=500, used=30, nnz_per_row=5)
    c = compact_problem(p)
    assert c.n_features == 500 and c.problem.n_features == len(c.used) == 30
    X = p.to_scipy()
    assert (c.problem.to_scipy() != X[:, c.used]).nnz == 0
    assert X[:, np.setdiff1d(np.arange(500), c.used)].nnz == 0


def test_only_data_with_few_occurring_columns_is_compacted():
    params = Params(solver_type=0).resolved()
    few = wide_problem(n=4000, used=700)
    many = wide_problem(n=1000, used=700)
    assert compact_problem(many) is not None
    assert compact_problem(many, only_if_worth=True) is None
    assert _on_occurring_columns(many, params, Mode.ONE_PROBLEM, None) is None
    assert _on_occurring_columns(few, params, Mode.ONE_PROBLEM, None) is not None


def test_feature_wise_solvers_are_not_compacted():
    walks = {s.id for s in SOLVERS.values() if not fits_on_occurring_columns(Params(s.id))}
    assert walks == {s.id for s in SOLVERS.values() if s.method in ("primal_cd",
                                                                     "newglmnet")}
    assert walks
    assert not fits_on_occurring_columns(Params(2, primal_cd=True))


# ----------------------------------------------------------------- models bit for bit

def _both(problem, params, **kwargs):
    compacted = train_in_process(problem, params, n_threads=1, **kwargs)
    full = train_in_process(problem, params, n_threads=1, compact=False, **kwargs)
    return compacted, full


def _assert_same_model(a, b, tmp_path):
    assert a.nr_feature == b.nr_feature and a.w.shape == b.w.shape
    assert same_bits(a.w, b.w)
    assert a.n_iter == b.n_iter
    save_model(tmp_path / "a", a)
    save_model(tmp_path / "b", b)
    assert (tmp_path / "a").read_bytes() == (tmp_path / "b").read_bytes()


CASES = [
    # (solver, extra params, classes)
    (0, {}, 3), (0, {"kcolumn": True}, 3), (0, {"kcolumn": False}, 3), (0, {}, 2),
    (0, {"newton": "tron"}, 2), (0, {"multinomial": True}, 3),
    (0, {"regularize_bias": False}, 2),
    (2, {}, 3), (2, {"kcolumn": False, "newton": "tron"}, 2),
    (1, {}, 3), (1, {"cd_block": 2}, 2), (1, {"online": True}, 2),
    (3, {}, 2), (4, {}, 3), (7, {}, 2),
    (11, {}, None), (12, {}, None), (13, {}, None), (21, {}, 2),
]


@pytest.mark.parametrize("solver,extra,classes", CASES)
@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_same_model_as_on_all_columns(solver, extra, classes, bias, tmp_path):
    if SOLVERS[solver].kind == "oneclass" and bias >= 0:
        pytest.skip("one-class models take no bias")
    if not extra.get("regularize_bias", True) and bias < 0:
        pytest.skip("-R needs a bias")
    problem = wide_problem(n_classes=classes or 2, regression=classes is None,
                           seed=solver)
    params = Params(solver_type=solver, C=4.0, bias=bias, **extra)
    if fits_on_occurring_columns(params):   # the fit does run on the occurring columns
        assert _on_occurring_columns(problem, params.resolved(), Mode.ONE_PROBLEM,
                                     np.arange(3)) is not None
    _assert_same_model(*_both(problem, params), tmp_path)


@pytest.mark.parametrize("solver", [0, 2, 11])
@pytest.mark.parametrize("threads", [1, 2])
def test_same_model_when_the_newton_passes_run_in_row_chunks(solver, threads, monkeypatch,
                                                              tmp_path):
    """A binary or regression Newton fit cuts its rows into chunks of at least
    NNZ_PER_PART x (the columns the rows use) nonzeros: the same chunks on all n columns
    as on the occurring ones (sized by n, the fit on all columns would add its sums in
    one chunk and the compacted fit in several: other bits)."""
    monkeypatch.setattr(PO, "CHUNK_NNZ", 300)
    monkeypatch.setattr(PO, "NNZ_PER_PART", 1)
    problem = wide_problem(n_classes=2, regression=solver == 11, seed=11)
    assert len(PO.row_chunks(problem.indptr, problem.indices, problem.n_features, 1.0)) > 3
    columns = compact_problem(problem)
    assert PO.row_chunks(problem.indptr, problem.indices, problem.n_features, 1.0) \
        == PO.row_chunks(columns.problem.indptr, columns.problem.indices,
                         columns.problem.n_features, 1.0)
    params = Params(solver_type=solver, C=4.0, bias=1.0)
    _assert_same_model(train_in_process(problem, params, n_threads=threads),
                       train_in_process(problem, params, n_threads=threads, compact=False),
                       tmp_path)


def test_count_columns_against_numpy():
    rng = np.random.default_rng(8)
    for n, nnz in [(50, SORTED_BLOCK_NNZ + 1), (1 << 24, 1000), (5000, 3000)]:
        indices = rng.integers(0, n, size=nnz).astype(np.int32)
        assert count_columns(indices, n) == len(np.unique(indices))


def test_same_model_with_weights_and_class_weights(tmp_path):
    problem = wide_problem(seed=5)
    problem = replace(problem, sample_weight=np.random.default_rng(2).uniform(
        0.2, 3.0, problem.n_samples))
    params = Params(solver_type=0, C=2.0, class_weights=[(1, 3.0), (3, 0.5)])
    _assert_same_model(*_both(problem, params), tmp_path)


def test_warm_start_is_compacted_or_the_fit_runs_on_all_columns(tmp_path):
    problem = wide_problem(n_classes=2, seed=7)
    columns = compact_problem(problem)
    w0 = np.zeros(problem.n_features + 1)
    w0[columns.used[:50]] = 0.3
    w0[-1] = -0.2
    params = Params(solver_type=0, bias=1.0, init_sol=w0).resolved()
    compacted, fit_params = _on_occurring_columns(problem, params, Mode.ONE_PROBLEM, None)
    assert fit_params.init_sol.shape == (len(columns.used) + 1,)
    _assert_same_model(*_both(problem, params), tmp_path)
    w0[np.setdiff1d(np.arange(problem.n_features), columns.used)[0]] = 1.0
    assert _on_occurring_columns(problem, replace(params, init_sol=w0), Mode.ONE_PROBLEM,
                                 None) is None


def test_the_cg_cap_stays_that_of_all_columns():
    problem = wide_problem(n_classes=3, seed=3)
    params = Params(solver_type=0, bias=1.0).resolved()
    _, one = _on_occurring_columns(problem, params, Mode.ONE_PROBLEM, None)
    _, multi = _on_occurring_columns(problem, params, Mode.MULTINOMIAL, np.arange(3))
    assert one.cg_cap_weights == problem.n_features + 1
    assert multi.cg_cap_weights == 3 * (problem.n_features + 1)


def test_newton_honours_a_cg_cap():
    """The driver's CG stops at the cap of the weights it is told of (max(1, 5) here), with
    LIBLINEAR's warning; without it, at max(#weights, 5)."""
    import re
    from dlinear.solvers.newton import fit_steps
    from dlinear.solvers.requests import serve
    problem = wide_problem(n_classes=2, seed=4)
    obj = PrimalObjective(problem, np.where(problem.y > 1, 1.0, -1.0),
                          np.full(problem.n_samples, 1e4), -1.0, LOSS_OF_SOLVER[0])

    def cg_steps(params):
        result = serve(fit_steps(params, None, obj.n_variables, 1e-6), obj)
        steps = [int(m) for m in re.findall(r" CG +(\d+) ", "\n".join(result.log))]
        return steps, "WARNING: reaching maximal number of CG steps" in result.log
    steps, warned = cg_steps(Params(0))
    assert max(steps) > 5 and not warned
    steps, warned = cg_steps(Params(0, cg_cap_weights=1))
    assert max(steps) == 5 and warned


# ------------------------------------------- dlinear-train's fit: no copy of its data

def _copy(problem):
    return replace(problem, indptr=problem.indptr.copy(), indices=problem.indices.copy(),
                   data=problem.data.copy(), y=problem.y.copy())


@pytest.mark.parametrize("l", [40, SORTED_BLOCK_NNZ // 5 + 1])    # sorted; bitmap
def test_compaction_in_place_renumbers_the_problems_own_indices(l):
    p = wide_problem(l=l, n=500, used=30, nnz_per_row=5)
    expected = compact_problem(p)
    given = _copy(p)
    c = compact_problem(given, in_place=True)
    assert np.shares_memory(c.problem.indices, given.indices)
    assert np.array_equal(c.problem.indices, expected.problem.indices)
    assert np.array_equal(c.used, expected.used)
    assert np.shares_memory(c.problem.data, given.data)
    assert c.problem.indptr is given.indptr


def test_compaction_in_place_copies_read_only_indices():
    p = wide_problem(l=SORTED_BLOCK_NNZ // 5 + 1, n=500, used=30, nnz_per_row=5)
    original = p.indices.copy()
    p.indices.flags.writeable = False               # a mapped dataset may be
    c = compact_problem(p, in_place=True)
    assert not np.shares_memory(c.problem.indices, p.indices)
    assert np.array_equal(p.indices, original)


@pytest.mark.parametrize("solver,classes,bias", [(2, 2, -1.0), (2, 3, 1.0), (0, 2, 1.0),
                                                 (1, 3, -1.0), (4, 3, 1.0), (11, None, 1.0)])
def test_a_given_problems_model_file_is_the_copying_fits(solver, classes, bias, tmp_path):
    from dlinear.api import train_given_problem
    problem = wide_problem(n_classes=classes or 2, regression=classes is None, seed=solver)
    params = Params(solver_type=solver, C=4.0, bias=bias)
    full = train_in_process(problem, params, n_threads=1)
    given = train_given_problem(_copy(problem), params, n_threads=1)
    assert given.rows is not None and len(given.rows) == given.w.shape[0] < full.w.shape[0]
    save_model(tmp_path / "full", full)
    save_model(tmp_path / "given", given)
    assert (tmp_path / "full").read_bytes() == (tmp_path / "given").read_bytes()


def test_a_given_problem_with_a_warm_start_elsewhere_fits_on_its_own_indices(tmp_path):
    problem = wide_problem(n_classes=2, seed=7)
    columns = compact_problem(problem)
    w0 = np.zeros(problem.n_features + 1)
    w0[np.setdiff1d(np.arange(problem.n_features), columns.used)[0]] = 1.0
    params = Params(solver_type=0, bias=1.0, init_sol=w0)
    full = train_in_process(problem, params, n_threads=1)
    given = train_in_process(_copy(problem), params, n_threads=1, own_data=True,
                             full_w=False)
    _assert_same_model(full, given, tmp_path)


@pytest.mark.parametrize("index_type", [np.int32, np.uint16])
def test_renumbered_copies_are_numpy_arrays_of_the_ranks(index_type):
    # the copies of renumbered indices (compact_problem not in place, on_local_columns)
    # are NumPy's arrays, huge-page backed where Numba's are not, of each index's rank
    # among the occurring columns
    from dlinear.data.columns import on_local_columns
    from dlinear.kernels import columns as kc
    rng = np.random.default_rng(5)
    n = 60_000      # the even columns occur, so there is something to renumber
    indices = (2 * rng.integers(0, n // 2, SORTED_BLOCK_NNZ + 100)).astype(index_type)
    words = kc.mark_columns(indices, n)
    used, _ = kc.used_columns(words)
    expected = np.searchsorted(used, indices).astype(index_type)
    p = Problem(np.array([0, len(indices)], dtype=np.int64), indices, np.ones(len(indices)),
                np.ones(1), n)
    compact = compact_problem(p)
    got = compact.problem.indices
    assert got.dtype == expected.dtype and got.flags.owndata
    np.testing.assert_array_equal(got, expected)
    assert np.array_equal(compact.used, used)
    local_used, parts = on_local_columns([p], n)
    assert np.array_equal(local_used, used) and parts[0].indices.flags.owndata
    np.testing.assert_array_equal(parts[0].indices, expected.astype(np.int32))
