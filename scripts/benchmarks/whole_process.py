"""Whole-process runs, which asv (timing calls inside one process) cannot express.

    python -m scripts.benchmarks.whole_process backend [--workers 2] [--repeat 2] SOLVER:FILE ...
        `dlinear-train` in process (`--workers 0`) against a local cluster (`--workers N`),
        pairs alternated, best of each, with the cluster's mode line: the figures behind
        the CLI's default-backend rule
    python -m scripts.benchmarks.whole_process cli [--file FILE] [--liblinear-train PATH] [-s 1]
        the wall time of `dlinear-train FILE` (default the shipped example), Numba cache
        warm, best of --repeat: dlinear's fixed cost; with --liblinear-train, LIBLINEAR's
        C `train` on the same file as the peer
    python -m scripts.benchmarks.whole_process first-run [--file FILE] [SOLVER ...]
        `dlinear-train -s SOLVER FILE` (default every solver on the shipped example) with
        an empty Numba cache (cold: a new NUMBA_CACHE_DIR), then again with that cache
        (warm): wall and CPU seconds of each, the cost of compiling on a first run
    python -m scripts.benchmarks.whole_process read CODE_ROOT FILE [--repeat 3]
        read_libsvm of the `dlinear` package under CODE_ROOT (e.g. an older commit
        unpacked with `git archive COMMIT dlinear | tar -x -C /tmp/old`) in a child
        process: best time, MB/s, peak RSS

Each writes its rows as JSON (--json) and prints a table.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile

from dlinear.solver_table import solver_ids

from . import harness

EXAMPLE = os.path.join(harness.REPO, "examples", "rcv1_small.train")


def run_process(command, env=None):
    """(seconds, stderr) of a command; exits with its stderr if it fails."""
    t = harness.timed(lambda: subprocess.run(command, stdout=subprocess.DEVNULL,
                                             stderr=subprocess.PIPE, text=True, env=env))
    if t.value.returncode:
        sys.exit(f"{' '.join(command)} failed: {t.value.stderr.strip()}")
    return t.wall, t.value.stderr


def backend(args, report):
    extra = args.extra.split()
    for case in args.cases:
        solver, train_file = case.split(":", 1)
        times = {0: [], args.workers: []}
        mode = ""
        with tempfile.TemporaryDirectory() as tmp:
            for r in range(args.repeat):
                for workers in ([0, args.workers] if r % 2 == 0 else [args.workers, 0]):
                    command = ["dlinear-train", "-s", solver, "--workers", str(workers),
                               *extra, train_file, os.path.join(tmp, "model")]
                    seconds, stderr = run_process(command)
                    times[workers].append(seconds)
                    # the cluster's mode line: "dlinear: -s 1 on a copy of the data ..."
                    mode = next((line[len("dlinear: "):] for line in stderr.splitlines()
                                 if line.startswith("dlinear: -s ")), mode)
        local, cluster = min(times[0]), min(times[args.workers])
        report.add(solver=solver, file=os.path.basename(train_file),
                   megabytes=os.path.getsize(train_file) / 1e6, process_s=local,
                   cluster_s=cluster, cluster_over_process=cluster / local, mode=mode)
    return ["solver", "file", "megabytes", "process_s", "cluster_s", "cluster_over_process",
            "mode"]


def cli(args, report):
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "model")
        runs = {"dlinear-train": [sys.executable, "-m", "dlinear", "train", "-q", "-s",
                                  str(args.solver), args.file, model]}
        if args.liblinear_train:
            runs["LIBLINEAR train"] = [args.liblinear_train, "-q", "-s", str(args.solver),
                                       args.file, model]
        for name, command in runs.items():
            run_process(command)                         # warm: Numba cache, page cache
            timings = [child_cpu_seconds(command, None) for _ in range(args.repeat)]
            report.add(program=name, file=os.path.basename(args.file), solver=args.solver,
                       best_s=min(t[0] for t in timings), best_cpu_s=min(t[1] for t in timings),
                       repeat=args.repeat)
    if args.liblinear_train:
        ours, theirs = report.rows
        report.note(f"dlinear-train / LIBLINEAR train = {ours['best_s'] / theirs['best_s']:.2f}"
                    f" (wall), {ours['best_cpu_s'] / theirs['best_cpu_s']:.2f} (CPU)")
    return ["program", "file", "solver", "best_s", "best_cpu_s", "repeat"]


def child_cpu_seconds(command, env) -> tuple:
    """(wall, CPU seconds of the child: user + system) of a command that must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall, _ = run_process(command, env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def first_run(args, report):
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "model")
        for solver in args.solvers:
            command = [sys.executable, "-m", "dlinear", "train", "-q", "-s", str(solver),
                       args.file, model]
            cold = warm = (float("inf"), float("inf"))
            for r in range(args.repeat):
                env = dict(os.environ, NUMBA_CACHE_DIR=os.path.join(tmp, f"cache{solver}-{r}"))
                cold = min(cold, child_cpu_seconds(command, env))
                warm = min(warm, child_cpu_seconds(command, env))
            report.add(solver=solver, file=os.path.basename(args.file), cold_s=cold[0],
                       cold_cpu_s=cold[1], warm_s=warm[0], warm_cpu_s=warm[1],
                       compiling_cpu_s=cold[1] - warm[1], repeat=args.repeat)
    return ["solver", "file", "cold_s", "cold_cpu_s", "warm_s", "warm_cpu_s",
            "compiling_cpu_s"]


