"""Dual CD on several threads that write no shared memory during a round: the local
sub-problems of CoCoA+ (Ma, Smith, Jaggi et al., "Adding vs. Averaging in Distributed
Primal-Dual Optimization", ICML 2015), run by the threads of one process as Snap ML's
lower level does (Dünner et al., NeurIPS 2018).

A round's variables are split into K parts. Part k keeps its own copy v_k of w, set to
the round's w when the part starts, and takes the one-variable steps of its local
sub-problem: the dual with the other parts' variables fixed and the coupling term
w.A dalpha + sigma/2 ||A dalpha||^2 (column i of A is y_i x_i), so a step on alpha_i
has curvature sigma ||x_i||^2 (+ D_ii) and gradient y_i x_i.v_k with
v_k = w + sigma * (the part's change of w). Only v_k is written: no line of w moves
between the cores' caches (on a shared w, PASSCoDe's additions to the frequent features'
weights cost more than the steps; BENCHMARKS.md, "Dual CD on threads that share no
written memory"). At the round's end `merge_parts` adds the parts' changes,
w += sum_k (v_k - w) / sigma, in part order. With sigma = K ("adding" with CoCoA+'s safe
sigma' = K) the K parts' steps together never increase the dual objective; the model
depends on the seed and K only, never on the threads' timing.

-s 1 / -s 3 take a smaller sigma when the parts' changes of w are nearly orthogonal:
rho = ||sum_k dw_k||^2 / sum_k ||dw_k||^2 (between 1 and K) is measured at each merge
and the next round's sigma is rho, within [1, K]. A round whose steps added up beyond
its sigma is cut back to the fraction gamma of its combined step that minimizes the
(quadratic) dual along it (`safe_fraction`, `scale_round`), so no round increases the
dual objective.
"""
import numpy as np
from numba import njit

from .dual_cd_lr import A1, A2, XTX, YC, one_variable_newton, store_solution
from .dual_cd_svc import (ALPHA, BOUND, INF, QD, Y, gradient_parts, one_variable_step,
                          projected_gradient)
from .sparse_ops import prefetch_visit, row_axpy, row_dot


@njit(cache=True, nogil=True)
def local_sweep_part(indptr, indices, data, n_features, bias, l2_loss, inst, index, lo, hi,
                     PGmax_old, PGmin_old, w, v, sigma, step, ctrl_c):
    """-s 1 / -s 3: the local steps on index[lo:hi] from v = w (written into `v`, the
    part's own copy; `w` is only read); step[s] = the change of the alpha at index[s].
    A variable shrunk by the bounds PGmax_old / PGmin_old moves to the end of the part.
    Returns (kept, PGmax_new, PGmin_new, linear, quadratic): the dual's change from the
    part's steps, apart from its w terms, is linear + quadratic / 2 (D_ii's terms). Early once ctrl_c[0] is set (a Ctrl-C: dlinear.threads.stop_flag)."""
    for j in range(len(w)):
        v[j] = w[j]
    for s in range(lo, hi):
        step[s] = 0.0
    linear = 0.0
    quadratic = 0.0
    PGmax_new = -INF
    PGmin_new = INF
    end = hi
    s = lo
    while s < end:
        if ctrl_c[0]:
            break
        prefetch_visit(index, s, end, indptr, indices, data, inst)
        i = index[s]
        yi = inst[i, Y]
        a_i, Di, Ui = gradient_parts(inst, i, l2_loss)
        G = yi * row_dot(v, indptr, indices, data, i, n_features, bias) - 1.0 + a_i * Di
        PG, shrink = projected_gradient(G, a_i, Ui, PGmax_old, PGmin_old)
        if shrink:
            end -= 1
            index[s], index[end] = index[end], index[s]
            # as dual_cd_svc: the row the next shrink swaps in is asked for now
            if end > s + 1:
                prefetch_visit(index, end - 2, end, indptr, indices, data, inst)
            continue
        if PG > PGmax_new:
            PGmax_new = PG
        if PG < PGmin_new:
            PGmin_new = PG
        if abs(PG) > 1.0e-12:
            a = one_variable_step(a_i, G, Di + sigma * (inst[i, QD] - Di), Ui)
            inst[i, ALPHA] = a
            d = a - a_i
            step[s] = d
            linear += (Di * a_i - 1.0) * d
            quadratic += Di * d * d
            row_axpy(sigma * d * yi, indptr, indices, data, i, v, n_features, bias)
        s += 1
    return end - lo, PGmax_new, PGmin_new, linear, quadratic


