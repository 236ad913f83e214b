"""The most a 2-way split can gain on this machine, measured with plain processes (no Dask),
which asv's one-process timings cannot express.

    python -m scripts.benchmarks.split_ceiling [--rows 200000] [--hv 20]
        Hessian-vector products (-s 0, -s 2) on all rows in one process, against two
        processes on half the rows each, started together. Map-reduced Newton on 2 workers
        does exactly the second plus the messaging, so the ratio bounds what
        `asv run -b cluster.NewtonMapReduced` can show for 2 workers against local.
    python -m scripts.benchmarks.split_ceiling --classes 35 --rows 48949 --features 297063 \\
            --nnz-per-row 95
        one-vs-rest -s 0 split by classes (the copy mode on a cluster): one process fitting
        all classes against two each fitting half of them (0, 2, 4, ... and 1, 3, 5, ...,
        the cluster's grouping) on its own copy of the data.
    python -m scripts.benchmarks.split_ceiling --read FILE
        read_libsvm of a LIBSVM file on one thread, against two processes each reading
        one half (line_aligned_ranges), started together, and against one process on two
        threads: the share of the 2-process ceiling the threaded reader reaches.


"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import tempfile
import time

import numpy as np

from dlinear import Params
from dlinear.data.libsvm_reader import line_aligned_ranges, read_libsvm
from dlinear.datasets.rcv1_like import make_rcv1_like

from . import harness


def hv_seconds(problem, solver, n_hv, barrier, out):
    term = harness.binary_loss_term(problem, solver)
    w = np.full(term.n_variables, 1e-3)
    s = np.random.default_rng(0).normal(size=term.n_variables)
    term.at(w)
    term.grad_precond()
    term.hv(s)                                  # warm: compiled, pages touched
    barrier.wait()
    start = time.perf_counter()
    for _ in range(n_hv):
        term.hv(s)
    out.put(time.perf_counter() - start)


def read_seconds(path, start, end, n_threads, barrier, out):
    with tempfile.NamedTemporaryFile("w", suffix=".svm") as warm:   # compiled or loaded
        warm.write("1 1:0.13141393901565038 3:1\n")
        warm.flush()
        read_libsvm(warm.name, n_threads=n_threads)
    barrier.wait()
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    read_libsvm(path, start=start, end=end, n_threads=n_threads)
    out.put((time.perf_counter() - start_wall, time.process_time() - start_cpu))


def read_ceiling(ctx, report, path, repeat):
    (_, mid, _), (_, end, _) = line_aligned_ranges(path, 2)

    def run(jobs):
        """(wall of the slowest, CPU of all) of one process per job, started together."""
        times = run_at_once(ctx, read_seconds, [(path, *job) for job in jobs], keep=True)
        return max(t[0] for t in times), sum(t[1] for t in times)
    for _ in range(repeat):
        one, half = run([(0, None, 1)]), run([(0, mid, 1)])
        two, threads = run([(0, mid, 1), (mid, end, 1)]), run([(0, None, 2)])
        report.add(split="read, rows", one_process_s=one[0], half_alone_s=half[0],
                   two_at_once_s=two[0], ceiling=one[0] / two[0], ideal=one[0] / half[0],
                   two_threads_s=threads[0], threads_speedup=one[0] / threads[0],
                   share_of_ceiling=two[0] / threads[0], one_cpu_s=one[1],
                   two_processes_cpu_s=two[1], two_threads_cpu_s=threads[1])


def class_fit_seconds(problem, ks, barrier, out):
    problem = problem.subset(np.arange(problem.n_samples))     # this process's own copy
    params = Params(solver_type=0)
    label, weighted_C = harness.class_plan(problem, params)
    # warm: the same path (k-column or per class) compiled, on a few rows
    harness.fit_class_group(problem.subset(np.arange(min(2000, problem.n_samples))), label,
                            ks, weighted_C, params)
    barrier.wait()
    start = time.perf_counter()
    harness.fit_class_group(problem, label, ks, weighted_C, params)
    out.put(time.perf_counter() - start)


def run_at_once(ctx, target, argss, keep=False):
    """One process per argument tuple, target(*args, barrier, out), released together by
    the barrier: the slowest one's seconds (keep: what each one put)."""
    out, barrier = ctx.Queue(), ctx.Barrier(len(argss))
    procs = [ctx.Process(target=target, args=(*args, barrier, out)) for args in argss]
    for p in procs:
        p.start()
    times = [out.get() for _ in procs]
    for p in procs:
        p.join()
    return times if keep else max(times)


def ceiling(report, name, t_all, t_half, t_two):
    report.add(split=name, one_process_s=t_all, half_alone_s=t_half, two_at_once_s=t_two,
               ceiling=t_all / t_two, ideal=t_all / t_half)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--features", type=int, default=47_236)
    ap.add_argument("--nnz-per-row", type=float, default=70)
    ap.add_argument("--hv", type=int, default=20, help="Hessian-vector products timed")
    ap.add_argument("--classes", type=int, default=0,
                    help="split one-vs-rest -s 0 by classes instead (see above)")
    ap.add_argument("--read", metavar="FILE", help="time reading this LIBSVM file instead")
    ap.add_argument("--repeat", type=int, default=1)
    harness.add_output_arguments(ap)
    args = ap.parse_args(argv)
    ctx = mp.get_context("fork")        # the children share the generated data
    report = harness.Report("split_ceiling", args)
    if args.read:
        with harness.benchmark_lock(args.lock):
            read_ceiling(ctx, report, args.read, args.repeat)
        report.finish(["split", "one_process_s", "half_alone_s", "two_at_once_s", "ceiling",
                       "two_threads_s", "threads_speedup", "share_of_ceiling", "one_cpu_s",
                       "two_processes_cpu_s", "two_threads_cpu_s"])
        return
    if args.classes:
        P = make_rcv1_like(args.rows, n_features=args.features, n_classes=args.classes,
                           nnz_per_row=args.nnz_per_row, seed=1)
        ks = list(range(args.classes))
        report.note(f"data: {P.n_samples} x {P.n_features}, nnz {P.nnz}, {args.classes} "
                    "classes; -s 0 one-vs-rest split by classes")

        def run(groups):
            return run_at_once(ctx, class_fit_seconds, [(P, g) for g in groups])
        with harness.benchmark_lock(args.lock):
            for _ in range(args.repeat):
                ceiling(report, "classes", run([ks]), run([ks[0::2]]),
                        run([ks[0::2], ks[1::2]]))
    else:
        P = make_rcv1_like(args.rows, n_features=args.features, nnz_per_row=args.nnz_per_row,
                           seed=0)
        mid = P.n_samples // 2
        halves = [P.subset(np.arange(0, mid)), P.subset(np.arange(mid, P.n_samples))]
        report.note(f"data: {P.n_samples} x {P.n_features}, nnz {P.nnz}; {args.hv} Hv each")

        def run(jobs):
            return run_at_once(ctx, hv_seconds, [(p, s, args.hv) for p, s in jobs])
        with harness.benchmark_lock(args.lock):
            for _ in range(args.repeat):
                for solver in (0, 2):
                    ceiling(report, f"rows, -s {solver} Hv", run([(P, solver)]),
                            run([(halves[0], solver)]), run([(h, solver) for h in halves]))
    report.finish(["split", "one_process_s", "half_alone_s", "two_at_once_s", "ceiling",
                   "ideal"])


if __name__ == "__main__":
    main()
