"""The default formulation of the squared hinge (dlinear.planning.formulation): the data's
scale -> dual CD (-s 1) or its Newton primal (-s 2)."""
import numpy as np
import pytest
import scipy.sparse as sp

from dlinear import Params, Problem
from dlinear.planning.formulation import (PRIMAL_MIN_C_LAMBDA, Scale, choose_formulation,
                                          problem_scale, scale_of)
from dlinear.solver_table import SOLVERS

DUAL = Params().solver_type                 # LIBLINEAR's default, the dual CD
PRIMAL = SOLVERS[DUAL].fallback


def scale(c_lambda, rows_per_column, rows=1000):
    return Scale(rows, c_lambda, rows_per_column)


@pytest.mark.parametrize("c_lambda, rows_per_column, primal", [
    (11.6, 11.6, False),                  # rcv1-shaped, C = 1
    (46.0, 46.0, False),                  # rcv1-shaped, 400k rows
    (116.0, 11.6, False),                 # rcv1-shaped, C = 10
    (0.08, 0.08, False),                  # few rows, many columns
    (348.0, 11.6, True),                  # rcv1-shaped, C = 30
    (2e3, 0.4, True),                     # 2,000 dense rows of 5,000 columns
    (406.0, 406.0, True),                 # tall and sparse: 200k rows of 1,000 columns
    (2e4, 40.0, True),                    # dense 20k x 500
    (1e7, 1.4e4, True),                   # click-shaped
])
def test_measured_shapes_choose_the_faster(c_lambda, rows_per_column, primal):
    chosen = choose_formulation(DUAL, scale(c_lambda, rows_per_column))
    assert chosen.primal is primal
    assert chosen.solver_type == (PRIMAL if primal else DUAL)
    assert chosen.dual_solver_type == DUAL


def test_the_threshold_is_inclusive():
    assert choose_formulation(DUAL, scale(PRIMAL_MIN_C_LAMBDA, 1.0)).primal
    assert not choose_formulation(DUAL, scale(np.nextafter(PRIMAL_MIN_C_LAMBDA, 0),
                                              1e6)).primal


def test_unknown_scale_or_no_primal_keeps_the_dual():
    assert choose_formulation(DUAL, None).solver_type == DUAL
    no_fallback = next(s.id for s in SOLVERS.values() if s.dual_cd and s.fallback is None)
    assert choose_formulation(no_fallback, scale(1e9, 1e9)).solver_type == no_fallback


def test_lines_say_which_and_why():
    primal = choose_formulation(DUAL, scale(1e7, 1.4e4)).describe()
    assert primal.startswith(f"-s {PRIMAL} (the primal of the default -s {DUAL}")
    assert "C*lambda 1e+07 >= 150" in primal and "1.4e+04 rows per effective column" in primal
    dual = choose_formulation(DUAL, scale(11.6, 11.6)).describe()
    assert dual.startswith(f"-s {DUAL} (dual CD") and "C*lambda 11.6 < 150" in dual


def _scale_by_definition(X, row_C):
    s = np.sort(np.asarray(X.multiply(X).T @ row_C).ravel())[:-1]    # the heaviest left out
    return (s @ s) / s.sum(), X.shape[0] * (s @ s) / s.sum() ** 2


def test_scale_of_dense_gaussian_rows_is_rows_over_columns():
    rng = np.random.default_rng(0)
    X = sp.csr_matrix(rng.normal(size=(4000, 20)))
    s = scale_of(X.indptr, X.indices, X.data, 20, 1.0)
    # C lambda ~ lambda_max(X^T X) = ~rows; rows per effective column ~ rows / columns
    # (but the heaviest)
    assert s.rows_per_effective_column == pytest.approx(4000 / 19, rel=0.05)
    assert s.c_lambda == pytest.approx(4000, rel=0.05)
    assert s.c_max_row_norm2 == pytest.approx(np.max(np.sum(X.toarray() ** 2, 1)))


def test_scale_of_weights_rows_by_their_C_and_counts_the_bias_column():
    rng = np.random.default_rng(1)
    X = sp.random(300, 50, density=0.1, random_state=2, format="csr")
    row_C = rng.uniform(0.5, 4.0, 300)
    s = scale_of(X.indptr, X.indices, X.data.astype(np.float32), 50, row_C)
    assert (s.c_lambda, s.rows_per_effective_column) == pytest.approx(
        _scale_by_definition(X, row_C), rel=1e-6)
    with_bias = scale_of(X.indptr, X.indices, X.data, 50, row_C, bias=2.0)
    Xb = sp.hstack([X, np.full((300, 1), 2.0)], format="csr")
    assert (with_bias.c_lambda, with_bias.rows_per_effective_column) == pytest.approx(
        _scale_by_definition(Xb, row_C), rel=1e-9)


