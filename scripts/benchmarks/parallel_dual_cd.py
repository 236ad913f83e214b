"""Dual CD (-s 1, -s 3) on threads in one process, against one thread and against
liblinear-multicore's `-m 2` measured in the same run.

    python -m scripts.benchmarks.parallel_dual_cd --data /work/data/rcv1_542k.train \\
        --cache /tmp/rcv1.npz --lock /work/bench.lock [--rows N] [--repeat 3] \\
        [--schemes local,atomic,wild] [--solvers 1,3,7] [--multicore-python /work/venv_mc/bin/python]

For each solver (train call only, C = 1, default eps, no bias), best of --repeat:
- dlinear on 1 thread (the serial kernel) and on 2 threads in each scheme (-s 7: local
  and atomic only): wall and process CPU seconds. For the asynchronous schemes also the CPU critical path: per
  sweep the CPU seconds of the busiest thread, plus the driver's serial CPU; the wall a
  2-core machine would show if nothing else ran on it (on a shared machine the wall
  clock mostly measures the other processes).
- the machine's ceiling: two processes (no threads) each fitting on 1 thread at once;
  ceiling = 2 x CPU alone / CPU each when together (what memory and caches leave of 2x).
- liblinear-multicore `-m 1` and `-m 2` (wall), when --multicore-python is a Python with
  liblinear-multicore installed (skipped otherwise).
- a projection to 8 and 16 threads from the 2-thread profile: the driver's serial CPU
  plus the threads' CPU divided among t threads (the sweeps and their cost per share as
  measured at 2 threads).
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import subprocess
import threading
import time
from collections import defaultdict

import numpy as np

from dlinear import Params, train
from dlinear.data.libsvm_reader import Problem, read_libsvm
from dlinear.solvers import parallel_dual_cd

from . import harness

HERE = os.path.dirname(os.path.abspath(__file__))


def save(cache, problem):
    """The CSR arrays as liblinear_multicore_run.py reads them."""
    np.savez(cache, indptr=problem.indptr, indices=problem.indices, data=problem.data,
             y=problem.y, n_features=problem.n_features)


def load(path, cache, rows):
    """The data set (its first `rows` rows when given), from the .npz `cache` when it
    exists (written after the first read)."""
    z = np.load(cache) if cache and os.path.exists(cache) else None
    if z is not None and "n_features" in z.files:
        problem = Problem(indptr=z["indptr"], indices=z["indices"], data=z["data"], y=z["y"],
                          n_features=int(z["n_features"]))
    else:                   # no cache, or one in an older format
        problem = read_libsvm(path)
        if cache:
            save(cache, problem)
    if rows and rows < problem.n_samples:
        problem = problem.subset(np.arange(rows))
    return problem


class SweepProfile:
    """Wraps the asynchronous schemes' share kernel to record each share's thread CPU
    seconds: critical_path(process CPU) = sum over sweeps of the busiest thread's CPU +
    the CPU spent outside the shares (the driver)."""

    def __init__(self, n_threads):
        self.n_shares = n_threads * parallel_dual_cd.SHARES_PER_THREAD
        self.kernel = parallel_dual_cd.async_sweep_part
        self.lock = threading.Lock()
        self.calls = 0
        self.busy = defaultdict(float)       # (sweep, thread) -> CPU seconds

    def __call__(self, *args):
        with self.lock:
            sweep = self.calls // self.n_shares
            self.calls += 1
        start = time.thread_time()
        result = self.kernel(*args)
        with self.lock:
            self.busy[sweep, threading.get_ident()] += time.thread_time() - start
        return result

    def shares_cpu(self):
        return sum(self.busy.values())

    def critical_path(self, process_cpu):
        per_sweep = defaultdict(float)
        for (sweep, _), seconds in self.busy.items():
            per_sweep[sweep] = max(per_sweep[sweep], seconds)
        return sum(per_sweep.values()) + (process_cpu - self.shares_cpu())


def fit(problem, solver, n_threads, scheme=None):
    """(Timing, profile or None) of one train call; the scheme forced on any size."""
    params = Params(solver_type=solver)
    if n_threads == 1:
        return harness.timed(lambda: train(problem, params, n_threads=1)), None
    saved = (parallel_dual_cd.DEFAULT_SCHEME, parallel_dual_cd.MIN_NNZ_PER_THREAD,
             parallel_dual_cd.async_sweep_part)
    profile = SweepProfile(n_threads) if scheme in ("wild", "atomic") else None
    parallel_dual_cd.DEFAULT_SCHEME = scheme
    parallel_dual_cd.MIN_NNZ_PER_THREAD = 1
    if profile is not None:
        parallel_dual_cd.async_sweep_part = profile
    try:
        return harness.timed(lambda: train(problem, params, n_threads=n_threads)), profile
    finally:
        (parallel_dual_cd.DEFAULT_SCHEME, parallel_dual_cd.MIN_NNZ_PER_THREAD,
         parallel_dual_cd.async_sweep_part) = saved


def alone_or_together(problem, solver, n_procs, barrier, out):
    fit(problem.subset(np.arange(2000)), solver, 1)          # compiled, pages touched
    barrier.wait()
    timing, _ = fit(problem, solver, 1)
    out.put((timing.wall, timing.cpu))


def at_once(problem, solver, n_procs):
    """(wall, CPU) of the slowest of n_procs processes fitting on 1 thread at once."""
    ctx = mp.get_context("fork")
    out, barrier = ctx.Queue(), ctx.Barrier(n_procs)
    procs = [ctx.Process(target=alone_or_together, args=(problem, solver, n_procs, barrier,
                                                         out)) for _ in range(n_procs)]
    for p in procs:
        p.start()
    results = [out.get() for _ in procs]
    for p in procs:
        p.join()
    return max(r[0] for r in results), max(r[1] for r in results)


def multicore_peer(python, cache, solver, repeat, lock, timeout):
    """{threads: wall seconds} of liblinear-multicore -m 1 / -m 2 (a run still going
    after `timeout` seconds is stopped and given as -timeout: a lower bound), or {}
    without it."""
    if not python or not os.path.exists(python):
        return {}
    walls = {}
    for m in (1, 2):
        command = [python, os.path.join(HERE, "liblinear_multicore_run.py"), cache,
                   str(repeat), f"-s {solver} -m {m}"]
        with harness.benchmark_lock(lock):
            try:
                done = subprocess.run(command, capture_output=True, text=True, check=True,
                                      env={**os.environ, "PYTHONPATH": ""}, timeout=timeout)
            except subprocess.TimeoutExpired:
                walls[m] = -float(timeout)
                continue
        walls[m] = json.loads(done.stdout.splitlines()[-1])["wall"]
    return walls


def best(runs):
    return min(runs, key=lambda r: r[0].wall)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="/work/data/rcv1_542k.train")
    ap.add_argument("--cache", default=None, help=".npz of the CSR arrays (made if missing;"
                                                  " the peer needs one)")
    ap.add_argument("--rows", type=int, default=0)
    ap.add_argument("--solvers", default="1,3")
    ap.add_argument("--schemes", default="local,atomic")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--multicore-python", default="/work/venv_mc/bin/python")
    ap.add_argument("--peer-timeout", type=float, default=60.0,
                    help="seconds after which a liblinear-multicore run is stopped")
    harness.add_output_arguments(ap)
    args = ap.parse_args(argv)
    report = harness.Report("parallel_dual_cd", args)
    problem = load(args.data, args.cache, args.rows)
    cache = args.cache
    if args.rows and args.cache:       # the peer reads the same rows
        cache = args.cache.replace(".npz", f"-{args.rows}.npz")
        if not os.path.exists(cache):
            save(cache, problem)
    report.note(f"data: {args.data} ({problem.n_samples} x {problem.n_features}, nnz "
                f"{problem.nnz}); train call, C = 1, default eps; best of {args.repeat}")
    schemes = [s for s in args.schemes.split(",") if s]
    for solver in [int(s) for s in args.solvers.split(",")]:
        small = problem.subset(np.arange(2000))
        for scheme in schemes:                                     # compiled
            fit(small, solver, 2, scheme)
        fit(small, solver, 1)
        lock = harness.benchmark_lock(args.lock)      # one locked section per solver
        lock.__enter__()
        one = best([fit(problem, solver, 1) for _ in range(args.repeat)])[0]
        w_one = one.value.w
        report.add(solver=solver, run="dlinear 1 thread", wall=one.wall, cpu=one.cpu,
                   critical_path=one.cpu, speedup_wall=1.0, speedup_cpu_path=1.0,
                   sweeps=int(one.value.n_iter[0]))
        for scheme in schemes:
            two, profile = best([fit(problem, solver, 2, scheme) for _ in range(args.repeat)])
            path = profile.critical_path(two.cpu) if profile else float("nan")
            serial = two.cpu - profile.shares_cpu() if profile else float("nan")
            report.add(
                solver=solver, run=f"dlinear 2 threads, {scheme}", wall=two.wall,
                cpu=two.cpu, critical_path=path, speedup_wall=one.wall / two.wall,
                speedup_cpu_path=one.cpu / path, sweeps=int(two.value.n_iter[0]),
                w_rel_diff=float(np.linalg.norm(two.value.w - w_one) / np.linalg.norm(w_one)))
            if profile:
                for t in (8, 16):
                    report.add(solver=solver, run=f"projected {t} threads, {scheme}",
                               critical_path=serial + profile.shares_cpu() / t,
                               speedup_cpu_path=one.cpu / (serial + profile.shares_cpu() / t))
        alone = min(at_once(problem, solver, 1) for _ in range(args.repeat))
        together = min(at_once(problem, solver, 2) for _ in range(args.repeat))
        lock.__exit__(None, None, None)
        report.add(solver=solver, run="ceiling: 2 processes at once", wall=together[0],
                   cpu=together[1], speedup_wall=2 * alone[0] / together[0],
                   speedup_cpu_path=2 * alone[1] / together[1])
        peer = multicore_peer(args.multicore_python, cache, solver, args.repeat, args.lock,
                              args.peer_timeout)
        if peer:
            for m, wall in sorted(peer.items()):
                # a negative wall is the timeout: the speedup is then an upper bound
                report.add(solver=solver, run=f"liblinear-multicore -m {m}", wall=wall,
                           speedup_wall=abs(peer[1] / wall))
        else:
            report.note("liblinear-multicore not found: peer skipped")
    report.finish(["solver", "run", "wall", "cpu", "critical_path", "speedup_wall",
                   "speedup_cpu_path", "sweeps", "w_rel_diff"])


if __name__ == "__main__":
    main()
