"""Dual CD on one block of rows held in memory, while the rest of the data is on disk: the
inner solver of selective block minimization (Yu, Hsieh, Chang & Lin, "Large linear
classification when data cannot fit in memory", KDD 2010; Chang & Roth, "Selective block
minimization for faster convergence of limited memory large-scale linear models", KDD
2011), for -s 1 / -s 3.

Every row's record (alpha, Q_ii, bound, y: dual_cd_svc's packed layout) and w stay in
memory for the whole fit; a block's CSR rows are in memory only while it is visited, and
a cache holds copies of informative rows of the other blocks (alpha > 0: the support
vectors). A visit takes `n_sweeps` sweeps of one-variable dual CD over the block's
active rows and a share of the cached rows together, in one random order, updating w in
place.
Without the cache the rows of a block would only ever meet the other blocks' rows
through w as it was when the block was read; measured on rcv1-shaped rows, that took
4x the passes of the in-memory solver with 3 blocks, 10x with 10, and the cache brings
it back to about one pass per in-memory iteration.

Shrinking is LIBLINEAR's, on the block's rows, with the whole set's thresholds from the
previous outer iteration; cached rows are never shrunk (their own block shrinks them).

visit_block_lr (-s 7, dual_cd_lr's records and inner Newton; no shrinking, as LIBLINEAR
has none for it) and visit_block_svr (-s 12 / -s 13, dual_cd_svr's records, shrinking
by the previous outer iteration's largest violation) are the same visit for the other
duals, built from the same pieces (visit_order, active_first, code_dot, code_axpy).
On threads (-s 1 / -s 3, in_process.block_duals.SvcDuals) local_visit_part takes a
thread's share of a visit's sweep on its own copy of w, and scale_visit cuts a merged
visit back.
"""
import numpy as np
from numba import njit

from .dual_cd_lr import init_lr_row, lr_row_step
from .dual_cd_svc import (ALPHA, BOUND, INF, QD, Y, gradient_parts, init_records,
                          one_variable_step, projected_gradient)
from .dual_cd_svr import BETA, H, init_svr_row, svr_row_gradient, violation_or_shrink
from .dual_cd_svr import one_variable_step as svr_step
from .prefetch import prefetch_row_read, prefetch_span
from .rng import shuffle_prefix
from .sparse_ops import row_axpy, row_dot


@njit(cache=True, nogil=True, inline="always")
def prefetch_next(order, s, m, r0, indptr, indices, data, cache_bounds, cache_indices,
                  cache_data, cache_rows, inst):
    """Before visiting order[s] (a block row i >= 0 or cached row -1 - j): prefetches
    the nonzeros and record of the row visited next, and the bounds of the one after
    (as sparse_ops.prefetch_visit does for one CSR). A hint only: it changes no result."""
    if s + 2 < m:
        code = order[s + 2]
        if code >= 0:
            prefetch_span(indptr, code, code + 2)
        else:
            prefetch_span(cache_bounds, 2 * (-1 - code), 2 * (-1 - code) + 2)
    if s + 1 < m:
        code = order[s + 1]
        if code >= 0:
            prefetch_span(indices, indptr[code], indptr[code + 1])
            prefetch_span(data, indptr[code], indptr[code + 1])
            prefetch_row_read(inst, r0 + code, inst.shape[1] * 8)
        else:
            j = -1 - code
            prefetch_span(cache_indices, cache_bounds[2 * j], cache_bounds[2 * j + 1])
            prefetch_span(cache_data, cache_bounds[2 * j], cache_bounds[2 * j + 1])
            prefetch_row_read(inst, cache_rows[j], inst.shape[1] * 8)


@njit(cache=True, nogil=True, inline="always")
def rows_taking_part(C, index):
    """index[:n] = the block rows with C_i > 0 (the others take no part); returns n."""
    n = 0
    for i in range(len(C)):
        if C[i] > 0.0:
            index[n] = i
            n += 1
    return n


@njit(cache=True, nogil=True, inline="always")
def row_at(order, s, m, r0, indptr, indices, data, cache_bounds, cache_indices, cache_data,
           cache_rows, inst):
    """(code, record row) of order[s] (block row i as i >= 0, cached row j as -1 - j), the
    rows after it prefetched (prefetch_next)."""
    prefetch_next(order, s, m, r0, indptr, indices, data, cache_bounds, cache_indices,
                  cache_data, cache_rows, inst)
    code = order[s]
    return code, (r0 + code if code >= 0 else cache_rows[-1 - code])


