"""dlinear-train with OPENBLAS_NUM_THREADS=1 against =2, alternating, as child processes:
wall seconds and CPU seconds (user + system of the child) of each command, and their
ratio 1 thread / 2 threads. Measures whether an OpenBLAS thread per core costs or gains a
fit anything (dlinear.threads.limit_library_threads chooses one).

    python -m scripts.benchmarks.blas_threads DATA [DATA ...] [--repeats 2] [--options "-s 1" ...]
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

OPTIONS = ["-s 0", "-s 2", "-s 1", "-s 6", "-s 4", "-s 2 -m 2", "-s 1 -m 1"]


def run_once(data: str, options: str, blas_threads: str, model: str):
    env = dict(os.environ, OPENBLAS_NUM_THREADS=blas_threads)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(["dlinear-train", "-q", *options.split(), data, model], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main(argv=None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("data", nargs="+")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--options", nargs="*", default=OPTIONS)
    args = parser.parse_args(argv)
    print(f"{'data':<12} {'options':<12} {'wall 1':>8} {'wall 2':>8} {'ratio':>6} "
          f"{'cpu 1':>8} {'cpu 2':>8} {'ratio':>6}   (seconds, best of {args.repeats})")
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "model")
        for data in args.data:
            for options in args.options:
                best = {"1": [float("inf")] * 2, "2": [float("inf")] * 2}
                for r in range(args.repeats):
                    for threads in (("1", "2") if r % 2 == 0 else ("2", "1")):
                        wall, cpu = run_once(data, options, threads, model)
                        best[threads] = [min(best[threads][0], wall), min(best[threads][1], cpu)]
                (w1, c1), (w2, c2) = best["1"], best["2"]
                print(f"{os.path.basename(data.rstrip('/')):<12} {options:<12} {w1:8.2f} {w2:8.2f} "
                      f"{w1 / w2:6.2f} {c1:8.2f} {c2:8.2f} {c1 / c2:6.2f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
