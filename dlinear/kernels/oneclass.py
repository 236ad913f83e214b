"""One-class SVM (LIBLINEAR -s 21): two-level coordinate descent on the scaled dual

    min_alpha 0.5 alpha^T Q alpha,   Q_ij = x_i.x_j,   0 <= alpha_i <= U_i,
    sum_i alpha_i = nu * sum_i U_i

(U_i = 1 in LIBLINEAR; here U_i is the instance weight, 1 without weights.) This is
Algorithm 7 of the supplement of Chou et al., SDM 2020, as LIBLINEAR 2.50's
solve_oneclass_svm: alpha starts with the first floor(nu l) at the upper bound and the
remainder on the next one; each outer iteration recomputes G = Q alpha = X w on the active
set, stops when max_{Iup} -G - min_{Ilow} -G < eps (Iup = {alpha_i < U_i},
Ilow = {alpha_i > 0}; confirmed on the whole set after shrinking), shrinks bound
variables beyond those extremes, and then, with k = max(active / 10, 1) (at most |Iup|,
|Ilow|), pairs the k largest -G of Iup with the k smallest -G of Ilow in order (ties by
instance number, as LIBLINEAR's (value, index) order) and solves each violating pair's
two-variable problem in closed form, G_i and G_j fresh from w. At most 1000 outer
iterations. rho is the mean of G over free alpha, else the middle of the bound interval.
"""
import numpy as np
from numba import njit

from .sparse_ops import row_axpy, row_dot, row_sq_norm

INF = np.inf


@njit(cache=True, nogil=True, inline="always")
def dot_rows(indptr_a, indices_a, data_a, ra, indptr_b, indices_b, data_b, rb, bias):
    """x_a . x_b of two CSR rows (of one CSR or of two parts) with sorted column indices
    and the bias column."""
    a = indptr_a[ra]
    a_end = indptr_a[ra + 1]
    c = indptr_b[rb]
    c_end = indptr_b[rb + 1]
    s = 0.0
    while a < a_end and c < c_end:
        ia = indices_a[a]
        ic = indices_b[c]
        if ia == ic:
            s += np.float64(data_a[a]) * data_b[c]   # float32 data: the product in float64
            a += 1
            c += 1
        elif ia < ic:
            a += 1
        else:
            c += 1
    if bias >= 0:
        s += bias * bias
    return s


@njit(cache=True, nogil=True, inline="always")
def _ranks_before(va, ia, vb, ib, largest):
    """Whether candidate (value va, instance ia) comes before (vb, ib) in the total order
    of _select: larger values (and among equal ones higher instance numbers) first when
    `largest`, else smaller values (lower instance numbers) first."""
    if largest:
        return va > vb or (va == vb and ia > ib)
    return va < vb or (va == vb and ia < ib)


@njit(cache=True, nogil=True, inline="always")
def _sift_last_first(vals, ids, root, n, largest):
    """Moves entry `root` down the heap vals/ids[:n] whose root is its last in the order."""
    while True:
        child = 2 * root + 1
        if child >= n:
            return
        if child + 1 < n and _ranks_before(vals[child], ids[child], vals[child + 1],
                                           ids[child + 1], largest):
            child += 1
        if not _ranks_before(vals[root], ids[root], vals[child], ids[child], largest):
            return
        vals[root], vals[child] = vals[child], vals[root]
        ids[root], ids[child] = ids[child], ids[root]
        root = child


@njit(cache=True, nogil=True, inline="always")
def clipped_pair(ai, aj, total, Ui, Uj):
    """(ai, aj) moved back into the box [0, Ui] x [0, Uj] along ai + aj = total (LIBSVM's
    clipping; LIBLINEAR's with U = 1): a two-variable step of the one-class dual."""
    if total > Ui:
        if ai > Ui:
            ai = Ui
            aj = total - Ui
    else:
        if aj < 0.0:
            aj = 0.0
            ai = total
    if total > Uj:
        if aj > Uj:
            aj = Uj
            ai = total - Uj
    else:
        if ai < 0.0:
            ai = 0.0
            aj = total
    return ai, aj


@njit(cache=True, nogil=True)
def _select(cand, n, G, k, largest, out):
    """The k candidates of largest (or smallest) -G in the total order (-G_i, i), written
    to out[:k] from the most extreme on. O(n log k): a heap of the k first seen so far,
    its last in the order at the root, then sorted by taking the last off k times (no
    np.partition or np.sort: they compile for seconds on a cold first run)."""
    vals = np.empty(k)
    ids = np.empty(k, dtype=np.int64)
    m = 0
    for t in range(n):
        v = -G[cand[t]]
        i = cand[t]
        if m < k:
            # grow the heap: the new entry rises while it is later than its parent
            c = m
            vals[c] = v
            ids[c] = i
            m += 1
            while c > 0:
                p = (c - 1) // 2
                if not _ranks_before(vals[p], ids[p], vals[c], ids[c], largest):
                    break
                vals[p], vals[c] = vals[c], vals[p]
                ids[p], ids[c] = ids[c], ids[p]
                c = p
        elif _ranks_before(v, i, vals[0], ids[0], largest):
            vals[0] = v
            ids[0] = i
            _sift_last_first(vals, ids, 0, k, largest)
    for end in range(m - 1, -1, -1):
        out[end] = ids[0]
        vals[0] = vals[end]
        ids[0] = ids[end]
        _sift_last_first(vals, ids, 0, end, largest)


