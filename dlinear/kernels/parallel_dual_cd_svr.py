"""Dual CD for -s 12 / -s 13 (SVR) on several threads: PASSCoDe's asynchronous steps
(see parallel_dual_cd_svc.py) on the SVR dual of dual_cd_svr.py. `svr_async_sweep_part`
is one thread's share of a sweep, with LIBLINEAR's shrinking by the previous sweep's
largest violation; the driver (dlinear.solvers.parallel_dual_cd) adds up the shares'
violations for LIBLINEAR's stop."""
from numba import njit

from .dual_cd_svr import (BETA, H, init_svr_state, one_variable_step, svr_objective,
                          svr_row_gradient, violation_or_shrink)
from .parallel_dual_cd_svc import row_axpy_atomic
from .sparse_ops import prefetch_visit, row_axpy, row_dot


@njit(cache=True, nogil=True)
def svr_state(indptr, indices, data, n_features, bias, y, C, l2_loss, beta, w):
    """init_svr_state for a driver outside Numba: (inst, index, n)."""
    return init_svr_state(indptr, indices, data, n_features, bias, y, C, l2_loss, beta, w)


@njit(cache=True, nogil=True)
def svr_async_sweep_part(indptr, indices, data, n_features, bias, p, l2_loss, inst, index,
                         lo, hi, Gmax_old, w, atomic, ctrl_c):
    """CD steps on the variables index[lo:hi], w shared (additions atomic when
    `atomic`). A variable shrunk by Gmax_old moves to the end of the share. Returns
    (kept, largest violation, sum of violations); early once ctrl_c[0] is set (a Ctrl-C: dlinear.threads.stop_flag)."""
    Gmax_new = 0.0
    Gnorm1_new = 0.0
    end = hi
    s = lo
    while s < end:
        if ctrl_c[0]:
            break
        prefetch_visit(index, s, end, indptr, indices, data, inst)
        i = index[s]
        bi, Gp, Gn, Ui = svr_row_gradient(
            inst, i, row_dot(w, indptr, indices, data, i, n_features, bias), p, l2_loss)
        violation, shrink = violation_or_shrink(bi, Gp, Gn, Ui, Gmax_old)
        if shrink:
            end -= 1
            index[s], index[end] = index[end], index[s]
            continue
        if violation > Gmax_new:
            Gmax_new = violation
        Gnorm1_new += violation
        nb = one_variable_step(bi, Gp, Gn, inst[i, H], Ui)
        if nb != bi:
            inst[i, BETA] = nb
            if atomic:
                row_axpy_atomic(nb - bi, indptr, indices, data, i, w, n_features, bias)
            else:
                row_axpy(nb - bi, indptr, indices, data, i, w, n_features, bias)
        s += 1
    return end - lo, Gmax_new, Gnorm1_new


@njit(cache=True, nogil=True)
def w_from_beta(indptr, indices, data, n_features, bias, inst, w):
    """w = sum_i beta_i x_i from the packed records."""
    for j in range(len(w)):
        w[j] = 0.0
    for i in range(inst.shape[0]):
        b = inst[i, BETA]
        if b != 0.0:
            row_axpy(b, indptr, indices, data, i, w, n_features, bias)


@njit(cache=True, nogil=True)
def objective_of_svr(w, inst, y, p, l2_loss, beta):
    """svr_objective for a driver outside Numba."""
    return svr_objective(w, inst, y, p, l2_loss, beta)