@njit(cache=True, nogil=True, inline="always")
def visit_order(index, active, r0, n, cache_rows, cache_stride, cache_phase, rng, order):
    """order[:m], returning m: the block's active rows index[:active] (block row i as
    i >= 0) and the cached rows j with j % cache_stride == cache_phase (as -1 - j), in one
    random order. The cache's copies of the block's own rows (r0 .. r0 + n) are skipped:
    the block has them."""
    for s in range(active):
        order[s] = index[s]
    m = active
    for j in range(cache_phase, len(cache_rows), cache_stride):
        if cache_rows[j] < r0 or cache_rows[j] >= r0 + n:
            order[m] = -1 - j
            m += 1
    shuffle_prefix(rng, order, m)
    return m


@njit(cache=True, nogil=True, inline="always")
def active_first(order, kept, m, index):
    """The block's active list rewritten from a sweep's order[:m]: the block rows kept,
    then the ones shrunk (index past them untouched); returns the number kept."""
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
    return new_active


@njit(cache=True, nogil=True, inline="always")
def code_dot(w, code, indptr, indices, data, cache_bounds, cache_indices, cache_data,
             n_features, bias):
    """x.w of block row `code` >= 0 or of cached row -1 - code (cache_bounds read as an
    indptr at 2j: cached row j is [bounds[2j], bounds[2j + 1]))."""
    if code >= 0:
        return row_dot(w, indptr, indices, data, code, n_features, bias)
    return row_dot(w, cache_bounds, cache_indices, cache_data, 2 * (-1 - code), n_features,
                   bias)


@njit(cache=True, nogil=True, inline="always")
def code_axpy(coef, code, indptr, indices, data, cache_bounds, cache_indices, cache_data,
              w, n_features, bias):
    """w += coef x of block row `code` >= 0 or of cached row -1 - code."""
    if code >= 0:
        row_axpy(coef, indptr, indices, data, code, w, n_features, bias)
    else:
        row_axpy(coef, cache_bounds, cache_indices, cache_data, 2 * (-1 - code), w,
                 n_features, bias)


@njit(cache=True, nogil=True, inline="always")
def visited_row_gradient(w, code, r, indptr, indices, data, cache_bounds, cache_indices,
                         cache_data, inst, n_features, bias, l2_loss, PGmax_old, PGmin_old):
    """(yi, alpha_i, D_ii, U_i, G, PG, shrunk) of a visited row at w: a block row
    (code >= 0) beyond the thresholds is shrunk; a cached row is stepped whatever the
    thresholds (its own block shrinks it), with its projected gradient."""
    dot = code_dot(w, code, indptr, indices, data, cache_bounds, cache_indices, cache_data,
                   n_features, bias)
    yi = inst[r, Y]
    a_i, Di, Ui = gradient_parts(inst, r, l2_loss)
    G = yi * dot - 1.0 + a_i * Di
    PG, shrink = projected_gradient(G, a_i, Ui, PGmax_old, PGmin_old)
    if code < 0 and shrink:
        PG = G if (a_i > 0.0 and a_i < Ui) else (min(G, 0.0) if a_i == 0.0 else max(G, 0.0))
        shrink = False
    return yi, a_i, Di, Ui, G, PG, shrink