@njit(cache=True, nogil=True)
def oneclass_svm(indptr, indices, data, n_features, bias, U, nu, eps, max_iter, alpha, w,
                 ctrl_c, warm):
    """Solves into `alpha` (length l) and `w` (overwritten), from LIBLINEAR's start, or
    with `warm` from `alpha` as given (feasible: 0 <= alpha_i <= U_i, sum nu sum U_i;
    dlinear.solvers.dual_start).

    Returns (outer iterations, dual objective 0.5 ||w||^2, nSV, rho, shrinking restarts);
    early, within a row's gradient or a pair's step, once ctrl_c[0] is set (a Ctrl-C:
    dlinear.threads.stop_flag)."""
    l = len(indptr) - 1
    QD = np.empty(l)
    G = np.zeros(l)
    index = np.empty(l, dtype=np.int64)
    up = np.empty(l, dtype=np.int64)
    low = np.empty(l, dtype=np.int64)
    pick_up = np.empty(l, dtype=np.int64)
    pick_low = np.empty(l, dtype=np.int64)

    total = 0.0
    for i in range(l):
        total += U[i]
    remaining = nu * total
    for i in range(l):
        if warm:
            break
        a = min(U[i], remaining)
        if a < 0.0:
            a = 0.0
        alpha[i] = a
        remaining -= a

    for j in range(len(w)):
        w[j] = 0.0
    for i in range(l):
        QD[i] = row_sq_norm(indptr, data, i, bias)
        if alpha[i] != 0.0:
            row_axpy(alpha[i], indptr, indices, data, i, w, n_features, bias)
        index[i] = i

    it = 0
    active_size = l
    restarts = 0
    while it < max_iter:
        negGmax = -INF
        negGmin = INF
        for s in range(active_size):
            if ctrl_c[0]:
                break
            i = index[s]
            G[i] = row_dot(w, indptr, indices, data, i, n_features, bias)
            if alpha[i] < U[i] and -G[i] > negGmax:
                negGmax = -G[i]
            if alpha[i] > 0.0 and -G[i] < negGmin:
                negGmin = -G[i]
        if ctrl_c[0]:
            break

        if negGmax - negGmin < eps:
            if active_size == l:
                break
            active_size = l
            restarts += 1
            continue

        s = 0
        while s < active_size:
            i = index[s]
            if (alpha[i] == U[i] and -G[i] > negGmax) or (alpha[i] == 0.0 and -G[i] < negGmin):
                active_size -= 1
                index[s], index[active_size] = index[active_size], index[s]
            else:
                s += 1

        n_up = 0
        n_low = 0
        for s in range(active_size):
            i = index[s]
            if alpha[i] < U[i]:
                up[n_up] = i
                n_up += 1
            if alpha[i] > 0.0:
                low[n_low] = i
                n_low += 1
        n_pairs = max(active_size // 10, 1)
        n_pairs = min(n_pairs, min(n_up, n_low))
        if n_pairs > 0:
            # np.int64 / np.bool_, not the literals: one compilation of _select, not
            # one per Literal[int](0) and Literal[bool] combination
            _select(up, np.int64(n_up), G, np.int64(n_pairs), np.bool_(True), pick_up)
            _select(low, np.int64(n_low), G, np.int64(n_pairs), np.bool_(False), pick_low)

        for s in range(n_pairs):
            if ctrl_c[0]:
                break
            i = pick_up[s]
            j = pick_low[s]
            if (alpha[i] == 0.0 and alpha[j] == 0.0) or (alpha[i] == U[i] and alpha[j] == U[j]):
                continue
            Gi = row_dot(w, indptr, indices, data, i, n_features, bias)
            Gj = row_dot(w, indptr, indices, data, j, n_features, bias)
            violating = False
            if alpha[i] < U[i] and alpha[j] > 0.0 and -Gj + 1e-12 < -Gi:
                violating = True
            elif alpha[i] > 0.0 and alpha[j] < U[j] and -Gi + 1e-12 < -Gj:
                violating = True
            if not violating:
                continue
            quad_coef = QD[i] + QD[j] - 2.0 * dot_rows(indptr, indices, data, i, indptr, indices,
                                                         data, j, bias)
            if quad_coef <= 0.0:
                quad_coef = 1e-12
            delta = (Gi - Gj) / quad_coef
            old_ai = alpha[i]
            total_ij = alpha[i] + alpha[j]
            ai, aj = clipped_pair(alpha[i] - delta, alpha[j] + delta, total_ij, U[i], U[j])
            alpha[i] = ai
            alpha[j] = aj
            delta = ai - old_ai
            row_axpy(delta, indptr, indices, data, i, w, n_features, bias)
            row_axpy(-delta, indptr, indices, data, j, w, n_features, bias)
        if ctrl_c[0]:
            break
        it += 1

    v = 0.0
    for j in range(len(w)):
        v += w[j] * w[j]
    nSV = 0
    for i in range(l):
        if alpha[i] > 0.0:
            nSV += 1

    nr_free = 0
    ub = INF
    lb = -INF
    sum_free = 0.0
    for i in range(l):
        g = row_dot(w, indptr, indices, data, i, n_features, bias)
        if alpha[i] == U[i]:
            lb = max(lb, g)
        elif alpha[i] == 0.0:
            ub = min(ub, g)
        else:
            nr_free += 1
            sum_free += g
    if nr_free > 0:
        rho = sum_free / nr_free
    else:
        rho = (ub + lb) / 2.0
    return it, v / 2.0, nSV, rho, restarts
