"""Dual CD for -s 1 / -s 3 on several threads: the two schemes of the literature.

- Asynchronous (PASSCoDe, Hsieh, Yu & Dhillon, ICML 2015): each thread runs the
  one-variable steps of Hsieh et al. 2008 on its own share of the active set and reads
  and writes the shared w without locks. A step reads a w that other threads are
  changing. Wild: two threads adding to the same w_j at the same moment can lose one of
  the additions, so the maintained w drifts from sum_i alpha_i y_i x_i; the driver
  rebuilds w from alpha (`w_from_alpha`) before it accepts a stop, so the returned w is
  the one of the returned alpha. Atomic: each addition to w_j is one atomic
  read-add-write (`atomic_add`), so none is lost. `async_sweep_part` is one thread's
  share of a sweep; the threads come from dlinear.threads.PassPool.
- Gradients of a block of candidates in parallel, updates serial (Chiang, Lee & Lin,
  KDD 2016; liblinear-multicore): `block_parallel_dual_cd_svc`, one Numba kernel whose
  gradient loop is a `prange` (numba.set_num_threads sets its threads). The candidates'
  gradients are computed from the w at the block's start; only those whose projected
  gradient is not small are stepped, one after another, each with a gradient computed
  again from the current w. The model does not depend on the number of threads.

Both keep LIBLINEAR's stop: max PG - min PG <= eps with both within eps over a sweep,
confirmed on the full set.
"""
import numpy as np
from numba import njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic

from .dual_cd_svc import (ALPHA, BOUND, INF, QD, Y, gradient_parts, init_dual_state,
                          init_records, one_variable_step, projected_gradient)
from .rng import seed_state, shuffle_prefix
from .sparse_ops import prefetch_visit, row_axpy, row_dot


@intrinsic
def atomic_add(typingctx, array, i, value):
    """array[i] += value as one atomic operation (LLVM's atomicrmw fadd; array float64,
    1-d, contiguous)."""
    def codegen(context, builder, signature, args):
        array_type = signature.args[0]
        view = context.make_array(array_type)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, array_type, view, [args[1]],
                                       wraparound=False, boundscheck=False)
        builder.atomic_rmw("fadd", ptr, args[2], "monotonic")
        return context.get_dummy_value()
    return types.void(array, i, value), codegen


@njit(cache=True, nogil=True, inline="always")
def row_axpy_atomic(a, indptr, indices, data, i, w, n_features, bias):
    """w += a * x_i, each addition atomic."""
    for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
        atomic_add(w, np.uint64(indices[k]), a * data[k])
    if bias >= 0:
        atomic_add(w, np.uint64(n_features), a * bias)


@njit(cache=True, nogil=True)
def async_sweep_part(indptr, indices, data, n_features, bias, l2_loss, inst, index, lo, hi,
                     PGmax_old, PGmin_old, w, atomic, ctrl_c):
    """CD steps on the variables index[lo:hi] (one thread's share of a sweep), w shared
    and written without locks (each addition atomic when `atomic`, else wild). A
    variable shrunk by the bounds PGmax_old / PGmin_old
    moves to the end of the share. Returns (kept, PGmax_new, PGmin_new): index[lo:lo+kept]
    stay active; early once ctrl_c[0] is set (a Ctrl-C: dlinear.threads.stop_flag)."""
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
        G = yi * row_dot(w, indptr, indices, data, i, n_features, bias) - 1.0 + a_i * Di
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
            a = one_variable_step(a_i, G, inst[i, QD], Ui)
            inst[i, ALPHA] = a
            if atomic:
                row_axpy_atomic((a - a_i) * yi, indptr, indices, data, i, w, n_features,
                                bias)
            else:
                row_axpy((a - a_i) * yi, indptr, indices, data, i, w, n_features, bias)
        s += 1
    return end - lo, PGmax_new, PGmin_new


