"""The default backend's cost model (dlinear/planning/cost_model.py): its constants, its check on
measured shapes, and the cluster on paper beyond this machine.

    python -m scripts.benchmarks.backend_cost constants [--lock L]
        measures the model's constants on generated data (in process: one Newton fit of
        an rcv1-shaped and two click-shaped sets, passes counted; on a local cluster of 2:
        the same fits map-reduced, and the cluster's start); prints them as Python to
        paste into dlinear/planning/cost_model.py
    python -m scripts.benchmarks.backend_cost check [--lock L] [--repeat 1] SOLVER:PATH ...
        reading and training in process against on a local cluster of 2 (CPU seconds on
        each one's critical path: the machine is shared) on each training file or binary
        dataset, the model's prediction for both, and whether its choice was within 10%
        of the faster (`check --measured RESULTS.json` judges an earlier
        run's rows again with the current constants)
    python -m scripts.benchmarks.backend_cost scale [--bandwidth 1.25e9] PATH
        K = 2..64 workers on paper: PATH's rows split into K parts, each part's occurring
        columns counted, rounds, bytes per round and seconds per round of a Newton fit
        whose rounds ship only those columns, and of one shipping dense n-vectors
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

from . import harness

TOLERANCE = 1.10       # a choice may be at most this much slower than the better path


# ------------------------------------------------------------------ constants

def _fit_in_process(problem, params):
    """(CPU seconds, passes) of one Newton fit on one thread: CPU time, since on a
    shared machine the wall clock counts other jobs' work too."""
    from dlinear import train
    from dlinear.solvers import primal_objectives
    terms = []
    init = primal_objectives.LossTerm.__init__

    def recording(self, *args, **kwargs):
        init(self, *args, **kwargs)
        terms.append(self)
    primal_objectives.LossTerm.__init__ = recording
    try:
        t = harness.timed(lambda: train(problem, params, n_threads=1))
    finally:
        primal_objectives.LossTerm.__init__ = init
    return t.cpu, sum(term.n_passes for term in terms)


def _fit_on_cluster(client, problem, params):
    """(CPU seconds of a map-reduced fit on the critical path of its rounds, the columns
    its rounds ship): the client's CPU (driver, sending and receiving) plus the busiest
    worker's (its rows, its messages), which on an idle machine follow one another in
    each round; the columns are the workers' own (each worker's occurring columns),
    summed."""
    from dlinear import train
    from dlinear.cluster import Dataset
    from dlinear.cluster.tree import Placement
    from dlinear.data.columns import part_columns
    dataset = Dataset.from_arrays(problem, None, client)
    client.gather(dataset.parts)
    shipped = sum(len(np.unique(np.concatenate(client.gather(client.map(
        part_columns, parts, n_features=problem.n_features, pure=False)))))
        for parts in Placement(dataset).by_worker.values())
    before = client.run(time.process_time)
    t = harness.timed(lambda: train(dataset, params, client=client))
    after = client.run(time.process_time)
    return t.cpu + max(after[w] - before[w] for w in after), shipped


def _occurring(problem) -> int:
    return int(np.count_nonzero(np.bincount(problem.indices, minlength=problem.n_features)))


