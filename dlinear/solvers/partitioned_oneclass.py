"""The one-class SVM (-s 21) on rows split into blocks that never meet: the block state
and the round driver.

The dual (kernels/oneclass.py), min 0.5 ||w||^2 with w = sum_i alpha_i x_i,
0 <= alpha_i <= U_i and sum_i alpha_i = nu sum_i U_i, couples every row through the sum,
which the partitioned step keeps exact:

- each block keeps its share s_b of the sum; its local step (kernels/block_oneclass.py)
  moves mass between its own rows only, by LIBLINEAR's two-variable steps on the
  max-violating pairs of its rows (Chou et al., SDM 2020), on the block-diagonal
  subproblem scaled by sigma' as the binary duals' (partitioned_dual_cd.py);
- mass moves between blocks by the max-violating pair *across* blocks: each block
  reports its smallest gradient of a row with room and its largest of a row with mass,
  the tree reduces them to the global pair (blocks a and b), and the next round shifts
  t from b's share to a's, t = (G_b - G_a) / (sigma' (||x_a|| + ||x_b||)^2) (the
  pair's step with its curvature bounded by Cauchy-Schwarz: the rows are on different
  workers), within a's room and b's mass;
  t is in units of that step times a factor doubled after a round whose line search
  would have gone further and halved after one it cut (never below 1); after a round
  whose step the line search refused, no shift (its extremes were stale);
- the driver combines the blocks' steps (each with sum 0, the shift's +t and -t) by the
  binary duals' rules, a round with a shift always by the line search (eta <= 1); the
  dual is 0.5 ||w||^2 only, so the line search needs w.dw and dw.dw; any eta in [0, 1]
  keeps every row in its box and the sum exact.

Stopping rule: LIBLINEAR's, max_{alpha_i < U_i} -G_i - min_{alpha_i > 0} -G_i < eps over
all rows at the round's alpha (the reduced extremes). rho as LIBLINEAR's: the mean
gradient of the free rows, else the middle of the bound interval (one more reduction).
Start: LIBLINEAR's (the first rows at their bound until nu sum U is placed), block after
block.
"""
from __future__ import annotations

import numpy as np

from ..kernels.block_oneclass import (G_LOW, G_UP, LOW_BLOCK, LOW_NORM, N_EXTREMES,
                                      UP_BLOCK, UP_NORM, block_round_oneclass)
from ..errors import DlinearError
from ..threads import raise_if_stopped
from . import FitResult
from .partitioned_dual_cd import ADAPTIVE_TARGET, RULES, BlockRows, next_sigma, step_size
from .vectors import dot

# the shift between blocks, in units of the max-violating pair's step: doubled after a
# round whose line search would have gone further (ADAPTIVE_TARGET), halved after one it
# cut, never below the pair's safe step
TRANSFER_GROWTH = 2.0


def combine_extremes(a, b):
    """Two subtrees' extremes (tuples of N_EXTREMES floats) as one: the smaller G_UP and
    the larger G_LOW, each with its block and norm."""
    up = a if a[G_UP] <= b[G_UP] else b
    low = a if a[G_LOW] >= b[G_LOW] else b
    out = list(up)
    out[G_LOW], out[LOW_BLOCK], out[LOW_NORM] = low[G_LOW], low[LOW_BLOCK], low[LOW_NORM]
    return tuple(out)


def combine_rho_stats(a, b):
    """(sum of free gradients, free rows, largest gradient at U, smallest at 0)."""
    return (a[0] + b[0], a[1] + b[1], max(a[2], b[2]), min(a[3], b[3]))


def combine(method, a, b):
    """The payloads' `combine` (cluster/tree.py) and the simulated blocks'."""
    if method == "round":
        return a[0] + b[0], combine_extremes(a[1], b[1])
    if method == "finish":
        return combine_rho_stats(a, b)
    if isinstance(a, tuple):
        return tuple(x + y for x, y in zip(a, b))
    return a + b


