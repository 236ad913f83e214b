"""One round of the partitioned dual CD (-s 1 / -s 3, kernels.block_dual_cd) on a block
whose rows are on disk, one sub-block of consecutive rows in memory at a time, with a
cache of copies of informative rows of the block's other sub-blocks (the rows with
alpha > 0; Chang & Roth 2011, as kernels.block_minimization sweeps them in process).

The subproblem is block_round_svc's. A round visits the sub-blocks in turn; each visit
takes one random order over the sub-block's active rows and a share of the cached rows of
the others, so that the variables of the sub-blocks not in memory still move with those
that are: visiting contiguous runs of rows alone, each in its own order, took several
times the rounds of one order over the whole block (measured on rcv1-shaped rows, 5
sub-blocks: 33 rounds against 8). A row's step may so move before and after its own
sub-block's visit: the steps are zeroed once a round by the caller, and the line
search's sums over the steps are the caller's too, once all visits are done.
"""
import numpy as np
from numba import njit

from .block_dual_cd import (ACTIVE, DUAL_PART, PG_MAX, PG_MIN, PRIMAL_LOSS, REC_C,
                            REC_MARGIN, REC_SQ, REC_Y, ROWS)
from .block_minimization import active_first, visit_order
from .dual_cd_svc import one_variable_step
from .sparse_ops import row_axpy, row_dot, row_dot2

INF = np.inf


@njit(cache=True, nogil=True)
def sub_block_round_svc(indptr, indices, data, r0, n_features, bias, rec, l2_loss, alpha,
                        w, sigma, n_passes, state, step, dw, stats, index, n_active,
                        pg_max_old, pg_min_old, full_stats, cache_bounds, cache_indices,
                        cache_data, cache_rows, cache_stride, cache_phase):
    """block_round_svc's visit to the sub-block of block rows r0.. (its CSR arrays;
    `rec`, `alpha`, `step` are the whole block's, by block row; `index` the sub-block's
    rows with C_i > 0 by sub-block row, the first `n_active` active) with the cached rows
    j of the other sub-blocks with j % cache_stride == cache_phase (row j's copy at
    cache_indices/cache_data[cache_bounds[2j]:cache_bounds[2j + 1]], its block row
    cache_rows[j]). `step` holds the round's steps so far and is added to; the statistics
    are block_round_svc's but STEP_LINEAR and STEP_QUADRATIC (see the module text), taken
    over the sub-block's rows at the round's start. Returns the new active count."""
    l = len(indptr) - 1
    n_all = len(index)
    n = n_active
    if pg_max_old == INF and pg_min_old == -INF:
        n = n_all
    for i in range(l):            # the dual part of the objective needs every row
        g = r0 + i
        a0 = alpha[g]
        Ci = rec[g, REC_C]
        if a0 != 0.0 and Ci > 0.0:
            Di = 0.5 / Ci if l2_loss else 0.0
            stats[DUAL_PART] += a0 * (0.5 * Di * a0 - 1.0)
    n_cache = len(cache_rows)
    order = np.empty(n + n_cache, dtype=np.int64)     # row i as i, cached row j as -1 - j
    kept = np.empty(n + n_cache, dtype=np.bool_)
    for p in range(n_passes):
        m = visit_order(index, n, r0, l, cache_rows, cache_stride, cache_phase, state,
                        order)
        for s in range(m):
            code = order[s]
            kept[s] = True
            g = r0 + code if code >= 0 else cache_rows[-1 - code]
            yi = rec[g, REC_Y]
            Ci = rec[g, REC_C]
            if l2_loss:
                Di = 0.5 / Ci
                Ui = INF
            else:
                Di = 0.0
                Ui = Ci
            a0 = alpha[g]
            a = a0 + step[g]
            if code < 0:
                j = -1 - code
                u, v = row_dot2(w, dw, cache_bounds, cache_indices, cache_data, 2 * j,
                                n_features, bias)
                G = yi * (u + sigma * v) - 1.0 + Di * a
            elif p == 0:
                # the round's w and the block's step so far, in one walk over the row
                mg, v = row_dot2(w, dw, indptr, indices, data, code, n_features, bias)
                mg *= yi
                G0 = mg - 1.0 + Di * a0
                PG = G0
                if a0 == 0.0:
                    if G0 > pg_max_old:
                        kept[s] = False
                        continue
                    PG = min(G0, 0.0)
                elif a0 >= Ui:
                    if G0 < pg_min_old:
                        kept[s] = False
                        continue
                    PG = max(G0, 0.0)
                rec[g, REC_MARGIN] = mg
                if PG > stats[PG_MAX]:
                    stats[PG_MAX] = PG
                if PG < stats[PG_MIN]:
                    stats[PG_MIN] = PG
                hinge = 1.0 - mg
                if hinge > 0.0:
                    stats[PRIMAL_LOSS] += Ci * (hinge * hinge if l2_loss else hinge)
                G = mg + sigma * yi * v - 1.0 + Di * a
            else:
                G = (rec[g, REC_MARGIN] + sigma * yi * row_dot(dw, indptr, indices, data,
                                                                code, n_features, bias)
                     - 1.0 + Di * a)
            if (a == 0.0 and G >= 0.0) or (a >= Ui and G <= 0.0) or abs(G) <= 1.0e-12:
                continue
            new = one_variable_step(a, G, sigma * rec[g, REC_SQ] + Di, Ui)
            if new != a:
                step[g] = new - a0
                if code >= 0:
                    row_axpy((new - a) * yi, indptr, indices, data, code, dw, n_features,
                             bias)
                else:
                    row_axpy((new - a) * yi, cache_bounds, cache_indices, cache_data,
                             2 * (-1 - code), dw, n_features, bias)
        if p == 0:
            # the rows kept this pass, then the ones shrunk, then those shrunk before
            n = active_first(order, kept, m, index)
    if full_stats:
        for s in range(n, n_all):
            i = index[s]
            hinge = 1.0 - rec[r0 + i, REC_Y] * row_dot(w, indptr, indices, data, i,
                                                       n_features, bias)
            if hinge > 0.0:
                stats[PRIMAL_LOSS] += rec[r0 + i, REC_C] * (hinge * hinge if l2_loss
                                                             else hinge)
    stats[ACTIVE] += n
    stats[ROWS] += n_all
    return n
