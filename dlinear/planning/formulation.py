"""The squared hinge's formulation when none is named: dual CD (LIBLINEAR's default -s 1)
or its primal, Newton (-s 1's fallback, -s 2), chosen by the data's scale.

dlinear-train without -s, and LinearSVC(dual="auto") on in-memory data, train the
L2-regularized squared hinge. Both formulations reach the same optimum; which is faster
depends on the data. The dual CD's Hessian Q + I/(2C) (Q_ij = y_i y_j x_i.x_j) has the
condition number 1 + 2C lambda_max(X X^T): when C lambda is large the dual CD needs many
sweeps (on click-log-shaped data it reaches its 300-sweep cap and LIBLINEAR's train then
switches to the primal anyway), while Newton's iterations barely depend on it. 

Two numbers, from one pass over the nonzeros (dlinear.kernels.data_scale), measure that
with s_j = sum_i C_i x_ij**2, the energy of column j (C_i: C times the row's class and
instance weights; a bias feature counts as a column):

    C lambda    = sum_j s_j**2 / sum_j s_j, a Rayleigh quotient of C^(1/2) X^T X C^(1/2)
                  on the vector s (so at most C lambda_max): large when heavy columns are
                  shared by many rows (click logs' counts, dense rows, a large C)
    rows per effective column = n_rows * sum_j s_j**2 / (sum_j s_j)**2, the rows over
                  the columns' participation ratio (n_rows / n for dense Gaussian rows);
                  shown, not a condition: on fewer rows than effective columns the dual
                  reaches a lower objective at its default -e, but -s 2 was still faster

leaving out the heaviest column (one dense direction, such as the bias feature, does not
slow the dual). The primal is chosen from C lambda >= PRIMAL_MIN_C_LAMBDA. An explicit -s 1 (or
dual=True) keeps LIBLINEAR's dual, bit for bit.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..kernels.data_scale import column_energy_into, energy_sums
from ..params import Params, class_C
from ..solver_table import SOLVERS

# ---- the rule's constants (python -m scripts.benchmarks.default_solver) ----------------
# Measured 2026-11-27 on the 2-core development machine, shared with other jobs (load
# 3-13): whole in-process fits of -s 1 and -s 2 at C = 1 on 2 threads (docs/guide/solvers.rst,
# "The default formulation"). The dual was faster (or within 1.2x) up to C lambda 46
# (rcv1-shaped, 100k-400k rows; C = 10 on 100k rows: 116); -s 2 was 1.3-100x faster from
# C lambda 348 (rcv1-shaped at C = 30) and 406 (tall sparse 200k x 1,000) up to click-shaped
# (1e7), and 1.2-1.5x on 2,000 dense rows of 5,000 columns (2e3; there, as on rcv1 at a
# large C, -s 2 stops at its default -e further from the optimum than -s 1 does: 13%).
PRIMAL_MIN_C_LAMBDA = 150.0
# The heaviest column is left out of both numbers: one direction shared by all rows (the
# bias feature, -B 1) does not slow the dual CD (rcv1-shaped, 50k rows: 17 sweeps with
# -B 1, 11 without, as fast as -s 2 or faster), while it alone would make C lambda ~ rows.
DUAL_COPES_WITH_ONE_DENSE_COLUMN = True


@dataclass(frozen=True)
class Scale:
    """What the rule reads of a training set: its rows, C lambda and rows per effective
    column (the module's docstring), and C times the largest squared row norm (shown)."""
    n_rows: int
    c_lambda: float
    rows_per_effective_column: float
    c_max_row_norm2: float = 0.0


@dataclass(frozen=True)
class Formulation:
    """The solver chosen for the unnamed squared hinge, and why (the CLI's line)."""
    solver_type: int
    dual_solver_type: int
    scale: Scale
    primal: bool = False

    def describe(self) -> str:
        s, d = self.scale, self.dual_solver_type
        numbers = (f"C*lambda {s.c_lambda:.3g} {'>=' if self.primal else '<'} "
                   f"{PRIMAL_MIN_C_LAMBDA:g}, {s.rows_per_effective_column:.3g} rows per "
                   f"effective column")
        if self.primal:
            return (f"-s {self.solver_type} (the primal of the default -s {d}: the same "
                    f"model) by Newton: {numbers}, where dual CD converges slowly "
                    f"(-s {d} keeps LIBLINEAR's dual)")
        return f"-s {d} (dual CD, LIBLINEAR's default): {numbers}"


def _column_energies(indptr, indices, data, row_C, n_columns: int):
    """(column energies s, largest C_i ||x_i||**2) of CSR rows, s in NumPy's array: one
    per column (millions on hashed data), where NumPy's huge pages spare the kernel's
    writes a page fault each 4 KiB (column_energy_into)."""
    s = np.zeros(int(n_columns), dtype=np.float64)
    largest, _ = column_energy_into(indptr, indices, data, row_C, s)
    return s, largest


def scale_of(indptr, indices, data, n_columns: int, row_C, bias: float = -1.0) -> Scale:
    """The Scale of CSR rows (indptr, indices, data) over n_columns, each row's C in row_C
    (an array, or one number for all), with LIBLINEAR's bias feature when bias >= 0."""
    n_rows = len(indptr) - 1
    row_C = np.ascontiguousarray(np.broadcast_to(np.asarray(row_C, dtype=np.float64),
                                                 (n_rows,)))
    s, largest = _column_energies(indptr, indices, data, row_C, n_columns)
    return scale_from_energies(n_rows, s, largest, float(row_C.sum()),
                               float(row_C.max(initial=0.0)), bias)


def matrix_energies(X, row_C) -> tuple:
    """(column energies s, largest C_i ||x_i||**2) of a scipy sparse matrix or a dense
    array, each row's C in row_C (an array, or one number)."""
    row_C = np.ascontiguousarray(np.broadcast_to(np.asarray(row_C, dtype=np.float64),
                                                 (X.shape[0],)))
    if hasattr(X, "indptr"):
        X = X.tocsr() if X.format != "csr" else X
        s, largest = _column_energies(X.indptr, X.indices, X.data, row_C, X.shape[1])
        return s, float(largest)
    X = np.asarray(X)
    row_norm2 = np.einsum("ij,ij->i", X, X, dtype=np.float64) * row_C
    return (np.einsum("ij,ij,i->j", X, X, row_C, dtype=np.float64),
            float(row_norm2.max(initial=0.0)))


def matrix_scale(X, row_C, bias: float = -1.0) -> Scale:
    """The Scale of a scipy sparse matrix or a dense array (the estimators' in-memory X),
    each row's C in row_C (an array, or one number)."""
    row_C = np.broadcast_to(np.asarray(row_C, dtype=np.float64), (X.shape[0],))
    s, largest = matrix_energies(X, row_C)
    return scale_from_energies(X.shape[0], s, largest, float(row_C.sum()),
                               float(row_C.max(initial=0.0)), bias)


def scale_from_energies(n_rows: int, s: np.ndarray, largest: float, row_C_sum: float,
                        row_C_max: float, bias: float = -1.0) -> Scale:
    """The Scale from the column energies s and the rows' C (their sum and largest; the
    bias column added when bias >= 0), leaving out the heaviest column
    (DUAL_COPES_WITH_ONE_DENSE_COLUMN)."""
    squares, total, top = energy_sums(np.ascontiguousarray(s, dtype=np.float64))
    if bias >= 0:                       # the bias column (not appended: s may be large)
        bias_energy = bias * bias * row_C_sum
        squares, total = squares + bias_energy * bias_energy, total + bias_energy
        top = max(top, bias_energy)
        largest += bias * bias * row_C_max
    if DUAL_COPES_WITH_ONE_DENSE_COLUMN:
        squares, total = squares - top * top, total - top
    if total <= 0 or squares <= 0:
        return Scale(n_rows, 0.0, 0.0, float(largest))
    return Scale(n_rows, squares / total, n_rows * squares / (total * total), float(largest))


def problem_scale(problem, params: Params) -> Scale:
    """The Scale of a Problem's rows trained with `params`: each row's C is params.C times
    its class's -wi weights and its instance weight."""
    if params.class_weights:
        labels, row_class = np.unique(problem.y, return_inverse=True)
        row_C = class_C(labels, params)[0][row_class]
    else:                               # one C for every row: no sort of the labels
        row_C = float(params.C)
    if problem.sample_weight is not None:
        row_C = row_C * problem.sample_weight
    return scale_of(problem.indptr, problem.indices, problem.data, problem.n_features,
                    row_C, params.bias)


def choose_formulation(dual_solver_type: int, scale: Optional[Scale]) -> Formulation:
    """Dual CD (dual_solver_type) or its Newton fallback, for the data's Scale (None:
    unknown, the dual)."""
    primal = SOLVERS[dual_solver_type].fallback
    use_primal = (scale is not None and primal is not None
                  and scale.c_lambda >= PRIMAL_MIN_C_LAMBDA)
    return Formulation(primal if use_primal else dual_solver_type, dual_solver_type,
                       scale if scale is not None else Scale(0, 0.0, 0.0), use_primal)
