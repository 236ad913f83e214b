"""Dual CD on rows split into blocks that never meet (-s 1, 3, 7, 12, 13): the round
driver.

Each block keeps the dual variables of its own rows for every class and, per round, runs
a bounded number of local CD passes on its block-diagonal subproblem
(kernels/block_dual_cd.py) from the broadcast w; only its change of w (an n-vector per
class) and six scalars per class go back. The driver combines them:

- "cocoa": CoCoA+ (Ma et al. 2015), adding the blocks' steps with the safe subproblem
  scaling sigma' = K (number of blocks);
- "linesearch": the block-diagonal approximation of Lee & Chang (2019), sigma' = 1, then
  the exact minimiser eta in (0, 1] of the dual along the combined step. The SVC dual is
  quadratic, so eta needs only w.dw, dw.dw (on the driver) and two reduced sums; the SVR
  dual's p |beta| is bounded by its chord along the step, and eta minimises that bound.
- "adaptive" (the default of -s 1 and -s 3, SolverSpec.partition_rule): that line search,
  on subproblems whose scaling sigma' moves between 1 (Lee & Chang's) and K (CoCoA+'s
  safe value) from round to round, so that the line search's unclipped optimum stays
  near ADAPTIVE_TARGET, just above 1:
  sigma' <- sigma' * ADAPTIVE_TARGET / optimum. With sigma' = 1 the optimum is often
  below 1, and eta < 1 leaves a dual variable whose local step reached a bound short of
  it (its projected gradient then keeps LIBLINEAR's stopping test failing for hundreds
  of rounds); with sigma' = K every step is cut K-fold. Measured in BENCHMARKS.md,
  "Rounds against K": far fewer rounds than either to LIBLINEAR's eps. The line search keeps every round a
  descent step whatever sigma' is.

Stopping rule: LIBLINEAR's own. The first local pass visits each row once before moving
it, so it gives every row's projected gradient of the *global* dual at the round's alpha;
the driver reduces their max and min and stops a class when PGmax - PGmin <= eps with both
within eps (dual_cd_svc.end_of_sweep), so eps means what it means for the local -s 1/-s 3
(whose last sweep keeps its updates: so does the last round). The projected gradient was
chosen over the duality gap because it is LIBLINEAR's quantity: the same -e stops at the
same accuracy with or without partitioning.
The same pass yields the primal loss at w, hence the duality gap, which is logged. SVR
(-s 12, 13) stops by LIBLINEAR's SVR rule: the 1-norm of the minimum-norm sub-gradient
(summed over blocks) at most eps times its value in the first round. -s 7 stops when the
largest |gradient| of the dual is below eps, and tightens its inner Newton tolerance as
LIBLINEAR does (tenfold after a round of at most l/10 Newton steps); its line search
bounds the entropy term by its chord along the step.

The driver is backend-free: `blocks.round(W, classes, applied, sigma, n_passes)` returns
the summed steps and reduced statistics, from K blocks in this process (SimulatedBlocks)
or from one Dask actor per worker (dlinear.cluster.partitioned_cd). Classes of
one-vs-rest advance together: one round moves every class not yet converged.
"""
from __future__ import annotations

import numpy as np

from ..kernels.block_dual_cd import (ACTIVE, DUAL_PART, N_STATS, PG_MAX, PG_MIN,
                                     PRIMAL_LOSS, ROWS, STEP_LINEAR, STEP_QUADRATIC,
                                     VIOLATION, INNER_STEPS, block_parts,
                                     block_round_lr, block_round_svc, block_round_svr,
                                     squared_norms, svc_records)
from ..kernels.dual_cd_lr import INNER_EPS_FLOOR, INNER_EPS_START
from ..kernels.dual_cd_svc import end_of_sweep
from ..kernels.rng import seed_state
from ..solver_table import PARTITION_RULES, SOLVERS
from ..threads import raise_if_stopped
from . import FitResult
from .dual_start import lr_duals_at, scores_of, svc_duals_at, svr_duals_at
from .vectors import dot

