"""Crammer and Singer's multi-class SVM (-s 4) on rows split into blocks that never meet:
the block state and the round driver.

The dual (crammer_singer.py) couples rows only through W = sum_i alpha_i x_i^T (one
column per class); each row's own constraints (alpha_i^m <= C_i^m, sum_m alpha_i^m = 0)
stay in its block. So the partitioned dual CD of the binary solvers
(partitioned_dual_cd.py) carries over with k-column steps: each block keeps its rows'
alpha (rows x k), runs the sequential dual method's sub-problem CD (Keerthi et al. 2008;
Fan et al. 2008, Appendix E; kernels/block_mcsvm_cs.py) on its rows against the round's
W, and sends back its change of W (k x n) and a few scalars; the driver combines them by
the same rules (CoCoA+'s sigma' = K, Lee & Chang's line search, or "adaptive" between
them: partitioned_dual_cd.step_size / next_sigma). The dual is quadratic,
0.5 ||W||^2 + sum e.alpha, so the exact line search along the combined step needs
W.dW, dW.dW and the step's linear term only. Any eta in [0, 1] keeps every row feasible
(a convex combination of alpha and alpha + d, both feasible).

Stopping rule: LIBLINEAR's for -s 4, max_i S_i < eps over all rows, S_i at the round's
alpha (the first local pass's, kernels/block_mcsvm_cs.py); as for the binary duals the
converged round keeps its step. Rounds are capped at params.max_iter.

The blocks offer the binary duals' interface (round, w_of_alpha, rows), so the same
simulated blocks (partitioned_dual_cd.SimulatedBlocks) and Dask actor tree
(cluster/partitioned_cd.py) serve both; W here is one problem of k rows.
"""
from __future__ import annotations

import numpy as np

from ..kernels.block_dual_cd import DUAL_PART, PG_MAX, PRIMAL_LOSS
from ..kernels.block_mcsvm_cs import block_round_cs
from ..kernels.rng import seed_state
from ..errors import DlinearError
from ..threads import raise_if_stopped
from . import FitResult
from .partitioned_dual_cd import (RULES, BlockRows, empty_stats, line_search_optimum,
                                  next_sigma, step_size)
from .vectors import dot


class CrammerSingerBlock(BlockRows):
    """One block's rows (CSR parts used as they are) with their class index `y`, per-row
    C and dual variables alpha (rows x k); `trial` is alpha plus the last round's step,
    taken with the driver's eta at the next round."""

    def __init__(self, parts, y, C, k, bias, n_features, seed):
        super().__init__(parts, bias, n_features)
        l = self.n_rows
        self.k = int(k)
        self.y = np.ascontiguousarray(y, dtype=np.int64)
        self.C = np.ascontiguousarray(C, dtype=np.float64)
        self.alpha = np.zeros((l, self.k))
        self.trial = np.zeros((l, self.k))
        self.rng = seed_state(int(seed))

    def apply(self, eta: float):
        """alpha moves by eta of the last round's step (eta 1: to `trial` exactly)."""
        if eta == 1.0:
            self.alpha[:] = self.trial
        elif eta != 0.0:
            self.alpha += eta * (self.trial - self.alpha)
        self.trial[:] = self.alpha

    def round(self, W, classes, applied, sigma, n_passes, inner_eps=None, bounds=None,
              full_stats=True):
        """(dW, stats): W (k, w_size) the current weights (`classes`: all k rows);
        applied[0] the eta of the last round's step; sigma[0] the subproblem's scaling.
        The binary duals' other arguments mean nothing here."""
        self.apply(float(np.asarray(applied).ravel()[0]))
        W = np.ascontiguousarray(W, dtype=np.float64).reshape(self.k, -1)
        dW = np.zeros_like(W)
        stats = empty_stats(1)
        block_round_cs(self.layout, self.part_of, self.n_features, self.bias, self.y, self.C,
                       self.sq_norms, self.alpha, self.trial, W,
                       float(np.asarray(sigma).ravel()[0]), int(n_passes), self.rng, dW,
                       stats[0])
        return dW, stats

    def w_of_alpha(self):
        """sum_i alpha_i x_i^T of this block: (k, w_size)."""
        W = np.zeros((self.k, self.n_features + (1 if self.bias >= 0 else 0)))
        for part, s, e in zip(self.parts, self.starts[:-1], self.starts[1:]):
            A = self.alpha[s:e]
            X = part.to_scipy()
            W[:, :X.shape[1]] += (X.T @ A).T
            if self.bias >= 0:
                W[:, -1] += self.bias * A.sum(axis=0)
        return W

    def take_over_rows(self, s, e, alpha):
        """Rows s:e's dual variables from a block this one replaces."""
        self.alpha[s:e] = alpha
        self.trial[s:e] = alpha