def constants(args, report):
    """The constants of dlinear/planning/cost_model.py: a pass's seconds per nonzero (weights in
    the cache: rcv1-like; out of it: the slope between two click-like sets whose
    occurring columns take 1.5 and 11 MB), per occurring column in the driver (the rest
    of the small click-like set's pass), the passes of a fit, and a round's latency and
    seconds per byte on a local cluster of 2 (from a narrow and a wide fit's rounds,
    less their passes' share), and the cluster's start."""
    from dlinear import Params
    from dlinear.datasets.click_like import make_click_like
    from dlinear.datasets.rcv1_like import make_rcv1_like
    params = Params(solver_type=0)
    shapes = {"rcv1 100k": make_rcv1_like(100_000, nnz_per_row=70, seed=1),
              "click 100k": make_click_like(100_000, seed=1),
              "click 1.6M": make_click_like(1_600_000, seed=1)}
    _fit_in_process(make_rcv1_like(500, n_features=300, seed=2), params)     # compiled
    fits = {}
    for name, problem in shapes.items():
        with harness.benchmark_lock(args.lock):
            seconds, passes = _fit_in_process(problem, params)
        occurring = _occurring(problem)
        fits[name] = (problem, seconds, passes, occurring)
        report.add(shape=name, where="process", nnz=problem.nnz, columns=occurring,
                   cpu_s=seconds, passes=passes, s_per_pass=seconds / passes)
    narrow, s_narrow, p_narrow, _ = fits["rcv1 100k"]
    t_nz = s_narrow / p_narrow / narrow.nnz
    (a, sa, pa, ca), (b, sb, pb, cb) = fits["click 100k"], fits["click 1.6M"]
    # the small click set's columns fit the cache: its pass is t_nz a nonzero plus the
    # driver's work on its columns; the large one's is t_nz_wide a nonzero plus that
    t_col = max(0.0, (sa / pa - a.nnz * t_nz) / ca)
    t_nz_wide = max(t_nz, (sb / pb - cb * t_col) / b.nnz)
    passes = int(round(np.median([f[2] for f in fits.values()])))
    narrow_bytes, wide_bytes = 8 * fits["rcv1 100k"][3], 8 * cb
    shapes.pop("click 1.6M")
    fits.pop("click 1.6M")

    start_s = _cluster_start_s(args)
    cluster, client = harness.local_cluster(2)
    try:
        per_round = {}
        _fit_on_cluster(client, make_rcv1_like(500, n_features=300, seed=2), params)
        wide = make_click_like(400_000, seed=3)
        for name, problem in (("rcv1 100k", narrow), ("click 400k", wide)):
            pids = list(client.run(os.getpid).values())
            with harness.benchmark_lock(args.lock, pids):
                seconds, shipped = _fit_on_cluster(client, problem, params)
            p = fits[name][2] if name in fits else _fit_in_process(problem, params)[1]
            occurring = _occurring(problem)
            # a worker's pass over its half, its columns' weights between the two sets'
            share = min(1.0, np.log(max(shipped / 2 * 8, narrow_bytes) / narrow_bytes)
                        / np.log(wide_bytes / narrow_bytes))
            rate = t_nz + share * (t_nz_wide - t_nz)
            compute = problem.nnz * rate / 2 + occurring * t_col
            per_round[name] = (seconds / p - compute, 2 * 8 * shipped)
            report.add(shape=name, where="cluster 2", nnz=problem.nnz, columns=shipped,
                       cpu_s=seconds, passes=p, s_per_pass=seconds / p)
    finally:
        client.close()
        cluster.close()
    (r1, b1), (r2, b2) = per_round["rcv1 100k"], per_round["click 400k"]
    bandwidth = (b2 - b1) / max(r2 - r1, 1e-9)
    latency = max(0.0, r1 - b1 / bandwidth)
    text = (f"PASS_S_PER_NONZERO = {t_nz:.3g}\nPASS_S_PER_NONZERO_WIDE = {t_nz_wide:.3g}\n"
            f"NARROW_BYTES = {narrow_bytes}\nWIDE_BYTES = {wide_bytes}\n"
            f"PASS_S_PER_COLUMN = {t_col:.3g}\nNEWTON_PASSES = {passes}\n"
            f"ROUND_LATENCY_S = {latency:.3g}\nROUND_BYTES_PER_S = {bandwidth:.3g}\n"
            f"CLUSTER_START_S = {start_s:.3g}")
    for line in text.splitlines():
        report.note(line)


def _cluster_start_s(args) -> float:
    """What a local cluster of 2 adds to training on a tiny file (its start, the workers'
    imports, placing the parts): critical-path CPU seconds, as `check` measures."""
    example = os.path.join(harness.REPO, "examples", "rcv1_small.train")
    _process_cpu(example, 0)
    return min(_cluster_cpu(example, 0) for _ in range(3)) - _process_cpu(example, 0)


# ------------------------------------------------------------------ check

def _run(command):
    t = harness.timed(lambda: subprocess.run(command, stdout=subprocess.DEVNULL,
                                             stderr=subprocess.PIPE, text=True))
    if t.value.returncode:
        sys.exit(f"{' '.join(command)} failed: {t.value.stderr.strip()}")
    return t.wall, t.value.stderr


def _threads_cpu() -> dict:
    """CPU seconds of each of this process's threads so far, by thread id (Linux)."""
    ticks = os.sysconf("SC_CLK_TCK")
    seconds = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:         # the thread ended meanwhile
            continue
        seconds[tid] = (int(fields[11]) + int(fields[12])) / ticks
    return seconds


