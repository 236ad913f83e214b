"""float32 data against float64: the objective difference of the two fits and their train
times, per LIBSVM file and solver.

    python -m benchmarks.float32 FILE [FILE ...] [--solvers 0,1,2,3] [--lock /work/bench.lock]

Each file is read twice (float64 and float32 values); each solver trains on both in this
process, one thread, at its default eps. Both models are scored on the float64 data (the
file's values), so the difference is what float32 storage costs the user:
rel_diff = (f(w32) - f(w64)) / |f(w64)|, negative when the float32 fit is the better one.
Peak memory is a whole-process figure: measure it with `/usr/bin/time -v dlinear-train
--float32 ...` (BENCHMARKS.md, "float32 data").
"""
from __future__ import annotations

import argparse
import os

import numpy as np

from .harness import (Report, add_output_arguments, benchmark_lock,
                                objective_of, timed, warm_up)
from dlinear import Params, train
from dlinear.data.libsvm_reader import read_libsvm


def quiet(line: str) -> None:
    """The fits' log lines are not this benchmark's output."""


def compare(problem64, problem32, solver: int, lock: str | None) -> dict:
    params = Params(solver_type=solver)
    objective = objective_of(problem64, params)
    with benchmark_lock(lock):
        fit64 = timed(lambda: train(problem64, params, log=quiet, n_threads=1))
        fit32 = timed(lambda: train(problem32, params, log=quiet, n_threads=1))
    f64, f32 = objective(fit64.value), objective(fit32.value)
    return {"solver": solver, "f64": f64, "f32": f32, "rel_diff": (f32 - f64) / abs(f64),
            "cpu64": fit64.cpu, "cpu32": fit32.cpu, "cpu_ratio": fit32.cpu / fit64.cpu}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--solvers", default="0,1,2,3")
    add_output_arguments(parser)
    args = parser.parse_args(argv)
    solvers = [int(s) for s in args.solvers.split(",")]
    report = Report("float32", args)
    report.note("one thread, in process, default eps; both models scored on the float64 "
                "values; CPU seconds of the train call; the machine may be shared")
    for path in args.files:
        problem64 = read_libsvm(path)
        problem32 = read_libsvm(path, dtype=np.float32)
        exact = bool(np.array_equal(problem32.data, problem64.data))
        warm_up(problem64, [Params(solver_type=s) for s in solvers])
        warm_up(problem32, [Params(solver_type=s) for s in solvers])
        for solver in solvers:
            report.add(data=os.path.basename(path), rows=problem64.n_samples,
                       nnz=problem64.nnz, values_exact_in_float32=exact,
                       **compare(problem64, problem32, solver, args.lock))
    report.finish(["data", "rows", "solver", "rel_diff", "cpu64", "cpu32", "cpu_ratio",
                   "values_exact_in_float32"])


if __name__ == "__main__":
    main()
