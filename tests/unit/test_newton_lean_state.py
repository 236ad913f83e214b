"""The Newton solvers' row state in few bytes (-s 0, 2, 11): +-1 labels as int8, a C that
all rows share as one broadcast value, int32 curvature rows, and X s of the line search
in the bytes of the Hessian's row weights; the models are those of the float64 arrays, to
the bit."""
from dataclasses import replace

import numpy as np
import pytest

from dlinear import Params, Problem
from dlinear.cli.startup import give_back_freed_arrays
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.planning.class_plan import first_appearance, order_labels, subproblem
from dlinear.solvers import fit_task
from dlinear.solvers.primal_objectives import LOSS_OF_SOLVER, LossTerm


@pytest.fixture(scope="module")
def data():
    return make_rcv1_like(1500, n_features=400, nnz_per_row=15, seed=7)


def _task(problem, params):
    label = order_labels(first_appearance(problem.y))
    weighted_C = np.full(len(label), params.C)
    return subproblem(problem, label, 0, weighted_C, params)


@pytest.mark.parametrize("solver", [0, 2])
@pytest.mark.parametrize("n_threads", [None, 2])
def test_lean_targets_train_the_float64_model(solver, n_threads, data):
    params = Params(solver_type=solver, C=0.5, eps=1e-4, bias=1.0).resolved()
    task = replace(_task(data, params), n_threads=n_threads)
    assert task.y.dtype == np.int8 and set(np.unique(task.y)) == {-1, 1}
    assert task.C.strides == (0,) and task.C[0] == 0.5      # one value, no bytes a row
    wide = replace(task, y=task.y.astype(np.float64), C=np.array(task.C))
    np.testing.assert_array_equal(fit_task(task, params).w, fit_task(wide, params).w)


def test_per_row_C_and_other_solvers_keep_their_arrays(data):
    weighted = Problem(data.indptr, data.indices, data.data, data.y, data.n_features,
                       sample_weight=np.linspace(0.5, 2.0, data.n_samples))
    task = _task(weighted, Params(solver_type=2, C=0.5).resolved())
    assert task.C.strides == (8,) and task.y.dtype == np.int8
    for params in [Params(solver_type=1), Params(solver_type=2, primal_cd=True)]:
        task = _task(data, params.resolved())
        assert task.y.dtype == np.float64 and task.C.strides == (8,)
    regression = subproblem(data, None, 0, None, Params(solver_type=11, C=0.5).resolved())
    assert regression.y.dtype == np.float64 and regression.C.strides == (0,)


def test_line_search_reuses_the_row_weights_bytes(data):
    term = LossTerm(data, np.where(data.y > 0, 1, -1).astype(np.int8),
                    np.broadcast_to(np.float64(1.0), (data.n_samples,)), 1.0,
                    LOSS_OF_SOLVER[2])
    assert term._rows.dtype == np.int32 and term._zs is term._coef
    s = np.full(term.n_variables, 0.01)
    term.at(s)
    term.grad_precond()
    term.hv(s)
    term.along(s, 1.0)
    with pytest.raises(RuntimeError, match="grad_precond"):
        term.hv(s)          # the row weights were overwritten by X s
    term.grad_precond()
    assert term.hv(s).shape == (term.n_variables,)


def test_give_back_freed_arrays_is_harmless():
    give_back_freed_arrays()
    a = np.ones(1 << 18)
    del a


@pytest.mark.parametrize("n_threads", [None, 2])
def test_pass_outputs_own_n_vectors_not_views_of_the_kernels_pairs(n_threads, data):
    term = LossTerm(data, np.where(data.y > 0, 1, -1).astype(np.int8),
                    np.broadcast_to(np.float64(1.0), (data.n_samples,)), 1.0,
                    LOSS_OF_SOLVER[0], n_threads=n_threads)
    s = np.full(term.n_variables, 0.01)
    term.at(s)
    g, M = term.grad_precond()
    for v in (g, M, term.hv(s)):
        assert v.base is None and v.flags.c_contiguous and v.nbytes == 8 * term.n_variables
    term.close()
