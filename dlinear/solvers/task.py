"""What a fit function takes (a SubProblem and the Params) and returns (a FitResult)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from ..data import Problem
from ..errors import DlinearError


@dataclass
class SubProblem:
    """The problem one fit function solves: one binary classification problem of train's
    one-vs-rest (y = +1/-1), or the whole regression (y = targets) or one-class problem.
    LIBLINEAR's train_one gets one of these."""

    problem: Problem      # X as raw CSR arrays (y of the problem is ignored)
    y: np.ndarray         # float64 +1/-1 (classification) or targets (regression)
    C: np.ndarray         # float64 per instance: class weight x instance weight x C
    bias: float           # < 0: no bias feature; else the value of the virtual last column
    seed: int
    w0: Optional[np.ndarray] = None
    alpha0: Optional[np.ndarray] = None   # warm start of the dual CD solvers (-s 1, 3)

    @property
    def w_size(self) -> int:
        return self.problem.n_features + (1 if self.bias >= 0 else 0)


def starting_w(w0, w_size: int) -> np.ndarray:
    """The primal solvers' starting point: a float64 copy of the warm start w0, or zeros."""
    if w0 is None:
        return np.zeros(w_size)
    w = np.array(w0, dtype=np.float64, copy=True).reshape(-1)
    if w.shape[0] != w_size:
        raise DlinearError(f"initial w has {w.shape[0]} values, expected {w_size}")
    return w


BinaryTask = SubProblem    # its former name, kept for existing callers


@dataclass
class FitResult:
    w: np.ndarray
    n_iter: int
    log: list = field(default_factory=list)  # lines, printed in class order by train()
    hit_max_iter: bool = False
    rho: float = 0.0
    alpha: Optional[np.ndarray] = None    # the dual solution, where the solver has one