RULES = PARTITION_RULES
ADAPTIVE_TARGET = 1.2         # the line-search optimum "adaptive" steers sigma' towards
DEFAULT_LOCAL_PASSES = 1


def empty_stats(m: int) -> np.ndarray:
    stats = np.zeros((m, N_STATS))
    stats[:, PG_MAX] = -np.inf
    stats[:, PG_MIN] = np.inf
    return stats


def combine_stats(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Two blocks' statistics as one: bounds by max/min, the rest summed."""
    out = a + b
    out[:, PG_MAX] = np.maximum(a[:, PG_MAX], b[:, PG_MAX])
    out[:, PG_MIN] = np.minimum(a[:, PG_MIN], b[:, PG_MIN])
    return out


def combine_rounds(a, b):
    """Two subtrees' round results (steps of w, statistics) as one."""
    return a[0] + b[0], combine_stats(a[1], b[1])


class BlockRows:
    """A block's rows: one or more CSR parts used as they are (never joined into a copy),
    the kernels' view of them (block_parts: the parts' arrays by address, kept alive by
    `_part_arrays`) and their squared norms with the bias column. The partitioned
    solvers' block states (dual CD, Crammer-Singer, one-class) build on it."""

    def __init__(self, parts, bias, n_features):
        self.parts = [p for p in parts if p.n_samples > 0]
        self.starts = np.cumsum([0] + [p.n_samples for p in self.parts])
        self.bias = float(bias)
        self.n_features = int(n_features)
        self.layout, self.part_of, self._part_arrays = block_parts(self.parts)
        self.sq_norms = (np.concatenate([squared_norms(p.indptr, p.data, self.bias)
                                         for p in self.parts])
                         if self.parts else np.zeros(0))

    def __getstate__(self):
        state = dict(self.__dict__)
        del state["layout"], state["_part_arrays"]   # addresses mean nothing elsewhere
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.layout, self.part_of, self._part_arrays = block_parts(self.parts)

    @property
    def n_rows(self) -> int:
        return int(self.starts[-1])


class BlockState(BlockRows):
    """One block's rows (BlockRows) with its dual variables and pending steps for each of
    k classes; each local pass visits all its rows in one random order. Y and C are
    (rows, k): the targets and per-instance C of each binary problem on these rows."""

    def __init__(self, parts, Y, C, bias, n_features, solver_type, seeds, p=0.0):
        super().__init__(parts, bias, n_features)
        l = self.n_rows
        Y = np.asarray(Y, dtype=np.float64).reshape(l, -1)
        C = np.asarray(C, dtype=np.float64).reshape(l, -1)
        self.k = Y.shape[1]
        self.Y = [np.ascontiguousarray(Y[:, c]) for c in range(self.k)]
        self.C = [np.ascontiguousarray(C[:, c]) for c in range(self.k)]
        spec = SOLVERS[solver_type]
        self.l2_loss = spec.squared_loss
        self.logistic = spec.loss == "logistic_regression"
        self.regression = spec.kind == "regression"
        self.p = float(p)
        self.alpha = [np.zeros(l) for _ in range(self.k)]
        if self.logistic:   # LIBLINEAR's start strictly inside (0, C); C - alpha kept apart
            for c in range(self.k):
                self.alpha[c][:] = np.where(self.C[c] > 0, np.minimum(0.001 * self.C[c], 1e-8),
                                            0.0)
            self.rest = [self.C[c] - self.alpha[c] for c in range(self.k)]
        self.step = [np.zeros(l) for _ in range(self.k)]
        self.rng = [seed_state(int(s)) for s in seeds]
        # -s 1, 3 shrink: per class, the block's rows with C_i > 0 in an order whose
        # prefix of n_active[c] rows is the active set
        self.index = [np.flatnonzero(self.C[c] > 0) for c in range(self.k)]
        self.n_active = [len(ix) for ix in self.index]
        self.records = ([svc_records(self.Y[c], self.C[c], self.sq_norms)
                         for c in range(self.k)]
                        if not (self.logistic or self.regression) else None)

    def start_from(self, W0, columns=None):
        """Warm start (-i, init=): each class's dual variables consistent with its column
        of W0 ((dataset features [+ bias], k or 1): dual_start's rule per row), on the
        block's own `columns` of W0 when its parts are renumbered to them. The driver's
        w is then w(alpha), summed over the blocks, as the local solvers rebuild it."""
        W0 = np.asarray(W0, dtype=np.float64)
        if W0.ndim == 1:
            W0 = W0[:, None]
        if columns is not None:
            rows = np.append(columns, W0.shape[0] - 1) if self.bias >= 0 else columns
            W0 = W0[rows]
        for c in range(self.k):
            w = np.ascontiguousarray(W0[:, c if W0.shape[1] > 1 else 0])
            scores = np.concatenate([scores_of(part, self.bias, w, self.n_features)
                                     for part in self.parts]) if self.parts else np.zeros(0)
            if self.logistic:
                self.alpha[c][:] = lr_duals_at(self.Y[c], self.C[c], scores)
                self.rest[c] = np.maximum(self.C[c], 0.0) - self.alpha[c]
            elif self.regression:
                self.alpha[c][:] = svr_duals_at(self.Y[c], self.C[c], scores, self.p)
            else:
                self.alpha[c][:] = svc_duals_at(self.Y[c], self.C[c], scores, self.l2_loss)

    def apply(self, applied):
        """alpha += eta * (last round's step) for each class, eta = applied[c] (0: drop)."""
        for c in range(self.k):
            eta = float(applied[c])
            if eta != 0.0:
                a = self.alpha[c]
                a += eta * self.step[c]
                if self.logistic:
                    self.rest[c] -= eta * self.step[c]
                elif not self.l2_loss:
                    np.minimum(a, self.C[c], out=a)
                if self.regression:
                    if not self.l2_loss:
                        np.maximum(a, -self.C[c], out=a)
                else:
                    np.maximum(a, 0.0, out=a)
            self.step[c][:] = 0.0

    def round(self, W, classes, applied, sigma, n_passes, inner_eps=None, bounds=None,
              full_stats=True):
        """(dW, stats) of this block: W is (len(classes), w_size), the current w of each
        class in `classes`; sigma the subproblems' scaling sigma' (one, or one per class);
        inner_eps (per class) the -s 7 Newton tolerance; bounds
        (len(classes), 2) the global (PGmax, PGmin) of the last round that -s 1 and -s 3
        shrink by (None or both infinite: no shrinking, every row active); full_stats:
        the primal loss over shrunk rows too (for the duality gap of every round)."""
        self.apply(applied)
        dW = np.zeros_like(W)
        stats = empty_stats(len(classes))
        sigmas = np.broadcast_to(np.asarray(sigma, dtype=np.float64), (len(classes),))
        for j, c in enumerate(classes):
            w = np.ascontiguousarray(W[j])
            sigma = float(sigmas[j])
            pg_max_old, pg_min_old = ((np.inf, -np.inf) if bounds is None
                                      else (float(bounds[j][0]), float(bounds[j][1])))
            if self.n_rows == 0:
                continue
            if self.logistic:
                block_round_lr(self.layout, self.part_of, self.n_features, self.bias,
                               self.Y[c], self.C[c], self.sq_norms, self.alpha[c], self.rest[c], w,
                               sigma, int(n_passes), float(inner_eps[c]), self.rng[c],
                               self.step[c], dW[j], stats[j])
            elif self.regression:
                block_round_svr(self.layout, self.part_of, self.n_features, self.bias,
                                self.Y[c], self.C[c], self.sq_norms, self.l2_loss, self.p,
                                self.alpha[c], w, sigma, int(n_passes), self.rng[c],
                                self.step[c], dW[j], stats[j])
            else:
                self.n_active[c] = block_round_svc(
                    self.layout, self.part_of, self.n_features, self.bias, self.records[c],
                    self.l2_loss, self.alpha[c], w, sigma, int(n_passes), self.rng[c],
                    self.step[c], dW[j], stats[j], self.index[c], self.n_active[c],
                    pg_max_old, pg_min_old, bool(full_stats))
        return dW, stats

    def w_of_alpha(self):
        """sum_i alpha_i y_i x_i of this block, per class: (k, w_size); after a lost
        block, the driver's w is rebuilt from these by one reduction."""
        W = np.zeros((self.k, self.n_features + (1 if self.bias >= 0 else 0)))
        for c in range(self.k):
            for part, s, e in zip(self.parts, self.starts[:-1], self.starts[1:]):
                coef = self.alpha[c][s:e]
                if not self.regression:
                    coef = coef * self.Y[c][s:e]
                X = part.to_scipy()
                W[c, :X.shape[1]] += X.T @ coef
                if self.bias >= 0:
                    W[c, -1] += self.bias * coef.sum()
        return W


class SimulatedBlocks:
    """K blocks in this process, called in turn: the rounds of a K-worker run without the
    cores (rounds do not depend on where blocks run)."""

    def __init__(self, blocks):
        self.blocks = list(blocks)
        self.n_blocks = len(self.blocks)

    def round(self, W, classes, applied, sigma, n_passes, inner_eps=None, bounds=None,
              full_stats=True):
        total = None
        for b in self.blocks:
            r = b.round(W, classes, applied, sigma, n_passes, inner_eps, bounds, full_stats)
            total = r if total is None else combine_rounds(total, r)
        return total

    def w_of_alpha(self):
        return sum(b.w_of_alpha() for b in self.blocks)

    def rows(self) -> int:
        return sum(b.n_rows for b in self.blocks)

    def close(self):
        pass


def line_search_optimum(w, dw, stats_row) -> float:
    """The minimiser eta >= 0 of the (quadratic, or chord-bounded) dual along the combined
    step: 0 when it does not descend, inf when the dual is linear along it."""
    slope = dot(w, dw) + stats_row[STEP_LINEAR]
    curvature = dot(dw, dw) + stats_row[STEP_QUADRATIC]
    if slope >= 0.0:
        return 0.0
    if curvature <= 0.0:
        return np.inf
    return -slope / curvature


def step_size(rule, optimum, sigma, n_blocks) -> float:
    """eta of the combined step: 1 for CoCoA+, and for "adaptive" once sigma' has reached
    CoCoA+'s safe K (with one block: plain serial CD, whose full sweep a line search
    would cut short of the bounds it reached); else the line search's, clipped to 1 (the
    largest step every block's variables stay feasible at)."""
    if rule == "cocoa" or (rule == "adaptive" and sigma >= n_blocks):
        return 1.0
    return min(1.0, optimum)


def next_sigma(sigma, optimum, n_blocks) -> float:
    """The "adaptive" rule's sigma' for the next round (see the module text): a step that
    overshot (optimum < 1) raises it, a timid one lowers it, within [1, K]."""
    if optimum <= 0.0:
        return float(n_blocks)
    return min(float(n_blocks), max(1.0, sigma * ADAPTIVE_TARGET / optimum))


def fit_partitioned_dual_cd(blocks, n_problems, w_size, params, rule="adaptive",
                            n_passes=DEFAULT_LOCAL_PASSES, on_round=None):
    """Runs the rounds for `n_problems` binary problems at once on `blocks`; returns one
    FitResult per problem (w, rounds as n_iter, hit_max_iter at params.max_iter rounds).
    `on_round(round, c, primal, dual)` sees each class's primal objective P(w) and
    dual objective f(alpha) (LIBLINEAR's, minimised) at the start of each round:
    (P + f) / P is the relative duality gap."""
    if rule not in RULES:
        raise ValueError(f"unknown combination rule {rule!r} (one of {', '.join(RULES)})")
    eps = float(params.eps)
    W = np.zeros((n_problems, w_size))
    applied = np.zeros(n_problems)
    active = np.ones(n_problems, dtype=bool)
    rounds = np.zeros(n_problems, dtype=np.int64)
    regression = params.spec.kind == "regression"
    first_violation = np.zeros(n_problems)
    logistic = params.spec.loss == "logistic_regression"
    inner_eps = np.full(n_problems, INNER_EPS_START)
    if logistic or params.init_sol is not None:
        # the dual starts inside the box (-s 7) or at a warm start's duals: w = w(alpha)
        W[:] = blocks.w_of_alpha()
    if logistic:
        few_inner_steps = blocks.rows() // 10
    dual = np.zeros(n_problems)
    gaps = np.full(n_problems, np.nan)
    # LIBLINEAR's shrinking thresholds, global: the last round's reduced PG bounds
    bounds = np.tile([np.inf, -np.inf], (n_problems, 1))
    full_stats = on_round is not None
    sigma = np.full(n_problems, float(blocks.n_blocks) if rule == "cocoa" else 1.0)
    for r in range(int(params.max_iter)):
        raise_if_stopped()      # a Ctrl-C whose KeyboardInterrupt Python dropped
        classes = np.flatnonzero(active)
        if len(classes) == 0:
            break
        dW, stats = blocks.round(W[classes], classes, applied, sigma[classes], n_passes,
                                 inner_eps, bounds[classes], full_stats)
        applied[:] = 0.0
        restarted = getattr(blocks, "restarted_w", None)
        if restarted is not None:        # a block was lost: w(alpha) of the new start
            W[:] = restarted
            blocks.restarted_w = None
            bounds[:] = (np.inf, -np.inf)       # the new actors start unshrunk
            active[:] = True
            # sigma' follows the blocks left: CoCoA+'s safe K is the new count (kept at
            # the old K, every step is cut more than it must be), adaptive stays <= K
            if rule == "cocoa":
                sigma[:] = float(blocks.n_blocks)
            else:
                np.minimum(sigma, float(blocks.n_blocks), out=sigma)
        for j, c in enumerate(classes):
            st = stats[j]
            half_ww = 0.5 * dot(W[c], W[c])
            dual[c] = half_ww + st[DUAL_PART]
            primal = half_ww + st[PRIMAL_LOSS]
            if full_stats or st[ACTIVE] == st[ROWS]:    # shrunk rows' losses are missing
                gaps[c] = (primal + dual[c]) / primal if primal > 0 else 0.0
            if on_round is not None:
                on_round(r, int(c), primal, dual[c])
            # as LIBLINEAR, whose last sweep (the one whose gradients met eps) keeps its
            # updates, the converged class still takes this round's step
            if regression:       # LIBLINEAR's SVR test: relative to the first round's
                if r == 0:
                    first_violation[c] = st[VIOLATION]
                active[c] = st[VIOLATION] > eps * first_violation[c]
            elif logistic:       # LIBLINEAR's -s 7 test and inner tolerance schedule
                active[c] = st[PG_MAX] >= eps
                if st[INNER_STEPS] <= few_inner_steps:
                    inner_eps[c] = max(min(INNER_EPS_FLOOR, eps), 0.1 * inner_eps[c])
            else:
                pg_max = st[PG_MAX] if np.isfinite(st[PG_MAX]) else 0.0
                pg_min = st[PG_MIN] if np.isfinite(st[PG_MIN]) else 0.0
                # converged on a shrunk set: the next round (bounds infinite) sweeps all
                # rows, and only a full round may stop, as LIBLINEAR confirms
                stop, _, bounds[c, 0], bounds[c, 1] = end_of_sweep(
                    pg_max, pg_min, eps, int(st[ACTIVE]), int(st[ROWS]))
                active[c] = not stop
            optimum = line_search_optimum(W[c], dW[j], st)
            eta = step_size(rule, optimum, sigma[c], blocks.n_blocks)
            if rule == "adaptive":
                sigma[c] = next_sigma(sigma[c], optimum, blocks.n_blocks)
            W[c] += eta * dW[j]
            applied[c] = eta
            rounds[c] += 1
    results = []
    for c in range(n_problems):
        log = [f"optimization finished, #iter = {rounds[c]} rounds of {blocks.n_blocks} "
               f"blocks ({rule})",
               f"Objective value = {dual[c]:f}",
               f"relative duality gap = {gaps[c]:.3g}"]
        results.append(FitResult(w=W[c].copy(), n_iter=int(rounds[c]), log=log,
                                 hit_max_iter=bool(active[c])))
    return results
