"""-s 5 and -s 6 (the L1-regularized solvers) on a large file against LIBLINEAR 2.50
(liblinear-official), one thread, and dlinear on 1 and 2 threads.

    python -m benchmarks.l1_solvers [--file /work/data/rcv1_542k.train] [--lock PATH]

- peer: the train call of each solver, dlinear (n_threads=1) and LIBLINEAR interleaved in
  one process, CPU and wall, best of --repeat; LIBLINEAR's time includes its own
  transposition of X, as dlinear's does; the models' objective gap;
- phases: dlinear's transposition of X to columns (with the bias column) alone, best of
  --repeat; the rest of the train call is the kernel and set-up;
- threads: the train call on 1 and 2 threads alternated (wall and CPU, best of
  --repeat), the models compared bit for bit and by their objectives' relative
  difference (-s 5's threads add their partial sums in another order); and the ceiling
  of 2 threads on the part that stays on one, the transposition: one process
  transposing alone against two processes at once (no threads, no sharing),
  2 x alone / together; liblinear-multicore's `-m 1` and `-m 2` on the same rows, when
  --multicore-python has it.
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import time

import numpy as np

from dlinear import Params, train
from dlinear.solvers.task import columns_of

from . import harness
from .parallel_dual_cd import multicore_peer
from .split_ceiling import run_at_once
from .threads import cache_path, load


def transpositions(problem, n, barrier, out):
    """n transpositions (one thread) of one process, timed after a barrier."""
    columns_of(problem, 1.0)
    barrier.wait()
    start = time.perf_counter()
    for _ in range(n):
        columns_of(problem, 1.0)
    out.put(time.perf_counter() - start)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--file", default="/work/data/rcv1_542k.train")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--solvers", default="6,5")
    parser.add_argument("--skip", default="", help="parts to leave out: peer,phases,threads")
    parser.add_argument("--multicore-python", default="/work/venv_mc/bin/python",
                        help="a Python with liblinear-multicore, run at -m 1 and -m 2 on "
                             "the same rows (skipped when missing)")
    harness.add_output_arguments(parser)
    args = parser.parse_args(argv)
    skip = set(filter(None, args.skip.split(",")))
    report = harness.Report("l1_solvers", args)
    problem = load(args.file)
    report.note(f"{args.file}: {problem.n_samples} rows, {problem.n_features} features, "
                f"{problem.nnz} nonzeros")
    solvers = [int(s) for s in args.solvers.split(",")]
    harness.warm_up(problem, [Params(solver_type=s) for s in solvers], n_threads=2)
    lib_problem = harness.liblinear_problem(problem) if "peer" not in skip else None

    for s in solvers:
        params = Params(solver_type=s).resolved()
        if "peer" not in skip:
            options = f"-s {s} -e {params.eps!r} {harness.liblinear_options(params)} -q"
            ours, theirs = [], []
            with harness.benchmark_lock(args.lock):
                for _ in range(args.repeat):
                    ours.append(harness.timed(lambda: train(problem, params, n_threads=1)))
                    theirs.append(harness.timed(
                        lambda: harness.liblinear_fit(lib_problem, options)[1]))
            objective = harness.objective_of(problem, params)
            gap = harness.relative_gap(objective(ours[-1].value), objective(theirs[-1].value))
            cpu = min(r.cpu for r in ours), min(r.cpu for r in theirs)
            report.add(kind="peer", solver=s, dlinear_cpu=cpu[0], liblinear_cpu=cpu[1],
                       cpu_ratio=cpu[0] / cpu[1], dlinear_wall=min(r.wall for r in ours),
                       liblinear_wall=min(r.wall for r in theirs), objective_gap=gap)
        if "threads" not in skip:
            runs = {1: [], 2: []}
            with harness.benchmark_lock(args.lock):
                for _ in range(args.repeat):
                    for t in (1, 2):
                        runs[t].append(harness.timed(
                            lambda: train(problem, params, n_threads=t)))
            wall = {t: min(r.wall for r in rs) for t, rs in runs.items()}
            cpu = {t: min(r.cpu for r in rs) for t, rs in runs.items()}
            same = bool(np.array_equal(runs[1][-1].value.w, runs[2][-1].value.w))
            objective = harness.objective_of(problem, params)
            difference = harness.relative_gap(objective(runs[2][-1].value),
                                              objective(runs[1][-1].value))
            report.add(kind="threads", solver=s, wall1=wall[1], wall2=wall[2],
                       speedup=wall[1] / wall[2], cpu1=cpu[1], cpu2=cpu[2], same_model=same,
                       objective_gap=difference)
            peer = multicore_peer(args.multicore_python, cache_path(args.file), s,
                                  args.repeat, args.lock, timeout=300.0)
            if peer:
                report.add(kind="liblinear-multicore", solver=s, wall1=peer[1],
                           wall2=peer[2], speedup=abs(peer[1] / peer[2]))
            else:
                report.note("liblinear-multicore not found: peer skipped")

    if "phases" not in skip:
        with harness.benchmark_lock(args.lock):
            t = harness.best_of(lambda: columns_of(problem, 1.0), args.repeat)
        report.add(kind="transposition", cpu=t.cpu, wall=t.wall,
                   ns_per_nonzero=1e9 * t.cpu / problem.nnz)
    if "threads" not in skip:
        ctx = mp.get_context("fork")
        with harness.benchmark_lock(args.lock):
            alone = min(run_at_once(ctx, transpositions, [(problem, 2)]) for _ in range(2))
            both = min(run_at_once(ctx, transpositions, [(problem, 2)] * 2)
                       for _ in range(2))
        report.add(kind="ceiling", wall1=alone / 2, wall2=both / 2,
                   speedup=2 * alone / both)
    report.finish(["kind", "solver", "dlinear_cpu", "liblinear_cpu", "cpu_ratio",
                   "objective_gap", "wall1", "wall2", "speedup", "cpu1", "cpu2",
                   "same_model", "wall", "cpu", "ns_per_nonzero"])


if __name__ == "__main__":
    main()
