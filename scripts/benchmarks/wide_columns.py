"""Wide data: fits on the columns that occur (dlinear.data.columns) against fits on all columns.

    python -m scripts.benchmarks.wide_columns inprocess FILE [-s 0] [--repeat 3] [--lock PATH]
        reads FILE once, then times (wall and CPU) the renumbering and the in-process
        train call on one thread with compaction and without (each run in its own hold of
        the lock), checks the two models are the same bit for bit, and prints the ratio
    python -m scripts.benchmarks.wide_columns cluster FILE [-s 0] [--workers 2] [--lock PATH]
                                              [--compacted-only]
        FILE read on a local cluster of single-threaded workers, then Newton map-reduced
        over its parts on the workers' own columns and on all columns (each in its own
        hold of the lock): wall time of the train call, rounds, the bytes of a round
        through the client, and whether the models are the same bit for bit
    python -m scripts.benchmarks.wide_columns columns FILE [--parts 2 16]
        the columns that occur in FILE and in each of K equal row slices (K parts), and
        the bytes one Newton round carries to and from a worker holding such a slice:
        8 x n each way on all columns, 8 x (its columns) each way compacted

Each writes its rows as JSON (--json) and prints a table.
"""
from __future__ import annotations

import argparse

import numpy as np

from . import harness
from dlinear.data.columns import compact_columns, compact_problem
from dlinear.data.libsvm_reader import Problem, read_libsvm
from dlinear.params import Params
from dlinear.in_process.train import train_in_process


def _warm_up(solver: int) -> None:
    """Compiles (or loads) the kernels both fits use, off the clock."""
    rng = np.random.default_rng(0)
    X = (rng.random((60, 40)) < 0.1) * rng.normal(size=(60, 40))
    X[:, 7] = 0.0
    problem = Problem.from_arrays(X, np.where(rng.random(60) < 0.5, 1.0, -1.0))
    for compact in (True, False):
        train_in_process(problem, Params(solver_type=solver), n_threads=1, compact=compact)


def inprocess(args, report):
    read = harness.timed(lambda: read_libsvm(args.file))
    problem = read.value
    report.note(f"read {args.file}: {problem.n_samples} rows, {problem.nnz} nonzeros, "
                f"n = {problem.n_features}, {read.wall:.1f} s")
    _warm_up(args.solver)
    params = Params(solver_type=args.solver)
    models = {}
    for r in range(args.repeat):
        for compact in ((True, False) if r % 2 == 0 else (False, True)):
            with harness.benchmark_lock(args.lock):
                if compact:
                    renumber = harness.timed(lambda: compact_problem(problem))
                    used = len(renumber.value.used)
                    del renumber.value
                fit = harness.timed(lambda: train_in_process(problem, params, n_threads=1,
                                                             compact=compact))
            models[compact] = fit.value
            report.add(compacted=compact, run=r, train_wall_s=fit.wall, train_cpu_s=fit.cpu,
                       renumber_wall_s=renumber.wall if compact else None,
                       used_columns=used if compact else problem.n_features,
                       n_iter=fit.value.n_iter[0])
            del fit
    same = np.array_equal(models[True].w.view(np.int64), models[False].w.view(np.int64))
    best = {c: min(row["train_cpu_s"] for row in report.rows if row["compacted"] == c)
            for c in (True, False)}
    best_wall = {c: min(row["train_wall_s"] for row in report.rows if row["compacted"] == c)
                 for c in (True, False)}
    report.note(f"models bit for bit the same: {same}")
    report.note(f"compacted / all columns, train call: CPU {best[True] / best[False]:.3f}, "
                f"wall {best_wall[True] / best_wall[False]:.3f} (best of {args.repeat})")
    return ["compacted", "run", "train_wall_s", "train_cpu_s", "renumber_wall_s",
            "used_columns", "n_iter"]


def cluster(args, report):
    from dlinear.cluster import Dataset
    from dlinear.cluster.engine import train_on_cluster
    local, client = harness.local_cluster(args.workers)
    try:
        data = Dataset.from_libsvm(args.file, client)
        report.note(f"{args.file}: {data.n_samples} rows, {data.nnz} nonzeros, "
                    f"n = {data.n_features}, {len(data.parts)} parts on {args.workers} "
                    "workers")
        params = Params(solver_type=args.solver, partition=True)
        pids = list(client.run(lambda: __import__("os").getpid()).values())
        models = {}
        for compact in ((True,) if args.compacted_only else (True, False)):
            with harness.benchmark_lock(args.lock, pids):
                fit = harness.timed(lambda: train_on_cluster(data, params, compact=compact))
            stats = fit.value.fit_stats
            models[compact] = fit.value
            per_round = (stats["bytes_to_workers"] + stats["bytes_from_workers"]) \
                / max(stats["rounds"], 1)
            report.add(compacted=compact, workers=args.workers, train_wall_s=fit.wall,
                       rounds=stats["rounds"],
                       occurring_columns=stats.get("occurring_columns", data.n_features),
                       client_mb_per_round=per_round / 1e6,
                       workers_busy_s=stats["busy_seconds"])
            del fit
    finally:
        client.close()
        local.close()
    if len(models) == 2:
        same = np.array_equal(models[True].w.view(np.int64),
                              models[False].w.view(np.int64))
        report.note(f"models bit for bit the same: {same}")
    return ["compacted", "workers", "train_wall_s", "rounds", "occurring_columns",
            "client_mb_per_round", "workers_busy_s"]


def columns(args, report):
    problem = read_libsvm(args.file)
    n = problem.n_features
    for k in args.parts:
        bounds = np.linspace(0, problem.n_samples, k + 1).astype(np.int64)
        used = []
        for a, b in zip(bounds[:-1], bounds[1:]):
            lo, hi = int(problem.indptr[a]), int(problem.indptr[b])
            used.append(len(compact_columns(problem.indices[lo:hi], n)[0]))
        report.add(parts=k, n=n, used_all=len(compact_columns(problem.indices, n)[0]),
                   used_per_part_max=max(used), used_per_part_mean=float(np.mean(used)),
                   round_bytes_all_columns=2 * 8 * n,
                   round_bytes_compacted_max=2 * 8 * max(used))
    return ["parts", "n", "used_all", "used_per_part_max", "used_per_part_mean",
            "round_bytes_all_columns", "round_bytes_compacted_max"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    p = sub.add_parser("inprocess")
    p.add_argument("file")
    p.add_argument("-s", dest="solver", type=int, default=0)
    p.add_argument("--repeat", type=int, default=3)
    p = sub.add_parser("cluster")
    p.add_argument("file")
    p.add_argument("-s", dest="solver", type=int, default=0)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--compacted-only", action="store_true",
                   help="skip the fit on all columns (it ships n-vectors: slow on 2^24)")
    p = sub.add_parser("columns")
    p.add_argument("file")
    p.add_argument("--parts", type=int, nargs="+", default=[2, 16])
    for p in sub.choices.values():
        harness.add_output_arguments(p)
    args = ap.parse_args(argv)
    report = harness.Report(f"wide_columns-{args.what}", args)
    columns_shown = {"inprocess": inprocess, "cluster": cluster,
                     "columns": columns}[args.what](args, report)
    report.finish(columns_shown)


if __name__ == "__main__":
    main()
