"""Reductions of dense n-vectors (n = #weights) shared by the Newton drivers, the primal
objectives and the -C search's test for a changed w."""
from __future__ import annotations

import math

import numpy as np

from ..kernels.vectors import dot_in_order


def dot(u, v):
    """u . v, added in index order (dlinear.kernels.vectors): a fit on the columns that
    occur (dlinear.data.columns) then takes the same steps as on all columns, whose extra
    entries are zeros. Not BLAS either: OpenBLAS splits a ddot this long over threads
    that then spin, stealing the core the next kernel pass runs on (and its result would
    depend on the thread count)."""
    return float(dot_in_order(np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)))


def norm(u):
    return math.sqrt(dot(u, u))
