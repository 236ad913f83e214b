"""Dual CD for -s 7 (logistic regression) on several threads: PASSCoDe-Atomic's
asynchronous steps (see parallel_dual_cd_svc.py) on the dual of dual_cd_lr.py.
`lr_async_sweep_part` is one thread's share of a sweep; the driver
(dlinear.solvers.parallel_dual_cd) takes the largest first |g'| of the shares for
LIBLINEAR's stop and adds up their Newton steps for the inner tolerance's rule."""
from numba import njit

from .dual_cd_lr import (A1, A2, XTX, YC, init_lr_state, lr_objective, one_variable_newton,
                         store_solution)
from .parallel_dual_cd_svc import row_axpy_atomic
from .sparse_ops import prefetch_visit, row_axpy, row_dot


@njit(cache=True, nogil=True)
def lr_state(indptr, indices, data, n_features, bias, y, C, w, alpha):
    """init_lr_state for a driver outside Numba: (inst, index, n)."""
    return init_lr_state(indptr, indices, data, n_features, bias, y, C, w, alpha)


@njit(cache=True, nogil=True)
def lr_async_sweep_part(indptr, indices, data, n_features, bias, inst, index, lo, hi,
                        innereps, w, ctrl_c):
    """The sub-problems of index[lo:hi], w shared, each addition atomic. Returns
    (largest |g'(z)| at the sub-problems' current points, Newton steps); early once ctrl_c[0] is set (a Ctrl-C: dlinear.threads.stop_flag)."""
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
        b = yi * row_dot(w, indptr, indices, data, i, n_features, bias)
        first_gp, z, sign, inner = one_variable_newton(inst[i, XTX], b, inst[i, A1],
                                                       inst[i, A2], Ci, innereps)
        if abs(first_gp) > Gmax:
            Gmax = abs(first_gp)
        newton_iter += inner
        if inner > 0:
            row_axpy_atomic(store_solution(inst, i, z, sign, Ci) * yi, indptr, indices,
                            data, i, w, n_features, bias)
    return Gmax, newton_iter


@njit(cache=True, nogil=True)
def w_from_pairs(indptr, indices, data, n_features, bias, inst, w):
    """w = sum_i alpha_i y_i x_i from the packed records (rows with C_i > 0)."""
    for j in range(len(w)):
        w[j] = 0.0
    for i in range(inst.shape[0]):
        yc = inst[i, YC]
        if yc != 0.0:
            row_axpy((1.0 if yc > 0.0 else -1.0) * inst[i, A1], indptr, indices, data, i,
                     w, n_features, bias)


@njit(cache=True, nogil=True)
def objective_of_lr(w, inst, C, alpha):
    """lr_objective for a driver outside Numba."""
    return lr_objective(w, inst, C, alpha)
