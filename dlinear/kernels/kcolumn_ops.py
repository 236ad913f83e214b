"""k-column kernels of the primal objectives: one pass over the rows for several binary
problems (one-vs-rest classes) at once, and the softmax (multinomial) loss.

Row state lives in (l, K') C-order arrays, so a row's values of all columns are adjacent;
`cols` (int64) says which columns of the state a call works on, and the dense inputs and
outputs of size n (V, S, G, M, out) are (n_variables, m) C-order with one column per entry
of `cols`, so a feature's m weights are adjacent too. The bias is LIBLINEAR's virtual last
column, as in sparse_ops.

Every column is computed with exactly the arithmetic, in exactly the order, of the
one-column kernels in primal_ops (x_i . v summed over the row's nonzeros then the bias,
X^T accumulations row by row, primal_ops' inlined helpers for the loss and its
derivatives), so a one-vs-rest class driven through these kernels gets bit-identical
values, and hence the same iterates, Newton and CG counts, as its own one-column driver.
"""
import math

import numpy as np
from numba import njit

from .prefetch import prefetch_row_read, prefetch_row_write
from .primal_ops import LR, _c_times_derivatives, _c_times_loss

# nonzeros ahead whose rows of the (n, m) arrays a pass prefetches (kernels.prefetch):
# 16-32 measured best on one core, k = 20 (BENCHMARKS.md, "Multi-class Newton")
PREFETCH_AHEAD = 24


@njit(cache=True, nogil=True)
def _gather_row(indptr, indices, data, i, S, t, m):
    """t[c] += x_i . S[:, c] for c < m over row i's nonzeros (not the bias), the rows of S
    prefetched PREFETCH_AHEAD nonzeros ahead."""
    end = np.uint64(indptr[len(indptr) - 1])
    ahead = np.uint64(PREFETCH_AHEAD)
    row_bytes = m * 8
    for q in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
        if q + ahead < end:
            prefetch_row_read(S, indices[q + ahead], row_bytes)
        j = np.uint64(indices[q])
        v = data[q]
        for c in range(m):
            t[c] += S[j, c] * v


@njit(cache=True, nogil=True)
def _scatter_row(indptr, indices, data, i, t, out, m):
    """out[j, c] += t[c] x_ij for c < m over row i's nonzeros (not the bias)."""
    end = np.uint64(indptr[len(indptr) - 1])
    ahead = np.uint64(PREFETCH_AHEAD)
    row_bytes = m * 8
    for q in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
        if q + ahead < end:
            prefetch_row_write(out, indices[q + ahead], row_bytes)
        j = np.uint64(indices[q])
        v = data[q]
        for c in range(m):
            out[j, c] += t[c] * v


@njit(cache=True, nogil=True)
def _scatter_grad_precond_row(indptr, indices, data, i, dl, h, G, M, m):
    """G[j, c] += dl[c] x_ij and M[j, c] += h[c] x_ij^2 for c < m over row i's nonzeros
    (not the bias)."""
    end = np.uint64(indptr[len(indptr) - 1])
    ahead = np.uint64(PREFETCH_AHEAD)
    row_bytes = m * 8
    for q in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
        if q + ahead < end:
            prefetch_row_write(G, indices[q + ahead], row_bytes)
            prefetch_row_write(M, indices[q + ahead], row_bytes)
        j = np.uint64(indices[q])
        v = data[q]
        for c in range(m):
            G[j, c] += dl[c] * v
        for c in range(m):
            M[j, c] += h[c] * v * v



@njit(cache=True, nogil=True)
def xv_k(indptr, indices, data, n_features, bias, V, R, cols):
    """R[i, cols[c]] = x_i . V[:, c] for every row i and c < len(cols)."""
    m = len(cols)
    t = np.empty(m)
    for i in range(np.uint64(len(indptr) - 1)):
        for c in range(m):
            t[c] = 0.0
        _gather_row(indptr, indices, data, i, V, t, m)
        if bias >= 0:
            for c in range(m):
                t[c] += V[n_features, c] * bias
        for c in range(m):
            R[i, cols[c]] = t[c]


