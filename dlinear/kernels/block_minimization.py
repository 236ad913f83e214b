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
duals, built from the same pieces (visit_order, active_first, code_span, span_dot,
span_axpy). Each kernel picks a row's arrays (the block's or the cache's) in its own
loop, prefetch included: in a helper inlined with all those arrays, Numba counts their
references at every row (sweep_part says what that cost).
sweep_part takes the steps of a sweep (-s 1 / -s 3), on one thread on w itself, or, on
threads (in_process.block_duals.SvcDuals), a thread's share of the visit on its own copy
of w (part_of_visit: the share's order, its steps and its rows' place in the active
list), and scale_visit cuts a merged visit back.
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
from .sparse_ops import span_axpy, span_dot


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
def visit_order(index, active, r0, n, cache_rows, cache_stride, cache_phase, rng, order):
    """order[:m], returning m: the block's active rows index[:active] (block row i as
    i >= 0) and the cached rows j with j % cache_stride == cache_phase (as -1 - j), in one
    random order. The cache's holes (row -1) and its copies of the block's own rows (r0 ..
    r0 + n: the block has them) are skipped."""
    for s in range(active):
        order[s] = index[s]
    m = active
    for j in range(cache_phase, len(cache_rows), cache_stride):
        if cache_rows[j] >= 0 and (cache_rows[j] < r0 or cache_rows[j] >= r0 + n):
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
def code_span(code, indptr, cache_bounds):
    """(first, end) of the nonzeros of block row `code` >= 0 (in the block's indices and
    data) or of cached row -1 - code (in the cache's: cache_bounds read as an indptr at
    2j, cached row j is [bounds[2j], bounds[2j + 1]))."""
    if code >= 0:
        return np.int64(indptr[code]), np.int64(indptr[code + 1])
    j = -1 - code
    return np.int64(cache_bounds[2 * j]), np.int64(cache_bounds[2 * j + 1])


@njit(cache=True, nogil=True, inline="always")
def record_row(code, r0, cache_rows):
    """The row of the whole set (its record in inst) of block row `code` >= 0 of the
    block starting at r0, or of cached row -1 - code."""
    return r0 + code if code >= 0 else cache_rows[-1 - code]


