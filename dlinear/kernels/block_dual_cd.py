"""One round of the block-diagonal (CoCoA+ / BDA) dual CD on one block of rows, for the
L1-/L2-loss SVC dual (LIBLINEAR -s 3 / -s 1; the dual is written in dual_cd_svc.py).

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
"""
import numpy as np
from numba import njit

from .dual_cd_svc import one_variable_step
from .rng import shuffle_prefix
from .sparse_ops import row_axpy, row_dot, row_sq_norm

INF = np.inf

# The round's statistics of one block and class, reduced over blocks by
# solvers.partitioned_dual_cd.combine_stats: PG_MAX is a max, PG_MIN a min, the rest sums.
PG_MAX, PG_MIN, DUAL_PART, PRIMAL_LOSS, STEP_LINEAR, STEP_QUADRATIC = range(6)
N_STATS = 6


@njit(cache=True, nogil=True)
def squared_norms(indptr, data, bias):
    """||x_i||^2 of every row (with the bias column): the local passes' Q_ii without D_ii."""
    l = len(indptr) - 1
    out = np.empty(l)
    for i in range(l):
        out[i] = row_sq_norm(indptr, data, i, bias)
    return out


@njit(cache=True, nogil=True)
def block_round_svc(indptr, indices, data, n_features, bias, y, C, sq_norm, l2_loss,
                    alpha, w, sigma, n_passes, state, step, dw, stats):
    """`n_passes` random-order passes of one-variable CD on the block subproblem at the
    current global `w` (read only) and this block's `alpha` (read only). Writes the step
    into `step` (d, zeroed first), adds sum_i d_i y_i x_i into `dw` (which may already hold
    other parts' steps of the same block: the block is one subproblem), and fills or
    combines `stats` (see PG_MAX...): PG bounds, sum (D_ii alpha_i^2 / 2 - alpha_i), the
    primal loss sum C_i xi(y_i x_i.w) at the round's start, and the line search's scalars
    sum (D_ii alpha_i - 1) d_i and sum D_ii d_i^2. Rows with C_i <= 0 take no part."""
    l = len(indptr) - 1
    index = np.empty(l, dtype=np.int64)
    n = 0
    for i in range(l):
        step[i] = 0.0
        if C[i] > 0.0:
            index[n] = i
            n += 1
    margin = np.empty(l)          # y_i x_i.w, fixed during the round
    for p in range(n_passes):
        shuffle_prefix(state, index, n)
        for s in range(n):
            i = index[s]
            yi = y[i]
            if l2_loss:
                Di = 0.5 / C[i]
                Ui = INF
            else:
                Di = 0.0
                Ui = C[i]
            a0 = alpha[i]
            if p == 0:
                m = yi * row_dot(w, indptr, indices, data, i, n_features, bias)
                margin[i] = m
                G0 = m - 1.0 + Di * a0
                PG = G0
                if a0 == 0.0:
                    PG = min(G0, 0.0)
                elif a0 >= Ui:
                    PG = max(G0, 0.0)
                if PG > stats[PG_MAX]:
                    stats[PG_MAX] = PG
                if PG < stats[PG_MIN]:
                    stats[PG_MIN] = PG
                stats[DUAL_PART] += a0 * (0.5 * Di * a0 - 1.0)
                hinge = 1.0 - m
                if hinge > 0.0:
                    stats[PRIMAL_LOSS] += C[i] * (hinge * hinge if l2_loss else hinge)
            a = a0 + step[i]
            G = (margin[i] + sigma * yi * row_dot(dw, indptr, indices, data, i, n_features,
                                                  bias) - 1.0 + Di * a)
            if (a == 0.0 and G >= 0.0) or (a >= Ui and G <= 0.0) or abs(G) <= 1.0e-12:
                continue
            new = one_variable_step(a, G, sigma * sq_norm[i] + Di, Ui)
            if new != a:
                step[i] = new - a0
                row_axpy((new - a) * yi, indptr, indices, data, i, dw, n_features, bias)
    for s in range(n):
        i = index[s]
        d = step[i]
        if d != 0.0:
            Di = 0.5 / C[i] if l2_loss else 0.0
            stats[STEP_LINEAR] += (Di * alpha[i] - 1.0) * d
            stats[STEP_QUADRATIC] += Di * d * d
