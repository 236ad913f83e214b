"""Reductions of dense n-vectors (n = #weights) shared by the Newton drivers, the primal
objectives and the -C search's test for a changed w."""
from __future__ import annotations

import math

import numpy as np


def dot(u, v):
    """u . v of two n-vectors by NumPy's own loop, not BLAS: OpenBLAS splits a ddot this
    long over threads that then spin, stealing the core the next kernel pass runs on (and
    its result would depend on the thread count)."""
    return float(np.einsum("i,i->", u, v))


def norm(u):
    return math.sqrt(dot(u, u))