@njit(cache=True, nogil=True, inline="always")
def svc_row_gradient(dot, code, r, inst, l2_loss, PGmax_old, PGmin_old):
    """(yi, alpha_i, D_ii, U_i, G, PG, shrunk) of a visited row with x.w = dot: a block
    row (code >= 0) beyond the thresholds is shrunk; a cached row is stepped whatever the
    thresholds (its own block shrinks it), with its projected gradient."""
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
    visit the block's records are built and w += sum alpha_i y_i x_i. Each sweep is
    sweep_part's over the whole visit, on w itself. Returns (active, PGmax, PGmin): the
    block's active count after the visit and the projected-gradient bounds of its rows
    in the first sweep (LIBLINEAR's stopping test reads them over all blocks); early,
    within a row's step, once ctrl_c[0] is set (a Ctrl-C: dlinear.threads.stop_flag),
    with the block's state not to be used again."""
    n = len(indptr) - 1
    if first:
        init_records(indptr, indices, data, n_features, bias, y, C, l2_loss, alpha,
                     inst[r0:r0 + n], 0, n, w)
        active = rows_taking_part(C, index)
    if n_sweeps == 0:       # the records only (on threads, the sweeps follow there)
        return active, -INF, INF
    size = active + len(cache_rows)
    order = np.empty(size, dtype=np.int64)
    kept = np.empty(size, dtype=np.bool_)
    step = np.empty(size)
    records = np.empty(size, dtype=np.int64)
    PGmax_first = -INF
    PGmin_first = INF
    for sweep in range(n_sweeps):
        m = visit_order(index, active, r0, n, cache_rows, cache_stride, cache_phase, rng,
                        order)
        PGmax_new, PGmin_new, _, _ = sweep_part(
            order, 0, m, r0, indptr, indices, data, cache_bounds, cache_indices,
            cache_data, cache_rows, inst, n_features, bias, l2_loss, PGmax_old, PGmin_old,
            w, w, 1.0, step, kept, records, ctrl_c)
        if ctrl_c[0]:
            return active, PGmax_new, PGmin_new
        active = active_first(order, kept, m, index)
        if sweep == 0:
            PGmax_first = PGmax_new
            PGmin_first = PGmin_new
    return active, PGmax_first, PGmin_first


@njit(cache=True, nogil=True)
def sweep_part(order, lo, hi, r0, indptr, indices, data, cache_bounds, cache_indices,
               cache_data, cache_rows, inst, n_features, bias, l2_loss, PGmax_old,
               PGmin_old, w, v, sigma, step, kept, records, ctrl_c):
    """One-variable dual CD steps on the visit's rows order[lo:hi] (block rows and cached
    rows, as visit_order codes them), as CoCoA+'s local sub-problem (kernels.local_dual_cd:
    curvature and gradient through the part's copy v = w + sigma * its change of w,
    written into `v`; `w` only read). With sigma = 1 and v = w (one thread), these are
    visit_block's plain steps on w. Sets kept[s] (False: a block row shrunk), step[s] (the
    change of its alpha) and records[s] (its record row) for s in lo..hi. Returns (PGmax,
    PGmin, linear, quadratic): the projected-gradient bounds of the block rows, and the
    dual's change from the steps apart from its w terms, linear + quadratic / 2. Early
    once ctrl_c[0] is set.

    Which arrays hold a row (the block's or the cache's) is decided here, in the loop,
    and not in inlined helpers that take all of them: Numba then counts references of
    those arrays at each row (atomic operations, contended between the visit's threads),
    which made a step 1.6x slower on one thread (245 against 150 ns a row of 75
    nonzeros) and more on two."""
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
        # the next row's nonzeros and record, and the bounds of the one after
        if s + 2 < hi:
            c = order[s + 2]
            if c >= 0:
                prefetch_span(indptr, c, c + 2)
            else:
                prefetch_span(cache_bounds, 2 * (-1 - c), 2 * (-1 - c) + 2)
        if s + 1 < hi:
            c = order[s + 1]
            q0, q1 = code_span(c, indptr, cache_bounds)
            if c >= 0:
                prefetch_span(indices, q0, q1)
                prefetch_span(data, q0, q1)
            else:
                prefetch_span(cache_indices, q0, q1)
                prefetch_span(cache_data, q0, q1)
            prefetch_row_read(inst, record_row(c, r0, cache_rows), inst.shape[1] * 8)
        code = order[s]
        r = record_row(code, r0, cache_rows)
        records[s] = r
        p0, p1 = code_span(code, indptr, cache_bounds)
        if code >= 0:
            dot = span_dot(v, indices, data, p0, p1, n_features, bias)
        else:
            dot = span_dot(v, cache_indices, cache_data, p0, p1, n_features, bias)
        yi, a_i, Di, Ui, G, PG, shrink = svc_row_gradient(dot, code, r, inst, l2_loss,
                                                          PGmax_old, PGmin_old)
        if shrink:
            kept[s] = False
            continue
        if code >= 0:
            if PG > PGmax_new:
                PGmax_new = PG
            if PG < PGmin_new:
                PGmin_new = PG
        if abs(PG) > 1.0e-12:
            qd = inst[r, QD] if sigma == 1.0 else Di + sigma * (inst[r, QD] - Di)
            a = one_variable_step(a_i, G, qd, Ui)
            inst[r, ALPHA] = a
            d = a - a_i
            step[s] = d
            linear += (Di * a_i - 1.0) * d
            quadratic += Di * d * d
            if code >= 0:
                span_axpy(sigma * d * yi, indices, data, p0, p1, v, n_features, bias)
            else:
                span_axpy(sigma * d * yi, cache_indices, cache_data, p0, p1, v, n_features,
                          bias)
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
            code = order[s]
            p0, p1 = code_span(code, indptr, cache_bounds)
            coef = (1.0 - gamma) * d * inst[r, Y]
            if code >= 0:
                span_axpy(coef, indices, data, p0, p1, w, n_features, bias)
            else:
                span_axpy(coef, cache_indices, cache_data, p0, p1, w, n_features, bias)
        else:
            inst[r, ALPHA] = min(max(a - (1.0 - gamma) * d, 0.0), U)


@njit(cache=True, nogil=True)
def part_of_visit(k, K, index, active, n, cache_rows, cache_stride, cache_phase, rng, lo,
                  regrouped, order, r0, indptr, indices, data, cache_bounds, cache_indices,
                  cache_data, inst, n_features, bias, l2_loss, PGmax_old, PGmin_old, w, v,
                  sigma, step, kept, records, ctrl_c):
    """Part k of K of a sweep of a visit on threads (in_process.block_duals.SvcDuals),
    from its order to its rows' new place in the active list, so that no step of the
    visit but the merge is serial (a visit's order and active list made on one thread
    took 0.9 s of a 15 s fit of 4M rcv1-shaped rows, a core idle). The block's active
    rows index[s] with s % K == k and the cached rows visit_order would take whose turn
    among them is k modulo K (holes and the block's own rows skipped) are written at
    order[lo:] and shuffled with the part's own `rng`, then swept (sweep_part, from `v`,
    its copy of w; step, kept and records set from lo on, step 0 past its rows up to the
    next part's place); then its block rows are written at regrouped[lo:], those kept
    first. Returns (its rows, its block rows kept, PGmax, PGmin, linear, quadratic)."""
    m = 0
    for s in range(k, active, K):
        order[lo + m] = index[s]
        m += 1
    block_rows = m
    end = lo + block_rows
    for j in range(cache_phase + cache_stride * k, len(cache_rows), cache_stride * K):
        end += 1
        if cache_rows[j] >= 0 and (cache_rows[j] < r0 or cache_rows[j] >= r0 + n):
            order[lo + m] = -1 - j
            m += 1
    shuffle_prefix(rng, order[lo:lo + m], m)
    PGmax, PGmin, linear, quadratic = sweep_part(
        order, lo, lo + m, r0, indptr, indices, data, cache_bounds, cache_indices,
        cache_data, cache_rows, inst, n_features, bias, l2_loss, PGmax_old, PGmin_old, w,
        v, sigma, step, kept, records, ctrl_c)
    for s in range(lo + m, end):
        step[s] = 0.0
    t = lo
    for s in range(lo, lo + m):
        if order[s] >= 0 and kept[s]:
            regrouped[t] = order[s]
            t += 1
    n_kept = t - lo
    for s in range(lo, lo + m):
        if order[s] >= 0 and not kept[s]:
            regrouped[t] = order[s]
            t += 1
    return m, n_kept, PGmax, PGmin, linear, quadratic


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
            # the next row's nonzeros and record, and the bounds of the one after
            if s + 2 < m:
                c = order[s + 2]
                if c >= 0:
                    prefetch_span(indptr, c, c + 2)
                else:
                    prefetch_span(cache_bounds, 2 * (-1 - c), 2 * (-1 - c) + 2)
            if s + 1 < m:
                c = order[s + 1]
                q0, q1 = code_span(c, indptr, cache_bounds)
                if c >= 0:
                    prefetch_span(indices, q0, q1)
                    prefetch_span(data, q0, q1)
                else:
                    prefetch_span(cache_indices, q0, q1)
                    prefetch_span(cache_data, q0, q1)
                prefetch_row_read(inst, record_row(c, r0, cache_rows), inst.shape[1] * 8)
            code = order[s]
            r = record_row(code, r0, cache_rows)
            p0, p1 = code_span(code, indptr, cache_bounds)
            if code >= 0:
                dot = span_dot(w, indices, data, p0, p1, n_features, bias)
            else:
                dot = span_dot(w, cache_indices, cache_data, p0, p1, n_features, bias)
            g, inner, coef = lr_row_step(inst, r, dot, innereps)
            if code >= 0:
                Gmax = max(Gmax, g)
                steps += inner
            if inner > 0:
                if code >= 0:
                    span_axpy(coef, indices, data, p0, p1, w, n_features, bias)
                else:
                    span_axpy(coef, cache_indices, cache_data, p0, p1, w, n_features, bias)
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
            # the next row's nonzeros and record, and the bounds of the one after
            if s + 2 < m:
                c = order[s + 2]
                if c >= 0:
                    prefetch_span(indptr, c, c + 2)
                else:
                    prefetch_span(cache_bounds, 2 * (-1 - c), 2 * (-1 - c) + 2)
            if s + 1 < m:
                c = order[s + 1]
                q0, q1 = code_span(c, indptr, cache_bounds)
                if c >= 0:
                    prefetch_span(indices, q0, q1)
                    prefetch_span(data, q0, q1)
                else:
                    prefetch_span(cache_indices, q0, q1)
                    prefetch_span(cache_data, q0, q1)
                prefetch_row_read(inst, record_row(c, r0, cache_rows), inst.shape[1] * 8)
            code = order[s]
            r = record_row(code, r0, cache_rows)
            p0, p1 = code_span(code, indptr, cache_bounds)
            kept[s] = True
            if code >= 0:
                dot = span_dot(w, indices, data, p0, p1, n_features, bias)
            else:
                dot = span_dot(w, cache_indices, cache_data, p0, p1, n_features, bias)
            bi, Gp, Gn, Ui = svr_row_gradient(inst, r, dot, p, l2_loss)
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
                if code >= 0:
                    span_axpy(nb - bi, indices, data, p0, p1, w, n_features, bias)
                else:
                    span_axpy(nb - bi, cache_indices, cache_data, p0, p1, w, n_features,
                              bias)
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
def choose_cache_rows(indptr, free, support, per_nonzero, row_bytes, slot_bytes,
                      slot_start, write, r0, bounds, rows):
    """The rows of a block (rows r0..) that a cache slot of `slot_bytes` keeps: its rows
    with `free` set, then those with only `support`, each in row order, while their
    nonzeros (per_nonzero bytes each) and row_bytes a row fit. With write: cached row j's
    bounds in the slot's arrays (from slot_start on) in bounds[2j], bounds[2j + 1] and
    its row number in rows[j] (copy_cache_rows then copies the nonzeros). Returns (the
    number of rows kept, how many of the first of them are `rows`): a first call without
    write sizes bounds and rows and, given the rows the slot holds, tells how much of it
    stays as it is (a row's nonzeros never change). No temporary of the block's size."""
    used = 0
    kept = 0
    same = 0
    z = slot_start
    for want_free in (True, False):
        for i in range(len(indptr) - 1):
            if free[i] != want_free or not support[i]:
                continue
            length = indptr[i + 1] - indptr[i]
            cost = length * per_nonzero + row_bytes
            if used + cost > slot_bytes:
                return kept, same
            used += cost
            if write:
                bounds[2 * kept] = z
                z += length
                bounds[2 * kept + 1] = z
                rows[kept] = r0 + i
            elif same == kept and kept < len(rows) and rows[kept] == r0 + i:
                same += 1
            kept += 1
    return kept, same


@njit(cache=True, nogil=True)
def copy_cache_rows(indptr, indices, data, r0, bounds, rows, j0, j1, out_indices,
                    out_data):
    """The nonzeros of cached rows j0..j1 (choose_cache_rows' bounds and rows) copied
    from their block (rows r0..) into the slot's arrays."""
    for j in range(j0, j1):
        start = indptr[rows[j] - r0]
        z0, z1 = bounds[2 * j], bounds[2 * j + 1]
        # slices: numba copies them as blocks, twice as fast as an element loop
        out_indices[z0:z1] = indices[start:start + z1 - z0]
        out_data[z0:z1] = data[start:start + z1 - z0]
