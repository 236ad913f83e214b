"""Truncated Newton drivers of LIBLINEAR's primal solvers (-s 0, -s 2, -s 11).

Two drivers over one objective protocol, NumPy only (no Numba, no Dask), so the same code
runs on a local problem or drives a map-reduce over data blocks held on Dask workers:

- `newton`: the line-search Newton method with diagonally preconditioned CG of LIBLINEAR
  2.40+ (newton.cpp; Galli & Lin, "A study on truncated Newton methods for linear
  classification", and Hsia, Chiang & Lin 2018 for the preconditioner). CG stops on the
  quadratic-model test  cg_iter * (Q_k - Q_{k-1}) >= cgtol * Q_k  with
  cgtol = min(eps_cg, sqrt(||g||_{M^-1})), eps_cg = 0.5; the step is found by
  backtracking (halving from 1, at most 20 trials) until f(w + a s) - f(w) <= 0.01 a g^T s.
- `tron`: the trust-region Newton method of Lin, Weng & Keerthi 2008 as in LIBLINEAR
  2.20-2.30 (tron.cpp, with the same preconditioner): CG truncated at the trust-region
  boundary ||s||_M = delta, ratio test with eta0 = 1e-4, eta1 = 0.25, eta2 = 0.75 and
  radius updates sigma1 = 0.25, sigma2 = 0.5, sigma3 = 4; eps_cg = 0.1 (0.5 warm-started).

Both stop when ||grad f(w)|| <= eps ||grad f(0)|| (the caller converts LIBLINEAR's -e into
this eps as train_one does), after max_newton_iter Newton iterations (LIBLINEAR: 1000), or on
LIBLINEAR's safeguards, with its log lines and WARNING texts.

The objective protocol (an object `obj`; all vectors are float64 NumPy arrays of length
n = obj.n_variables, never of the number of rows l):

    obj.n_variables -> int
        n, the number of weights (features, plus one with a bias).
    obj.fun(w) -> float
        f(w). May keep state derived from w (z = X w) for the calls that follow.
    obj.grad(w) -> ndarray
        grad f(w); called only after fun at the same w, whose state it may reuse. Fixes
        the point at which hv and diag_precond are taken (it may keep D, the active set).
    obj.hv(s) -> ndarray
        H s, the (generalised) Hessian at the w of the last grad, times s.
    obj.diag_precond() -> ndarray
        diag(H) at the w of the last grad (LIBLINEAR's get_diag_preconditioner; the driver
        mixes it as (1 - 0.01) + 0.01 M), asked once after each grad.
    obj.linesearch_and_update(w, s, f, g, alpha) -> (step, f_new)
        LIBLINEAR's linesearch_and_update: with f = f(w) and g = grad f(w) (w the point of
        the last fun or accepted step), try step = alpha, alpha/2, ... (at most 20) until
        f(w + step s) - f <= 0.01 step g^T s. On success w is updated in place to
        w + step s, any state (z) moves with it, and (step, f(w + step s)) is returned; on
        failure w and the state are unchanged and (0.0, f) is returned.
        `linesearch_by_fun` is a reference implementation from fun alone.

The drivers never call these methods: each is a generator (`newton_steps`, `tron_steps`)
that yields its requests, (method, args) of the protocol, and is sent their results
(dlinear.solvers.requests). `newton` and `tron` serve one against one objective; k-column
Newton advances the drivers of K classes in lockstep, one round of requests of them all
served by one pass over the data, without threads. The drivers never modify what they
are sent. A distributed backend implements each request as one map-reduce: broadcast the
n-vector, have each block compute its part with its own z, D and active set kept on its
worker, and tree-sum the blocks' n-vectors or scalars (the line search needs one pass for
X s, then one scalar reduction per trial step).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import DlinearError
from .primal_objectives import make_objective
from .checkpoint import log_lines
from .requests import ObjectiveRequest, Request, serve
from .status import Status, note
from .task import FitResult, starting_w
from .vectors import dot, norm

NEWTON_MAX_ITER = 1000        # LIBLINEAR's cap on Newton iterations of NEWTON / TRON
ALPHA_PCG = 0.01              # preconditioner M = (1 - a) I + a diag(H)
NEWTON_EPS_CG = 0.5
TRON_EPS_CG = 0.1
TRON_EPS_CG_WARM = 0.5

# TRON's ratio test and trust-region updates (Lin, Weng & Keerthi 2008)
ETA0, ETA1, ETA2 = 1e-4, 0.25, 0.75
SIGMA1, SIGMA2, SIGMA3 = 0.25, 0.5, 4.0

DRIVERS = ("linesearch", "tron")

@dataclass
class DriverResult:
    n_iter: int                 # Newton iterations done (accepted steps for TRON)
    f: float                    # f at the returned w
    gnorm: float                # ||grad f|| at the returned w
    gnorm0: float               # ||grad f(0)||
    converged: bool             # stopped by ||g|| <= eps ||g0||
    hit_max_iter: bool
    log: list = field(default_factory=list)
    cg_iter: int = 0            # Hessian-vector products in all
    status: Status = Status.CONVERGED


def linesearch_by_fun(obj, w, s, f, g, alpha, eta=0.01, max_num_linesearch=20):
    """function::linesearch_and_update of newton.cpp: the backtracking line search using
    fun only, for objectives without a faster one."""
    gTs = dot(g, s)
    fold = f
    for _ in range(max_num_linesearch):
        w_new = w + alpha * s
        f = obj.fun(w_new)
        if f - fold <= eta * alpha * gTs:
            w[:] = w_new
            return alpha, f
        alpha *= 0.5
    obj.fun(w)      # restore the state at w
    return 0.0, fold


def _check_size(obj, w):
    n = obj.n_variables
    if w.shape != (n,):
        raise ValueError(f"w has shape {w.shape}, the objective has {n} variables")


def _start(w, gnorm0=None):
    """LIBLINEAR's start: ||grad f(0)|| for the stopping rule, then f and g at w. From w = 0
    the second evaluation is the first one again, so it is not repeated. gnorm0, when the
    caller knows it (the same problem at another C), saves the pass at 0."""
    if gnorm0 is not None and w.any():
        f = yield Request(ObjectiveRequest.FUN, (w,))
        g = yield Request(ObjectiveRequest.GRAD, (w,))
        return f, g, float(gnorm0)
    zero = np.zeros(len(w))
    f0 = yield Request(ObjectiveRequest.FUN, (zero,))
    g0 = yield Request(ObjectiveRequest.GRAD, (zero,))
    gnorm0 = float(norm(g0))
    if not w.any():
        return f0, g0, gnorm0
    f = yield Request(ObjectiveRequest.FUN, (w,))
    g = yield Request(ObjectiveRequest.GRAD, (w,))
    return f, g, gnorm0


def _pcg(g, M, eps_cg, log, work=None, max_cg_iter=None):
    """newton.cpp's pcg: preconditioned CG on H s = -g, stopped by the quadratic model.
    Returns (s, r, cg_iter) with r = -g - H s. `work`: four n-vectors to compute in
    (s, r, z, d), reused from one Newton iteration to the next (s and r are returned in
    them), so that no n-vector is allocated in the loop (a fresh one of tens of MB is
    page-faulted in on first touch); z, free from the top of a CG step until it is
    computed again, is the scratch of the step's two updates. At most max_cg_iter steps
    (default LIBLINEAR's max(n, 5))."""
    n = len(g)
    if work is None:
        work = [np.empty(n) for _ in range(4)]
    s, r, z, d = work
    s.fill(0.0)
    np.negative(g, out=r)
    np.divide(r, M, out=z)
    np.copyto(d, z)
    zTr = dot(z, r)
    cgtol = min(eps_cg, math.sqrt(math.sqrt(zTr)))
    Q = 0.0
    cg_iter = 0
    max_cg_iter = max(n, 5) if max_cg_iter is None else max_cg_iter
    while cg_iter < max_cg_iter:
        cg_iter += 1
        Hd = yield Request(ObjectiveRequest.HV, (d,))
        dHd = dot(d, Hd)
        if dHd <= 1.0e-16:      # avoid 0/0
            break
        alpha = zTr / dHd
        s += np.multiply(d, alpha, out=z)
        r -= np.multiply(Hd, alpha, out=z)
        newQ = -0.5 * (dot(s, r) - dot(s, g))
        Qdiff = newQ - Q
        if newQ <= 0 and Qdiff <= 0:
            if cg_iter * Qdiff >= cgtol * newQ:
                break
        else:
            log.append("WARNING: quadratic approximation > 0 or increasing in CG")
            break
        Q = newQ
        np.divide(r, M, out=z)
        znewTrnew = dot(z, r)
        d *= znewTrnew / zTr
        d += z
        zTr = znewTrnew
    capped = note(log, Status.MAX_CG_STEPS) if cg_iter == max_cg_iter else Status.CONVERGED
    return s, r, cg_iter, capped


def newton_steps(w, eps, eps_cg=NEWTON_EPS_CG, max_newton_iter=NEWTON_MAX_ITER,
                 max_cg_iter=None, checkpoint=None, gnorm0=None):
    """LIBLINEAR 2.40+'s NEWTON::newton from w (updated in place), as a generator of the
    objective protocol's requests (see the module text); returns a DriverResult.
    max_cg_iter: CG steps per Newton step (default max(len(w), 5)). checkpoint: a
    ProblemCheckpoint (dlinear.solvers.checkpoint) the state is saved to after a Newton
    iteration, and resumed from. gnorm0: ||grad f(0)|| when known (see _start)."""
    resumed = None if checkpoint is None else checkpoint.state()
    if resumed is None:
        log = []
        f, g, gnorm0 = yield from _start(w, gnorm0)
        gnorm = norm(g)
        log.append("init f %5.3e |g| %5.3e" % (f, gnorm))
        n_iter = 0
        total_cg = 0
    else:
        w[:] = resumed["w"]
        log, gnorm0 = log_lines(resumed), float(resumed["gnorm0"])
        n_iter, total_cg = int(resumed["n_iter"]), int(resumed["cg_iter"])
        f = yield Request(ObjectiveRequest.FUN, (w,))
        g = yield Request(ObjectiveRequest.GRAD, (w,))
        gnorm = norm(g)
    converged = gnorm <= eps * gnorm0
    status = Status.CONVERGED
    stopped = converged
    work = [np.empty(len(g)) for _ in range(4)]
    while n_iter < max_newton_iter and not stopped:
        M = np.multiply((yield Request(ObjectiveRequest.DIAG_PRECOND)), ALPHA_PCG)   # (1 - a) + a diag(H)
        M += 1.0 - ALPHA_PCG
        s, _, cg_iter, capped = yield from _pcg(g, M, eps_cg, log, work, max_cg_iter)
        status |= capped
        total_cg += cg_iter
        fold = f
        step, f = yield Request(ObjectiveRequest.LINESEARCH_AND_UPDATE, (w, s, f, g, 1.0))
        if step == 0:
            status |= note(log, Status.LINE_SEARCH_FAILED)
            stopped = True
            break
        n_iter += 1
        del g, M    # not held through the pass that makes the next ones
        g = yield Request(ObjectiveRequest.GRAD, (w,))
        gnorm = norm(g)
        log.append("iter %2d f %5.3e |g| %5.3e CG %3d step_size %4.2e"
                   % (n_iter, f, gnorm, cg_iter, step))
        if gnorm <= eps * gnorm0:
            converged = stopped = True
        elif f < -1.0e32:
            log.append("WARNING: f < -1.0e+32")
            stopped = True
        elif abs(fold - f) <= 1.0e-12 * abs(f):
            log.append("WARNING: actred too small")
            stopped = True
        if checkpoint is not None and not stopped:
            checkpoint.save_if_due(lambda: dict(w=w, gnorm0=gnorm0, n_iter=n_iter,
                                                cg_iter=total_cg, log=np.array(log)))
    hit = not stopped
    if hit:
        status |= note(log, Status.MAX_NEWTON_ITER)
    return DriverResult(n_iter, f, gnorm, gnorm0, converged, hit, log, total_cg, status)


def newton(obj, w, eps, eps_cg=NEWTON_EPS_CG, max_newton_iter=NEWTON_MAX_ITER):
    """LIBLINEAR 2.40+'s NEWTON::newton: minimises obj from w (updated in place)."""
    _check_size(obj, w)
    return serve(newton_steps(w, eps, eps_cg, max_newton_iter), obj)


def _uTMv(u, M, v):
    return dot(u * M, v)


def _trpcg(delta, g, M, eps_cg, log, max_cg_iter=None):
    """tron.cpp's trpcg: preconditioned CG truncated at ||s||_M = delta.
    Returns (s, r, cg_iter, reach_boundary) with r = -g - H s."""
    n = len(g)
    s = np.zeros(n)
    r = -g
    z = r / M
    d = z.copy()
    zTr = dot(z, r)
    cgtol = eps_cg * math.sqrt(zTr)
    cg_iter = 0
    max_cg_iter = max(n, 5) if max_cg_iter is None else max_cg_iter
    reach_boundary = False
    while cg_iter < max_cg_iter:
        if math.sqrt(zTr) <= cgtol:
            break
        cg_iter += 1
        Hd = yield Request(ObjectiveRequest.HV, (d,))
        alpha = zTr / dot(d, Hd)
        s += alpha * d
        if math.sqrt(_uTMv(s, M, s)) > delta:
            reach_boundary = True
            s -= alpha * d
            sTMd = _uTMv(s, M, d)
            sTMs = _uTMv(s, M, s)
            dTMd = _uTMv(d, M, d)
            dsq = delta * delta
            rad = math.sqrt(sTMd * sTMd + dTMd * (dsq - sTMs))
            if sTMd >= 0:
                alpha = (dsq - sTMs) / (sTMd + rad)
            else:
                alpha = (rad - sTMd) / dTMd
            s += alpha * d
            r -= alpha * Hd
            break
        r -= alpha * Hd
        z = r / M
        znewTrnew = dot(z, r)
        d *= znewTrnew / zTr
        d += z
        zTr = znewTrnew
    capped = note(log, Status.MAX_CG_STEPS) if cg_iter == max_cg_iter else Status.CONVERGED
    return s, r, cg_iter, reach_boundary, capped


def tron_steps(w, eps, eps_cg=TRON_EPS_CG, max_newton_iter=NEWTON_MAX_ITER,
               max_cg_iter=None, checkpoint=None, gnorm0=None):
    """LIBLINEAR 2.20-2.30's TRON::tron (trust-region Newton, preconditioned CG) from w
    (updated in place), as a generator of the objective protocol's requests (see the
    module text); returns a DriverResult. max_cg_iter, checkpoint and gnorm0 as
    newton_steps'."""
    resumed = None if checkpoint is None else checkpoint.state()
    if resumed is None:
        log = []
        f, g, gnorm0 = yield from _start(w, gnorm0)
    else:
        w[:] = resumed["w"]
        log, gnorm0 = log_lines(resumed), float(resumed["gnorm0"])
        f = yield Request(ObjectiveRequest.FUN, (w,))
        g = yield Request(ObjectiveRequest.GRAD, (w,))
    gnorm = norm(g)
    if resumed is None:
        log.append("init f %5.3e |g| %5.3e" % (f, gnorm))
    converged = gnorm <= eps * gnorm0
    status = Status.CONVERGED
    stopped = converged
    M = (1.0 - ALPHA_PCG) + ALPHA_PCG * (yield Request(ObjectiveRequest.DIAG_PRECOND))
    delta = math.sqrt(_uTMv(g, M, g))
    delta_adjusted = False
    n_iter = 0          # accepted steps (tron.cpp's iter - 1)
    total_cg = 0
    if resumed is not None:
        delta, delta_adjusted = float(resumed["delta"]), bool(resumed["delta_adjusted"])
        n_iter, total_cg = int(resumed["n_iter"]), int(resumed["cg_iter"])
    while n_iter < max_newton_iter and not stopped:
        s, r, cg_iter, reach_boundary, capped = yield from _trpcg(delta, g, M, eps_cg, log,
                                                                  max_cg_iter)
        status |= capped
        total_cg += cg_iter
        w_new = w + s
        gs = dot(g, s)
        prered = -0.5 * (gs - dot(s, r))
        fnew = yield Request(ObjectiveRequest.FUN, (w_new,))
        actred = f - fnew
        sMnorm = math.sqrt(_uTMv(s, M, s))
        if n_iter == 0 and not delta_adjusted:     # first iteration: adjust the bound
            delta = min(delta, sMnorm)
            delta_adjusted = True
        if fnew - f - gs <= 0:
            alpha = SIGMA3
        else:
            alpha = max(SIGMA1, -0.5 * (gs / (fnew - f - gs)))
        if actred < ETA0 * prered:
            delta = min(alpha * sMnorm, SIGMA2 * delta)
        elif actred < ETA1 * prered:
            delta = max(SIGMA1 * delta, min(alpha * sMnorm, SIGMA2 * delta))
        elif actred < ETA2 * prered:
            delta = max(SIGMA1 * delta, min(alpha * sMnorm, SIGMA3 * delta))
        elif reach_boundary:
            delta = SIGMA3 * delta
        else:
            delta = max(delta, min(alpha * sMnorm, SIGMA3 * delta))
        log.append("iter %2d act %5.3e pre %5.3e delta %5.3e f %5.3e |g| %5.3e CG %3d"
                   % (n_iter + 1, actred, prered, delta, f, gnorm, cg_iter))
        if actred > ETA0 * prered:
            n_iter += 1
            w[:] = w_new
            f = fnew
            g = yield Request(ObjectiveRequest.GRAD, (w,))
            M = (1.0 - ALPHA_PCG) + ALPHA_PCG * (yield Request(ObjectiveRequest.DIAG_PRECOND))
            gnorm = norm(g)
            if gnorm <= eps * gnorm0:
                converged = stopped = True
                break
        if f < -1.0e32:
            log.append("WARNING: f < -1.0e+32")
            stopped = True
        elif prered <= 0:
            log.append("WARNING: prered <= 0")
            stopped = True
        elif abs(actred) <= 1.0e-12 * abs(f) and abs(prered) <= 1.0e-12 * abs(f):
            log.append("WARNING: actred and prered too small")
            stopped = True
        if checkpoint is not None and not stopped:
            checkpoint.save_if_due(lambda: dict(
                w=w, gnorm0=gnorm0, n_iter=n_iter, cg_iter=total_cg, delta=delta,
                delta_adjusted=delta_adjusted, log=np.array(log)))
    hit = not stopped
    if hit:
        status |= note(log, Status.MAX_NEWTON_ITER)
    return DriverResult(n_iter, f, gnorm, gnorm0, converged, hit, log, total_cg, status)


def tron(obj, w, eps, eps_cg=TRON_EPS_CG, max_newton_iter=NEWTON_MAX_ITER):
    """LIBLINEAR 2.20-2.30's TRON::tron (trust-region Newton, preconditioned CG):
    minimises obj from w (updated in place)."""
    _check_size(obj, w)
    return serve(tron_steps(w, eps, eps_cg, max_newton_iter), obj)


def primal_solver_tol(eps, y, regression, counts=None):
    """train_one's primal_solver_tol: eps for regression, else
    eps * max(min(#pos, #neg), 1) / l. `counts` = (#pos, l) stands in for y when the
    labels live on cluster workers."""
    if regression:
        return float(eps)
    pos, l = counts if counts is not None else (int(np.count_nonzero(y > 0)), len(y))
    return float(eps) * max(min(pos, l - pos), 1) / max(l, 1)


def newton_tol(params, y=None, counts=None):
    """primal_solver_tol of params.eps (resolved) for the problem of labels y, or of
    counts = (#positive rows, #rows) where the labels live on cluster workers."""
    regression = params.spec.kind == "regression"
    return primal_solver_tol(params.eps, y, regression, counts)


def fit_steps(params, w0, n_variables, eps, max_newton_iter=NEWTON_MAX_ITER,
              checkpoint=None, gnorm0=None):
    """The driver params.newton ("linesearch" or "tron") from the warm start w0 (None: 0)
    to ||grad f|| <= eps ||grad f(0)||, as a generator of the objective protocol's
    requests; returns the FitResult. Served by one objective (`serve`), or driven through
    a RegularizedObjective in lockstep with other classes' (dlinear.solvers.kcolumn).
    gnorm0: ||grad f(0)|| when known (a warm start at another C of the same problem)."""
    w = starting_w(w0, n_variables)
    if params.max_newton_iter is not None:
        max_newton_iter = min(max_newton_iter, int(params.max_newton_iter))
    driver = params.newton
    # LIBLINEAR's CG cap, of all the columns where the fit runs on those that occur
    max_cg_iter = max(params.cg_cap_weights or n_variables, 5)
    if driver == "tron":
        eps_cg = TRON_EPS_CG_WARM if w0 is not None else TRON_EPS_CG
        res = yield from tron_steps(w, eps, eps_cg=eps_cg, max_newton_iter=max_newton_iter,
                                    max_cg_iter=max_cg_iter, checkpoint=checkpoint,
                                    gnorm0=gnorm0)
    elif driver == "linesearch":
        res = yield from newton_steps(w, eps, max_newton_iter=max_newton_iter,
                                      max_cg_iter=max_cg_iter, checkpoint=checkpoint,
                                      gnorm0=gnorm0)
    else:
        raise DlinearError(f"unknown Newton driver {driver!r}; use one of {DRIVERS}")
    return FitResult(w=w, n_iter=res.n_iter, log=res.log, hit_max_iter=res.hit_max_iter,
                     status=res.status, gnorm0=res.gnorm0)


def fit_newton(task, params, max_newton_iter=NEWTON_MAX_ITER):
    """-s 0, -s 2 or -s 11 on one SubProblem in this process by the driver params.newton
    ("linesearch" or "tron"), warm-started from task.w0, on the local objective
    (dlinear.solvers.primal_objectives), its passes on task.n_threads threads."""
    if params.eps is None:
        params = params.resolved()
    objective = make_objective(task, params)
    try:
        return serve(fit_steps(params, task.w0, task.w_size, newton_tol(params, task.y),
                               max_newton_iter, task.checkpoint, task.gnorm0), objective)
    finally:
        objective.loss_term.close()


def fit_newton_objective(objective, params, w0, counts, max_newton_iter=NEWTON_MAX_ITER):
    """fit_newton on any objective of one binary or regression problem (a distributed
    one: dlinear.cluster.objective), warm-started from w0 (None: 0); counts =
    (#positive rows, #rows) give the tolerance."""
    if params.eps is None:
        params = params.resolved()
    return serve(fit_steps(params, w0, objective.n_variables,
                           newton_tol(params, counts=counts), max_newton_iter), objective)