@njit(cache=True, nogil=True)
def gather_active(index, bounds, kept, scratch):
    """After the shares [bounds[q], bounds[q+1]) of a sweep kept kept[q] variables each:
    the kept ones of every share, in order, become index[:total kept] and the shrunk ones
    follow. Returns the new active-set size."""
    n = 0
    for q in range(len(kept)):
        for s in range(bounds[q], bounds[q] + kept[q]):
            scratch[n] = index[s]
            n += 1
    active = n
    for q in range(len(kept)):
        for s in range(bounds[q] + kept[q], bounds[q + 1]):
            scratch[n] = index[s]
            n += 1
    for s in range(n):
        index[s] = scratch[s]
    return active


@njit(cache=True, nogil=True)
def w_from_alpha(indptr, indices, data, n_features, bias, inst, w):
    """w = sum_i alpha_i y_i x_i from the packed records (what the wild steps may have
    drifted from)."""
    w_from_alpha_part(indptr, indices, data, n_features, bias, inst, 0, inst.shape[0], w)


@njit(cache=True, nogil=True)
def w_from_alpha_part(indptr, indices, data, n_features, bias, inst, lo, hi, w_part):
    """w_part = sum of alpha_i y_i x_i over the rows [lo, hi) (one thread's part of
    w_from_alpha)."""
    for j in range(len(w_part)):
        w_part[j] = 0.0
    for i in range(lo, hi):
        a = inst[i, ALPHA]
        if a != 0.0:
            row_axpy(a * inst[i, Y], indptr, indices, data, i, w_part, n_features, bias)


@njit(cache=True, nogil=True)
def dual_state_part(indptr, indices, data, n_features, bias, y, C, l2_loss, alpha, inst, lo,
                    hi, w_part):
    """One thread's part of dual_state: the records of the rows [lo, hi) into inst, and
    w_part = the sum of their alpha_i y_i x_i."""
    for j in range(len(w_part)):
        w_part[j] = 0.0
    init_records(indptr, indices, data, n_features, bias, y, C, l2_loss, alpha, inst, lo, hi,
                 w_part)


@njit(cache=True, nogil=True)
def dual_state(indptr, indices, data, n_features, bias, y, C, l2_loss, alpha, w):
    """init_dual_state for a driver outside Numba: (inst, index, n)."""
    return init_dual_state(indptr, indices, data, n_features, bias, y, C, l2_loss, alpha, w)


@njit(cache=True, nogil=True)
def shuffle_active(state, index, n):
    shuffle_prefix(state, index, n)


# liblinear-multicore's block sizes: candidates per block start at 256 and adapt
# between 256 and 4096 (grow when a block had nothing to step, halve when it had many)
FIRST_BLOCK = 256
LARGEST_BLOCK = 4096