# a child process importing `dlinear` from CODE_ROOT (its PYTHONPATH): times read_libsvm
_READ_CHILD = r"""
import json, os, resource, sys, tempfile, time
from dlinear.data.libsvm_reader import read_libsvm
root, path, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
# the thread count only for a reader that takes one
options = {} if sys.argv[4] == "default" else {"n_threads": int(sys.argv[4])}
assert read_libsvm.__code__.co_filename.startswith(root), read_libsvm.__code__.co_filename
with tempfile.NamedTemporaryFile("w", suffix=".svm") as warm:
    # a 17-digit value too: a reader with a fast-path kernel then compiles both
    warm.write("1 1:0.5 3:1\n-1 2:0.25 3:0.30000000000000004\n")
    warm.flush()
    read_libsvm(warm.name, **options)
best = best_cpu = float("inf")
for _ in range(repeat):
    t, c = time.perf_counter(), time.process_time()
    problem = read_libsvm(path, **options)
    best = min(best, time.perf_counter() - t)
    best_cpu = min(best_cpu, time.process_time() - c)
    del problem
print(json.dumps({"best_s": best, "best_cpu_s": best_cpu,
                  "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10}))
"""


def read(args, report):
    root = os.path.abspath(args.code_root)
    env = dict(os.environ, PYTHONPATH=root)
    threads = "default" if args.threads is None else str(args.threads)
    out = subprocess.run([sys.executable, "-c", _READ_CHILD, root, args.file,
                          str(args.repeat), threads], env=env, cwd=root,  # `-c` imports from cwd first
                         capture_output=True, text=True, check=True)
    row = json.loads(out.stdout.splitlines()[-1])
    megabytes = os.path.getsize(args.file) / 1e6
    report.add(code_root=root, file=args.file, threads=threads, best_s=row["best_s"],
               best_cpu_s=row["best_cpu_s"], mb_per_s=megabytes / row["best_s"],
               peak_rss_mib=row["peak_rss_mib"], repeat=args.repeat)
    return ["code_root", "file", "threads", "best_s", "best_cpu_s", "mb_per_s",
            "peak_rss_mib"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    p = sub.add_parser("backend")
    p.add_argument("cases", nargs="+", help="SOLVER:FILE, e.g. 1:/data/c35_70.train")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--extra", default="", help="more dlinear-train options, e.g. '-e 0.01'")
    p = sub.add_parser("cli")
    p.add_argument("--file", default=EXAMPLE)
    p.add_argument("-s", dest="solver", type=int, default=1)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--liblinear-train", default=None, help="path of LIBLINEAR's C train")
    p = sub.add_parser("first-run")
    p.add_argument("solvers", nargs="*", type=int,
                   default=solver_ids())
    p.add_argument("--file", default=EXAMPLE)
    p.add_argument("--repeat", type=int, default=1, help="cold and warm pairs, best of")
    p = sub.add_parser("read")
    p.add_argument("code_root")
    p.add_argument("file")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--threads", type=int, default=None,
                   help="read_libsvm's n_threads (default: the reader's own default)")
    for p in sub.choices.values():
        harness.add_output_arguments(p)
    args = ap.parse_args(argv)
    report = harness.Report(f"whole_process-{args.what}", args)
    with harness.benchmark_lock(args.lock):
        columns = {"backend": backend, "cli": cli, "first-run": first_run,
                   "read": read}[args.what](args, report)
    report.finish(columns)


if __name__ == "__main__":
    main()