def test_problem_scale_takes_class_and_instance_weights():
    X = sp.csr_matrix(np.array([[1.0, 0], [0, 2.0], [3.0, 1.0], [0, 1.0]]))
    y = np.array([1.0, -1.0, 1.0, -1.0])
    w = np.array([1.0, 2.0, 0.5, 1.0])
    params = Params(C=2.0, class_weights=[(-1, 3.0)])
    got = problem_scale(Problem.from_arrays(X, y, sample_weight=w), params)
    row_C = 2.0 * np.array([1.0, 3.0, 1.0, 3.0]) * w
    assert (got.c_lambda, got.rows_per_effective_column) == pytest.approx(
        _scale_by_definition(X, row_C), rel=1e-12)


def test_problem_scale_without_class_weights_is_C_times_the_instance_weights():
    X = sp.random(200, 30, density=0.2, random_state=5, format="csr")
    y = np.where(np.arange(200) % 3 == 0, 1.0, -1.0)
    w = np.random.default_rng(6).uniform(0.5, 2.0, 200)
    got = problem_scale(Problem.from_arrays(X, y, sample_weight=w), Params(C=3.0))
    assert (got.c_lambda, got.rows_per_effective_column) == pytest.approx(
        _scale_by_definition(X, 3.0 * w), rel=1e-12)
    unweighted = problem_scale(Problem.from_arrays(X, y), Params(C=3.0))
    assert unweighted.c_lambda == pytest.approx(
        _scale_by_definition(X, np.full(200, 3.0))[0], rel=1e-12)


def test_empty_data_keeps_the_dual():
    X = sp.csr_matrix((3, 4))
    s = scale_of(X.indptr, X.indices, X.data, 4, 1.0)
    assert s.c_lambda == 0 and not choose_formulation(DUAL, s).primal


def test_one_dense_column_alone_keeps_the_dual():
    """The bias feature (one column in every row) does not slow the dual CD: it is left
    out, and text rows with -B 1 keep the dual."""
    X = sp.random(3000, 1000, density=0.02, random_state=3, format="csr")
    X = sp.csr_matrix(X.multiply(1 / np.sqrt(X.multiply(X).sum(1) + 1e-12)))
    without = scale_of(X.indptr, X.indices, X.data, 1000, 1.0)
    with_bias = scale_of(X.indptr, X.indices, X.data, 1000, 1.0, bias=1.0)
    assert with_bias.c_lambda == pytest.approx(without.c_lambda, rel=0.05)
    assert not choose_formulation(DUAL, with_bias).primal


def test_energy_sums_are_the_sums_of_the_energies():
    """The rule's sums of the column energies (a loop, not an OpenBLAS call: see
    dlinear.kernels.data_scale) on more columns than OpenBLAS splits across threads."""
    from dlinear.kernels.data_scale import energy_sums
    s = np.random.default_rng(4).exponential(size=30_000)
    squares, total, top = energy_sums(s)
    assert (squares, total) == pytest.approx((s @ s, s.sum()), rel=1e-12)
    assert top == s.max()
    assert energy_sums(np.zeros(0)) == (0.0, 0.0, 0.0)


@pytest.mark.parametrize("dtype, index_type", [(np.float64, np.int32), (np.float32, np.uint16)])
def test_column_energies_fill_numpy_arrays(dtype, index_type):
    """The rule's column energies s_j = sum_i C_i x_ij**2 (summed row by row, as NumPy's
    add.at does here) and largest C_i ||x_i||**2, in NumPy's array (huge-page backed
    where Numba's allocation is not)."""
    from dlinear.planning.formulation import _column_energies, matrix_energies
    X = sp.random(500, 20_000, density=0.01, format="csr", random_state=6,
                  dtype=np.float64).astype(dtype)
    indices = X.indices.astype(index_type)
    row_C = np.random.default_rng(6).exponential(size=500)
    terms = row_C[np.repeat(np.arange(500), np.diff(X.indptr))] * X.data.astype(np.float64) \
        * X.data.astype(np.float64)
    expected = np.zeros(20_000)
    np.add.at(expected, indices, terms)
    largest = max(sum(terms[X.indptr[i]:X.indptr[i + 1]], 0.0) for i in range(500))
    s, got_largest = _column_energies(X.indptr, indices, X.data, row_C, 20_000)
    assert s.flags.owndata and s.dtype == np.float64 and got_largest == largest
    assert s.tobytes() == expected.tobytes()
    s, got_largest = matrix_energies(X, row_C)
    assert s.flags.owndata and s.tobytes() == expected.tobytes()