@njit(cache=True, nogil=True, parallel=True)
def block_parallel_dual_cd_svc(indptr, indices, data, n_features, bias, y, C, l2_loss, eps,
                               max_iter, seed, alpha, w, ctrl_c):
    """Dual CD with the gradients of each block of candidates computed in parallel and
    the steps taken serially. A candidate is stepped when its projected gradient, from
    the block's starting w, is at least tol/10, where tol starts at 0.1 and falls tenfold
    (to min(eps/100, 0.1)) each time a sweep meets it; a sweep that steps nothing on the
    full set with tol <= eps, or meets LIBLINEAR's test on the full set, ends the run.
    Runs in place on `alpha` (warm start) and `w`, like dual_cd_svc.

    Returns (iterations, final active-set size, number of shrinking restarts, objective,
    steps taken); early, within a block, once ctrl_c[0] is set (a Ctrl-C:
    dlinear.threads.stop_flag)."""
    inst, index, l = init_dual_state(indptr, indices, data, n_features, bias, y, C,
                                     l2_loss, alpha, w)
    state = seed_state(seed)
    grad = np.empty(LARGEST_BLOCK)
    chosen = np.empty(LARGEST_BLOCK, dtype=np.int64)
    tol = 0.1
    min_tol = min(0.01 * eps, tol)
    block = FIRST_BLOCK
    active_size = l
    PGmax_old = INF
    PGmin_old = -INF
    it = 0
    restarts = 0
    steps = 0
    while it < max_iter and not ctrl_c[0]:
        PGmax_new = -INF
        PGmin_new = INF
        updates = 0
        shuffle_prefix(state, index, active_size)
        t = 0
        while t < active_size and not ctrl_c[0]:
            send = min(block, active_size - t)
            for s in prange(send):
                i = index[t + s]
                d = inst[i, BOUND] if l2_loss else 0.0
                grad[s] = (inst[i, Y] * row_dot(w, indptr, indices, data, i, n_features, bias)
                           - 1.0 + inst[i, ALPHA] * d)
            n_chosen = 0
            s = 0
            while s < send:
                i = index[t + s]
                G = grad[s]
                a_i = inst[i, ALPHA]
                Ui = INF if l2_loss else inst[i, BOUND]
                PG = 0.0
                if (a_i < Ui and G < 0.0) or (a_i > 0.0 and G > 0.0):
                    PG = G
                elif (a_i == 0.0 and G > PGmax_old) or (a_i == Ui and G < PGmin_old):
                    # shrink: the last candidate of the block takes this place, and the
                    # variable goes to the end of the active set
                    active_size -= 1
                    send -= 1
                    index[t + s] = index[t + send]
                    index[t + send] = index[active_size]
                    index[active_size] = i
                    grad[s] = grad[send]
                    continue
                if PG > PGmax_new:
                    PGmax_new = PG
                if PG < PGmin_new:
                    PGmin_new = PG
                if abs(PG) >= 0.1 * tol:
                    chosen[n_chosen] = i
                    n_chosen += 1
                s += 1
            if n_chosen == 0:
                block = min(block * 3 // 2, LARGEST_BLOCK)
            elif n_chosen >= FIRST_BLOCK:
                block = max(block // 2, 1)
            for c in range(n_chosen):
                i = chosen[c]
                yi = inst[i, Y]
                a_i = inst[i, ALPHA]
                Di = inst[i, BOUND] if l2_loss else 0.0
                Ui = INF if l2_loss else inst[i, BOUND]
                G = yi * row_dot(w, indptr, indices, data, i, n_features, bias) - 1.0 + a_i * Di
                a = one_variable_step(a_i, G, inst[i, QD], Ui)
                steps += 1
                if abs(a - a_i) > 1.0e-15:
                    inst[i, ALPHA] = a
                    row_axpy((a - a_i) * yi, indptr, indices, data, i, w, n_features, bias)
                    updates += 1
            t += send
        it += 1
        if updates == 0:
            if active_size == l and tol <= eps:
                break
            tol = max(0.1 * tol, min_tol)
            active_size = l
            restarts += 1
            PGmax_old = INF
            PGmin_old = -INF
            continue
        if PGmax_new - PGmin_new <= tol and abs(PGmax_new) <= tol and abs(PGmin_new) <= tol:
            tol = max(0.1 * tol, min_tol)
        if PGmax_new - PGmin_new <= eps and abs(PGmax_new) <= eps and abs(PGmin_new) <= eps:
            if active_size == l:
                break
            # restart on the full set only when clearly converged or little was shrunk
            if PGmax_new - PGmin_new <= 0.9 * eps or active_size >= 0.05 * l:
                active_size = l
                restarts += 1
                PGmax_old = INF
                PGmin_old = -INF
                continue
        PGmax_old = PGmax_new if PGmax_new > 0.0 else INF
        PGmin_old = PGmin_new if PGmin_new < 0.0 else -INF

    v = 0.0
    for j in range(len(w)):
        v += w[j] * w[j]
    for i in range(inst.shape[0]):
        a = inst[i, ALPHA]
        alpha[i] = a
        v += a * (a * (inst[i, BOUND] if l2_loss else 0.0) - 2.0)
    return it, active_size, restarts, v / 2.0, steps