@njit(cache=True, nogil=True)
def lr_local_sweep_part(indptr, indices, data, n_features, bias, inst, index, lo, hi,
                        innereps, w, v, sigma, ctrl_c):
    """-s 7: the local sub-problems of index[lo:hi] from v = w (written into `v`).
    Returns (largest |g'(z)| at the sub-problems' current points, Newton steps). Early once ctrl_c[0] is set (a Ctrl-C: dlinear.threads.stop_flag)."""
    for j in range(len(w)):
        v[j] = w[j]
    Gmax = 0.0
    newton_iter = 0
    for s in range(lo, hi):
        if ctrl_c[0]:
            break
        prefetch_visit(index, s, hi, indptr, indices, data, inst)
        i = index[s]
        yc = inst[i, YC]
        yi = 1.0 if yc > 0.0 else -1.0
        Ci = abs(yc)
        b = yi * row_dot(v, indptr, indices, data, i, n_features, bias)
        first_gp, z, sign, inner = one_variable_newton(sigma * inst[i, XTX], b, inst[i, A1],
                                                       inst[i, A2], Ci, innereps)
        if abs(first_gp) > Gmax:
            Gmax = abs(first_gp)
        newton_iter += inner
        if inner > 0:
            row_axpy(sigma * store_solution(inst, i, z, sign, Ci) * yi, indptr, indices,
                     data, i, v, n_features, bias)
    return Gmax, newton_iter


@njit(cache=True, nogil=True)
def merge_parts(w, copies, n_parts, sigma):
    """w += sum over the parts k < n_parts of (copies[k] - w) / sigma, in part order."""
    for j in range(len(w)):
        wj = w[j]
        change = 0.0
        for k in range(n_parts):
            change += copies[k, j] - wj
        w[j] = wj + change / sigma


@njit(cache=True, nogil=True)
def round_terms(w, copies, n_parts, sigma):
    """(w.dW, ||dW||^2, sum_k ||dw_k||^2) of a round, dw_k = (copies[k] - w) / sigma its
    parts' changes of w and dW their sum."""
    w_dW = 0.0
    dW2 = 0.0
    parts2 = 0.0
    for j in range(len(w)):
        wj = w[j]
        change = 0.0
        for k in range(n_parts):
            d = (copies[k, j] - wj) / sigma
            change += d
            parts2 += d * d
        w_dW += wj * change
        dW2 += change * change
    return w_dW, dW2, parts2


@njit(cache=True, nogil=True)
def scale_round(inst, index, step, lo, hi, gamma, l2_loss):
    """The round's alphas (positions lo:hi) moved back to alpha_old + gamma * step."""
    for s in range(lo, hi):
        d = step[s]
        if d != 0.0:
            i = index[s]
            a = inst[i, ALPHA] - (1.0 - gamma) * d
            U = INF if l2_loss else inst[i, BOUND]
            inst[i, ALPHA] = min(max(a, 0.0), U)


def safe_fraction(w_dW, dW2, linear, quadratic):
    """gamma in (0, 1] minimizing the dual along the round's combined step
    (w.dW + linear) gamma + (||dW||^2 + quadratic) gamma^2 / 2: 1 when the parts' sigma
    bounded the coupling, less when their steps added up beyond it."""
    curvature = dW2 + quadratic
    if curvature <= 0.0:
        return 1.0
    return min(1.0, max(0.0, -(w_dW + linear) / curvature))


def part_copies(n_parts, n_weights):
    """The parts' own copies of w, one row each (rows n_weights * 8 bytes apart: no
    cache line is shared between two parts)."""
    return np.empty((n_parts, n_weights))
