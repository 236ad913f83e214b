"""Newton's passes on threads in one process (-s 0, -s 2): the speed-up of 2 threads over
1, the most this machine allows (plain processes), and 8 and 16 threads projected.

    python -m scripts.benchmarks.threads [--file /work/data/rcv1_542k.train] [--lock PATH]

- fits: `dlinear.train` with n_threads = 1 and 2 (train call only, alternated, best of
  --repeat), the models compared bit for bit; liblinear-multicore's `-m 1` and `-m 2` on
  the same rows and solver, default eps, when --multicore-python has it;
- ceiling: the Hessian-vector pass on all rows, one process alone against two processes
  at once (no threads, no sharing): 2 x alone / together is the most 2 threads can gain on
  a pass bound by this machine's memory and cores; the fits' speed-up is reported as a
  fraction of it;
- profile: one 1-thread fit with the seconds inside the chunk passes (the part that
  runs on threads) counted; the rest is serial (the driver's n-vector arithmetic, Python).
  t(T) = serial + parallel x ceil(chunks / T) / chunks (Amdahl, with whole chunks per
  thread, and no memory-bandwidth limit: an upper bound).
"""
from __future__ import annotations

import argparse
import math
import multiprocessing as mp
import os
import time

import numpy as np

from dlinear import Params, train
from dlinear.solvers import primal_objectives as PO

from . import harness
from .parallel_dual_cd import multicore_peer
from .split_ceiling import run_at_once
from dlinear.threads import available_cores


def cache_path(path: str) -> str:
    """Where `load` keeps the CSR arrays of the LIBSVM file `path` (.npz: indptr, indices,
    data, y, n_features; the format liblinear_multicore_run.py reads)."""
    return os.path.join(harness.REPO, "bench-data", "cache", os.path.basename(path) + ".npz")


def load(path: str):
    """The LIBSVM file as a Problem, cached next to bench-data as .npz (reading 1 GB of
    text takes a minute)."""
    from dlinear.data.libsvm_reader import Problem, read_libsvm
    cache = cache_path(path)
    if os.path.exists(cache) and os.path.getmtime(cache) >= os.path.getmtime(path):
        a = np.load(cache)
        return Problem(a["indptr"], a["indices"], a["data"], a["y"], int(a["n_features"]))
    p = read_libsvm(path)
    os.makedirs(os.path.dirname(cache), exist_ok=True)
    np.savez(cache, indptr=p.indptr, indices=p.indices, data=p.data, y=p.y,
             n_features=p.n_features)
    return p


def hv_passes(problem, n_hv, barrier, out):
    """n_hv one-pass Hessian-vector products (-s 0) of one process, timed after a barrier."""
    term = harness.binary_loss_term(problem, 0)
    w = np.full(term.n_variables, 1e-3)
    s = np.random.default_rng(0).normal(size=term.n_variables)
    term.at(w)
    term.grad_precond()
    term.hv(s)
    barrier.wait()
    start = time.perf_counter()
    for _ in range(n_hv):
        term.hv(s)
    out.put(time.perf_counter() - start)


class _Profile:
    """Seconds spent inside the threaded parts of _Chunks (the chunk passes and the
    sums of their n-vectors), wall clock, while installed."""

    METHODS = ("_each_chunk", "_reduce")

    def __init__(self):
        self.seconds = 0.0
        self._originals = {m: getattr(PO._Chunks, m) for m in self.METHODS}

    def _timed(self, original):
        def method(*args):
            t = time.perf_counter()
            try:
                return original(*args)
            finally:
                self.seconds += time.perf_counter() - t
        return method

    def __enter__(self):
        for m, original in self._originals.items():
            setattr(PO._Chunks, m, self._timed(original))
        return self

    def __exit__(self, *exc):
        for m, original in self._originals.items():
            setattr(PO._Chunks, m, original)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--file", default="/work/data/rcv1_542k.train")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--hv", type=int, default=20)
    parser.add_argument("--solvers", default="0,2")
    parser.add_argument("--multicore-python", default="/work/venv_mc/bin/python",
                        help="a Python with liblinear-multicore, run at -m 1 and -m 2 on "
                             "the same rows (skipped when missing)")
    harness.add_output_arguments(parser)
    args = parser.parse_args(argv)
    report = harness.Report("threads", args)
    problem = load(args.file)
    report.note(f"{args.file}: {problem.n_samples} rows, {problem.n_features} features, "
                f"{problem.nnz} nonzeros; {len(PO.row_chunks(problem.indptr, problem.indices, problem.n_features))}"
                f" row chunks; {available_cores()} cores")
    solvers = [int(s) for s in args.solvers.split(",")]
    harness.warm_up(problem, [Params(solver_type=s) for s in solvers], n_threads=2)

    for s in solvers:
        params = Params(solver_type=s)
        runs = {1: [], 2: []}
        with harness.benchmark_lock(args.lock):      # 1 and 2 threads alternated
            for _ in range(args.repeat):
                for t in (1, 2):
                    runs[t].append(harness.timed(lambda: train(problem, params,
                                                               n_threads=t)))
        fits = {t: harness.Timing(min(r.wall for r in rs), min(r.cpu for r in rs),
                                  rs[-1].value) for t, rs in runs.items()}
        same = bool(np.array_equal(fits[1].value.w, fits[2].value.w))
        report.add(kind="fit", solver=s, t1=fits[1].wall, t2=fits[2].wall,
                   speedup=fits[1].wall / fits[2].wall, cpu1=fits[1].cpu, cpu2=fits[2].cpu,
                   same_model=same)
        peer = multicore_peer(args.multicore_python, cache_path(args.file), s, args.repeat,
                              args.lock, timeout=300.0)
        if peer:
            report.add(kind="liblinear-multicore", solver=s, t1=peer[1], t2=peer[2],
                       speedup=abs(peer[1] / peer[2]))
        else:
            report.note("liblinear-multicore not found: peer skipped")

    ctx = mp.get_context("fork")
    with harness.benchmark_lock(args.lock):
        alone = min(run_at_once(ctx, hv_passes, [(problem, args.hv)]) for _ in range(2))
        both = min(run_at_once(ctx, hv_passes, [(problem, args.hv)] * 2) for _ in range(2))
    ceiling = 2 * alone / both
    report.add(kind="ceiling", hv_alone=alone / args.hv, hv_two_processes=both / args.hv,
               ceiling=ceiling)
    for row in report.rows:
        if row["kind"] == "fit":
            row["of_ceiling"] = row["speedup"] / ceiling
            report.note(f"-s {row['solver']}: 2 threads {row['speedup']:.3f}x, "
                        f"{row['speedup'] / ceiling:.0%} of the ceiling {ceiling:.3f}x")

    n_chunks = len(PO.row_chunks(problem.indptr, problem.indices, problem.n_features))
    for s in solvers:
        with harness.benchmark_lock(args.lock), _Profile() as profile:
            t = harness.timed(lambda: train(problem, Params(solver_type=s), n_threads=1))
        parallel = profile.seconds
        serial = t.wall - parallel
        row = dict(kind="profile", solver=s, total=t.wall, parallel=parallel,
                   serial_fraction=serial / t.wall)
        for T in (2, 8, 16):
            row[f"x{T}"] = t.wall / (serial + parallel * math.ceil(n_chunks / T) / n_chunks)
        report.add(**row)
    report.finish(["kind", "solver", "t1", "t2", "speedup", "same_model", "of_ceiling",
                   "hv_alone", "hv_two_processes", "ceiling", "serial_fraction", "x2",
                   "x8", "x16"])


if __name__ == "__main__":
    main()
