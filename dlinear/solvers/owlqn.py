"""OWL-QN: -s 5 and -s 6 (and -s 6's elastic net) from the loss value and gradient alone.

The orthant-wise limited-memory quasi-Newton method of Andrew & Gao (ICML 2007), the
method of Spark MLlib's L1 logistic regression. It minimises

    F(w) = l1 * ||w||_1 + l2 / 2 * ||w||^2 + sum_i C_i loss_i(w)

(l1 = 1, l2 = 0 for LIBLINEAR's -s 5 and -s 6; l1 = rho, l2 = 1 - rho for --l1-ratio rho;
the -B bias unpenalised with -R) asking each iteration only for the data term's value and
gradient at one point, a map-reduce where the rows are spread over workers
(dlinear.cluster.objective). The L1 and L2 terms, the L-BFGS memory and the line search
stay with the caller, on n-vectors.

Each iteration takes the pseudo-gradient v (the minimum-norm subgradient of F), an
L-BFGS direction d = -H v (H from the last OWLQN_MEMORY pairs of steps and changes of the
smooth part's gradient) with its components against v dropped, and backtracks along d
from step 1 (1 / ||v||_2 on the first iteration) while projecting each trial point onto
the orthant of w (a coordinate that would cross zero stays at zero), until the Armijo
condition on F holds for the projected step.

Support-only rounds (with `support_rounds`, as on a cluster: the proximal quasi-Newton
methods with support identification, DPLBFGS of Lee, Lim & Wright, KDD 2018, and MADPQN
of Li, Chiang & Lee, ICML 2020, ship only the support's coordinates once it settles):
after SUPPORT_SETTLED iterations with an unchanged orthant, the iteration runs on the
coordinates S of w's nonzeros (and the unpenalised ones) alone, its L-BFGS pairs cut to S;
a round then carries w and the gradient on S only, and S shrinks when a weight reaches
zero. Every FULL_CHECK_EVERY such iterations, and when LIBLINEAR's rule holds on S, one
round at the same point is full: the rule is tested over all coordinates, and if a zero
weight outside S violates optimality (its pseudo-gradient is not zero) the iteration
returns to all coordinates (the pairs padded with zeros) until the orthant settles again.
On S the steps are OWL-QN's restricted to the face where the other weights are zero, so
the point where it stops is a point where the full rule holds.

The reductions are dlinear.solvers.vectors.dot's (in index order, not BLAS): a fit on
the occurring columns takes the same steps as on all columns, whose extra entries are
zeros.

The stopping rule is LIBLINEAR's for -s 5 and -s 6 (solve_l1r_l2_svc and solve_l1r_lr in
linear.cpp): ||v(w)||_1 <= tol * ||v(0)||_1, with tol = eps * max(min(#pos, #neg), 1) / l
(primal_solver_tol), so -e means what it means in process; v is what LIBLINEAR sums as
its violations (its shrinking only leaves out coordinates whose violation is zero).
"""
from __future__ import annotations

import numpy as np

from .newton import primal_solver_tol
from .status import Status, note
from .task import FitResult
from .vectors import dot, norm

OWLQN_MEMORY = 10           # L-BFGS pairs (Andrew & Gao's and Spark's choice)
OWLQN_MAX_ITER = 1000       # iterations, as -s 5's cap on passes
ARMIJO = 1e-4               # sufficient decrease along the projected step
MAX_BACKTRACKS = 40         # halvings of a step before the memory is dropped
SUPPORT_SETTLED = 5         # iterations with an unchanged orthant before support-only rounds
FULL_CHECK_EVERY = 10       # support-only iterations between full rounds


def pseudo_gradient(w, g, l1):
    """The minimum-norm subgradient of l1 . |w| + f at w, g the gradient of f (l1 per
    coordinate: 0 for an unpenalised one)."""
    right, left = g + l1, g - l1
    at_zero = np.where(right < 0.0, right, np.where(left > 0.0, left, 0.0))
    return np.where(w > 0.0, right, np.where(w < 0.0, left, at_zero))


def _norm1(v):
    return dot(np.abs(v), np.ones_like(v))