def _process_cpu(path, solver) -> float:
    """The critical path, in CPU seconds, of reading `path` and training on it in this
    process as dlinear-train --workers 0 does (a Newton problem's passes on one thread per
    core): the busiest thread's CPU (the calling thread reads, drives and takes its share
    of every pass; the others their shares), what its wall clock would be on an idle
    machine with a core per thread."""
    from dlinear import Params, train
    from dlinear.data.binary_format import read_dataset
    before = _threads_cpu()
    train(read_dataset(path), Params(solver_type=int(solver)))
    after = _threads_cpu()
    return max(after[t] - before.get(t, 0.0) for t in after)


def _cluster_cpu(path, solver) -> float:
    """The critical path, in CPU seconds, of dlinear-train --workers 2 on `path`: starting
    the cluster (this process's part, and the busier worker's from its birth: imports),
    then reading and training, this process's CPU plus the busier worker's. On an idle
    machine the client's and the workers' work in a round follow one another, and the two
    workers run at once."""
    from dlinear import Params, train
    from dlinear.cluster import Dataset
    start = time.process_time()
    cluster, client = harness.local_cluster(2)
    try:
        client.run(lambda: __import__("dlinear.cluster.engine"))
        at_start = client.run(time.process_time)
        total = time.process_time() - start + max(at_start.values())
        start = time.process_time()
        train(Dataset.from_path(path, client), Params(solver_type=int(solver)), client=client)
        after = client.run(time.process_time)
        total += time.process_time() - start + max(after[w] - at_start[w] for w in after)
    finally:
        client.close()
        cluster.close()
    return total


def _locked(args, measure, *how) -> float:
    """measure(*how) holding the benchmark lock; its wall clock and the load printed."""
    with harness.benchmark_lock(args.lock):
        start = time.perf_counter()
        seconds = measure(*how)
        print(f"#   {measure.__name__}: {seconds:.2f} CPU s on the critical path, "
              f"{time.perf_counter() - start:.2f} s wall, load {os.getloadavg()[0]:.1f}",
              flush=True)
    return seconds


def check(args, report):
    """Measure each case, then judge the model's choice; with --measured, judge the rows
    of an earlier run again (after the constants changed) without measuring. The machine
    this ran on was shared: each path is measured as the CPU seconds on its critical path
    (what its wall clock would be on an idle machine), not by the wall clock."""
    import json
    from dlinear.cli.inputs import input_shape
    if args.measured:
        with open(args.measured) as f:
            rows = json.load(f)["rows"]
    else:
        rows = []
        for case in args.cases:
            solver, path = case.split(":", 1)
            shape = input_shape(path)
            process = min(_locked(args, _process_cpu, path, solver)
                          for _ in range(args.repeat))
            print(f"# {case} in process: {process:.2f} CPU s", flush=True)
            cluster = min(_locked(args, _cluster_cpu, path, solver)
                          for _ in range(args.repeat))
            print(f"# {case} on 2 workers: {cluster:.2f} CPU s", flush=True)
            rows.append(dict(solver=solver, data=path, process_s=process, cluster_s=cluster,
                             n_samples=shape.n_samples, nnz=shape.nnz,
                             n_features=shape.n_features, problems=shape.problems(),
                             occurring_columns=shape.occurring_columns,
                             columns_growth=shape.columns_growth, read_s=shape.read_s,
                             file_bytes=shape.file_bytes))
    for row in rows:
        report.add(**judged(row))


def judged(row: dict) -> dict:
    """row with the model's prediction for its shape and whether the path it picks was
    within TOLERANCE of the faster one measured."""
    from dlinear.planning.modes import Data, newton_estimate
    from dlinear.params import Params
    keys = ("n_samples", "nnz", "n_features", "occurring_columns", "read_s", "file_bytes")
    shape = Data(**{k: row[k] for k in keys}, n_problems=row["problems"],
                 columns_growth=row.get("columns_growth"))
    predicted = newton_estimate(Params(solver_type=int(row["solver"])).resolved(), shape, 2, 2)
    process, cluster = row["process_s"], row["cluster_s"]
    chosen = cluster if predicted.cluster_pays else process
    return dict(row, predicted_process_s=predicted.process_s,
                predicted_cluster_s=predicted.cluster_s,
                chosen="cluster" if predicted.cluster_pays else "process",
                chosen_over_best=chosen / min(process, cluster),
                ok=chosen <= TOLERANCE * min(process, cluster))


# ------------------------------------------------------------------ scale on paper

def _columns_union(column_sets, n_features):
    seen = np.zeros(n_features, dtype=bool)
    for c in column_sets:
        seen[c] = True
    return int(seen.sum())


