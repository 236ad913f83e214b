"""What selective block minimization (in_process.out_of_core) keeps per dual solver: every
row's dual record and w of each binary problem, the visit kernel of a block
(kernels.block_minimization), LIBLINEAR's stopping rule of that solver over all rows, the
rows worth a place in the cache of informative rows, and the FitResult.

- -s 1 / -s 3 (SvcDuals): the projected gradients' spread, with shrinking confirmed on
  the whole set; informative: the support vectors (alpha > 0), those inside the box first.
- -s 7 (LrDuals): the largest |g'| of the sub-problems an outer iteration visits, the
  inner Newton's tolerance shrunk tenfold after an outer iteration of few Newton steps.
  Every alpha lies in (0, C), so there are no "support vectors": at the optimum
  alpha_i / C_i = 1 / (1 + exp(y_i x_i.w)): the rows with alpha_i / C_i above
  LR_INFORMATIVE (a margin below log(1 / LR_INFORMATIVE - 1)) weigh in w, the others
  little; those short of the other bound first (measured against other choices below).
- -s 12 / -s 13 (SvrDuals): the 1-norm of the violations against the first outer
  iteration's, with shrinking confirmed on the whole set; informative: beta != 0, those
  strictly inside the box first.
"""
from __future__ import annotations

import numpy as np

from ..kernels.block_minimization import (dual_objective_part, part_of_visit, scale_visit,
                                          visit_block, visit_block_lr, visit_block_svr)
from ..kernels.dual_cd_lr import A1, A2, INNER_EPS_FLOOR, INNER_EPS_START
from ..kernels.dual_cd_svc import ALPHA, end_of_sweep
from ..kernels.dual_cd_svr import BETA, BOUND
from ..kernels.local_dual_cd import merge_parts, part_copies, round_terms, safe_fraction
from ..kernels.rng import rand_below, seed_state
from ..solvers.dual_cd import dual_svc_result
from ..solvers.task import FitResult
from ..threads import PassPool, raise_if_stopped, stop_flag

INF = np.inf
# -s 7's cached rows: alpha_i >= LR_INFORMATIVE * C_i (a margin below log(19) = 2.9).
# On 300k rcv1-shaped rows in 24 blocks (a cache of 5% of the data), at -e 0.1 and 0.01
# (5 and 8 iterations in memory): thresholds 0.01 and 0.05 took 7 and 11 outer
# iterations, 0.2 8 (-e 0.1), every row (in row order) 7 and 12, no cache 9 and 24. In
# the blocks' alternating order (before out_of_core shuffled them) thresholds 0.001, 0.01, 0.05, 0.1,
# 0.5 took 24, 21, 19, 21, 34 at -e 0.1, and the slot filled with the rows of largest
# alpha_i (C_i - alpha_i) / C_i (the most sensitive to w) 39, of largest alpha_i 33
LR_INFORMATIVE = 0.05


def svc_informative(alphas, bounds):
    """(free, support) of an SVC dual's rows: alpha > 0 in any problem (alphas[c], with
    upper bounds bounds[c]), and strictly inside the box in any."""
    free = np.zeros(len(alphas[0]), dtype=bool)
    support = np.zeros(len(alphas[0]), dtype=bool)
    for a, U in zip(alphas, bounds):
        support |= a > 0.0
        free |= (a > 0.0) & (a < U)
    return free, support


