"""Dual CD on several threads of this process (task.n_threads > 1).

-s 1 / -s 3 in one of four schemes:
- "local" (the default; dlinear.kernels.local_dual_cd): CoCoA+'s local sub-problems,
  one part of each round per thread, each on its own copy of w, merged at the round's
  end. Deterministic for a seed and a number of threads: the model does not depend on
  the threads' timing, but a round's parts do on their number.
- "block" (dlinear.kernels.parallel_dual_cd_svc): the gradients of a block of candidates in parallel, the steps serial
  (liblinear-multicore). Deterministic: the same seed gives the same model on any
  number of threads above one.
- "wild" / "atomic": asynchronous steps on shared w (PASSCoDe-Wild / -Atomic): each
  sweep's active set is split into shares that the threads of a PassPool take in turn.
  Not deterministic: the threads' timing decides the order in which their steps see
  each other's.
-s 7 runs "local" (sigma = the number of parts) or "atomic"; -s 12 / -s 13 "atomic" only
(kernels.parallel_dual_cd_lr, parallel_dual_cd_svr), so one thread by default.

One thread runs the serial kernels, today's models bit for bit.
"""
from __future__ import annotations

import numba
import numpy as np

from ..kernels.dual_cd_lr import INNER_EPS_FLOOR, INNER_EPS_START
from ..kernels.dual_cd_svc import INF, dual_objective, end_of_sweep
from ..kernels.local_dual_cd import (local_sweep_part, lr_local_sweep_part, merge_parts,
                                     part_copies, round_terms, safe_fraction, scale_round)
from ..kernels.parallel_dual_cd_svc import (async_sweep_part, block_parallel_dual_cd_svc,
                                            dual_state, dual_state_part, gather_active,
                                            shuffle_active, w_from_alpha, w_from_alpha_part)
from ..kernels.parallel_dual_cd_lr import (lr_async_sweep_part, lr_state, objective_of_lr,
                                           w_from_pairs)
from ..kernels.parallel_dual_cd_svr import (objective_of_svr, svr_async_sweep_part,
                                            svr_state, w_from_beta)
from ..kernels.rng import seed_state
from ..threads import PassPool, nonzero_ranges, raise_if_stopped, stop_flag

SCHEMES = ("local", "block", "wild", "atomic")
# the default for n_threads > 1 (BENCHMARKS.md, "Dual CD on threads that share no written
# memory"): where both cores run at once, atomic's and wild's threads spend more on the
# shared w's cache lines than on their steps (2 threads slower than 1); local's write
# only their own copies, for a few more sweeps than one thread. Wild can also stop away
# from the optimum (measured, never chosen); block synchronizes thousands of times a sweep
DEFAULT_SCHEME = "local"
# below this many nonzeros a sweep takes a few milliseconds, and handing its shares to
# threads costs more than it saves: one thread (not measured finely: a sweep of 2M
# nonzeros takes about 5 ms here, the hand-over about 0.1-1 ms on a loaded machine)
MIN_NNZ_PER_THREAD = 1_000_000