def scale(args, report):
    from dlinear.planning import cost_model as cm
    from dlinear.data.binary_format import is_binary_dataset, read_binary
    from dlinear.data.libsvm_reader import read_libsvm
    problem = read_binary(args.path) if is_binary_dataset(args.path) else read_libsvm(args.path)
    n, nnz = problem.n_features, problem.nnz
    occurring = int(np.count_nonzero(np.bincount(problem.indices, minlength=n)))
    report.note(f"{args.path}: {problem.n_samples} rows, {nnz} nonzeros, n = {n}, "
                f"{occurring} occurring columns; {args.bandwidth:.3g} bytes/s, latency "
                f"{cm.ROUND_LATENCY_S} s a hop, {cm.NEWTON_PASSES} rounds a fit")
    for k in (2, 4, 8, 16, 32, 64):
        bounds = np.linspace(0, problem.n_samples, k + 1).astype(np.int64)
        columns = [np.unique(problem.indices[problem.indptr[a]:problem.indptr[b]])
                   for a, b in zip(bounds[:-1], bounds[1:])]
        local = np.array([len(c) for c in columns])
        t_nz = cm.pass_s_per_nonzero(int(local.max()))     # a worker touches its columns
        rows_nnz = np.diff(problem.indptr[bounds])

        # actor i's children are 2i+1, 2i+2 (cluster.tree): a link carries w down and
        # Xᵀv up on the union of the columns of the subtree below it
        def subtree(i):
            return [i] + (subtree(2 * i + 1) if 2 * i + 1 < k else []) + \
                (subtree(2 * i + 2) if 2 * i + 2 < k else [])
        link = {i: _columns_union([columns[j] for j in subtree(i)], n) for i in range(k)}
        depth = int(np.floor(np.log2(k))) + 1

        def round_s(width):
            # levels in turn: a node sends to (and hears from) its children one after
            # the other; the client's link to the root first
            hops = 2 * 8 * width(0) / args.bandwidth + cm.ROUND_LATENCY_S
            for level in range(depth - 1):
                nodes = range(2 ** level - 1, min(k, 2 ** (level + 1) - 1))
                hops += max(sum(2 * 8 * width(c) for c in (2 * i + 1, 2 * i + 2) if c < k)
                            for i in nodes) / args.bandwidth + cm.ROUND_LATENCY_S
            return rows_nnz.max() * t_nz + cm.PASS_S_PER_COLUMN * width(0) + hops

        sparse_s, dense_s = round_s(lambda i: link[i]), round_s(lambda i: n)
        report.add(K=k, local_columns_mean=int(local.mean()), local_columns_max=int(local.max()),
                   local_share=local.max() / n, bytes_per_round_per_worker=2 * 8 * int(local.max()),
                   bytes_per_round_dense=2 * 8 * n, round_s=sparse_s, round_s_dense=dense_s,
                   fit_s=cm.NEWTON_PASSES * sparse_s, fit_s_dense=cm.NEWTON_PASSES * dense_s)
    one = cm.NEWTON_PASSES * (nnz * cm.pass_s_per_nonzero(occurring)
                              + n * cm.PASS_S_PER_COLUMN)
    report.note(f"one process, one thread: {one:.1f} s a fit ({cm.NEWTON_PASSES} passes)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    sub.add_parser("constants")
    p = sub.add_parser("check")
    p.add_argument("cases", nargs="*", help="SOLVER:PATH, e.g. 0:/work/data/rcv1_200k.train")
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--measured", default=None,
                   help="a check's JSON results: judge its rows again, measure nothing")
    p = sub.add_parser("scale")
    p.add_argument("path")
    p.add_argument("--bandwidth", type=float, default=1.25e9, help="bytes/s (10 Gbit/s)")
    for p in sub.choices.values():
        harness.add_output_arguments(p)
    args = ap.parse_args(argv)
    report = harness.Report(f"backend_cost-{args.what}", args)
    report.note("2 cores, shared with other jobs")
    columns = {"constants": ["shape", "where", "nnz", "columns", "cpu_s", "passes", "s_per_pass"],
               "check": ["solver", "data", "n_samples", "nnz", "n_features", "process_s", "cluster_s", "predicted_process_s",
                         "predicted_cluster_s", "chosen", "chosen_over_best", "ok"],
               "scale": ["K", "local_columns_mean", "local_columns_max", "local_share",
                         "bytes_per_round_per_worker", "bytes_per_round_dense", "round_s",
                         "round_s_dense", "fit_s", "fit_s_dense"]}[args.what]
    {"constants": constants, "check": check, "scale": scale}[args.what](args, report)
    report.finish(columns)


if __name__ == "__main__":
    main()
