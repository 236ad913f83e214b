"""Dual warm starts from a primal w (dlinear-train -i, init= of dlinear.train).

As Tsai, Lin & Lin (KDD 2014, "Incremental and decremental training for linear
classification") warm-start the dual solvers: each row's dual variable from its own
optimality condition at w, clipped to its bounds. The solvers then rebuild w from these
duals (w = sum_i alpha_i y_i x_i, their invariant), which is w itself where w was the
optimum of these rows, and run to their usual stopping rule.

With the margins m_i = y_i w.x_i (residuals r_i = y_i - w.x_i for SVR), C_i the row's C:
- SVC dual (-s 1, 3): the gradient of row i is m_i - 1 + D_i alpha_i, D_i = 1/(2 C_i)
  (L2 loss, alpha_i >= 0) or 0 (L1 loss, 0 <= alpha_i <= C_i): alpha_i = 2 C_i
  max(0, 1 - m_i), resp. C_i where m_i < 1 and 0 where m_i > 1.
- LR dual (-s 7): alpha_i = C_i sigma(-m_i), kept inside (0, C_i) by LIBLINEAR's
  starting margin min(1e-3 C_i, 1e-8) (the solver's log(alpha) terms need the interior).
- SVR dual (-s 12): w.x_i - y_i + lambda_i beta_i + p sign(beta_i) = 0 gives
  beta_i = sign(r_i) max(0, |r_i| - p) / lambda_i, lambda_i = 1/(2 C_i). Not -s 13: its
  duals (C_i sign(r_i) outside the tube, a guess for the rows on its edge) make its first
  sweep's violations, to which its stop is relative, large, and it stopped 2-10x
  farther from the optimum than a fresh fit (0.33 relative against 0.027 on one set).
- the true-bias SVC dual (-R): as -s 1, 3, then the larger of the two classes' sums of
  alpha scaled down to the smaller, so that y^T alpha = 0 holds (scaling keeps the box).
- Crammer-Singer (-s 4): alpha_i^m <= C_i [m = y_i], sum_m alpha_i^m = 0, W = sum_i
  alpha_i x_i^T; the subgradient of row i's loss max_m (w_m.x_i + [m != y_i]) - w_y.x_i
  at its most violating class r gives alpha_i^y = C_i, alpha_i^r = -C_i where that loss
  is positive, else 0.
- one-class (-s 21): LIBLINEAR's box 0 <= alpha_i <= 1 with sum_i alpha_i = nu l;
  alpha_i = 1 on the nu l rows of the smallest w.x_i (those with w.x_i < rho at the
  optimum), the fraction left on the next one.
"""
from __future__ import annotations

import math

import numpy as np

from ..kernels.primal_ops import xv


def _scores(task, w) -> np.ndarray:
    return scores_of(task.problem, task.bias, w)


def scores_of(X, bias: float, w, n_features=None) -> np.ndarray:
    """x_i . w of every row (with the bias column, w's entry n_features: X's own count
    unless given, as for a part of a dataset with more columns)."""
    out = np.empty(X.n_samples)
    xv(X.indptr, X.indices, X.data, int(X.n_features if n_features is None else n_features),
       float(bias),
       np.ascontiguousarray(w, dtype=np.float64), out)
    return out


def svc_duals(task, w, squared_loss: bool) -> np.ndarray:
    """alpha of the SVC dual (-s 1 squared_loss, -s 3 not) consistent with w."""
    return svc_duals_at(task.y, task.C, _scores(task, w), squared_loss)


def svc_duals_at(y, C, scores, squared_loss: bool) -> np.ndarray:
    """svc_duals from the rows' scores x_i . w (a block of rows on a cluster worker)."""
    m = y * scores
    C = np.maximum(C, 0.0)
    if squared_loss:
        return 2.0 * C * np.maximum(0.0, 1.0 - m)
    return np.where(m < 1.0, C, 0.0)


def balanced(alpha, y) -> np.ndarray:
    """alpha with y^T alpha = 0: the class of the larger sum scaled down to the other's."""
    positive, negative = float(alpha[y > 0].sum()), float(alpha[y <= 0].sum())
    alpha = alpha.copy()
    if positive > negative:
        alpha[y > 0] *= negative / positive
    elif negative > positive:
        alpha[y <= 0] *= positive / negative
    return alpha


def lr_duals(task, w) -> np.ndarray:
    """The pairs (alpha_i, C_i - alpha_i) of the LR dual (-s 7) at 2i, 2i+1, alpha_i =
    C_i sigma(-m_i) inside LIBLINEAR's starting margin; 0 for rows with C_i <= 0."""
    alpha = lr_duals_at(task.y, task.C, _scores(task, w))
    C = np.maximum(task.C, 0.0)
    pairs = np.zeros(2 * len(alpha))
    pairs[0::2] = alpha
    pairs[1::2] = C - alpha
    return pairs


def lr_duals_at(y, C, scores) -> np.ndarray:
    """alpha of lr_duals (without the pairs) from the rows' scores x_i . w."""
    m = y * scores
    C = np.maximum(C, 0.0)
    margin = np.minimum(1e-3 * C, 1e-8)
    return np.clip(C / (1.0 + np.exp(np.clip(m, -700.0, 700.0))), margin, C - margin)


def svr_duals(task, w, p: float) -> np.ndarray:
    """beta of the L2-loss SVR dual (-s 12) consistent with w."""
    return svr_duals_at(task.y, task.C, _scores(task, w), p)


def svr_duals_at(y, C, scores, p: float) -> np.ndarray:
    """svr_duals from the rows' scores x_i . w."""
    r = y - scores
    C = np.maximum(C, 0.0)
    return np.sign(r) * 2.0 * C * np.maximum(0.0, np.abs(r) - p)


def oneclass_duals(task, w, nu: float, upper: np.ndarray) -> np.ndarray:
    """alpha of the one-class dual (box [0, upper_i], sum nu * sum(upper)) with the mass
    on the rows of the smallest w.x_i."""
    order = np.argsort(_scores(task, w), kind="stable")
    alpha = np.zeros(task.problem.n_samples)
    left = nu * float(np.sum(upper))
    cumulative = np.cumsum(upper[order])
    full = int(np.searchsorted(cumulative, left, side="right"))
    alpha[order[:full]] = upper[order[:full]]
    if full < len(order):
        alpha[order[full]] = min(upper[order[full]],
                                 left - (cumulative[full - 1] if full else 0.0))
    return alpha if math.isfinite(left) else np.zeros_like(alpha)


def crammer_singer_duals(X, bias: float, y, C, W) -> np.ndarray:
    """alpha (l, nr_class) of the Crammer-Singer dual consistent with W (w_size,
    nr_class); y the class index of each row."""
    W = np.asarray(W, dtype=np.float64)
    l, nr_class = X.n_samples, W.shape[1]
    scores = np.column_stack([scores_of(X, bias, W[:, m]) for m in range(nr_class)])
    rows = np.arange(l)
    own = scores[rows, y].copy()
    scores[rows, y] = -np.inf
    rival = np.argmax(scores, axis=1)
    violated = (scores[rows, rival] + 1.0 > own) & (C > 0)
    alpha = np.zeros((l, nr_class))
    alpha[rows[violated], y[violated]] = C[violated]
    alpha[rows[violated], rival[violated]] = -C[violated]
    return alpha