def solver_threads(n_threads, nnz: int) -> int:
    """The threads a dual CD fit uses: n_threads (None: 1, one class among others),
    fewer on a small problem (one below 2 * MIN_NNZ_PER_THREAD nonzeros)."""
    return max(1, min(int(n_threads or 1), int(nnz) // MIN_NNZ_PER_THREAD))


# shares of an asynchronous sweep per thread: a thread that finishes early takes another share,
# so uneven rows do not leave a thread idle at the sweep's end
SHARES_PER_THREAD = 4


def async_dual_cd_svc(X, bias, y, C, l2_loss, eps, max_iter, seed, alpha, w, n_threads,
                      atomic=True):
    """PASSCoDe on n_threads threads, in place on `alpha` (warm start) and `w`; its
    additions to w atomic, or wild (atomic False). LIBLINEAR's test ends a sweep. Wild,
    a stop is accepted only after a full sweep that began from w rebuilt from alpha met
    it. The returned w is rebuilt from the returned alpha. Returns (iterations,
    active-set size, shrinking restarts, objective)."""
    indptr, indices, data, n = X.indptr, X.indices, X.data, X.n_features
    inst, index, l = dual_state(indptr, indices, data, n, bias, y, C, l2_loss, alpha, w)
    state = seed_state(seed)
    scratch = np.empty(max(l, 1), dtype=np.int64)
    pool = PassPool(n_threads, "dual-cd")
    n_shares = n_threads * SHARES_PER_THREAD
    active_size = l
    PGmax_old, PGmin_old = INF, -INF
    it = restarts = 0
    rebuilt = False
    try:
        while it < max_iter:
            shuffle_active(state, index, active_size)
            bounds = np.linspace(0, active_size, n_shares + 1).astype(np.int64)
            shares = pool.run(async_sweep_part, [
                (indptr, indices, data, n, bias, l2_loss, inst, index, bounds[q],
                 bounds[q + 1], PGmax_old, PGmin_old, w, atomic, stop_flag())
                for q in range(n_shares)])
            raise_if_stopped()
            kept = np.array([r[0] for r in shares], dtype=np.int64)
            PGmax_new = max([r[1] for r in shares])
            PGmin_new = min([r[2] for r in shares])
            active_size = gather_active(index, bounds, kept, scratch)
            it += 1
            stop, restart, PGmax_old, PGmin_old = end_of_sweep(PGmax_new, PGmin_new, eps,
                                                               active_size, l)
            if stop and not rebuilt and not atomic:
                # confirm on the full set from the w of alpha: lost additions to w
                # cannot end the run
                w_from_alpha(indptr, indices, data, n, bias, inst, w)
                rebuilt, stop, restart = True, False, False
                active_size, PGmax_old, PGmin_old = l, INF, -INF
                restarts += 1
                continue
            if stop:
                break
            rebuilt = False
            if restart:
                active_size = l
                restarts += 1
    finally:
        pool.close()
    w_from_alpha(indptr, indices, data, n, bias, inst, w)
    return it, active_size, restarts, dual_objective(w, inst, l2_loss, alpha)


def block_dual_cd_svc(X, bias, y, C, l2_loss, eps, max_iter, seed, alpha, w, n_threads):
    """liblinear-multicore's scheme on n_threads Numba threads (the kernel's prange).
    Returns (iterations, active-set size, shrinking restarts, objective)."""
    previous = numba.get_num_threads()
    numba.set_num_threads(min(int(n_threads), numba.config.NUMBA_NUM_THREADS))
    try:
        it, active, restarts, obj, _ = block_parallel_dual_cd_svc(
            X.indptr, X.indices, X.data, X.n_features, bias, y, C, l2_loss, eps, max_iter,
            seed, alpha, w, stop_flag())
    finally:
        numba.set_num_threads(previous)
    raise_if_stopped()
    return it, active, restarts, obj


def wild_dual_cd_svc(*args):
    return async_dual_cd_svc(*args, atomic=False)


# a round of the local scheme: its parts' copies of w are set and merged once per round,
# O(K * n_weights), and every thread waits for the slowest part; rounds per sweep so that
# the merge stays a small part of the sweep's O(nnz), at most MAX_ROUNDS (BENCHMARKS.md,
# "Dual CD on threads that share no written memory": -s 1 on the rcv1-shaped set took
# 2.85 s at 16 rounds, 1.86 s at 4, 2.25 s at 2, for 14, 15 and 16 sweeps)
NNZ_PER_WEIGHT_PER_ROUND = 64
MAX_ROUNDS = 4
SIGMA = None   # None: the number of parts (CoCoA+'s safe "adding")


def rounds_per_sweep(nnz: int, n_weights: int) -> int:
    return max(1, min(MAX_ROUNDS, int(nnz) // (NNZ_PER_WEIGHT_PER_ROUND * max(n_weights, 1))))


def dual_state_on_threads(pool, X, bias, y, C, l2_loss, alpha, w, w_parts):
    """dual_state with its pass over the rows split between the pool's threads (ranges of
    about equal nonzeros; w_parts, one row per range, their sums of alpha_i y_i x_i,
    added into w in range order): (inst, index, n)."""
    inst = np.empty((X.n_samples, 4))
    ranges = nonzero_ranges(X.indptr, pool.n_threads)
    pool.run(dual_state_part, [
        (X.indptr, X.indices, X.data, X.n_features, bias, y, C, l2_loss, alpha, inst, lo, hi,
         w_parts[k]) for k, (lo, hi) in enumerate(ranges)])
    added_in_order(w, w_parts, len(ranges))
    index = np.flatnonzero(C > 0.0).astype(np.int64, copy=False)
    return inst, index, len(index)


def w_from_alpha_on_threads(pool, X, bias, inst, w, w_parts):
    """w_from_alpha with its pass over the rows split as in dual_state_on_threads."""
    ranges = nonzero_ranges(X.indptr, pool.n_threads)
    pool.run(w_from_alpha_part, [
        (X.indptr, X.indices, X.data, X.n_features, bias, inst, lo, hi, w_parts[k])
        for k, (lo, hi) in enumerate(ranges)])
    added_in_order(w, w_parts, len(ranges))


def added_in_order(w, w_parts, n_parts):
    """w = w_parts[0] + w_parts[1] + ... + w_parts[n_parts - 1], added in that order."""
    w[:] = w_parts[0]
    for k in range(1, n_parts):
        w += w_parts[k]


def local_dual_cd_svc(X, bias, y, C, l2_loss, eps, max_iter, seed, alpha, w, n_threads):
    """CoCoA+'s local sub-problems (kernels.local_dual_cd) on n_threads parts, merged at
    the end of each round (a few rounds a sweep), sigma measured at each merge, in place
    on `alpha` (warm start) and `w`. LIBLINEAR's test ends a sweep, its projected
    gradients taken by the parts. The returned w is rebuilt from the returned alpha.
    The passes before and after the sweeps (the records and w of the warm start, the
    rebuilt w) run on the threads too, in the parts' copies of w. Returns (iterations,
    active-set size, shrinking restarts, objective)."""
    indptr, indices, data, n = X.indptr, X.indices, X.data, X.n_features
    pool = PassPool(n_threads, "dual-cd")
    copies = part_copies(n_threads, len(w))
    inst, index, l = dual_state_on_threads(pool, X, bias, y, C, l2_loss, alpha, w, copies)
    state = seed_state(seed)
    scratch = np.empty(max(l, 1), dtype=np.int64)
    step = np.empty(max(l, 1))
    sigma = float(SIGMA or n_threads)
    rounds = rounds_per_sweep(len(indices), len(w))
    n_parts = rounds * n_threads
    active_size = l
    PGmax_old, PGmin_old = INF, -INF
    it = restarts = 0
    try:
        while it < max_iter:
            shuffle_active(state, index, active_size)
            bounds = np.linspace(0, active_size, n_parts + 1).astype(np.int64)
            kept = np.empty(n_parts, dtype=np.int64)
            PGmax_new, PGmin_new = -INF, INF
            for r in range(0, n_parts, n_threads):
                parts = pool.run(local_sweep_part, [
                    (indptr, indices, data, n, bias, l2_loss, inst, index, bounds[r + k],
                     bounds[r + k + 1], PGmax_old, PGmin_old, w, copies[k], sigma, step,
                     stop_flag()) for k in range(n_threads)])
                raise_if_stopped()
                w_dW, dW2, parts2 = round_terms(w, copies, n_threads, sigma)
                gamma = safe_fraction(w_dW, dW2, sum([part[3] for part in parts]),
                                      sum([part[4] for part in parts]))
                if gamma < 1.0:
                    scale_round(inst, index, step, bounds[r], bounds[r + n_threads], gamma,
                                l2_loss)
                merge_parts(w, copies, n_threads, sigma / gamma if gamma > 0.0 else INF)
                for k, part in enumerate(parts):
                    kept[r + k] = part[0]
                    PGmax_new = max(PGmax_new, part[1])
                    PGmin_new = min(PGmin_new, part[2])
                if SIGMA is None and parts2 > 0.0:
                    sigma = min(float(n_threads), max(1.0, dW2 / parts2))
            active_size = gather_active(index, bounds, kept, scratch)
            it += 1
            stop, restart, PGmax_old, PGmin_old = end_of_sweep(PGmax_new, PGmin_new, eps,
                                                               active_size, l)
            if stop:
                break
            if restart:
                active_size = l
                restarts += 1
        # the sweeps' row vectors go before dual_objective writes alpha, the first write
        # to its pages on a cold start: they do not add up at the fit's peak
        del index, scratch, step
        w_from_alpha_on_threads(pool, X, bias, inst, w, copies)
    finally:
        pool.close()
    return it, active_size, restarts, dual_objective(w, inst, l2_loss, alpha)


RUN = {"block": block_dual_cd_svc, "wild": wild_dual_cd_svc, "atomic": async_dual_cd_svc,
       "local": local_dual_cd_svc}


def async_dual_cd_svr(X, bias, y, C, p, l2_loss, eps, max_iter, seed, beta, w, n_threads):
    """-s 12 / -s 13 by PASSCoDe-Atomic on n_threads threads (LIBLINEAR's stop: the sum
    of violations over a sweep at most eps times the first sweep's, on the full set),
    filling `beta` and `w` (rebuilt from beta). Returns (iterations, active-set size,
    shrinking restarts, objective)."""
    indptr, indices, data, n = X.indptr, X.indices, X.data, X.n_features
    inst, index, n_all = svr_state(indptr, indices, data, n, bias, y, C, l2_loss, beta, w)
    state = seed_state(seed)
    scratch = np.empty(max(n_all, 1), dtype=np.int64)
    pool = PassPool(n_threads, "dual-cd")
    n_shares = n_threads * SHARES_PER_THREAD
    active_size = n_all
    Gmax_old = INF
    Gnorm1_init = -1.0
    it = restarts = 0
    try:
        while it < max_iter:
            shuffle_active(state, index, active_size)
            bounds = np.linspace(0, active_size, n_shares + 1).astype(np.int64)
            shares = pool.run(svr_async_sweep_part, [
                (indptr, indices, data, n, bias, p, l2_loss, inst, index, bounds[q],
                 bounds[q + 1], Gmax_old, w, True, stop_flag()) for q in range(n_shares)])
            raise_if_stopped()
            kept = np.array([r[0] for r in shares], dtype=np.int64)
            Gmax_new = max([r[1] for r in shares])
            Gnorm1_new = float(sum([r[2] for r in shares]))
            active_size = gather_active(index, bounds, kept, scratch)
            if it == 0:
                Gnorm1_init = Gnorm1_new
            it += 1
            if Gnorm1_new <= eps * Gnorm1_init:
                if active_size == n_all:
                    break
                active_size, Gmax_old = n_all, INF
                restarts += 1
                continue
            Gmax_old = Gmax_new
    finally:
        pool.close()
    w_from_beta(indptr, indices, data, n, bias, inst, w)
    return it, active_size, restarts, objective_of_svr(w, inst, y, p, l2_loss, beta)


def async_dual_cd_lr(X, bias, y, C, eps, max_iter, seed, alpha, w, n_threads):
    """-s 7 by PASSCoDe-Atomic on n_threads threads, LIBLINEAR's rules (no shrinking;
    stop when the largest |g'| of a sweep is below eps; the inner tolerance falls
    tenfold after a sweep of at most l/10 Newton steps), filling `alpha` (pairs) and `w`
    (rebuilt from alpha). Returns (iterations, Newton steps, objective)."""
    indptr, indices, data, n = X.indptr, X.indices, X.data, X.n_features
    inst, index, n_all = lr_state(indptr, indices, data, n, bias, y, C, w, alpha)
    state = seed_state(seed)
    pool = PassPool(n_threads, "dual-cd")
    bounds = np.linspace(0, n_all, n_threads * SHARES_PER_THREAD + 1).astype(np.int64)
    innereps, innereps_min = INNER_EPS_START, min(INNER_EPS_FLOOR, eps)
    it = total_newton = 0
    try:
        while it < max_iter:
            shuffle_active(state, index, n_all)
            shares = pool.run(lr_async_sweep_part, [
                (indptr, indices, data, n, bias, inst, index, bounds[q], bounds[q + 1],
                 innereps, w, stop_flag()) for q in range(len(bounds) - 1)])
            raise_if_stopped()
            newton_iter = sum([r[1] for r in shares])
            it += 1
            total_newton += newton_iter
            if max([r[0] for r in shares]) < eps:
                break
            if newton_iter <= n_all // 10:
                innereps = max(innereps_min, 0.1 * innereps)
    finally:
        pool.close()
    w_from_pairs(indptr, indices, data, n, bias, inst, w)
    return it, total_newton, objective_of_lr(w, inst, C, alpha)


def local_dual_cd_lr(X, bias, y, C, eps, max_iter, seed, alpha, w, n_threads):
    """-s 7 by CoCoA+'s local sub-problems on n_threads parts (local_dual_cd_svc),
    LIBLINEAR's rules as in async_dual_cd_lr. Returns (iterations, Newton steps,
    objective)."""
    indptr, indices, data, n = X.indptr, X.indices, X.data, X.n_features
    inst, index, n_all = lr_state(indptr, indices, data, n, bias, y, C, w, alpha)
    state = seed_state(seed)
    pool = PassPool(n_threads, "dual-cd")
    copies = part_copies(n_threads, len(w))
    sigma = float(n_threads)
    n_parts = rounds_per_sweep(len(indices), len(w)) * n_threads
    bounds = np.linspace(0, n_all, n_parts + 1).astype(np.int64)
    innereps, innereps_min = INNER_EPS_START, min(INNER_EPS_FLOOR, eps)
    it = total_newton = 0
    try:
        while it < max_iter:
            shuffle_active(state, index, n_all)
            newton_iter, Gmax = 0, 0.0
            for r in range(0, n_parts, n_threads):
                parts = pool.run(lr_local_sweep_part, [
                    (indptr, indices, data, n, bias, inst, index, bounds[r + k],
                     bounds[r + k + 1], innereps, w, copies[k], sigma, stop_flag())
                    for k in range(n_threads)])
                raise_if_stopped()
                merge_parts(w, copies, n_threads, sigma)
                Gmax = max([Gmax] + [part[0] for part in parts])
                newton_iter += sum([part[1] for part in parts])
            it += 1
            total_newton += newton_iter
            if Gmax < eps:
                break
            if newton_iter <= n_all // 10:
                innereps = max(innereps_min, 0.1 * innereps)
    finally:
        pool.close()
    w_from_pairs(indptr, indices, data, n, bias, inst, w)
    return it, total_newton, objective_of_lr(w, inst, C, alpha)


# the schemes that serve each family of dual CD solvers: a family whose entry lacks the
# DEFAULT_SCHEME runs on one thread (-s 12 / -s 13: PASSCoDe-Atomic only, which is slower on
# 2 threads than on 1 where both cores run at once; BENCHMARKS.md, "Dual CD on threads that
# share no written memory")
RUN_LR = {"local": local_dual_cd_lr, "atomic": async_dual_cd_lr}
RUN_SVR = {"atomic": async_dual_cd_svr}


def scheme_for(family: dict, n_threads: int):
    """The DEFAULT_SCHEME when it serves `family` and n_threads > 1, else None (one
    thread)."""
    return DEFAULT_SCHEME if n_threads > 1 and DEFAULT_SCHEME in family else None


def svr_scheme(n_threads: int, squared_loss: bool, bias: float):
    """scheme_for(RUN_SVR, n_threads), except -s 13 with a bias runs on one thread: every
    row's step reads and adds to the bias weight, so the threads' steps are stale on it,
    and some two-thread fits stalled short of the optimum (CHANGELOG, tenth session)."""
    if bias > 0 and not squared_loss:
        return None
    return scheme_for(RUN_SVR, n_threads)


def run_on_threads(X, args, n_threads):
    """The DEFAULT_SCHEME on n_threads threads, args those of dual_cd_svc after X's
    arrays: (iterations, active-set size, restarts, objective, scheme)."""
    return (*RUN[DEFAULT_SCHEME](X, *args, n_threads), DEFAULT_SCHEME)
