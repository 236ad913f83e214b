"""A run killed and resumed from its checkpoint (docs/guide/checkpoints.rst), per solver:
`dlinear-train` run through (the baseline), then the same command with --checkpoint
killed by SIGKILL at 60% of the baseline's time and run again to its end. Prints the
resumed total (killed part + rerun) over the baseline, in wall-clock seconds and in the
processes' CPU seconds (steadier on a shared machine), and the relative difference of
the two models' primal objectives. Whole processes (reading, Numba's cached kernels,
training, saving), one after the other, in the same run.

    python -m dlinear make-data /tmp/ck/small --rows 60000
    python -m dlinear convert /tmp/ck/small.train /tmp/ck/small.bin
    python -m scripts.benchmarks.checkpoint_resume /tmp/ck/small.bin -s 0 1 6 \\
        -c 100 -e 0.0001 --every 2

The startup (reading, loading the kernels) is paid again by the rerun: the ratio says
something of checkpoints where training takes most of the run (a large C, a small -e).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from dlinear import Params, load_model
from dlinear.data.binary_format import read_dataset
from dlinear.solvers.primal_objective_values import primal_objective

KILL_AT = 0.6


def _command(train_file, model_file, options):
    return [sys.executable, "-m", "dlinear", "train", "-q", *options, train_file,
            model_file]


def _cpu() -> float:
    """CPU seconds (user + system) of the child processes waited for so far."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _run(command) -> tuple:
    """(wall seconds, CPU seconds) of a whole run of `command`."""
    start, cpu = time.perf_counter(), _cpu()
    subprocess.run(command, check=True)
    return time.perf_counter() - start, _cpu() - cpu


def measure(problem, train_file: str, solver: int, every: float, eps, C: float,
            threads: int) -> dict:
    work = tempfile.mkdtemp(prefix="dlinear-checkpoint-bench-")
    try:
        options = ["-s", str(solver), "-c", str(C), "-m", str(threads)] + (
            [] if eps is None else ["-e", str(eps)])
        plain_model = os.path.join(work, "plain.model")
        baseline, baseline_cpu = _run(_command(train_file, plain_model, options))
        resumed_model = os.path.join(work, "resumed.model")
        checkpointed = options + ["--checkpoint", os.path.join(work, "state"),
                                  "--checkpoint-every", str(every)]
        start, cpu = time.perf_counter(), _cpu()
        run = subprocess.Popen(_command(train_file, resumed_model, checkpointed))
        try:
            run.wait(timeout=KILL_AT * baseline)
        except subprocess.TimeoutExpired:
            run.send_signal(signal.SIGKILL)
            run.wait()
        killed_part, killed_cpu = time.perf_counter() - start, _cpu() - cpu
        killed = run.returncode == -signal.SIGKILL
        rerun, rerun_cpu = (_run(_command(train_file, resumed_model, checkpointed))
                            if killed else (0.0, 0.0))
        params = Params(solver_type=solver, eps=eps, C=C)
        f_plain = primal_objective(problem, params, load_model(plain_model))
        f_resumed = primal_objective(problem, params, load_model(resumed_model))
        return {"solver": solver, "C": C, "eps": eps, "baseline_s": round(baseline, 2), "killed": killed,
                "killed_part_s": round(killed_part, 2), "rerun_s": round(rerun, 2),
                "ratio": round((killed_part + rerun) / baseline, 3),
                "baseline_cpu_s": round(baseline_cpu, 2),
                "cpu_ratio": round((killed_cpu + rerun_cpu) / baseline_cpu, 3),
                "objective_rel_diff": (f_resumed - f_plain) / abs(f_plain)}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("train_file")
    parser.add_argument("-s", dest="solvers", type=int, nargs="+", default=[0, 1, 6])
    parser.add_argument("--every", type=float, default=10.0,
                        help="--checkpoint-every of the checkpointed runs (seconds)")
    parser.add_argument("-e", dest="eps", type=float, default=None)
    parser.add_argument("-c", dest="C", type=float, default=1.0)
    parser.add_argument("-m", dest="threads", type=int, default=1,
                        help="threads of every run (default 1: with --checkpoint the dual "
                             "CD runs on one thread, so the baseline does too)")
    args = parser.parse_args(argv)
    problem = read_dataset(args.train_file)
    for solver in args.solvers:
        print(json.dumps(measure(problem, args.train_file, solver, args.every, args.eps,
                                   args.C, args.threads)),
              flush=True)


if __name__ == "__main__":
    main()