class BlockDuals:
    """The state of every binary problem over `blocks`: its rows' records and w, the
    active counts of the blocks, and the first visits' flags. The problems' targets and
    C of rows r0..r1 (columns of Y and C) are targets_of(r0, r1), made for a block when
    it is visited: the records hold what the sweeps need, so Y and C do not stay in
    memory (16 bytes a row a problem). Visits run on one thread but for SvcDuals'
    (n_threads)."""

    threaded = False

    def __init__(self, blocks, n_rows, n_features, targets_of, params, n_threads=1):
        self.blocks, self.n_features, self.targets_of = blocks, n_features, targets_of
        self.params = params
        self.bias = float(params.bias)
        # each problem's rows with C_i > 0, a block at a time
        self.taking_part = np.array([np.count_nonzero(targets_of(*block.rows)[1] > 0.0,
                                                      axis=0) for block in blocks]).T
        self.k = len(self.taking_part)
        w_size = n_features + (1 if self.bias >= 0 else 0)
        self.inst = [np.zeros((n_rows, 4)) for _ in range(self.k)]
        self.index = [np.zeros(n_rows, dtype=np.int64) for _ in range(self.k)]
        self.w = [np.zeros(w_size) for _ in range(self.k)]
        self.active = np.zeros((self.k, len(blocks)), dtype=np.int64)
        self.n_all = [int(n) for n in self.taking_part.sum(axis=1)]
        self._visited = (None, None)       # (block, its targets_of)

    def block_targets(self, b):
        """targets_of block b's rows, made once for the problems' visits in a row."""
        if self._visited[0] != b:
            self._visited = (b, self.targets_of(*self.blocks[b].rows))
        return self._visited[1]

    def block_args(self, c, b, arrays):
        """The visit kernels' leading arguments for block b of problem c."""
        Y, C = self.block_targets(b)
        return (*arrays, self.n_features, self.bias, Y[:, c], C[:, c])

    def fit_result(self, c, n_iter, obj, lines, detail) -> FitResult:
        """LIBLINEAR's closing log lines (then `lines`, then `detail`) and w of problem c."""
        log = [f"optimization finished, #iter = {n_iter}", f"Objective value = {obj:f}",
               *lines, detail]
        return FitResult(w=self.w[c], n_iter=int(n_iter), log=log,
                         hit_max_iter=n_iter >= self.params.max_iter)

    def close(self):
        """Ends the threads a visit used, if any."""

    def restart(self, c):
        """Every block's rows with C_i > 0 active again (shrinking confirmed)."""
        self.active[c] = self.taking_part[c]


class SvcDuals(BlockDuals):
    """-s 1 / -s 3 (dual_cd_svc's records). On n_threads > 1 a visit's rows are split
    between the threads as CoCoA+'s local sub-problems (kernels.local_dual_cd, as the
    in-memory "local" scheme: sigma measured at each merge, a round cut back where its
    parts' steps added up beyond it, but for the alphas a step took to a bound:
    scale_visit), merged at the visit's end; the model then depends on the seed and the
    number of threads, never on their timing."""

    threaded = True

    def __init__(self, blocks, n_rows, n_features, targets_of, params, n_threads=1):
        super().__init__(blocks, n_rows, n_features, targets_of, params)
        self.l2_loss = params.spec.squared_loss
        self.alpha = [np.zeros(n_rows) for _ in range(self.k)]
        self.PG_old = [(INF, -INF)] * self.k
        self.pool = PassPool(n_threads, "block-cd") if n_threads > 1 else None
        if self.pool is not None:
            # one part a thread: with two a thread (more balance beside the reader
            # thread) 4M rcv1-shaped rows took 25.7 passes rather than 19.8
            self.copies = part_copies(n_threads, len(self.w[0]))
            self.sigma = [float(len(self.copies))] * self.k
            self.part_rng = [None] * self.k

    def close(self):
        if self.pool is not None:
            self.pool.close()

    def start_iteration(self):
        self.PG_new = [(-INF, INF)] * self.k

    def visit(self, c, b, arrays, first, cached, rng, sweeps, stride, phase):
        r0, r1 = self.blocks[b].rows
        # on threads, the first visit builds the records serially (no sweep) and the
        # sweeps follow on the threads
        active, PGmax, PGmin = visit_block(
            *self.block_args(c, b, arrays), self.l2_loss, self.alpha[c][r0:r1],
            self.inst[c], r0, first, self.index[c][r0:r1], self.active[c, b], *cached, rng,
            sweeps if self.pool is None else 0, self.PG_old[c][0], self.PG_old[c][1],
            self.w[c], stop_flag(), stride, phase)
        if self.pool is not None:
            active, PGmax, PGmin = self._threaded_sweeps(c, b, arrays, active, cached, rng,
                                                         sweeps, stride, phase)
        self.active[c, b] = active
        self.PG_new[c] = (max(self.PG_new[c][0], PGmax), min(self.PG_new[c][1], PGmin))

    def _threaded_sweeps(self, c, b, arrays, active, cached, rng, sweeps, stride, phase):
        """visit_block's sweeps, each split between the pool's threads (part_of_visit)
        and merged: (active, PGmax, PGmin of the first sweep)."""
        r0, r1 = self.blocks[b].rows
        cache_rows = cached[3]
        index, inst, w = self.index[c][r0:r1], self.inst[c], self.w[c]
        K = len(self.copies)
        if self.part_rng[c] is None:    # the parts' own random orders, from the problem's
            self.part_rng[c] = [seed_state(rand_below(rng, 1 << 31)) for _ in range(K)]
        first_bounds = (-INF, INF)
        for sweep in range(sweeps):
            # part k's place: its share of the active rows and of the cached rows
            block_rows = [len(range(k, active, K)) for k in range(K)]
            room = [block_rows[k] + len(range(phase + stride * k, len(cache_rows),
                                              stride * K)) for k in range(K)]
            lo = np.concatenate([[0], np.cumsum(room)]).astype(np.int64)
            size = int(lo[-1])
            order, records, regrouped = (np.empty(size, dtype=np.int64) for _ in range(3))
            kept, step = np.empty(size, dtype=np.bool_), np.empty(size)
            sigma = self.sigma[c]
            parts = self.pool.run(part_of_visit, [
                (k, K, index, active, r1 - r0, cache_rows, stride, phase,
                 self.part_rng[c][k], lo[k], regrouped, order, r0, *arrays, *cached[:3],
                 inst, self.n_features, self.bias, self.l2_loss, self.PG_old[c][0],
                 self.PG_old[c][1], w, self.copies[k], sigma, step, kept, records,
                 stop_flag()) for k in range(K)])
            raise_if_stopped()
            w_dW, dW2, parts2 = round_terms(w, self.copies, K, sigma)
            gamma = safe_fraction(w_dW, dW2, sum([part[4] for part in parts]),
                                  sum([part[5] for part in parts]))
            merge_parts(w, self.copies, K, sigma / gamma if gamma > 0.0 else INF)
            if gamma < 1.0:
                scale_visit(order, records, step, size, gamma, self.l2_loss, inst, *arrays,
                            *cached[:3], w, self.n_features, self.bias)
            if parts2 > 0.0:
                self.sigma[c] = min(float(K), max(1.0, dW2 / parts2))
            # the active list: every part's kept rows, then every part's shrunk ones
            at = 0
            for k in range(K):
                n_kept = parts[k][1]
                index[at:at + n_kept] = regrouped[lo[k]:lo[k] + n_kept]
                at += n_kept
            new_active = at
            for k in range(K):
                shrunk = block_rows[k] - parts[k][1]
                start = lo[k] + parts[k][1]
                index[at:at + shrunk] = regrouped[start:start + shrunk]
                at += shrunk
            active = new_active
            if sweep == 0:
                first_bounds = (max([part[2] for part in parts]),
                                min([part[3] for part in parts]))
        return active, first_bounds[0], first_bounds[1]

    def end_iteration(self, c) -> bool:
        stop, restart, PGmax_old, PGmin_old = end_of_sweep(
            self.PG_new[c][0], self.PG_new[c][1], float(self.params.eps),
            int(self.active[c].sum()), self.n_all[c])
        self.PG_old[c] = (PGmax_old, PGmin_old)
        if restart:
            self.restart(c)
        return stop

    def informative(self, b):
        r0, r1 = self.blocks[b].rows
        return svc_informative(
            [self.inst[c][r0:r1, ALPHA] for c in range(self.k)],
            [INF if self.l2_loss else self.inst[c][r0:r1, BOUND] for c in range(self.k)])

    def result(self, c, n_iter, detail) -> FitResult:
        obj = (0.5 * float(self.w[c] @ self.w[c])
               + dual_objective_part(self.inst[c], self.l2_loss, self.alpha[c]))
        return dual_svc_result(self.w[c], self.alpha[c], n_iter, obj, self.params, [detail])