@njit(cache=True, nogil=True)
def loss_k(loss, Y, C, R, ycols, zcols, zscols, alphas, p, out):
    """out[c] = sum_i C_i loss(Y[i, ycols[c]], R[i, zcols[c]] + alphas[c] R[i, zscols[c]])
    (the loss at w + alpha s; zscols = zcols and alpha 0 give the loss at w)."""
    m = len(ycols)
    for c in range(m):
        out[c] = 0.0
    for i in range(np.uint64(R.shape[0])):
        for c in range(m):
            yc = ycols[c]
            out[c] += _c_times_loss(loss, Y[i, yc], C[i, yc],
                                    R[i, zcols[c]] + alphas[c] * R[i, zscols[c]], p)


@njit(cache=True, nogil=True)
def move_k(R, zcols, zscols, alphas):
    """R[:, zcols[c]] += alphas[c] R[:, zscols[c]]: accepted line-search steps."""
    for i in range(np.uint64(R.shape[0])):
        for c in range(len(zcols)):
            R[i, zcols[c]] += alphas[c] * R[i, zscols[c]]


@njit(cache=True, nogil=True)
def grad_precond_k(loss, indptr, indices, data, n_features, bias, Y, C, R, cols, p, G, M,
                   COEF):
    """primal_ops.grad_precond for the columns `cols` (labels, C and z = R of column
    cols[c]): G[:, c] += X^T dl, M[:, c] += diag(X^T H X), and COEF[i, cols[c]] = h_i
    (zero on rows without curvature, which hess_vec_k then adds as exact zeros)."""
    m = len(cols)
    dl = np.empty(m)
    h = np.empty(m)
    act = np.empty(m, dtype=np.int64)
    row_bytes = m * 8
    end = np.uint64(indptr[len(indptr) - 1])
    ahead = np.uint64(PREFETCH_AHEAD)
    for i in range(np.uint64(len(indptr) - 1)):
        for c in range(m):
            col = cols[c]
            d, hh = _c_times_derivatives(loss, Y[i, col], C[i, col], R[i, col], p)
            dl[c] = d
            h[c] = hh
            COEF[i, col] = hh
        # only the columns with a nonzero derivative at this row (L2 losses: the classes
        # whose margin the row violates) do the row's scatter
        n_act = 0
        for c in range(m):
            if dl[c] != 0.0 or h[c] != 0.0:
                act[n_act] = c
                n_act += 1
        if n_act == 0:
            continue
        if n_act == m:                  # every column (logistic loss): no indirection
            _scatter_grad_precond_row(indptr, indices, data, i, dl, h, G, M, m)
        else:
            for q in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
                if q + ahead < end:
                    prefetch_row_write(G, indices[q + ahead], row_bytes)
                    prefetch_row_write(M, indices[q + ahead], row_bytes)
                j = np.uint64(indices[q])
                v = data[q]
                for a in range(n_act):
                    c = act[a]
                    G[j, c] += dl[c] * v
                    M[j, c] += h[c] * v * v
        if bias >= 0:
            for a in range(n_act):
                c = act[a]
                G[n_features, c] += dl[c] * bias
                M[n_features, c] += h[c] * bias * bias


