"""One round of the block-diagonal (CoCoA+ / BDA) dual CD on one block of rows, for the
L1-/L2-loss SVC dual (LIBLINEAR -s 3 / -s 1; the dual is written in dual_cd_svc.py) and
the L1-/L2-loss SVR dual (-s 13 / -s 12; dual_cd_svr.py: y_i and alpha_i y_i become the
target and beta_i, the subproblem gains p |beta_i + d_i|), and the logistic regression
dual (-s 7; dual_cd_lr.py: the subproblem's one-variable Newton solve, with alpha_i and
C_i - alpha_i kept apart for precision).

The rows of a data set are split into K blocks. With w = sum_i alpha_i y_i x_i over all
rows, block k's subproblem in its own step d (Lee & Chang 2019; Ma et al. 2015) is

    min_d  sum_{i in k} [(y_i x_i.w - 1 + D_ii alpha_i) d_i + D_ii d_i^2 / 2]
           + sigma / 2 ||sum_{i in k} d_i y_i x_i||^2,    0 <= alpha_i + d_i <= U_i,

the dual with Q's off-block-diagonal part dropped and its block part scaled by sigma
(sigma = K: CoCoA+'s safe adding; sigma = 1: the block-diagonal approximation, whose
combined step then takes a line search). One-variable CD on it is the local solver's step
with the gradient at w + sigma dw (dw = sum d_i y_i x_i so far) and Q_ii = sigma ||x_i||^2
+ D_ii. In the first pass every row is visited once before its d_i moves, so that pass
also yields the exact projected gradient of the *global* dual at alpha (LIBLINEAR's
stopping quantity) and the primal loss at w, at no extra pass over the data.

A block is one or more CSR parts used where they lie (never joined into a copy): the
kernels find a row's part in `part_of` and the part's arrays by their addresses
(block_parts), and each pass visits ONE random permutation of all the block's rows. Visiting
the parts one after another, each in its own random order, is a cyclic order over the
parts and converges far slower, the more parts the slower (BENCHMARKS.md, "Time on the
677k rcv1-shaped set").
"""
import math

import numpy as np
from numba import carray, njit, types
from numba.extending import intrinsic

from .dual_cd_svc import one_variable_step
from .dual_cd_lr import one_variable_newton
from .dual_cd_svr import one_variable_step as svr_step
from .dual_cd_svr import violation as svr_violation
from .rng import shuffle_prefix
from .sparse_ops import row_axpy, row_dot, row_dot2, row_sq_norm

INF = np.inf

# The round's statistics of one block and class, reduced over blocks by
# solvers.partitioned_dual_cd.combine_stats: PG_MAX is a max, PG_MIN a min, the rest sums.
# VIOLATION is SVR's stopping measure (the 1-norm of the minimum-norm sub-gradient);
# for -s 7, PG_MAX is the largest |gradient| and INNER_STEPS counts Newton steps.
# ACTIVE and ROWS (-s 1, 3) count the rows left active by shrinking and all rows with C_i > 0.
(PG_MAX, PG_MIN, DUAL_PART, PRIMAL_LOSS, STEP_LINEAR, STEP_QUADRATIC, VIOLATION,
 INNER_STEPS, ACTIVE, ROWS) = range(10)
N_STATS = 10


def block_parts(parts):
    """(layout, part_of, arrays): the kernels' view of a block made of `parts` (objects
    with indptr int64, indices int32 and data float64 CSR arrays), without a copy.
    layout[q] = (addresses of part q's indptr, indices and data, len(indptr), nnz, its
    first block row) and part_of[row] = the row's part (int32); `arrays` are the arrays
    the addresses point into, which the caller keeps alive as long as it uses `layout`.

    Why addresses: Numba's typed lists would hand the kernel each part's arrays too, but
    three list look-ups (a C call and an atomic reference count each) per row visited made
    a round markedly slower (BENCHMARKS.md, "Time on the 677k rcv1-shaped set");
    an address turns into an array view with no owner and no counting (_row)."""
    arrays = []
    layout = np.zeros((len(parts), 6), dtype=np.int64)
    first = 0
    for q, p in enumerate(parts):
        indptr = np.ascontiguousarray(p.indptr, dtype=np.int64)
        indices = np.ascontiguousarray(p.indices, dtype=np.int32)
        data = np.ascontiguousarray(p.data, dtype=np.float64)
        arrays += [indptr, indices, data]
        layout[q] = (indptr.ctypes.data, indices.ctypes.data, data.ctypes.data, len(indptr),
                     len(data), first)
        first += len(indptr) - 1
    part_of = np.repeat(np.arange(len(parts), dtype=np.int32), layout[:, 3] - 1)
    return layout, part_of, arrays


