"""The local backend of the primal objectives of -s 0, -s 2 and -s 11 (LIBLINEAR's
l2r_lr_fun, l2r_l2_svc_fun and l2r_l2_svr_fun) on one CSR Problem.

    f(w) = 0.5 w^T w + sum_i C_i loss_i(x_i . w)

with x_i carrying the virtual -B bias column, C_i the per-instance C (C x class weight x
instance weight), and, for -R (regularize_bias=False), the bias weight w[-1] left out of
the regulariser (so out of the 0.5 w^T w, the gradient's w, the Hessian's identity and the
preconditioner's 1), as l2r_erm_fun does.

It implements the objective protocol of dlinear.solvers.newton (fun, grad, hv,
diag_precond, linesearch_and_update, n_variables). Everything of size l (z = Xw, Xs, the
rows with curvature and their weights) stays in here; only n-vectors and scalars cross
the interface, so a distributed backend holding one such state per data block on its
worker implements the same methods by summing the blocks' n-vectors and scalars.
"""
from __future__ import annotations

import numpy as np

from ..kernels import primal_ops as K
from .newton import dot

LOSS_OF_SOLVER = {0: K.LR, 2: K.L2SVC, 11: K.L2SVR}

# LIBLINEAR's line search (l2r_erm_fun::linesearch_and_update)
LINESEARCH_ETA = 0.01
MAX_NUM_LINESEARCH = 20


def regularized_dot(u, v, regularize_bias=True) -> float:
    """u . v over the regularised weights: all of them, or all but the bias weight (-R)."""
    s = dot(u, v)
    if not regularize_bias:
        s -= float(u[-1] * v[-1])
    return s


def add_regularizer(out, v, regularize_bias=True):
    """out += v on the regularised weights (the identity part of a gradient, Hessian or
    preconditioner)."""
    out += v
    if not regularize_bias:
        out[-1] -= v[-1]
    return out


class PrimalObjective:
    """One loss on one CSR problem. `loss` is primal_ops.LR, L2SVC or L2SVR; `p` is the
    SVR epsilon. Arrays are used as given and never written."""

    def __init__(self, problem, y, C, bias, loss, p=0.0, regularize_bias=True):
        self.indptr = problem.indptr
        self.indices = problem.indices
        self.data = problem.data
        self.n_features = int(problem.n_features)
        self.bias = float(bias)
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.C = np.ascontiguousarray(C, dtype=np.float64)
        self.loss = int(loss)
        self.p = float(p)
        self.regularize_bias = bool(regularize_bias)
        self.n_variables = self.n_features + (1 if self.bias >= 0 else 0)
        l = problem.n_samples
        self._z = np.zeros(l)           # X w at the last fun / accepted line-search step
        self._zs = np.empty(l)          # X s of the line search
        self._rows = np.empty(l, dtype=np.int64)
        self._coef = np.empty(l)
        self._n_active = 0
        self._M = np.ones(self.n_variables)
        self._wTw = 0.0
        self.n_passes = 0               # passes over X, for benchmarks

    def _sq(self, u, v):
        return regularized_dot(u, v, self.regularize_bias)

    def fun(self, w):
        w = np.ascontiguousarray(w, dtype=np.float64)
        if w.any():
            K.xv(self.indptr, self.indices, self.data, self.n_features, self.bias, w,
                 self._z)
            self.n_passes += 1
        else:
            self._z[:] = 0.0            # w = 0 (the start): X w needs no pass
        self._wTw = self._sq(w, w)
        return K.loss_sum(self.loss, self.y, self.C, self._z, self.p) + 0.5 * self._wTw

    def grad(self, w):
        w = np.ascontiguousarray(w, dtype=np.float64)
        g = np.empty(self.n_variables)
        M = np.empty(self.n_variables)
        self._n_active = K.grad_precond(
            self.loss, self.indptr, self.indices, self.data, self.n_features, self.bias,
            self.y, self.C, self._z, self.p, g, M, self._rows, self._coef)
        self.n_passes += 1
        add_regularizer(g, w, self.regularize_bias)
        self._M = add_regularizer(M, np.ones(self.n_variables), self.regularize_bias)
        return g

    def hv(self, s):
        s = np.ascontiguousarray(s, dtype=np.float64)
        out = np.empty(self.n_variables)
        K.hess_vec(self.indptr, self.indices, self.data, self.n_features, self.bias,
                   self._rows, self._coef, self._n_active, s, out)
        self.n_passes += 1
        return add_regularizer(out, s, self.regularize_bias)

    def diag_precond(self):
        return self._M.copy()

    def linesearch_and_update(self, w, s, f, g, alpha):
        s = np.ascontiguousarray(s, dtype=np.float64)
        K.xv(self.indptr, self.indices, self.data, self.n_features, self.bias, s, self._zs)
        self.n_passes += 1
        sTs = self._sq(s, s)
        wTs = self._sq(w, s)
        gTs = dot(g, s)
        fold = f
        for _ in range(MAX_NUM_LINESEARCH):
            loss = K.loss_sum_along(self.loss, self.y, self.C, self._z, self._zs, alpha,
                                    self.p)
            f_new = loss + (alpha * alpha * sTs + self._wTw) / 2.0 + alpha * wTs
            if f_new - fold <= LINESEARCH_ETA * alpha * gTs:
                K.add_scaled(alpha, self._zs, self._z)
                w += alpha * s
                self._wTw += alpha * alpha * sTs + 2.0 * alpha * wTs
                return alpha, f_new
            alpha *= 0.5
        return 0.0, fold


def make_objective(task, params):
    """The objective of params.solver_type (0, 2 or 11) on a BinaryTask."""
    return PrimalObjective(task.problem, task.y, task.C, task.bias,
                           LOSS_OF_SOLVER[params.solver_type], p=params.p,
                           regularize_bias=params.regularize_bias)