def fit_partitioned_crammer_singer(blocks, k, w_size, params, rule="adaptive",
                                   n_passes=1, on_round=None) -> FitResult:
    """Runs the rounds on `blocks` (CrammerSingerBlocks, simulated or on actors); returns
    the FitResult whose w is (w_size, k) as the in-process -s 4's. `on_round(round,
    primal, dual)` sees the primal objective at W and the dual (LIBLINEAR's, minimised)
    at the round's start."""
    if rule not in RULES:
        raise ValueError(f"unknown combination rule {rule!r} (one of {', '.join(RULES)})")
    if params.init_sol is not None:
        raise DlinearError("-s 4 on partitioned rows starts from LIBLINEAR's start: it "
                           "takes no warm start (-i) yet; train without --partition")
    eps = float(params.eps)
    n_blocks = blocks.n_blocks
    W = np.zeros((k, w_size))
    applied = np.zeros(k)       # one eta, given per row of W as the binary duals' are
    classes = np.arange(k)
    sigma = float(n_blocks) if rule == "cocoa" else 1.0
    dual = 0.0
    gap = np.nan
    converged = False
    rounds = 0
    for r in range(int(params.max_iter)):
        raise_if_stopped()      # a Ctrl-C whose KeyboardInterrupt Python dropped
        dW, stats = blocks.round(W, classes, applied, np.full(k, sigma), n_passes)
        applied[:] = 0.0
        restarted = getattr(blocks, "restarted_w", None)
        if restarted is not None:        # a block was lost: w(alpha) of the new start
            W[:] = restarted
            blocks.restarted_w = None
            sigma = (float(blocks.n_blocks) if rule == "cocoa"
                     else min(sigma, float(blocks.n_blocks)))
            n_blocks = blocks.n_blocks
        st = stats[0]
        half_ww = 0.5 * dot(W.ravel(), W.ravel())
        dual = half_ww + st[DUAL_PART]
        primal = half_ww + st[PRIMAL_LOSS]
        gap = (primal + dual) / primal if primal > 0 else 0.0
        if on_round is not None:
            on_round(r, primal, dual)
        converged = not st[PG_MAX] >= eps        # no row with a violation: -inf
        flat_w, flat_dw = W.ravel(), dW.ravel()
        optimum = line_search_optimum(flat_w, flat_dw, st)
        eta = step_size(rule, optimum, sigma, n_blocks)
        if rule == "adaptive":
            sigma = next_sigma(sigma, optimum, n_blocks)
        W += eta * dW
        applied[:] = eta
        rounds += 1
        if converged:
            break
    log = [f"optimization finished, #iter = {rounds} rounds of {n_blocks} blocks ({rule})"]
    if not converged:
        log.append("WARNING: reaching max number of iterations")
    log += [f"Objective value = {dual:f}", f"relative duality gap = {gap:.3g}"]
    return FitResult(w=np.ascontiguousarray(W.T), n_iter=rounds, log=log,
                     hit_max_iter=not converged)