def _pointer_to(dtype):
    @intrinsic
    def pointer(typingctx, address):
        """The integer `address` as a pointer to `dtype` items."""
        if not isinstance(address, types.Integer):
            return None
        sig = types.CPointer(dtype)(address)

        def codegen(context, builder, signature, args):
            value = context.cast(builder, args[0], signature.args[0], types.intp)
            return builder.inttoptr(value, context.get_value_type(signature.return_type))

        return sig, codegen

    return pointer


_int64_at = _pointer_to(types.int64)
_int32_at = _pointer_to(types.int32)
_float64_at = _pointer_to(types.float64)


@njit(cache=True, nogil=True, inline="always")
def _row(layout, part_of, g):
    """Block row g as (indptr, indices, data of its part, its row in the part): views
    made from block_parts' addresses (read only by the kernels)."""
    q = part_of[g]
    indptr = carray(_int64_at(layout[q, 0]), layout[q, 3])
    indices = carray(_int32_at(layout[q, 1]), layout[q, 4])
    data = carray(_float64_at(layout[q, 2]), layout[q, 4])
    return indptr, indices, data, g - layout[q, 5]


@njit(cache=True, nogil=True)
def squared_norms(indptr, data, bias):
    """||x_i||^2 of every row (with the bias column): the local passes' Q_ii without D_ii."""
    l = len(indptr) - 1
    out = np.empty(l)
    for i in range(l):
        out[i] = row_sq_norm(indptr, data, i, bias)
    return out


# Per-row constants of the SVC block kernel packed in one 32-byte record (y_i, C_i,
# ||x_i||^2, and the round's margin y_i x_i.w): rows visited in random order then cost one
# cache miss for them instead of four, as in dual_cd_svc.
REC_Y, REC_C, REC_SQ, REC_MARGIN = range(4)


def svc_records(y, C, sq_norm):
    """The (rows, 4) records block_round_svc reads (REC_Y...)."""
    rec = np.zeros((len(y), 4))
    rec[:, REC_Y] = y
    rec[:, REC_C] = C
    rec[:, REC_SQ] = sq_norm
    return rec