@njit(cache=True, nogil=True)
def hess_vec_k(indptr, indices, data, n_features, bias, COEF, cols, S, out):
    """out[:, c] += sum_i COEF[i, cols[c]] x_i (x_i . S[:, c]); a row works only on the
    columns where it has curvature (L2 losses: each class has its own rows)."""
    m = len(cols)
    t = np.empty(m)
    act = np.empty(m, dtype=np.int64)
    row_bytes = m * 8
    end = np.uint64(indptr[len(indptr) - 1])
    ahead = np.uint64(PREFETCH_AHEAD)
    for i in range(np.uint64(len(indptr) - 1)):
        n_act = 0
        for c in range(m):
            if COEF[i, cols[c]] != 0.0:
                act[n_act] = c
                n_act += 1
        if n_act == 0:
            continue
        if n_act == m:                  # every column (logistic loss): no indirection
            for c in range(m):
                t[c] = 0.0
            _gather_row(indptr, indices, data, i, S, t, m)
            if bias >= 0:
                for c in range(m):
                    t[c] += S[n_features, c] * bias
            for c in range(m):
                t[c] = COEF[i, cols[c]] * t[c]
            _scatter_row(indptr, indices, data, i, t, out, m)
            if bias >= 0:
                for c in range(m):
                    out[n_features, c] += t[c] * bias
            continue
        for a in range(n_act):
            t[a] = 0.0
        for q in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            if q + ahead < end:
                prefetch_row_read(S, indices[q + ahead], row_bytes)
            j = np.uint64(indices[q])
            v = data[q]
            for a in range(n_act):
                t[a] += S[j, act[a]] * v
        if bias >= 0:
            for a in range(n_act):
                t[a] += S[n_features, act[a]] * bias
        for a in range(n_act):
            t[a] = COEF[i, cols[act[a]]] * t[a]
        for q in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            if q + ahead < end:
                prefetch_row_write(out, indices[q + ahead], row_bytes)
            j = np.uint64(indices[q])
            v = data[q]
            for a in range(n_act):
                out[j, act[a]] += t[a] * v
        if bias >= 0:
            for a in range(n_act):
                out[n_features, act[a]] += t[a] * bias


@njit(cache=True, nogil=True)
def transpose_into(A, out):
    """out = A.T, in tiles that stay in cache: the n-vectors of the classes (rows of an
    (m, n) array) into the (n, m) array a pass reads, and a pass's (n, m) output back
    into n-vectors."""
    a, b = A.shape
    step = 256
    for i0 in range(0, a, step):
        i1 = min(i0 + step, a)
        for j0 in range(0, b, step):
            j1 = min(j0 + step, b)
            for i in range(i0, i1):
                for j in range(j0, j1):
                    out[j, i] = A[i, j]


# --------------------------------------------------------------- multinomial (softmax)
# W is (n_variables, K); R (l, 2K) holds Z = X W in its first K columns and Z_s = X S
# of the line search in the next K; y_class[i] is row i's class index, Ci its C.

@njit(cache=True, nogil=True)
def softmax_loss(R, y_class, Ci, alpha):
    """sum_i C_i (logsumexp(z_i + alpha zs_i) - (z_i + alpha zs_i)[y_i])."""
    K = R.shape[1] // 2
    total = 0.0
    for i in range(np.uint64(R.shape[0])):
        top = -np.inf
        for c in range(K):
            v = R[i, c] + alpha * R[i, K + c]
            if v > top:
                top = v
        s = 0.0
        for c in range(K):
            s += math.exp(R[i, c] + alpha * R[i, K + c] - top)
        yc = y_class[i]
        total += Ci[i] * (math.log(s) + top - (R[i, yc] + alpha * R[i, K + yc]))
    return total


@njit(cache=True, nogil=True, inline="always")
def _softmax_row(R, y_class, Ci, P, i, dl, h):
    """Row i at Z = R[:, :K]: P[i] = softmax(z_i), dl = C_i (p_i - onehot(y_i)) and
    h = C_i p_i (1 - p_i), the row's loss gradient and Hessian diagonal."""
    K = P.shape[1]
    top = -np.inf
    for c in range(K):
        if R[i, c] > top:
            top = R[i, c]
    s = 0.0
    for c in range(K):
        e = math.exp(R[i, c] - top)
        P[i, c] = e
        s += e
    for c in range(K):
        p = P[i, c] / s
        P[i, c] = p
        dl[c] = Ci[i] * p
        h[c] = Ci[i] * p * (1.0 - p)
    dl[y_class[i]] -= Ci[i]


@njit(cache=True, nogil=True, inline="always")
def _softmax_hv_row(P, Ci, i, t):
    """t = C_i p_i (r_i - p_i . r_i) from t = r_i = S^T x_i: row i's share of the softmax
    Hessian times S (at the P of the last gradient)."""
    K = P.shape[1]
    pr = 0.0
    for c in range(K):
        pr += P[i, c] * t[c]
    for c in range(K):
        t[c] = Ci[i] * P[i, c] * (t[c] - pr)


