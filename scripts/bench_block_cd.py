#!/usr/bin/env python
"""Benchmark: two-variable block dual CD (--cd-block 2) against one-variable dual CD,
kernel against kernel, same data, one thread.

    python scripts/bench_block_cd.py                  # 100k rcv1-like rows, 50k x 20 dense
    python scripts/bench_block_cd.py --old /path/to/old_block_cd_svc.py   # also an older kernel

For -s 1 and -s 3 at each C: outer iterations, CPU seconds (best of --repeat,
interleaved), seconds per outer iteration and the dual objective reached, at eps 0.1. CPU time, not wall time, because the machine is shared.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from dlinear import Problem  # noqa: E402
from dlinear.datasets import make_rcv1_like  # noqa: E402
from dlinear.kernels.block_cd_svc import block_cd_svc  # noqa: E402
from dlinear.kernels.dual_cd_svc import dual_cd_svc  # noqa: E402


def dense_set(rows, n_features, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows, n_features))
    y = np.where(X @ rng.normal(size=n_features) > 0, 1.0, -1.0)
    y[rng.random(rows) < 0.05] *= -1
    return Problem.from_arrays(X, y)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=100000)
    ap.add_argument("--dense-rows", type=int, default=50000)
    ap.add_argument("--C", default="1")
    ap.add_argument("--eps", type=float, default=0.1)
    ap.add_argument("--max-iter", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--old", default=None, help="an older block_cd_svc.py to time as well")
    args = ap.parse_args(argv)

    kernels = {"one-variable": dual_cd_svc, "two-variable": block_cd_svc}
    if args.old:
        spec = importlib.util.spec_from_file_location("old_block_cd_svc", args.old)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        kernels["two-variable (old)"] = mod.block_cd_svc

    sets = {f"rcv1-like {args.rows} x 47236": make_rcv1_like(args.rows, 47236, seed=1),
            f"dense {args.dense_rows} x 20": dense_set(args.dense_rows, 20, 2)}
    print(f"{'set':<24} {'-s':>3} {'C':>6} {'kernel':<19} {'iter':>5} "
          f"{'cpu s':>7} {'ms/iter':>8} {'dual f':>16}")
    for name, X in sets.items():
        y = np.where(X.y > 0, 1.0, -1.0)
        for s in (1, 3):
            for C in (float(c) for c in args.C.split(",")):
                Cv = np.full(X.n_samples, C)
                best = {k: np.inf for k in kernels}
                out = {}
                for rep in range(args.repeat + 1):            # the first run compiles
                    for k, fn in kernels.items():
                        alpha = np.zeros(X.n_samples)
                        w = np.zeros(X.n_features)
                        t0 = time.process_time()
                        r = fn(X.indptr, X.indices, X.data, X.n_features, -1.0, y, Cv, s == 1,
                               args.eps, args.max_iter, 1, alpha, w)
                        dt = time.process_time() - t0
                        if rep > 0:
                            best[k] = min(best[k], dt)
                        out[k] = r
                for k in kernels:
                    it = out[k][0]
                    print(f"{name:<24} {s:>3} {C:>6g} {k:<19} {it:>5d} {best[k]:>7.3f} "
                          f"{1e3 * best[k] / it:>8.2f} {out[k][-1]:>16.8g}", flush=True)


if __name__ == "__main__":
    main()
