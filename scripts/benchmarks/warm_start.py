"""Warm start after more rows (docs/guide/warm_start.rst): a fresh fit on the grown set
against one started from the model of its first rows (dlinear.train(init=), -i), per
solver: iterations, train seconds and their ratios, and the relative difference of the
two models' primal objectives. Both fits run in this run, one after the other, on the
same threads.

    python -m dlinear make-data /tmp/ws/rcv1 --rows 220000
    python -m scripts.benchmarks.warm_start /tmp/ws/rcv1.train --old-rows 200000 -s 0 1
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np

from dlinear import Params, train
from dlinear.data.libsvm_reader import read_libsvm
from dlinear.solvers.primal_objective_values import primal_objective


def _timed_fit(problem, params, init=None):
    start = time.perf_counter()
    model = train(problem, params, init=init)
    return model, time.perf_counter() - start


def measure(problem, old_rows: int, solver: int, bias: float = 1.0) -> dict:
    params = Params(solver_type=solver, bias=bias)
    old, _ = _timed_fit(problem.subset(np.arange(old_rows)), params)
    fresh, fresh_s = _timed_fit(problem, params)
    warm, warm_s = _timed_fit(problem, params, init=old)
    f_fresh = primal_objective(problem, params, fresh)
    f_warm = primal_objective(problem, params, warm)
    return {"solver": solver, "rows": problem.n_samples, "old_rows": old_rows,
            "fresh_iter": int(sum(fresh.n_iter)), "warm_iter": int(sum(warm.n_iter)),
            "iter_ratio": sum(warm.n_iter) / max(sum(fresh.n_iter), 1),
            "fresh_s": round(fresh_s, 3), "warm_s": round(warm_s, 3),
            "time_ratio": warm_s / fresh_s,
            "objective_rel_diff": (f_warm - f_fresh) / abs(f_fresh)}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("train_file")
    parser.add_argument("--old-rows", type=int, required=True,
                        help="the rows the old model was trained on (the file's first)")
    parser.add_argument("-s", dest="solvers", type=int, nargs="+", default=[0, 1])
    args = parser.parse_args(argv)
    problem = read_libsvm(args.train_file)
    for solver in args.solvers:
        print(json.dumps(measure(problem, args.old_rows, solver)), flush=True)


if __name__ == "__main__":
    main()