@njit(cache=True, nogil=True)
def block_round_svc(layout, part_of, n_features, bias, rec, l2_loss, alpha, w, sigma,
                    n_passes, state, step, dw, stats, index, n_active, pg_max_old,
                    pg_min_old, full_stats):
    """`n_passes` random-order passes of one-variable CD on the block subproblem at the
    current global `w` (read only) and this block's `alpha` (read only), over the rows
    index[:n_active] in one random order across all the block's parts (block_parts'
    layout and part_of; `index` holds the block's rows with C_i > 0 and persists across
    rounds; `rec` their svc_records). Writes the step into `step` (d, zeroed first), adds
    sum_i d_i y_i x_i into `dw`, and fills or combines `stats` (see PG_MAX...):
    PG bounds, sum (D_ii alpha_i^2 / 2 - alpha_i), the primal loss sum C_i xi(y_i x_i.w)
    at the round's start, the line search's scalars sum (D_ii alpha_i - 1) d_i and
    sum D_ii d_i^2, and the active and eligible row counts.

    Shrinking (Hsieh et al. 2008, Sec. 3.2) with the *global* bounds of the previous
    round: a row at a bound whose gradient at the round's start lies beyond
    pg_max_old / pg_min_old leaves the active prefix of `index` (LIBLINEAR's test, on the
    exact gradient of the whole dual at this round's alpha). Both bounds infinite (the
    first round, or the driver confirming convergence) make every row active again.
    Shrunk rows add nothing to PRIMAL_LOSS unless `full_stats` (one dot product each).
    Returns the new number of active rows."""
    l = len(part_of)
    n_all = len(index)
    n = n_active
    if pg_max_old == INF and pg_min_old == -INF:
        n = n_all
    for i in range(l):            # the dual part of the objective needs every row
        step[i] = 0.0
        a0 = alpha[i]
        Ci = rec[i, REC_C]
        if a0 != 0.0 and Ci > 0.0:
            Di = 0.5 / Ci if l2_loss else 0.0
            stats[DUAL_PART] += a0 * (0.5 * Di * a0 - 1.0)
    for p in range(n_passes):
        shuffle_prefix(state, index, n)
        s = 0
        while s < n:
            i = index[s]
            indptr, indices, data, r = _row(layout, part_of, i)
            yi = rec[i, REC_Y]
            Ci = rec[i, REC_C]
            if l2_loss:
                Di = 0.5 / Ci
                Ui = INF
            else:
                Di = 0.0
                Ui = Ci
            a0 = alpha[i]
            if p == 0:
                # the round's w and this block's step so far, in one walk over the row
                m, v = row_dot2(w, dw, indptr, indices, data, r, n_features, bias)
                m *= yi
                G0 = m - 1.0 + Di * a0
                PG = G0
                if a0 == 0.0:
                    if G0 > pg_max_old:
                        n -= 1
                        index[s], index[n] = index[n], index[s]
                        continue
                    PG = min(G0, 0.0)
                elif a0 >= Ui:
                    if G0 < pg_min_old:
                        n -= 1
                        index[s], index[n] = index[n], index[s]
                        continue
                    PG = max(G0, 0.0)
                rec[i, REC_MARGIN] = m
                if PG > stats[PG_MAX]:
                    stats[PG_MAX] = PG
                if PG < stats[PG_MIN]:
                    stats[PG_MIN] = PG
                hinge = 1.0 - m
                if hinge > 0.0:
                    stats[PRIMAL_LOSS] += Ci * (hinge * hinge if l2_loss else hinge)
                a = a0
                G = m + sigma * yi * v - 1.0 + Di * a
            else:
                a = a0 + step[i]
                G = (rec[i, REC_MARGIN] + sigma * yi * row_dot(dw, indptr, indices, data, r,
                                                               n_features, bias)
                     - 1.0 + Di * a)
            s += 1
            if (a == 0.0 and G >= 0.0) or (a >= Ui and G <= 0.0) or abs(G) <= 1.0e-12:
                continue
            new = one_variable_step(a, G, sigma * rec[i, REC_SQ] + Di, Ui)
            if new != a:
                step[i] = new - a0
                row_axpy((new - a) * yi, indptr, indices, data, r, dw, n_features, bias)
    if full_stats:
        for s in range(n, n_all):
            i = index[s]
            indptr, indices, data, r = _row(layout, part_of, i)
            hinge = 1.0 - rec[i, REC_Y] * row_dot(w, indptr, indices, data, r, n_features,
                                                  bias)
            if hinge > 0.0:
                stats[PRIMAL_LOSS] += rec[i, REC_C] * (hinge * hinge if l2_loss else hinge)
    for s in range(n):
        i = index[s]
        d = step[i]
        if d != 0.0:
            Di = 0.5 / rec[i, REC_C] if l2_loss else 0.0
            stats[STEP_LINEAR] += (Di * alpha[i] - 1.0) * d
            stats[STEP_QUADRATIC] += Di * d * d
    stats[ACTIVE] += n
    stats[ROWS] += n_all
    return n