@njit(cache=True, nogil=True)
def softmax_grad_precond(indptr, indices, data, n_features, bias, R, y_class, Ci, G, M, P):
    """At Z = R[:, :K]: P[i] = softmax(z_i); G += X^T (C (P - onehot(y))) and
    M += diag of the Hessian's blocks, sum_i C_i p_ic (1 - p_ic) x_ij^2."""
    K = P.shape[1]
    dl = np.empty(K)
    h = np.empty(K)
    for i in range(np.uint64(len(indptr) - 1)):
        _softmax_row(R, y_class, Ci, P, i, dl, h)
        _scatter_grad_precond_row(indptr, indices, data, i, dl, h, G, M, K)
        if bias >= 0:
            for c in range(K):
                G[n_features, c] += dl[c] * bias
                M[n_features, c] += h[c] * bias * bias


@njit(cache=True, nogil=True)
def softmax_hess_vec(indptr, indices, data, n_features, bias, P, Ci, S, out):
    """out += X^T U, U_ic = C_i p_ic (r_ic - p_i . r_i), r_i = S^T x_i: the exact
    Hessian of the softmax loss at the P of the last softmax_grad_precond, times S."""
    K = P.shape[1]
    t = np.empty(K)
    for i in range(np.uint64(len(indptr) - 1)):
        for c in range(K):
            t[c] = 0.0
        _gather_row(indptr, indices, data, i, S, t, K)
        if bias >= 0:
            for c in range(K):
                t[c] += S[n_features, c] * bias
        _softmax_hv_row(P, Ci, i, t)
        _scatter_row(indptr, indices, data, i, t, out, K)
        if bias >= 0:
            for c in range(K):
                out[n_features, c] += t[c] * bias


# ------------------------------------------- multinomial in two phases, rows then columns
# The one-pass kernels above gather from and scatter into (n, K) arrays at the feature of
# every nonzero: a random access to K doubles per nonzero, from memory once n K doubles
# outgrow the cache (83 MB at n = 297,064, K = 35). The kernels below walk X by columns
# instead (CSC, csr_to_csc: rows ascending, the bias column last), in chunks of rows:
# `col_ptr2[ch]` is the column pointer of chunk ch's rows, `chunk_rows[ch]` its first row.
# Within a chunk the random accesses go to the chunk's rows of an (l, K) array, which fit
# in cache, and the (n, K) array is streamed in order. A pass of X^T A runs over the
# chunks in row order and the features split over threads; a pass of X S over the
# chunks split over threads. Every entry is still summed over the same terms in the same
# order as the one-pass kernels (a row's nonzeros in ascending feature order, then the
# bias; X^T's rows in ascending row order), so the results are bit-identical to theirs
# and do not depend on the chunks or the threads.

@njit(cache=True, nogil=True)
def columns_gather(col_ptr2, row_ind, vals, chunk_rows, S, T, c0, c1):
    """T[i, c] = x_i . S[:, c] (the bias included through its column) for the rows of
    chunks c0..c1; T may be a column slice of the row state."""
    K = S.shape[1]
    n_cols = col_ptr2.shape[1] - 1
    ahead = np.uint64(PREFETCH_AHEAD)
    row_bytes = K * 8
    for ch in range(c0, c1):
        for i in range(chunk_rows[ch], chunk_rows[ch + 1]):
            for c in range(K):
                T[i, c] = 0.0
        end = np.uint64(col_ptr2[ch, n_cols])
        for j in range(n_cols):
            for q in range(np.uint64(col_ptr2[ch, j]), np.uint64(col_ptr2[ch, j + 1])):
                if q + ahead < end:
                    prefetch_row_write(T, row_ind[q + ahead], row_bytes)
                i = np.uint64(row_ind[q])
                v = vals[q]
                for c in range(K):
                    T[i, c] += S[j, c] * v


