"""Out-of-core training against the same fit in memory, measured in the same run.

    python -m scripts.benchmarks.out_of_core --rows 1000000 --solver 1 [--cap-fraction 0.25]
        [--float32]

Makes an rcv1-shaped binary dataset (or a click-shaped one, --shape click) in the cache
directory, trains it in memory (read_binary, the whole set mapped; the fastest of three
fits), then out of core in a child process whose memory is capped by a cgroup v1 memory
group at cap-fraction of the dataset's bytes + 200 MB (the issue's protocol), after the
dataset's pages are dropped from the page cache; the child takes the budget
dlinear-train takes with no --memory (planning.memory_budget: the cgroup's limit less
the process's resident memory and a margin), or the cap less --overhead where that is
given (150 MB uncapped, --no-cap). Prints the wall times and their ratio, the passes
over the data, the child's peak memory and the objectives' relative difference. The disk
bounds an out-of-core fit: it reads the file `passes` times, so the run also times one
read of the whole dataset with its pages dropped (as the child reads it) and prints the
read-bound floor, passes x that read, as a fraction of the out-of-core time. --float32
converts to 4-byte values (and 2-byte indices where they fit), as `convert --float32`
does, for both fits. Needs root and the v1 memory controller (`mount | grep cgroup`);
without them, --no-cap runs the child uncapped with the same budget. A regression solver
(-s 11, 12, 13) trains on the same rows with real-valued targets (regression_dataset);
--split N writes each part as N, for caps too small for a part of 32 MB of text.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import time

import numpy as np

from . import harness

CGROUP_MEMORY = "/sys/fs/cgroup/memory"
IN_MEMORY_RUNS = 3
CHILD = r"""
import json, sys, time
import dlinear
from dlinear.in_process.out_of_core import train_out_of_core
from dlinear.planning.memory_budget import memory_budget
path, solver, C, eps, budget, out = sys.argv[1:7]
budget = memory_budget().bytes if budget == "cgroup" else int(budget)
lines = []
start = time.perf_counter()
model = train_out_of_core(path, dlinear.Params(solver_type=int(solver), C=float(C),
                          eps=float(eps)), budget, log=lines.append)