@njit(cache=True, nogil=True)
def visit_block(indptr, indices, data, n_features, bias, y, C, l2_loss, alpha, inst, r0,
                first, index, active, cache_bounds, cache_indices, cache_data, cache_rows,
                rng, n_sweeps, PGmax_old, PGmin_old, w, ctrl_c, cache_stride, cache_phase):
    """One visit to the block of rows r0.. (their CSR arrays, targets y, C and warm-start
    alpha; inst: every row's records; index: the block's active list, kept between
    visits) with the cached rows (copies: cached row j's indices and values are
    cache_indices/cache_data[cache_bounds[2j]:cache_bounds[2j + 1]], its row number
    cache_rows[j]; those of this block are skipped, so the whole cache is passed without
    a copy), of which a visit sweeps the rows j with j % cache_stride == cache_phase: a
    share of the cache a visit, so that a cached row is swept a few times an outer
    iteration however many blocks there are. On the first
    visit the block's records are built and w += sum alpha_i y_i x_i. Returns (active,
    PGmax, PGmin): the block's active count after the visit and the projected-gradient
    bounds of its rows in the first sweep (LIBLINEAR's stopping test reads them over all
    blocks); early, within a row's step, once ctrl_c[0] is set (a Ctrl-C:
    dlinear.threads.stop_flag), with the block's state not to be used again."""
    n = len(indptr) - 1
    if first:
        init_records(indptr, indices, data, n_features, bias, y, C, l2_loss, alpha,
                     inst[r0:r0 + n], 0, n, w)
        active = rows_taking_part(C, index)
    n_cache = len(cache_rows)
    order = np.empty(active + n_cache, dtype=np.int64)
    kept = np.empty(active + n_cache, dtype=np.bool_)
    PGmax_first = -INF
    PGmin_first = INF
    for sweep in range(n_sweeps):
        m = visit_order(index, active, r0, n, cache_rows, cache_stride, cache_phase, rng,
                        order)
        PGmax_new = -INF
        PGmin_new = INF
        for s in range(m):
            if ctrl_c[0]:
                return active, PGmax_new, PGmin_new
            code, r = row_at(order, s, m, r0, indptr, indices, data, cache_bounds,
                             cache_indices, cache_data, cache_rows, inst)
            kept[s] = True
            yi, a_i, Di, Ui, G, PG, shrink = visited_row_gradient(
                w, code, r, indptr, indices, data, cache_bounds, cache_indices, cache_data,
                inst, n_features, bias, l2_loss, PGmax_old, PGmin_old)
            if shrink:
                kept[s] = False
                continue
            if code >= 0:
                if PG > PGmax_new:
                    PGmax_new = PG
                if PG < PGmin_new:
                    PGmin_new = PG
            if abs(PG) > 1.0e-12:
                a = one_variable_step(a_i, G, inst[r, QD], Ui)
                inst[r, ALPHA] = a
                code_axpy((a - a_i) * yi, code, indptr, indices, data, cache_bounds,
                          cache_indices, cache_data, w, n_features, bias)
        active = active_first(order, kept, m, index)
        if sweep == 0:
            PGmax_first = PGmax_new
            PGmin_first = PGmin_new
    return active, PGmax_first, PGmin_first


@njit(cache=True, nogil=True)
def local_visit_part(order, lo, hi, r0, indptr, indices, data, cache_bounds, cache_indices,
                     cache_data, cache_rows, inst, n_features, bias, l2_loss, PGmax_old,
                     PGmin_old, w, v, sigma, step, kept, records, ctrl_c):
    """A share of a visit on its own thread: visit_block's steps on order[lo:hi] as
    CoCoA+'s local sub-problem (kernels.local_dual_cd: curvature and gradient through the
    part's copy v = w + sigma * its change of w, written into `v`; `w` only read). Sets
    kept[s] (False: a block row shrunk), step[s] (the change of its alpha) and
    records[s] (its record row) for s in lo..hi. Returns (PGmax, PGmin, linear,
    quadratic): the projected-gradient bounds of the block rows, and the dual's change
    from the steps apart from its w terms, linear + quadratic / 2. Early once ctrl_c[0]
    is set."""
    for j in range(len(w)):
        v[j] = w[j]
    PGmax_new = -INF
    PGmin_new = INF
    linear = 0.0
    quadratic = 0.0
    for s in range(lo, hi):
        step[s] = 0.0
        kept[s] = True
    for s in range(lo, hi):
        if ctrl_c[0]:
            break
        code, r = row_at(order, s, hi, r0, indptr, indices, data, cache_bounds,
                         cache_indices, cache_data, cache_rows, inst)
        records[s] = r
        yi, a_i, Di, Ui, G, PG, shrink = visited_row_gradient(
            v, code, r, indptr, indices, data, cache_bounds, cache_indices, cache_data, inst,
            n_features, bias, l2_loss, PGmax_old, PGmin_old)
        if shrink:
            kept[s] = False
            continue
        if code >= 0:
            if PG > PGmax_new:
                PGmax_new = PG
            if PG < PGmin_new:
                PGmin_new = PG
        if abs(PG) > 1.0e-12:
            a = one_variable_step(a_i, G, Di + sigma * (inst[r, QD] - Di), Ui)
            inst[r, ALPHA] = a
            d = a - a_i
            step[s] = d
            linear += (Di * a_i - 1.0) * d
            quadratic += Di * d * d
            code_axpy(sigma * d * yi, code, indptr, indices, data, cache_bounds,
                      cache_indices, cache_data, v, n_features, bias)
    return PGmax_new, PGmin_new, linear, quadratic


