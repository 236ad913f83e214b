"""Sequential dual method for multi-class SVM by Crammer and Singer (LIBLINEAR -s 4).

    min_alpha  0.5 sum_m ||w_m||^2 + sum_i sum_m e_i^m alpha_i^m,   w_m = sum_i alpha_i^m x_i
    s.t.       alpha_i^m <= C_i^m,   sum_m alpha_i^m = 0
    e_i^m = 0 if m == y_i else 1;   C_i^m = C_i if m == y_i else 0

Fan et al. 2008 (the LIBLINEAR paper), Appendix E (Keerthi et al. 2008): one instance at a
time, its |U_i|-variable sub-problem solved in closed form by sorting D (Algorithm 2);
stop when max_i S_i < eps with S_i = max_m G_i^m - min_{m: alpha_i^m < C_i^m} G_i^m.
Shrinking: a class m of instance i leaves U_i when alpha_i^m sits at its bound and
G_i^m < min G (alpha_index/activesize bookkeeping per instance); an instance with one
active class leaves the active set. The shrunk problem is solved to eps_shrink, which
starts at max(10 eps, 1) and halves (not below eps) at each reactivation of the whole
set (Algorithm 3's epsilon cooling); the run stops only when a pass that started from
the whole set meets eps. Active instances are visited in a fresh random order per pass.

C_i is per instance (the class's weighted C times the instance weight). w is
(w_size, nr_class), row j the weights of feature j, the last row the bias (virtual column).
"""
import numpy as np
from numba import njit

from .rng import seed_state, shuffle_prefix
from .sparse_ops import prefetch_visit, row_sq_norm

INF = np.inf


@njit(cache=True, nogil=True, inline="always")
def _at_bound_below_minG(m, yidx, alpha_value, C_i, G, minG):
    """LIBLINEAR's be_shrunk: alpha at its bound (C_i for the true class, else 0) and
    G below the smallest gradient of the free-to-grow variables."""
    bound = C_i if m == yidx else 0.0
    return alpha_value == bound and G[m] < minG


@njit(cache=True, nogil=True, inline="always")
def _sift_down(D, root, n):
    """Moves D[root] down the min-heap D[:n] to its place."""
    while True:
        child = 2 * root + 1
        if child >= n:
            return
        if child + 1 < n and D[child + 1] < D[child]:
            child += 1
        if not D[child] < D[root]:
            return
        D[root], D[child] = D[child], D[root]
        root = child