@njit(cache=True, nogil=True)
def block_round_svr(layout, part_of, n_features, bias, y, C,
                    sq_norm, l2_loss, p, beta, w, sigma, n_passes, state, step, dw, stats):
    """block_round_svc for the SVR dual (w = sum beta_i x_i). The statistics: VIOLATION,
    DUAL_PART = sum (lambda_i beta_i^2 / 2 - y_i beta_i + p |beta_i|), PRIMAL_LOSS, and for
    the line search STEP_LINEAR = sum ((lambda_i beta_i - y_i) d_i + p (|beta_i + d_i| -
    |beta_i|)) and STEP_QUADRATIC = sum lambda_i d_i^2: p |.| is convex, so along the step
    it lies below the chord, and the quadratic through these bounds the dual from above
    (minimising it still descends)."""
    l = len(part_of)
    index = np.empty(l, dtype=np.int64)
    n = 0
    for i in range(l):
        step[i] = 0.0
        if C[i] > 0.0:
            index[n] = i
            n += 1
    value = np.empty(l)          # x_i.w, fixed during the round
    for ps in range(n_passes):
        shuffle_prefix(state, index, n)
        for s in range(n):
            i = index[s]
            indptr, indices, data, r = _row(layout, part_of, i)
            if l2_loss:
                lam = 0.5 / C[i]
                Ui = INF
            else:
                lam = 0.0
                Ui = C[i]
            b0 = beta[i]
            if ps == 0:
                v = row_dot(w, indptr, indices, data, r, n_features, bias)
                value[i] = v
                G0 = v - y[i] + lam * b0
                stats[VIOLATION] += svr_violation(b0, G0 + p, G0 - p, Ui)
                stats[DUAL_PART] += b0 * (0.5 * lam * b0 - y[i]) + p * abs(b0)
                excess = abs(v - y[i]) - p
                if excess > 0.0:
                    stats[PRIMAL_LOSS] += C[i] * (excess * excess if l2_loss else excess)
            b = b0 + step[i]
            G = (value[i] + sigma * row_dot(dw, indptr, indices, data, r, n_features, bias)
                 - y[i] + lam * b)
            nb = svr_step(b, G + p, G - p, sigma * sq_norm[i] + lam, Ui)
            if nb != b:
                step[i] = nb - b0
                row_axpy(nb - b, indptr, indices, data, r, dw, n_features, bias)
    for s in range(n):
        i = index[s]
        d = step[i]
        if d != 0.0:
            lam = 0.5 / C[i] if l2_loss else 0.0
            b0 = beta[i]
            stats[STEP_LINEAR] += (lam * b0 - y[i]) * d + p * (abs(b0 + d) - abs(b0))
            stats[STEP_QUADRATIC] += lam * d * d


@njit(cache=True, nogil=True, inline="always")
def _entropy(a1, a2):
    return a1 * math.log(a1) + a2 * math.log(a2)


@njit(cache=True, nogil=True)
def block_round_lr(layout, part_of, n_features, bias, y, C,
                   sq_norm, a1, a2, w, sigma, n_passes, innereps, state, step, dw, stats):
    """block_round_svc for the logistic regression dual: alpha_i = a1[i] and C_i - alpha_i
    = a2[i] (read only), the step d on alpha_i. Statistics: PG_MAX = max |y_i x_i.w +
    log(alpha_i / (C_i - alpha_i))| (the dual's gradient at the round's start, as the -s 7
    kernels measure it), DUAL_PART = sum of the entropy terms less C_i log C_i,
    PRIMAL_LOSS = sum C_i log(1 + exp(-y_i x_i.w)), STEP_LINEAR = the entropy's change
    over the full step (its chord bounds it along the step), INNER_STEPS."""
    l = len(part_of)
    index = np.empty(l, dtype=np.int64)
    n = 0
    for i in range(l):
        step[i] = 0.0
        if C[i] > 0.0:
            index[n] = i
            n += 1
    margin = np.empty(l)
    for ps in range(n_passes):
        shuffle_prefix(state, index, n)
        for s in range(n):
            i = index[s]
            indptr, indices, data, r = _row(layout, part_of, i)
            yi = y[i]
            Ci = C[i]
            if ps == 0:
                m = yi * row_dot(w, indptr, indices, data, r, n_features, bias)
                margin[i] = m
                g = abs(m + math.log(a1[i] / a2[i]))
                if g > stats[PG_MAX]:
                    stats[PG_MAX] = g
                stats[DUAL_PART] += _entropy(a1[i], a2[i]) - Ci * math.log(Ci)
                # C log(1 + exp(-m)), stable for either sign of m
                stats[PRIMAL_LOSS] += Ci * (max(-m, 0.0) + math.log1p(math.exp(-abs(m))))
            z1 = a1[i] + step[i]
            z2 = a2[i] - step[i]
            b = margin[i] + sigma * yi * row_dot(dw, indptr, indices, data, r, n_features,
                                                 bias)
            _, z, sign, inner = one_variable_newton(sigma * sq_norm[i], b, z1, z2, Ci,
                                                    innereps)
            stats[INNER_STEPS] += inner
            if inner > 0:
                new1 = z if sign > 0.0 else Ci - z
                # keep the side that was solved for exact; the step is on alpha_i
                if sign > 0.0:
                    step[i] = z - a1[i]
                else:
                    step[i] = a2[i] - z
                row_axpy((new1 - z1) * yi, indptr, indices, data, r, dw, n_features, bias)
    for s in range(n):
        i = index[s]
        d = step[i]
        if d != 0.0:
            stats[STEP_LINEAR] += _entropy(a1[i] + d, a2[i] - d) - _entropy(a1[i], a2[i])