@njit(cache=True, nogil=True)
def scale_visit(order, records, step, m, gamma, l2_loss, inst, indptr, indices, data,
                cache_bounds, cache_indices, cache_data, w, n_features, bias):
    """After a threaded visit merged at `gamma` of its combined step (w += gamma * the
    parts' changes): its alphas moved back to alpha_old + gamma * step, but for those the
    step took to a bound (0, or C for the hinge loss), which stay there, w taking the rest
    of their step. Scaled, such an alpha would stay a little off its bound, and its
    projected gradient, then its whole gradient, would keep LIBLINEAR's stopping test
    from passing (on 4M rcv1-shaped rows, 46 outer iterations rather than 20)."""
    for s in range(m):
        d = step[s]
        if d == 0.0:
            continue
        r = records[s]
        a = inst[r, ALPHA]
        U = INF if l2_loss else inst[r, BOUND]
        if a == 0.0 or a == U:
            code_axpy((1.0 - gamma) * d * inst[r, Y], order[s], indptr, indices, data,
                      cache_bounds, cache_indices, cache_data, w, n_features, bias)
        else:
            inst[r, ALPHA] = min(max(a - (1.0 - gamma) * d, 0.0), U)


@njit(cache=True, nogil=True)
def visit_order_of(index, active, r0, n, cache_rows, cache_stride, cache_phase, rng,
                   order):
    """visit_order for a caller outside a kernel (the threaded visit)."""
    return visit_order(index, active, r0, n, cache_rows, cache_stride, cache_phase, rng,
                       order)


@njit(cache=True, nogil=True)
def active_first_of(order, kept, m, index):
    """active_first for a caller outside a kernel (the threaded visit)."""
    return active_first(order, kept, m, index)


@njit(cache=True, nogil=True)
def visit_block_lr(indptr, indices, data, n_features, bias, y, C, inst, r0, first, index,
                   active, cache_bounds, cache_indices, cache_data, cache_rows, rng,
                   n_sweeps, innereps, w, ctrl_c, cache_stride, cache_phase):
    """visit_block for -s 7: inst holds every row's dual_cd_lr record (built on the
    first visit, at LIBLINEAR's starting point, w += alpha_i y_i x_i), index[:active] the
    block's rows with C_i > 0, and each row visited solves its sub-problem by
    dual_cd_lr's inner Newton to `innereps`. Returns (active, Gmax, Newton steps): the
    largest |g'| at the current points of the block's sub-problems in the first sweep and
    their Newton steps, which LIBLINEAR's stopping test and inner tolerance read over all
    blocks; early once ctrl_c[0] is set."""
    n = len(indptr) - 1
    if first:
        active = rows_taking_part(C, index)
        for s in range(active):
            i = index[s]
            init_lr_row(inst, r0 + i, indptr, indices, data, i, n_features, bias, y[i], C[i],
                        0.0, w)
    order = np.empty(active + len(cache_rows), dtype=np.int64)
    Gmax_first = 0.0
    steps_first = 0
    for sweep in range(n_sweeps):
        m = visit_order(index, active, r0, n, cache_rows, cache_stride, cache_phase, rng,
                        order)
        Gmax = 0.0
        steps = 0
        for s in range(m):
            if ctrl_c[0]:
                return active, Gmax, steps
            code, r = row_at(order, s, m, r0, indptr, indices, data, cache_bounds,
                             cache_indices, cache_data, cache_rows, inst)
            g, inner, coef = lr_row_step(inst, r, code_dot(
                w, code, indptr, indices, data, cache_bounds, cache_indices, cache_data,
                n_features, bias), innereps)
            if code >= 0:
                Gmax = max(Gmax, g)
                steps += inner
            if inner > 0:
                code_axpy(coef, code, indptr, indices, data, cache_bounds, cache_indices,
                          cache_data, w, n_features, bias)
        if sweep == 0:
            Gmax_first = Gmax
            steps_first = steps
    return active, Gmax_first, steps_first