seconds = time.perf_counter() - start
dlinear.save_model(out, model)
print(json.dumps({"seconds": seconds, "log": lines}))
"""


def derived_dataset(path: str, suffix: str, pieces) -> str:
    """A dataset written beside the one at `path` (its name + suffix), a part at a time:
    pieces(part) yields the Problems that replace each of its parts."""
    from dlinear.data.binary_format import (read_binary_part, read_header,
                                            write_binary_dataset)
    target = path[:-len(".bin")] + suffix + ".bin"
    if not os.path.isdir(target):
        h = read_header(path)
        write_binary_dataset(target, (piece for i in range(len(h.parts)) for piece in
                                      pieces(read_binary_part(path, i, header=h))),
                             dtype=h.dtype("data"))
    return target


def regression_dataset(path: str) -> str:
    """The dataset at `path` with real-valued targets x.w_true + noise (w_true normal,
    seeded), for -s 11, 12, 13."""
    from dlinear.data.binary_format import read_header
    rng = np.random.default_rng(1)
    w_true = rng.normal(size=read_header(path).n_features)

    def pieces(part):
        X = part.to_scipy()
        yield dataclasses.replace(part, y=X @ w_true[:X.shape[1]]
                                  + 0.1 * rng.normal(size=X.shape[0]))

    return derived_dataset(path, "-regression", pieces)


def split_dataset(path: str, n: int) -> str:
    """The dataset at `path` with each part split in n runs of rows: blocks of a budget
    too small for a part of 32 MB of text (a quarter of a few hundred MB)."""
    from dlinear.data.binary_format import Problem

    def pieces(part):
        bounds = np.linspace(0, part.n_samples, n + 1).astype(np.int64)
        for r0, r1 in zip(bounds[:-1], bounds[1:]):
            z0, z1 = part.indptr[r0], part.indptr[r1]
            yield Problem(indptr=np.asarray(part.indptr[r0:r1 + 1]) - z0,
                          indices=part.indices[z0:z1], data=part.data[z0:z1],
                          y=part.y[r0:r1], n_features=part.n_features)

    return derived_dataset(path, f"-split{n}", pieces)


def make_dataset(shape: str, rows: int, directory: str, float32: bool = False) -> str:
    import dlinear
    suffix = "-f32" if float32 else ""
    target = os.path.join(directory, f"ooc-{shape}-{rows}{suffix}.bin")
    if os.path.isdir(target):
        return target
    prefix = os.path.join(directory, f"ooc-{shape}-{rows}{suffix}")
    subprocess.run([sys.executable, "-m", "dlinear", "make-data", prefix, "--rows",
                    str(rows), "--shape", shape], check=True)
    dlinear.convert_libsvm(prefix + ".train", target,
                           dtype=np.float32 if float32 else np.float64)
    os.remove(prefix + ".train")
    return target


def drop_from_page_cache(path: str) -> None:
    for name in os.listdir(path):
        fd = os.open(os.path.join(path, name), os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def timed_read(path: str) -> float:
    """Seconds to read what a pass reads (the dataset's indices and values) once from the
    disk, its pages dropped first and after (as the out-of-core reader reads: plain
    reads, then dropped)."""
    from dlinear.data.binary_format import read_header
    header = read_header(path)
    drop_from_page_cache(path)
    start = time.perf_counter()
    for name in ("indices", "data"):
        with open(header.file(name), "rb", buffering=0) as f:
            while f.read(8 << 20):
                pass
    seconds = time.perf_counter() - start
    drop_from_page_cache(path)
    return seconds


def dataset_bytes(path: str) -> int:
    return sum(os.path.getsize(os.path.join(path, n)) for n in os.listdir(path))


def run_child(path, solver, C, eps, budget, cap, model_file):
    """(seconds, log lines, peak bytes of the group or None)."""
    command = [sys.executable, "-c", CHILD, path, str(solver), str(C), str(eps),
               str(budget), model_file]
    group = None
    if cap is not None:
        group = os.path.join(CGROUP_MEMORY, f"dlinear-ooc-{os.getpid()}")
        os.makedirs(group, exist_ok=True)
        with open(os.path.join(group, "memory.limit_in_bytes"), "w") as f:
            f.write(str(cap))
        command = ["sh", "-c", f'echo $$ > {group}/cgroup.procs && exec "$@"', "sh",
                   *command]
    try:
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"out-of-core child failed ({done.returncode}): "
                             f"{done.stderr.strip().splitlines()[-1:]}")
        result = json.loads(done.stdout.strip().splitlines()[-1])
        peak = None
        if group is not None:
            with open(os.path.join(group, "memory.max_usage_in_bytes")) as f:
                peak = int(f.read())
        return result["seconds"], result["log"], peak
    finally:
        if group is not None:
            os.rmdir(group)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--shape", choices=("rcv1", "click"), default="rcv1")
    parser.add_argument("--solver", type=int, default=1)
    parser.add_argument("-C", type=float, default=1.0)
    parser.add_argument("--eps", type=float, default=None)
    parser.add_argument("--cap-fraction", type=float, default=0.25)
    parser.add_argument("--overhead", type=int, default=None)
    parser.add_argument("--no-cap", action="store_true")
    parser.add_argument("--float32", action="store_true")
    parser.add_argument("--split", type=int, default=1,
                        help="write each part of the dataset as this many parts")
    harness.add_output_arguments(parser)
    args = parser.parse_args(argv)

    import dlinear
    from dlinear.solvers.primal_objective_values import primal_objective
    cache = os.environ.get("DLINEAR_BENCH_CACHE", os.path.expanduser("~/.cache/dlinear-bench"))
    os.makedirs(cache, exist_ok=True)
    path = make_dataset(args.shape, args.rows, cache, args.float32)
    if dlinear.Params(solver_type=args.solver).spec.kind == "regression":
        path = regression_dataset(path)
    if args.split > 1:
        path = split_dataset(path, args.split)
    params = dlinear.Params(solver_type=args.solver, C=args.C, eps=args.eps).resolved()

    # in RAM: the arrays copied out of the dataset's mapping, which would otherwise keep
    # its pages in the page cache for the out-of-core child to read
    mapped = dlinear.read_binary(path)
    problem = dataclasses.replace(mapped, **{name: np.array(getattr(mapped, name))
                                             for name in ("indptr", "indices", "data", "y")})
    del mapped
    # the fastest of IN_MEMORY_RUNS fits after a first one (a small warm-up would take
    # one dual CD thread, so the kernels of two compiled or loaded inside the timing):
    # one fit's time spread over 6.7-9.3 s on 4M rows, and the fastest is the strictest
    # reference for the out-of-core time
    dlinear.train(problem, params)
    in_memory_s = None
    for _ in range(IN_MEMORY_RUNS):
        start = time.perf_counter()
        in_memory = dlinear.train(problem, params)
        seconds = time.perf_counter() - start
        in_memory_s = seconds if in_memory_s is None else min(in_memory_s, seconds)

    size = dataset_bytes(path)
    cap = int(args.cap_fraction * size) + (200 << 20)
    overhead = args.overhead if args.overhead is not None or not args.no_cap else 150 << 20
    read_s = timed_read(path)
    model_file = os.path.join(cache, "ooc.model")
    seconds, log, peak = run_child(path, args.solver, args.C, params.eps,
                                   "cgroup" if overhead is None else cap - overhead,
                                   None if args.no_cap else cap, model_file)
    model = dlinear.load_model(model_file)
    f_mem, f_ooc = (primal_objective(problem, params, m) for m in (in_memory, model))
    passes = next((line for line in log if "passes" in line), "")
    n_passes = float(passes.split(",")[-1].split()[0]) if passes else 0.0
    planned = next((line for line in log if "for a budget of" in line), "")
    budget_mb = planned.split("for a budget of ")[-1].split(",")[0] if planned else None
    report = harness.Report("out_of_core", args)
    report.add(shape=args.shape, rows=args.rows, solver=args.solver,
               dataset_mb=round(size / 2**20), cap_mb=None if args.no_cap else cap >> 20,
               budget=budget_mb,
               in_memory_s=round(in_memory_s, 2), out_of_core_s=round(seconds, 2),
               ratio=round(seconds / in_memory_s, 2),
               peak_mb=None if peak is None else peak >> 20,
               passes=n_passes, read_s=round(read_s, 2),
               read_floor_fraction=round(n_passes * read_s / seconds, 2),
               objective_rel_diff=f"{(f_ooc - f_mem) / abs(f_mem):.2e}")
    report.finish(["shape", "rows", "solver", "dataset_mb", "cap_mb", "budget", "in_memory_s",
                   "out_of_core_s", "ratio", "peak_mb", "passes", "read_s", "read_floor_fraction",
                   "objective_rel_diff"])


if __name__ == "__main__":
    main()