class LrDuals(BlockDuals):
    """-s 7 (dual_cd_lr's records: alpha_i and C_i - alpha_i apart)."""

    def __init__(self, blocks, n_rows, n_features, targets_of, params, n_threads=1):
        super().__init__(blocks, n_rows, n_features, targets_of, params)
        self.innereps = [INNER_EPS_START] * self.k
        self.innereps_min = min(INNER_EPS_FLOOR, float(params.eps))
        self.newton_steps = [0] * self.k

    def start_iteration(self):
        self.Gmax = [0.0] * self.k
        self.steps = [0] * self.k

    def visit(self, c, b, arrays, first, cached, rng, sweeps, stride, phase):
        r0, r1 = self.blocks[b].rows
        active, Gmax, steps = visit_block_lr(
            *self.block_args(c, b, arrays), self.inst[c], r0, first,
            self.index[c][r0:r1], self.active[c, b], *cached, rng, sweeps,
            self.innereps[c], self.w[c], stop_flag(), stride, phase)
        self.active[c, b] = active
        self.Gmax[c] = max(self.Gmax[c], Gmax)
        self.steps[c] += steps

    def end_iteration(self, c) -> bool:
        self.newton_steps[c] += self.steps[c]
        if self.Gmax[c] < float(self.params.eps):
            return True
        if self.steps[c] <= self.n_all[c] // 10:
            self.innereps[c] = max(self.innereps_min, 0.1 * self.innereps[c])
        return False

    def informative(self, b):
        r0, r1 = self.blocks[b].rows
        free = np.zeros(r1 - r0, dtype=bool)
        support = np.zeros(r1 - r0, dtype=bool)
        _, Cs = self.block_targets(b)      # those of the visit just made
        for c in range(self.k):
            C = Cs[:, c]
            inst = self.inst[c]
            support |= inst[r0:r1, A1] >= LR_INFORMATIVE * C
            free |= support & (inst[r0:r1, A2] >= LR_INFORMATIVE * C)
        return free, support

    def result(self, c, n_iter, detail) -> FitResult:
        obj = 0.5 * float(self.w[c] @ self.w[c])
        for block in self.blocks:
            r0, r1 = block.rows
            C = self.targets_of(r0, r1)[1][:, c]
            part = C > 0.0
            a1, a2 = self.inst[c][r0:r1][part, A1], self.inst[c][r0:r1][part, A2]
            obj += float(np.sum(a1 * np.log(a1) + a2 * np.log(a2)
                                - C[part] * np.log(C[part])))
        return self.fit_result(c, n_iter, obj,
                               [f"inner Newton steps = {self.newton_steps[c]}"], detail)


