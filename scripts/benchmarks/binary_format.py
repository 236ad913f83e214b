"""Read once, train many: the binary dataset format against LIBSVM text.

    python -m scripts.benchmarks.binary_format TEXT_FILE DATASET_DIR [-s 0] [--repeat 3]
        [--liblinear-train PATH] [--text-repeat 1] [--lock /work/bench.lock]
        [--only load|train|convert]

DATASET_DIR is made from TEXT_FILE (`python -m dlinear convert`, untimed) if it does not
exist. Rows: `load` (in a child process whose Numba kernels are loaded, as in any run:
read_libsvm of the text against read_binary of the directory, best of each, wall and CPU
seconds), `train` (whole processes: `python -m dlinear train -s S --workers 0` from
the directory, and LIBLINEAR's C `train -s S` on the text, best of --repeat after one warm
run each) and `convert` (whole processes: `python -m dlinear convert` of the text, with
and without --float32, against a process reading it with dlinear.read_libsvm, best of
--repeat after one warm run each; the goal is convert <= 1.5x the read). Each timed run holds --lock on its own (a locked section stays short).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

from . import harness

# a child process: one warm read of each (Numba loaded, files in the page cache), then the
# best of `repeat` reads of the binary directory and of `text_repeat` of the text
_LOAD_CHILD = r"""
import json, sys, time
from dlinear.data.binary_format import read_binary
from dlinear.data.libsvm_reader import read_libsvm
text, directory, repeat, text_repeat = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
def best(fn, n):
    runs = []
    for _ in range(n):
        w, c = time.perf_counter(), time.process_time()
        problem = fn()
        runs.append((time.perf_counter() - w, time.process_time() - c))
        del problem
    return min(runs)
read_binary(directory)
binary = best(lambda: read_binary(directory), repeat)
textual = best(lambda: read_libsvm(text), text_repeat) if text_repeat else (float("nan"),) * 2
print(json.dumps({"binary": binary, "text": textual}))
"""


def load(args, report):
    command = [sys.executable, "-c", _LOAD_CHILD, args.text, args.dataset, str(args.repeat),
               str(args.text_repeat)]
    with harness.benchmark_lock(args.lock):
        out = subprocess.run(command, capture_output=True, text=True, check=True)
    row = json.loads(out.stdout.splitlines()[-1])
    (bw, bc), (tw, tc) = row["binary"], row["text"]
    report.add(what="load", program="read_binary", file=os.path.basename(args.dataset),
               wall_s=bw, cpu_s=bc)
    report.add(what="load", program="read_libsvm", file=os.path.basename(args.text),
               wall_s=tw, cpu_s=tc)
    report.note(f"load: read_binary / read_libsvm = {bw / tw:.3f} (wall)")


def _best_process(command, repeat, lock):
    harness_run = lambda: subprocess.run(command, stdout=subprocess.DEVNULL,  # noqa: E731
                                         stderr=subprocess.PIPE, text=True)
    first = harness_run()                               # warm: Numba cache, page cache
    if first.returncode:
        sys.exit(f"{' '.join(command)} failed: {first.stderr.strip()}")
    best = float("inf")
    for _ in range(repeat):
        with harness.benchmark_lock(lock):
            best = min(best, harness.timed(harness_run).wall)
    return best


def train(args, report):
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "model")
        ours = _best_process([sys.executable, "-m", "dlinear", "train", "-q", "-s",
                              str(args.solver), "--workers", "0", args.dataset, model],
                             args.repeat, args.lock)
        report.add(what="train", program="dlinear-train (binary)",
                   file=os.path.basename(args.dataset), wall_s=ours)
        if args.liblinear_train:
            theirs = _best_process([args.liblinear_train, "-q", "-s", str(args.solver),
                                    args.text, model], args.repeat, args.lock)
            report.add(what="train", program="LIBLINEAR train (text)",
                       file=os.path.basename(args.text), wall_s=theirs)
            report.note(f"whole process -s {args.solver}: dlinear-train from the binary "
                        f"format / LIBLINEAR's C train = {ours / theirs:.3f}")


_READ_PROCESS = "import sys, dlinear; dlinear.read_libsvm(sys.argv[1])"


def convert(args, report):
    with tempfile.TemporaryDirectory(dir=os.path.dirname(os.path.abspath(args.dataset))
                                     ) as tmp:
        target = os.path.join(tmp, "converted.ds")
        read = _best_process([sys.executable, "-c", _READ_PROCESS, args.text], args.repeat,
                             args.lock)
        report.add(what="convert", program="read_libsvm (process)",
                   file=os.path.basename(args.text), wall_s=read)
        for extra in ([], ["--float32"]):
            wall = _best_process([sys.executable, "-m", "dlinear", "convert", "-q", *extra,
                                  args.text, target], args.repeat, args.lock)
            program = " ".join(["python -m dlinear convert"] + extra)
            report.add(what="convert", program=program, file=os.path.basename(args.text),
                       wall_s=wall)
            report.note(f"{program} / a read of the same text = {wall / read:.3f} (wall; "
                        "goal <= 1.5)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("text")
    ap.add_argument("dataset")
    ap.add_argument("-s", dest="solver", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--text-repeat", type=int, default=1,
                    help="reads of the text file (0: none)")
    ap.add_argument("--liblinear-train", default=None, help="path of LIBLINEAR's C train")
    ap.add_argument("--only", choices=["load", "train", "convert"], default=None)
    harness.add_output_arguments(ap)
    args = ap.parse_args(argv)
    if not os.path.exists(args.dataset):
        subprocess.run([sys.executable, "-m", "dlinear", "convert", "-q", args.text,
                        args.dataset], check=True)
    report = harness.Report("binary_format", args)
    report.note("machine shared with other jobs; 2 cores")
    if args.only in (None, "load"):
        load(args, report)
    if args.only in (None, "train"):
        train(args, report)
    if args.only in (None, "convert"):
        convert(args, report)
    report.finish(["what", "program", "file", "wall_s", "cpu_s"])


if __name__ == "__main__":
    main()
