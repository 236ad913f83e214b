"""Dual CD on one block of rows held in memory, while the rest of the data is on disk: the
inner solver of selective block minimization (Yu, Hsieh, Chang & Lin, "Large linear
classification when data cannot fit in memory", KDD 2010; Chang & Roth, "Selective block
minimization for faster convergence of limited memory large-scale linear models", KDD
2011), for -s 1 / -s 3.

Every row's record (alpha, Q_ii, bound, y: dual_cd_svc's packed layout) and w stay in
memory for the whole fit; a block's CSR rows are in memory only while it is visited, and
a cache holds copies of informative rows of the other blocks (alpha > 0: the support
vectors). A visit takes `n_sweeps` sweeps of one-variable dual CD over the block's
active rows and the cached rows together, in one random order, updating w in place.
Without the cache the rows of a block would only ever meet the other blocks' rows
through w as it was when the block was read; measured on rcv1-shaped rows, that took
4x the passes of the in-memory solver with 3 blocks, 10x with 10, and the cache brings
it back to about one pass per in-memory iteration.

Shrinking is LIBLINEAR's, on the block's rows, with the whole set's thresholds from the
previous outer iteration; cached rows are never shrunk (their own block shrinks them).
"""
import numpy as np
from numba import njit

from .dual_cd_svc import (ALPHA, BOUND, INF, QD, Y, gradient_parts, init_records,
                          one_variable_step, projected_gradient)
from .rng import shuffle_prefix
from .sparse_ops import row_axpy, row_dot


@njit(cache=True, nogil=True)
def visit_block(indptr, indices, data, n_features, bias, y, C, l2_loss, alpha, inst, r0,
                first, index, active, cache_indptr, cache_indices, cache_data, cache_rows,
                rng, n_sweeps, PGmax_old, PGmin_old, w, ctrl_c):
    """One visit to the block of rows r0.. (their CSR arrays, targets y, C and warm-start
    alpha; inst: every row's records; index: the block's active list, kept between
    visits) with the cached rows (a CSR of copies and their row numbers; those of this
    block are skipped, so the whole cache is passed without a copy). On the first
    visit the block's records are built and w += sum alpha_i y_i x_i. Returns (active,
    PGmax, PGmin): the block's active count after the visit and the projected-gradient
    bounds of its rows in the first sweep (LIBLINEAR's stopping test reads them over all
    blocks); early, within a row's step, once ctrl_c[0] is set (a Ctrl-C:
    dlinear.threads.stop_flag), with the block's state not to be used again."""
    n = len(indptr) - 1
    if first:
        init_records(indptr, indices, data, n_features, bias, y, C, l2_loss, alpha,
                     inst[r0:r0 + n], 0, n, w)
        active = 0
        for i in range(n):
            if C[i] > 0.0:
                index[active] = i
                active += 1
    n_cache = len(cache_rows)
    order = np.empty(active + n_cache, dtype=np.int64)
    kept = np.empty(active + n_cache, dtype=np.bool_)
    PGmax_first = -INF
    PGmin_first = INF
    for sweep in range(n_sweeps):
        # block row i as i >= 0, cached row j as -1 - j
        for s in range(active):
            order[s] = index[s]
        # the cache's copies of this block's own rows are skipped: the block has them
        m = active
        for j in range(n_cache):
            if cache_rows[j] < r0 or cache_rows[j] >= r0 + n:
                order[m] = -1 - j
                m += 1
        shuffle_prefix(rng, order, m)
        PGmax_new = -INF
        PGmin_new = INF
        for s in range(m):
            if ctrl_c[0]:
                return active, PGmax_new, PGmin_new
            code = order[s]
            kept[s] = True
            if code >= 0:
                r = r0 + code
                dot = row_dot(w, indptr, indices, data, code, n_features, bias)
            else:
                r = cache_rows[-1 - code]
                dot = row_dot(w, cache_indptr, cache_indices, cache_data, -1 - code,
                              n_features, bias)
            yi = inst[r, Y]
            a_i, Di, Ui = gradient_parts(inst, r, l2_loss)
            G = yi * dot - 1.0 + a_i * Di
            PG, shrink = projected_gradient(G, a_i, Ui, PGmax_old, PGmin_old)
            if code >= 0:
                if shrink:
                    kept[s] = False
                    continue
                if PG > PGmax_new:
                    PGmax_new = PG
                if PG < PGmin_new:
                    PGmin_new = PG
            elif shrink:
                # a cached row is stepped whatever the thresholds: its projected gradient
                PG = G if (a_i > 0.0 and a_i < Ui) else (min(G, 0.0) if a_i == 0.0
                                                         else max(G, 0.0))
            if abs(PG) > 1.0e-12:
                a = one_variable_step(a_i, G, inst[r, QD], Ui)
                inst[r, ALPHA] = a
                if code >= 0:
                    row_axpy((a - a_i) * yi, indptr, indices, data, code, w, n_features, bias)
                else:
                    row_axpy((a - a_i) * yi, cache_indptr, cache_indices, cache_data,
                             -1 - code, w, n_features, bias)
        # the active list: the block rows kept this sweep, then the ones shrunk
        t = 0
        for s in range(m):
            if order[s] >= 0 and kept[s]:
                index[t] = order[s]
                t += 1
        new_active = t
        for s in range(m):
            if order[s] >= 0 and not kept[s]:
                index[t] = order[s]
                t += 1
        active = new_active
        if sweep == 0:
            PGmax_first = PGmax_new
            PGmin_first = PGmin_new
    return active, PGmax_first, PGmin_first


@njit(cache=True, nogil=True)
def dual_objective_part(inst, l2_loss, alpha):
    """sum_i alpha_i (alpha_i D_ii - 2) / 2 over the records (the dual objective's part
    apart from w.w / 2); copies the packed alphas to `alpha`."""
    v = 0.0
    for i in range(inst.shape[0]):
        a = inst[i, ALPHA]
        alpha[i] = a
        if l2_loss:
            v += a * (a * inst[i, BOUND] - 2.0)
        else:
            v += -2.0 * a
    return v / 2.0