@njit(cache=True, nogil=True)
def _columns_pass(col_ptr2, row_ind, vals, A, out, j0, j1, squared):
    """out[j] += sum_i x_ij A[i] (squared: A[i] x_ij^2) for the columns j0..j1, chunk by
    chunk in row order."""
    K = A.shape[1]
    acc = np.empty(K)
    ahead = np.uint64(PREFETCH_AHEAD)
    row_bytes = K * 8
    for ch in range(col_ptr2.shape[0]):
        end = np.uint64(col_ptr2[ch, j1])
        for j in range(j0, j1):
            q0 = np.uint64(col_ptr2[ch, j])
            q1 = np.uint64(col_ptr2[ch, j + 1])
            if q1 == q0:
                continue
            for c in range(K):
                acc[c] = out[j, c]
            for q in range(q0, q1):
                if q + ahead < end:
                    prefetch_row_read(A, row_ind[q + ahead], row_bytes)
                i = np.uint64(row_ind[q])
                v = vals[q]
                if squared:
                    for c in range(K):
                        acc[c] += A[i, c] * v * v
                else:
                    for c in range(K):
                        acc[c] += A[i, c] * v
            for c in range(K):
                out[j, c] = acc[c]


@njit(cache=True, nogil=True)
def columns_times(col_ptr2, row_ind, vals, A, out, j0, j1):
    """out[j] += sum_i x_ij A[i] for the columns j0..j1: X^T A on those rows of out,
    added in row order as the one-pass scatter adds."""
    _columns_pass(col_ptr2, row_ind, vals, A, out, j0, j1, False)


@njit(cache=True, nogil=True)
def columns_grad_precond(col_ptr2, row_ind, vals, DL, H, G, M, j0, j1):
    """G[j] += sum_i x_ij DL[i] and M[j] += sum_i H[i] x_ij^2 for the columns j0..j1. Two
    passes, one per output: each then reads one (l, K) array at random rows, which stays
    in cache where two did not (35-class set, 48,949 x 35: 0.13 s for the two passes
    against 0.24 s fused)."""
    _columns_pass(col_ptr2, row_ind, vals, DL, G, j0, j1, False)
    _columns_pass(col_ptr2, row_ind, vals, H, M, j0, j1, True)


@njit(cache=True, nogil=True)
def softmax_rows(R, y_class, Ci, P, DL, H, r0, r1):
    """Rows r0..r1 at Z = R[:, :K]: P[i] = softmax(z_i), DL[i] = C_i (p_i - onehot(y_i))
    and H[i] = C_i p_i (1 - p_i) (softmax_grad_precond's dl and h)."""
    for i in range(r0, r1):
        _softmax_row(R, y_class, Ci, P, i, DL[i], H[i])


@njit(cache=True, nogil=True)
def softmax_hv_rows(P, Ci, U, r0, r1):
    """Rows r0..r1: U[i] = C_i p_i (r_i - p_i . r_i) from U[i] = r_i = S^T x_i
    (softmax_hess_vec's t, before its scatter)."""
    for i in range(r0, r1):
        _softmax_hv_row(P, Ci, i, U[i])


@njit(cache=True, nogil=True)
def lr_rows(Y, C, R, cols, DL, H, COEF):
    """grad_precond_k's row part for the logistic loss, for every row: DL[i, c] and
    H[i, c] the derivative and curvature of column cols[c] (and COEF[i, cols[c]] = H),
    for columns_grad_precond to scatter by X's columns."""
    m = len(cols)
    for i in range(R.shape[0]):
        for c in range(m):
            col = cols[c]
            d, hh = _c_times_derivatives(LR, Y[i, col], C[i, col], R[i, col], 0.0)
            DL[i, c] = d
            H[i, c] = hh
            COEF[i, col] = hh


@njit(cache=True, nogil=True)
def scale_rows(COEF, cols, T):
    """T[i, c] = COEF[i, cols[c]] T[i, c] (hess_vec_k's D o (X S))."""
    for i in range(T.shape[0]):
        for c in range(len(cols)):
            T[i, c] = COEF[i, cols[c]] * T[i, c]


@njit(cache=True, nogil=True)
def put_columns(T, R, cols):
    """R[i, cols[c]] = T[i, c]."""
    for i in range(T.shape[0]):
        for c in range(len(cols)):
            R[i, cols[c]] = T[i, c]