@njit(cache=True, nogil=True)
def visit_block_svr(indptr, indices, data, n_features, bias, y, C, p, l2_loss, inst, r0,
                    first, index, active, cache_bounds, cache_indices, cache_data,
                    cache_rows, rng, n_sweeps, Gmax_old, w, ctrl_c, cache_stride,
                    cache_phase):
    """visit_block for -s 12 / -s 13: inst holds every row's dual_cd_svr record (built on
    the first visit at beta = 0), and a block row at 0 or a bound whose violation lies
    beyond Gmax_old (the whole set's largest of the previous outer iteration) leaves the
    active list, as in dual_cd_svr. Returns (active, Gmax, Gnorm1): the largest and the
    sum of the violations of the block's active rows in the first sweep, from which
    LIBLINEAR's stopping test (Gnorm1 over all blocks against the first outer
    iteration's) and the next shrinking threshold are made; early once ctrl_c[0] is set."""
    n = len(indptr) - 1
    if first:
        active = rows_taking_part(C, index)
        for s in range(active):
            i = index[s]
            init_svr_row(inst, r0 + i, indptr, indices, data, i, n_features, bias, y[i],
                         C[i], l2_loss, 0.0, w)
    order = np.empty(active + len(cache_rows), dtype=np.int64)
    kept = np.empty(active + len(cache_rows), dtype=np.bool_)
    Gmax_first = 0.0
    Gnorm1_first = 0.0
    for sweep in range(n_sweeps):
        m = visit_order(index, active, r0, n, cache_rows, cache_stride, cache_phase, rng,
                        order)
        Gmax = 0.0
        Gnorm1 = 0.0
        for s in range(m):
            if ctrl_c[0]:
                return active, Gmax, Gnorm1
            code, r = row_at(order, s, m, r0, indptr, indices, data, cache_bounds,
                             cache_indices, cache_data, cache_rows, inst)
            kept[s] = True
            bi, Gp, Gn, Ui = svr_row_gradient(inst, r, code_dot(
                w, code, indptr, indices, data, cache_bounds, cache_indices, cache_data,
                n_features, bias), p, l2_loss)
            if code >= 0:
                violation, shrink = violation_or_shrink(bi, Gp, Gn, Ui, Gmax_old)
                if shrink:
                    kept[s] = False
                    continue
                Gmax = max(Gmax, violation)
                Gnorm1 += violation
            # a cached row is stepped whatever the threshold: its own block shrinks it
            nb = svr_step(bi, Gp, Gn, inst[r, H], Ui)
            if nb != bi:
                inst[r, BETA] = nb
                code_axpy(nb - bi, code, indptr, indices, data, cache_bounds,
                          cache_indices, cache_data, w, n_features, bias)
        active = active_first(order, kept, m, index)
        if sweep == 0:
            Gmax_first = Gmax
            Gnorm1_first = Gnorm1
    return active, Gmax_first, Gnorm1_first


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


@njit(cache=True, nogil=True)
def fill_cache_slot(indptr, indices, data, free, support, per_nonzero, row_bytes,
                    slot_bytes, out_indices, out_data, slot_start, write, bounds, rows):
    """The rows of a block that a cache slot of `slot_bytes` keeps: its rows with `free`
    set, then those with only `support`, each in row order, while their nonzeros
    (per_nonzero bytes each) and row_bytes a row fit. With write: their nonzeros copied
    to out_indices/out_data from slot_start on, row j's bounds to bounds[2j], bounds[2j+1]
    and its block row to rows[j]. Returns the number of rows kept (a first call without
    write sizes bounds and rows): no temporary of the block's size."""
    used = 0
    kept = 0
    z = slot_start
    for want_free in (True, False):
        for i in range(len(indptr) - 1):
            if free[i] != want_free or not support[i]:
                continue
            start = indptr[i]
            length = indptr[i + 1] - start
            cost = length * per_nonzero + row_bytes
            if used + cost > slot_bytes:
                return kept
            used += cost
            if write:
                # slices: numba copies them as blocks, twice as fast as an element loop
                bounds[2 * kept] = z
                out_indices[z:z + length] = indices[start:start + length]
                out_data[z:z + length] = data[start:start + length]
                z += length
                bounds[2 * kept + 1] = z
                rows[kept] = i
            kept += 1
    return kept
