"""Whole-process wall time of `dlinear-train` in process (`--workers 0`) against a local
cluster (`--workers N`), for the default-backend rule (dlinear.modes: NEWTON_CLUSTER_BYTES).

Each case is `SOLVER:FILE`; the two backends run back to back, alternating which goes
first, `--repeat` times, and the best of each is compared. What dlinear says on stderr
about where it trained (the cluster's mode line) is printed with the figures.

    python scripts/bench_backend.py --workers 2 --repeat 2 1:/data/c35_70.train 0:/data/b_850.train

Figures and the files' make-data commands: BENCHMARKS.md, "Default backend".
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time


def run_once(solver: str, train_file: str, workers: int, extra: list[str]) -> tuple[float, str]:
    with tempfile.TemporaryDirectory() as tmp:
        command = ["dlinear-train", "-s", solver, "--workers", str(workers), *extra,
                   train_file, os.path.join(tmp, "model")]
        start = time.perf_counter()
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True)
        seconds = time.perf_counter() - start
    if done.returncode:
        sys.exit(f"{' '.join(command)} failed: {done.stderr.strip()}")
    # the cluster's mode line: "dlinear: -s 1 on a copy of the data per worker ..."
    mode = next((line[len("dlinear: "):] for line in done.stderr.splitlines()
                 if line.startswith("dlinear: -s ")), "")
    return seconds, mode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cases", nargs="+", help="SOLVER:FILE, e.g. 1:/data/c35_70.train")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--extra", default="", help="more dlinear-train options, e.g. '-e 0.01'")
    args = parser.parse_args()
    extra = args.extra.split()
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    print(f"{'-s':>3} {'file':<28} {'MB':>6} {'process s':>10} {'cluster s':>10} "
          f"{'cluster/process':>16}  cluster mode")
    for case in args.cases:
        solver, train_file = case.split(":", 1)
        times = {0: [], args.workers: []}
        mode = ""
        for r in range(args.repeat):
            order = [0, args.workers] if r % 2 == 0 else [args.workers, 0]
            for workers in order:
                seconds, said = run_once(solver, train_file, workers, extra)
                times[workers].append(seconds)
                if workers:
                    mode = said
        local, cluster = min(times[0]), min(times[args.workers])
        megabytes = os.path.getsize(train_file) / 1e6
        print(f"{solver:>3} {os.path.basename(train_file):<28} {megabytes:6.0f} {local:10.2f} "
              f"{cluster:10.2f} {cluster / local:16.2f}  {mode}", flush=True)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
