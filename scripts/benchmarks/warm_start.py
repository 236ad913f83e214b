"""Warm start after more rows (docs/guide/warm_start.rst): a fresh fit on the grown set
against one started from the model of its first rows (dlinear.train(init=), -i), per
solver: iterations, train seconds (wall and this process's CPU: the machine is shared)
and their ratios, and the relative difference of the two models' primal objectives.
For -s 1 and -s 3, also the start from the duals the old model kept (Params.keep_duals,
--keep-duals) besides the start from the duals consistent with its w. The fits run in
this run, one after the other, on the same threads.

    python -m dlinear make-data /tmp/ws/rcv1 --rows 220000
    python -m scripts.benchmarks.warm_start /tmp/ws/rcv1.train --old-rows 200000 -s 0 1
"""
from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace

import numpy as np

from dlinear import Params, train
from dlinear.data.binary_format import read_dataset
from dlinear.solvers.primal_objective_values import primal_objective


def _timed_fit(problem, params, init=None):
    start, cpu = time.perf_counter(), time.process_time()
    model = train(problem, params, init=init)
    return model, time.perf_counter() - start, time.process_time() - cpu


def measure(problem, old_rows: int, solver: int, bias: float = 1.0) -> dict:
    params = Params(solver_type=solver, bias=bias)
    keeps_duals = params.spec.two_variable_cd
    old, _, _ = _timed_fit(problem.subset(np.arange(old_rows)),
                           replace(params, keep_duals=keeps_duals))
    fresh, fresh_s, fresh_cpu = _timed_fit(problem, params)
    f_fresh = primal_objective(problem, params, fresh)
    row = {"solver": solver, "rows": problem.n_samples, "old_rows": old_rows,
           "fresh_iter": int(sum(fresh.n_iter)), "fresh_s": round(fresh_s, 3),
           "fresh_cpu": round(fresh_cpu, 3)}
    starts = {"warm": replace(old, duals=())}
    if keeps_duals:
        starts["duals"] = old
    for name, init in starts.items():
        warm, warm_s, warm_cpu = _timed_fit(problem, params, init=init)
        row.update({f"{name}_iter": int(sum(warm.n_iter)), f"{name}_s": round(warm_s, 3),
                    f"{name}_cpu": round(warm_cpu, 3),
                    f"{name}_time_ratio": round(warm_s / fresh_s, 3),
                    f"{name}_cpu_ratio": round(warm_cpu / fresh_cpu, 3),
                    f"{name}_objective_rel_diff":
                        (primal_objective(problem, params, warm) - f_fresh) / abs(f_fresh)})
    return row


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("train_file", help="LIBSVM text or a binary dataset directory")
    parser.add_argument("--old-rows", type=int, required=True,
                        help="the rows the old model was trained on (the file's first)")
    parser.add_argument("-s", dest="solvers", type=int, nargs="+", default=[0, 1])
    args = parser.parse_args(argv)
    problem = read_dataset(args.train_file)
    for solver in args.solvers:
        print(json.dumps(measure(problem, args.old_rows, solver)), flush=True)


if __name__ == "__main__":
    main()