@njit(cache=True, nogil=True)
def sort_decreasing(D, n):
    """Sorts D[:n] in decreasing order in place: heapsort, O(n log n) with no copy. Numba's
    np.sort would cost about 1 s more of a cold first run of -s 4 (its quicksort compiles
    for every run, also with few classes)."""
    for root in range(n // 2 - 1, -1, -1):
        _sift_down(D, root, n)
    for end in range(n - 1, 0, -1):       # the smallest left goes to the end
        D[0], D[end] = D[end], D[0]
        _sift_down(D, 0, end)


@njit(cache=True, nogil=True)
def _solve_sub_problem(A, B, yidx, C_y, active, D, alpha_new):
    """Algorithm 2: the closed-form minimiser of the |U_i|-variable sub-problem.
    D is scratch of length >= active; sorted in decreasing order here."""
    for r in range(active):
        D[r] = B[r]
    if yidx < active:
        D[yidx] += A * C_y
    if active <= 32:
        # insertion sort, decreasing (class counts are small)
        for r in range(1, active):
            v = D[r]
            t = r - 1
            while t >= 0 and D[t] < v:
                D[t + 1] = D[t]
                t -= 1
            D[t + 1] = v
    else:
        sort_decreasing(D, active)
    beta = D[0] - A * C_y
    r = 1
    while r < active and beta < r * D[r]:
        beta += D[r]
        r += 1
    beta /= r
    for r in range(active):
        v = (beta - B[r]) / A
        if r == yidx:
            alpha_new[r] = min(C_y, v)
        else:
            alpha_new[r] = min(0.0, v)


@njit(cache=True, nogil=True)
def mcsvm_cs(indptr, indices, data, n_features, bias, y, C, eps, max_iter, seed, alpha, w,
             ctrl_c):
    """Solves from `alpha` (l x nr_class: zeros, LIBLINEAR's start, or a feasible warm
    start, dlinear.solvers.dual_start) and writes W = its sum_i alpha_i x_i and on into
    `w` (w_size x nr_class, overwritten).
    y: int64 class index per row (0..nr_class-1); C: float64 per row.

    Returns (iterations, dual objective, nSV, shrinking reactivations); early, within a
    row's step, once ctrl_c[0] is set (a Ctrl-C: dlinear.threads.stop_flag)."""
    l = len(indptr) - 1
    nr_class = w.shape[1]
    w_size = w.shape[0]
    alpha_index = np.empty((l, nr_class), dtype=np.int32)
    active_size_i = np.empty(l, dtype=np.int32)
    y_index = np.empty(l, dtype=np.int32)
    QD = np.empty(l)
    index = np.empty(l, dtype=np.int64)
    G = np.empty(nr_class)
    G_all = np.empty(nr_class)                   # G by class id (not U_i's order)
    active_cls = np.empty(nr_class, dtype=np.int64)   # U_i's class ids, in order
    B = np.empty(nr_class)
    D = np.empty(nr_class)
    alpha_new = np.empty(nr_class)
    d_ind = np.empty(nr_class, dtype=np.int64)
    d_val = np.empty(nr_class)

    for j in range(w_size):
        for m in range(nr_class):
            w[j, m] = 0.0
    for i in range(l):
        for m in range(nr_class):
            alpha_index[i, m] = m
        QD[i] = row_sq_norm(indptr, data, i, bias)
        for m in range(nr_class):      # W of the warm start
            a = alpha[i, m]
            if a != 0.0:
                for k in range(indptr[i], indptr[i + 1]):
                    w[indices[k], m] += a * data[k]
                if bias >= 0:
                    w[n_features, m] += a * bias
        active_size_i[i] = nr_class
        y_index[i] = y[i]
        index[i] = i

    state = seed_state(seed)
    active_size = l
    eps_shrink = max(10.0 * eps, 1.0)
    start_from_all = True
    it = 0
    reactivations = 0
    while it < max_iter:
        stopping = -INF
        shuffle_prefix(state, index, active_size)

        s = 0
        while s < active_size:
            if ctrl_c[0]:
                break
            prefetch_visit(index, s, active_size, indptr, indices, data, alpha)
            i = index[s]
            Ai = QD[i]
            if Ai <= 0.0:
                s += 1
                continue
            Ci = C[i]
            act = active_size_i[i]
            yidx = y_index[i]
            if nr_class == 2:
                # binary: both gradients in two scalars (a 2-long inner loop over classes
                # costs loop overhead per nonzero); same additions, same order as below
                g0 = 1.0
                g1 = 1.0
                if y[i] == 0:
                    g0 = 0.0
                else:
                    g1 = 0.0
                for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
                    f = np.uint64(indices[k])
                    v = data[k]
                    g0 += w[f, 0] * v
                    g1 += w[f, 1] * v
                if bias >= 0:
                    g0 += w[n_features, 0] * bias
                    g1 += w[n_features, 1] * bias
                G_all[0] = g0
                G_all[1] = g1
                for m in range(act):
                    G[m] = G_all[alpha_index[i, m]]
            elif 2 * act > nr_class:
                # most classes active: G of every class over contiguous rows of w (no
                # indirection, vectorisable), then picked in U_i's order. Each G[m] sees
                # the same additions in the same order as the indirect loop below.
                for c in range(nr_class):
                    G_all[c] = 1.0
                G_all[y[i]] = 0.0
                for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
                    f = np.uint64(indices[k])
                    v = data[k]
                    for c in range(nr_class):
                        G_all[c] += w[f, c] * v
                if bias >= 0:
                    for c in range(nr_class):
                        G_all[c] += w[n_features, c] * bias
                for m in range(act):
                    G[m] = G_all[alpha_index[i, m]]
            else:
                for m in range(act):
                    G[m] = 1.0
                    active_cls[m] = alpha_index[i, m]
                if yidx < act:
                    G[yidx] = 0.0
                for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
                    f = np.uint64(indices[k])
                    v = data[k]
                    for m in range(act):
                        G[m] += w[f, active_cls[m]] * v
                if bias >= 0:
                    for m in range(act):
                        G[m] += w[n_features, active_cls[m]] * bias

            minG = INF
            maxG = -INF
            for m in range(act):
                if alpha[i, alpha_index[i, m]] < 0.0 and G[m] < minG:
                    minG = G[m]
                if G[m] > maxG:
                    maxG = G[m]
            if yidx < act:
                if alpha[i, y[i]] < Ci and G[yidx] < minG:
                    minG = G[yidx]

            # shrink classes of this instance (the per-instance active set U_i)
            m = 0
            while m < active_size_i[i]:
                if _at_bound_below_minG(m, y_index[i], alpha[i, alpha_index[i, m]], Ci, G,
                                        minG):
                    active_size_i[i] -= 1
                    while active_size_i[i] > m:
                        last = active_size_i[i]
                        if not _at_bound_below_minG(last, y_index[i],
                                                    alpha[i, alpha_index[i, last]], Ci, G,
                                                    minG):
                            alpha_index[i, m], alpha_index[i, last] = \
                                alpha_index[i, last], alpha_index[i, m]
                            G[m], G[last] = G[last], G[m]
                            if y_index[i] == last:
                                y_index[i] = m
                            elif y_index[i] == m:
                                y_index[i] = last
                            break
                        active_size_i[i] -= 1
                m += 1

            act = active_size_i[i]
            if act <= 1:
                active_size -= 1
                index[s], index[active_size] = index[active_size], index[s]
                continue

            if maxG - minG <= 1e-12:
                s += 1
                continue
            if maxG - minG > stopping:
                stopping = maxG - minG

            for m in range(act):
                B[m] = G[m] - Ai * alpha[i, alpha_index[i, m]]
            _solve_sub_problem(Ai, B, y_index[i], Ci, act, D, alpha_new)
            nz_d = 0
            for m in range(act):
                cls = alpha_index[i, m]
                d = alpha_new[m] - alpha[i, cls]
                alpha[i, cls] = alpha_new[m]
                if abs(d) >= 1e-12:
                    d_ind[nz_d] = cls
                    d_val[nz_d] = d
                    nz_d += 1
            if nz_d == 2:
                c0 = np.uint64(d_ind[0])
                c1 = np.uint64(d_ind[1])
                d0 = d_val[0]
                d1 = d_val[1]
                for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
                    f = np.uint64(indices[k])
                    v = data[k]
                    w[f, c0] += d0 * v
                    w[f, c1] += d1 * v
            else:
                for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
                    f = np.uint64(indices[k])
                    v = data[k]
                    for m in range(nz_d):
                        w[f, d_ind[m]] += d_val[m] * v
            if bias >= 0:
                for m in range(nz_d):
                    w[n_features, d_ind[m]] += d_val[m] * bias
            s += 1

        if ctrl_c[0]:
            break
        it += 1
        if stopping < eps_shrink:
            if stopping < eps and start_from_all:
                break
            active_size = l
            for i in range(l):
                active_size_i[i] = nr_class
            eps_shrink = max(eps_shrink / 2.0, eps)
            start_from_all = True
            reactivations += 1
        else:
            start_from_all = False

    v = 0.0
    for j in range(w_size):
        for m in range(nr_class):
            v += w[j, m] * w[j, m]
    v *= 0.5
    nSV = 0
    for i in range(l):
        for m in range(nr_class):
            v += alpha[i, m]
            if alpha[i, m] != 0.0:
                nSV += 1
        v -= alpha[i, y[i]]
    return it, v, nSV, reactivations