def _direction(v, pairs):
    """-H v by L-BFGS's two loops over `pairs` [(s, y, 1 / s.y)], oldest first."""
    q = v.copy()
    alphas = []
    for s, y, rho in reversed(pairs):
        a = rho * dot(s, q)
        q -= a * y
        alphas.append(a)
    if pairs:
        s, y, _ = pairs[-1]
        q *= dot(s, y) / dot(y, y)
    for (s, y, rho), a in zip(pairs, reversed(alphas)):
        q += (a - rho * dot(y, q)) * s
    return -q


def _support_of(w, l1):
    """The coordinates a support-only round carries: w's nonzeros and the unpenalised."""
    return np.flatnonzero((w != 0.0) | (l1 == 0.0))


def _pairs_on(pairs, at):
    """The L-BFGS pairs restricted to the coordinates `at` of their vectors, those whose
    curvature s.y stays positive there."""
    kept = []
    for s, y, _ in pairs:
        s, y = s[at], y[at]
        sy = dot(s, y)
        if sy > 1e-12 * dot(y, y):
            kept.append((s, y, 1.0 / sy))
    return kept


def _expanded(v, index, n):
    full = np.zeros(n)
    full[index] = v
    return full


def minimize_owlqn(evaluate, n_variables: int, l1, l2, tol: float,
                   max_iter: int = OWLQN_MAX_ITER, memory: int = OWLQN_MEMORY, w0=None,
                   support_rounds=None):
    """OWL-QN from w = 0, or from the warm start w0 (the stop still relative to the
    pseudo-gradient at 0, as the in-process -s 5 / -s 6: one evaluation more).
    evaluate(w) -> (loss, its gradient) of the data term; l1 and l2 are per-coordinate
    weights (arrays of n_variables). Returns (w, iterations, F(w), evaluations, whether
    the line search stalled).

    support_rounds (optional, see the module text): an object whose
    `restrict(support)` makes the next evaluations `loss_gradient_on_support(w_S)` ->
    (loss, gradient on `support`) carry the coordinates `support` only (the nonzeros of
    the point evaluated last, then the unpenalised ones); a full evaluate() ends that."""
    l1 = np.asarray(l1, dtype=np.float64)
    l2 = np.asarray(l2, dtype=np.float64)
    full_l1, full_l2 = l1, l2
    w = np.zeros(n_variables)

    def value_and_gradient(w):
        loss, g = (evaluate(w) if support is None
                   else support_rounds.loss_gradient_on_support(w))
        g = g + l2 * w
        return float(loss) + 0.5 * dot(l2, w * w) + dot(l1, np.abs(w)), g

    support = None              # the coordinates the rounds carry (None: all)
    F, g = value_and_gradient(w)
    evaluations = 1
    pairs = []
    v = pseudo_gradient(w, g, l1)
    v_norm0 = _norm1(v)
    if w0 is not None:
        w = np.array(w0, dtype=np.float64).reshape(-1)
        F, g = value_and_gradient(w)
        evaluations += 1
        v = pseudo_gradient(w, g, l1)

    def restrict(index, at):
        """Rounds on the coordinates `index` from now on (`at`: their positions in the
        current vectors)."""
        nonlocal support, l1, l2, w, g, v, pairs
        support, l1, l2 = index, full_l1[index], full_l2[index]
        w, g, v = w[at], g[at], v[at]
        pairs = _pairs_on(pairs, at)
        support_rounds.restrict(support)

    iteration = 0
    stalled = False
    settled = 0                 # iterations since the orthant of w last changed
    since_full = 0              # support-only iterations since the last full round
    while iteration < max_iter:
        converged = _norm1(v) <= tol * v_norm0
        if support is not None and (converged or since_full >= FULL_CHECK_EVERY):
            # one full round at w: the stopping rule over all coordinates, and whether
            # a zero weight left out of the rounds violates optimality
            w_full = _expanded(w, support, n_variables)
            pairs = [(_expanded(s, support, n_variables), _expanded(y, support, n_variables),
                      rho) for s, y, rho in pairs]
            support, l1, l2 = None, full_l1, full_l2
            F, g = value_and_gradient(w_full)
            evaluations += 1
            w, v = w_full, pseudo_gradient(w_full, g, l1)
            if _norm1(v) <= tol * v_norm0:
                break
            index = _support_of(w, l1)
            left_out = np.ones(n_variables, dtype=bool)
            left_out[index] = False
            if np.any(v[left_out] != 0.0):
                settled = 0             # back to full rounds until it settles again
            else:
                restrict(index, index)
                since_full = 0
            continue
        if converged:
            break
        d = _direction(v, pairs)
        d[d * v >= 0.0] = 0.0               # only the components that descend along -v
        orthant = np.where(w != 0.0, np.sign(w), -np.sign(v))
        step = 1.0 if pairs else 1.0 / max(norm(v), 1e-300)
        for _ in range(MAX_BACKTRACKS):
            trial = w + step * d
            trial[np.sign(trial) != orthant] = 0.0
            F_trial, g_trial = value_and_gradient(trial)
            evaluations += 1
            if F_trial <= F + ARMIJO * dot(v, trial - w):
                break
            step *= 0.5
        else:
            if pairs:
                pairs = []                  # a stale curvature model: start it afresh
            elif support is not None:       # no descent on the support: a full round
                since_full = FULL_CHECK_EVERY
            else:                           # no descent even along -v: rounding
                stalled = True
                break
            continue
        s, y = trial - w, g_trial - g
        sy = dot(s, y)
        if sy > 1e-12 * dot(y, y):
            pairs.append((s, y, 1.0 / sy))
            del pairs[:-memory]
        same_orthant = np.array_equal(np.sign(trial), np.sign(w))
        w, F, g = trial, F_trial, g_trial
        v = pseudo_gradient(w, g, l1)
        iteration += 1
        if support is None:
            settled = settled + 1 if same_orthant else 0
            if support_rounds is not None and settled >= SUPPORT_SETTLED:
                index = _support_of(w, l1)
                if len(index) < n_variables:
                    restrict(index, index)
                    since_full = 0
        else:
            since_full += 1
            at = _support_of(w, l1)
            if len(at) < len(support):      # weights left the support: carry fewer
                restrict(support[at], at)
    if support is not None:
        w = _expanded(w, support, n_variables)
    return w, iteration, F, evaluations, stalled