class OneClassBlock(BlockRows):
    """One block's rows (CSR parts used as they are), their upper bounds U (the instance
    weights, 1 without) and alpha; `trial` is alpha plus the last round's step."""

    def __init__(self, parts, U, bias, n_features, block):
        super().__init__(parts, bias, n_features)
        self.U = np.ascontiguousarray(U, dtype=np.float64)
        self.block = int(block)
        self.alpha = np.zeros(self.n_rows)
        self.trial = np.zeros(self.n_rows)

    @property
    def w_size(self) -> int:
        return self.n_features + (1 if self.bias >= 0 else 0)

    def sizes(self, n_blocks):
        """sum U of this block at its place of a tuple of n_blocks floats."""
        return tuple(float(self.U.sum()) if b == self.block else 0.0
                     for b in range(n_blocks))

    def start(self, masses):
        """LIBLINEAR's start on this block's share masses[block]: its rows at U in order
        until the share is placed. Returns sum_i alpha_i x_i (w_size,)."""
        cum = np.cumsum(self.U)
        self.alpha[:] = np.clip(float(masses[self.block]) - (cum - self.U), 0.0, self.U)
        self.trial[:] = self.alpha
        return self.w_of_alpha()

    def apply(self, eta: float):
        if eta == 1.0:
            self.alpha[:] = self.trial
        elif eta != 0.0:
            self.alpha += eta * (self.trial - self.alpha)
            np.clip(self.alpha, 0.0, self.U, out=self.alpha)
        self.trial[:] = self.alpha

    def round(self, w, shifts, applied, sigma, n_passes):
        """(dw, extremes): the last step taken with eta `applied`, then this block's
        shift shifts[block] of its share and its local passes at w."""
        self.apply(float(applied))
        w = np.ascontiguousarray(w, dtype=np.float64)
        dw = np.zeros_like(w)
        extremes = np.zeros(N_EXTREMES)
        block_round_oneclass(self.layout, self.part_of, self.n_features, self.bias, self.U,
                             self.sq_norms, self.alpha, self.trial, w, float(sigma),
                             int(n_passes), float(shifts[self.block]), float(self.block),
                             dw, extremes)
        return dw, tuple(float(e) for e in extremes)

    def finish(self, w, applied):
        """The last step taken; this block's share of rho's statistics at w."""
        self.apply(float(applied))
        g = self._gradients(np.asarray(w, dtype=np.float64))
        free = (self.alpha > 0.0) & (self.alpha < self.U)
        at_u = self.alpha == self.U
        at_0 = (self.alpha == 0.0) & ~at_u
        return (float(g[free].sum()), float(free.sum()),
                float(g[at_u].max()) if at_u.any() else -np.inf,
                float(g[at_0].min()) if at_0.any() else np.inf)

    def _gradients(self, w):
        out = []
        for part in self.parts:
            X = part.to_scipy()
            g = X @ w[:X.shape[1]]
            if self.bias >= 0:
                g = g + self.bias * w[-1]
            out.append(g)
        return np.concatenate(out) if out else np.zeros(0)

    def w_of_alpha(self):
        w = np.zeros(self.w_size)
        for part, s, e in zip(self.parts, self.starts[:-1], self.starts[1:]):
            X = part.to_scipy()
            w[:X.shape[1]] += X.T @ self.alpha[s:e]
            if self.bias >= 0:
                w[-1] += self.bias * self.alpha[s:e].sum()
        return w


class SimulatedOneClassBlocks:
    """K blocks in this process, called in turn (the rounds of K workers)."""

    def __init__(self, blocks):
        self.blocks = list(blocks)
        self.n_blocks = len(self.blocks)

    def call(self, method, *args):
        total = None
        for b in self.blocks:
            r = getattr(b, method)(*args)
            total = r if total is None else combine(method, total, r)
        return total

    def close(self):
        pass