class SvrDuals(BlockDuals):
    """-s 12 / -s 13 (dual_cd_svr's records; one problem, the targets as they are)."""

    def __init__(self, blocks, n_rows, n_features, targets_of, params, n_threads=1):
        super().__init__(blocks, n_rows, n_features, targets_of, params)
        self.l2_loss = params.spec.squared_loss
        self.Gmax_old = [INF] * self.k
        self.Gnorm1_init = [None] * self.k
        self.restarts = [0] * self.k

    def start_iteration(self):
        self.Gmax = [0.0] * self.k
        self.Gnorm1 = [0.0] * self.k

    def visit(self, c, b, arrays, first, cached, rng, sweeps, stride, phase):
        r0, r1 = self.blocks[b].rows
        active, Gmax, Gnorm1 = visit_block_svr(
            *self.block_args(c, b, arrays), float(self.params.p), self.l2_loss,
            self.inst[c], r0, first, self.index[c][r0:r1], self.active[c, b], *cached,
            rng, sweeps, self.Gmax_old[c], self.w[c], stop_flag(), stride, phase)
        self.active[c, b] = active
        self.Gmax[c] = max(self.Gmax[c], Gmax)
        self.Gnorm1[c] += Gnorm1

    def end_iteration(self, c) -> bool:
        if self.Gnorm1_init[c] is None:
            self.Gnorm1_init[c] = self.Gnorm1[c]
        if self.Gnorm1[c] <= float(self.params.eps) * self.Gnorm1_init[c]:
            if int(self.active[c].sum()) == self.n_all[c]:
                return True
            self.restart(c)
            self.restarts[c] += 1
            self.Gmax_old[c] = INF
            return False
        self.Gmax_old[c] = self.Gmax[c]
        return False

    def informative(self, b):
        r0, r1 = self.blocks[b].rows
        free = np.zeros(r1 - r0, dtype=bool)
        support = np.zeros(r1 - r0, dtype=bool)
        for c in range(self.k):
            beta = self.inst[c][r0:r1, BETA]
            support |= beta != 0.0
            U = INF if self.l2_loss else self.inst[c][r0:r1, BOUND]
            free |= (beta != 0.0) & (np.abs(beta) < U)
        return free, support

    def result(self, c, n_iter, detail) -> FitResult:
        inst = self.inst[c]
        beta = inst[:, BETA]
        lam = inst[:, BOUND] if self.l2_loss else 0.0
        obj = 0.5 * float(self.w[c] @ self.w[c]) + float(np.sum(
            float(self.params.p) * np.abs(beta) + 0.5 * lam * beta * beta))
        for block in self.blocks:          # - y_i beta_i
            r0, r1 = block.rows
            obj -= float(self.targets_of(r0, r1)[0][:, c] @ beta[r0:r1])
        return self.fit_result(c, n_iter, obj, [f"nSV = {int(np.count_nonzero(beta))}",
                                                f"shrinking restarts = {self.restarts[c]}"],
                               detail)


def block_duals(params):
    """The BlockDuals class of -s N (out_of_core_solver's dual CD solvers)."""
    loss = params.spec.loss
    if loss == "logistic_regression":
        return LrDuals
    if loss in ("squared_epsilon_insensitive", "epsilon_insensitive"):
        return SvrDuals
    return SvcDuals