def fit_owlqn(evaluate, n_variables: int, counts, params, unreg_bias: bool,
              reported_w_size: int = None, max_iter: int = OWLQN_MAX_ITER,
              w0=None, support_rounds=None) -> FitResult:
    """-s 5 or -s 6 (with params.l1_ratio) of one binary problem by OWL-QN, from w = 0 or
    the warm start w0;
    evaluate(w) -> (loss, gradient) of its data term (one map-reduce on a cluster);
    counts = (#positive rows, #rows) for LIBLINEAR's tolerance. The bias, when
    unreg_bias, is the last variable. reported_w_size: the features the log line counts
    (a fit on the occurring columns reports all of them); support_rounds: as
    minimize_owlqn's."""
    rho = 1.0 if params.l1_ratio is None else float(params.l1_ratio)
    penalized = np.ones(n_variables)
    if unreg_bias:
        penalized[-1] = 0.0
    tol = primal_solver_tol(params.eps, None, False, counts)
    w, n_iter, F, evaluations, stalled = minimize_owlqn(
        evaluate, n_variables, rho * penalized, (1.0 - rho) * penalized, tol, max_iter,
        w0=w0, support_rounds=support_rounds)
    hit = n_iter >= max_iter
    log = [f"OWL-QN: #iter = {n_iter}, #evaluations = {evaluations}"]
    status = Status.CONVERGED
    if stalled:
        status |= note(log, Status.LINE_SEARCH_FAILED)
    if hit:
        status |= note(log, Status.MAX_ITER)
    log += [f"Objective value = {F:f}",
            f"#nonzeros/#features = {np.count_nonzero(w)}/"
            f"{reported_w_size if reported_w_size is not None else n_variables}"]
    return FitResult(w=w, n_iter=int(n_iter), log=log, hit_max_iter=hit, status=status)