def fit_partitioned_oneclass(blocks, w_size, params, rule="adaptive", n_passes=1,
                             on_round=None) -> FitResult:
    """Runs the rounds on `blocks` (anything with n_blocks and call(method, *args) over
    OneClassBlocks: simulated, or an actor tree); returns the FitResult (w, rho).
    `on_round(round, dual, violation)` sees each round's start."""
    if rule not in RULES:
        raise ValueError(f"unknown combination rule {rule!r} (one of {', '.join(RULES)})")
    if params.init_sol is not None:
        raise DlinearError("-s 21 on partitioned rows starts from LIBLINEAR's start: it "
                           "takes no warm start (-i) yet; train without --partition")
    eps = float(params.eps)

    def begin():
        """LIBLINEAR's start: nu sum U placed on the first rows, block after block."""
        n = blocks.n_blocks
        sizes = np.asarray(blocks.call("sizes", n), dtype=np.float64)
        target = float(params.nu) * float(sizes.sum())
        before = np.concatenate([[0.0], np.cumsum(sizes)[:-1]])
        shares = np.clip(target - before, 0.0, sizes)
        w = np.asarray(blocks.call("start", tuple(shares.tolist())), dtype=np.float64)
        return n, sizes, shares, w, np.zeros(n)

    n_blocks, sizes, shares, w, shifts = begin()
    eta = 0.0
    sigma = float(n_blocks) if rule == "cocoa" else 1.0
    transfer = 1.0
    converged = False
    rounds = 0
    dual = 0.5 * dot(w, w)
    for r in range(int(params.max_iter)):
        raise_if_stopped()      # a Ctrl-C whose KeyboardInterrupt Python dropped
        dw, ext = blocks.call("round", w, tuple(shifts.tolist()), eta, sigma, n_passes)
        if getattr(blocks, "restarted", False):
            # a lost worker took its rows' alpha and with them part of the sum: the
            # rounds start again from LIBLINEAR's start on the blocks left
            blocks.restarted = False
            n_blocks, sizes, shares, w, shifts = begin()
            eta, transfer = 0.0, 1.0
            sigma = float(n_blocks) if rule == "cocoa" else min(sigma, float(n_blocks))
            continue
        dw = np.asarray(dw, dtype=np.float64)
        dual = 0.5 * dot(w, w)
        violation = ext[G_LOW] - ext[G_UP]
        if on_round is not None:
            on_round(r, dual, violation)
        converged = not violation >= eps
        slope = dot(w, dw)
        curvature = dot(dw, dw)
        optimum = (0.0 if slope >= 0.0 else np.inf if curvature <= 0.0
                   else -slope / curvature)
        eta = step_size(rule, optimum, sigma, n_blocks)
        if shifts.any():          # the shift's step is no subproblem's: never unchecked
            eta = min(1.0, optimum)
        if rule == "adaptive":
            sigma = next_sigma(sigma, optimum, n_blocks)
        w = w + eta * dw
        shares += eta * shifts
        if shifts.any():
            transfer = max(1.0, transfer * (TRANSFER_GROWTH if optimum >= ADAPTIVE_TARGET
                                            else 1.0 / TRANSFER_GROWTH))
        rounds += 1
        if converged:
            break
        # the next round's mass between blocks: the max-violating pair across them (none
        # after a round whose step the line search refused: its extremes were stale)
        refused = shifts.any() and eta == 0.0
        shifts[:] = 0.0
        a, b = int(ext[UP_BLOCK]), int(ext[LOW_BLOCK])
        if a != b and violation > 0.0 and not refused:
            norms = ext[UP_NORM] + ext[LOW_NORM]
            t = transfer * violation / (sigma * norms * norms) if norms > 0.0 else np.inf
            t = min(t, sizes[a] - shares[a], shares[b])
            if t > 0.0:
                shifts[a], shifts[b] = t, -t
    sum_free, n_free, lb, ub = blocks.call("finish", w, eta)
    rho = sum_free / n_free if n_free > 0 else (ub + lb) / 2.0
    log = [f"optimization finished, #iter = {rounds} rounds of {n_blocks} blocks ({rule})"]
    if not converged:
        log.append("WARNING: reaching max number of iterations")
    log += [f"Objective value = {0.5 * dot(w, w):f}", f"rho = {rho:f}"]
    return FitResult(w=w, n_iter=rounds, log=log, hit_max_iter=not converged,
                     rho=float(rho))
