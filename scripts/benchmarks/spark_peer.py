"""-s 6 (L1-regularized logistic regression, no bias) against Spark MLlib's
LogisticRegression (elasticNetParam 1, OWL-QN) on the same rcv1-shaped rows and cores:
the time each takes to come within --gap (relative) of the best objective found, every
objective computed by dlinear's primal_objective.

pyspark is a benchmark peer, not a dependency of dlinear; run Spark from its own venv
(Java 17 on the PATH):

    python3 -m venv /work/spark-venv && /work/spark-venv/bin/pip install pyspark numpy
    python -m scripts.benchmarks.spark_peer [--rows 20000] [--C 1] [--eps 1e-4] \\
        [--spark-python /work/spark-venv/bin/python] [--tols 1e-3,1e-4,1e-6,1e-9]

dlinear runs in process (newGLMNET, 2 threads) and partitioned (OWL-QN map-reduced over a
LocalCluster of 2 single-threaded workers), both at --eps. Spark runs local[2] in a
subprocess of --spark-python, which reads the LIBSVM file this script writes (numFeatures
set to dlinear's), fits once per --tols value (maxIter --max-iter), and prints each fit's
time and coefficients; its JVM start-up and file read are reported apart from the fits.
Spark minimizes (1/n) sum log(1+exp(-y w.x)) + regParam ||w||_1; with regParam =
1/(C n) that is dlinear's ||w||_1 + C sum log(1+exp(-y w.x)) divided by C n, so both have
the same minimizer (spark_reg_param).

Then the rounds for K workers on paper: OWL-QN's rounds map-reduce the exact loss and
gradient, so their number does not depend on K (the partitioned fit's count holds for
every K); the bytes of a full round grow with K, 2 x 8 bytes for each column occurring in
each worker's rows, counted here on paper for K contiguous row blocks (next to the
partitioned fit's measured bytes a round at --workers).
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import tempfile
import time
from dataclasses import replace

import numpy as np

from dlinear import Params, train
from dlinear.data.libsvm_writer import write_libsvm
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.solvers.primal_objective_values import primal_objective

SPARK_CHILD = r"""
import json, sys, time
start = time.perf_counter()
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.ml.classification import LogisticRegression
path, n_features, reg_param, tols, max_iter = (sys.argv[1], int(sys.argv[2]),
    float(sys.argv[3]), [float(t) for t in sys.argv[4].split(",")], int(sys.argv[5]))
spark = (SparkSession.builder.master("local[2]").appName("dlinear-spark-peer")
         .config("spark.driver.memory", "4g").config("spark.ui.enabled", "false")
         .getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
jvm_s = time.perf_counter() - start
start = time.perf_counter()
data = (spark.read.format("libsvm").option("numFeatures", n_features).load(path)
        .withColumn("label", (F.col("label") > 0).cast("double")).cache())
data.count()
read_s = time.perf_counter() - start
start = time.perf_counter()
LogisticRegression(elasticNetParam=1.0, regParam=reg_param, standardization=False,
                   fitIntercept=False, maxIter=2).fit(data)        # the JVM's JIT warmed
warm_s = time.perf_counter() - start
print(json.dumps({"jvm_s": jvm_s, "read_s": read_s, "warm_s": warm_s}), flush=True)
for tol in tols:
    lr = LogisticRegression(elasticNetParam=1.0, regParam=reg_param, standardization=False,
                            fitIntercept=False, tol=tol, maxIter=max_iter)
    start = time.perf_counter()
    model = lr.fit(data)
    fit_s = time.perf_counter() - start
    print(json.dumps({"tol": tol, "fit_s": fit_s,
                      "iterations": model.summary.totalIterations,
                      "coefficients": model.coefficients.toArray().tolist()}), flush=True)
spark.stop()
"""


def spark_reg_param(C: float, n_samples: int) -> float:
    """Spark's regParam for dlinear's C: Spark's (1/n) sum loss + regParam ||w||_1 is
    dlinear's ||w||_1 + C sum loss divided by C n when regParam = 1/(C n)."""
    return 1.0 / (C * n_samples)


def _with_weights(model, coefficients):
    """dlinear's model with Spark's coefficients, signed for dlinear's first label (Spark's
    coefficients score label 1, the positive class)."""
    sign = 1.0 if model.label[0] > 0 else -1.0
    return replace(model, w=sign * np.asarray(coefficients, dtype=np.float64))


def _run_spark(spark_python, path, n_features, reg_param, tols, max_iter):
    start = time.perf_counter()
    out = subprocess.run([spark_python, "-c", SPARK_CHILD, path, str(n_features),
                          repr(reg_param), ",".join(f"{t:g}" for t in tols), str(max_iter)],
                         capture_output=True, text=True, check=False)
    wall_s = time.perf_counter() - start
    if out.returncode != 0:
        raise SystemExit(f"spark_peer: Spark failed: {out.stderr.strip().splitlines()[-1:]}")
    records = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    return records[0], records[1:], wall_s


def _bytes_per_round(problem, K: int) -> int:
    """A full OWL-QN round's bytes: w out and the gradient back, 8 bytes each, on every
    column occurring in each of K contiguous row blocks."""
    X = problem.to_scipy()
    bounds = [i * problem.n_samples // K for i in range(K + 1)]
    return sum(16 * np.unique(X[a:b].indices).size for a, b in zip(bounds, bounds[1:]))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--C", type=float, default=1.0)
    parser.add_argument("--eps", type=float, default=1e-4)
    parser.add_argument("--gap", type=float, default=1e-3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--spark-python", default="/work/spark-venv/bin/python")
    parser.add_argument("--tols", default="1e-3,1e-4,1e-6,1e-9")
    parser.add_argument("--max-iter", type=int, default=1000)
    parser.add_argument("--max-k", type=int, default=64)
    args = parser.parse_args(argv)
    from distributed import Client, LocalCluster

    from dlinear.cluster import Dataset

    problem = make_rcv1_like(args.rows, seed=7)
    params = Params(solver_type=6, C=args.C, eps=args.eps, bias=-1)
    print(f"rcv1-shaped: {problem.n_samples} rows, {problem.n_features} features, "
          f"{problem.nnz} nonzeros; -s 6 -C {args.C:g} -e {args.eps:g} -B -1")
    train(make_rcv1_like(500, seed=8), params, n_threads=1)        # compiled before timing
    fits = {}
    start = time.perf_counter()
    local = train(problem, params, n_threads=2)
    fits["dlinear in process, 2 threads"] = (time.perf_counter() - start, local)
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      dashboard_address=None, silence_logs=logging.CRITICAL) as cluster, \
            Client(cluster) as client:
        data = Dataset.from_arrays(problem, None, client, n_parts=2 * args.workers)
        train(data, replace(params, partition=True))                  # warm the workers
        start = time.perf_counter()
        spread = train(data, replace(params, partition=True))
        fits[f"dlinear partitioned, {args.workers} workers"] = (time.perf_counter() - start,
                                                                spread)
    tols = [float(t) for t in args.tols.split(",")]
    reg_param = spark_reg_param(args.C, problem.n_samples)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "train.svm")
        write_libsvm(path, problem)
        setup, spark_fits, spark_wall = _run_spark(args.spark_python, path,
                                                   problem.n_features, reg_param, tols,
                                                   args.max_iter)
    for record in spark_fits:
        fits[f"Spark local[2] tol {record['tol']:g} ({record['iterations']} iter)"] = (
            record["fit_s"], _with_weights(local, record["coefficients"]))
    objectives = {name: primal_objective(problem, params, model)
                  for name, (_, model) in fits.items()}
    best = min(objectives.values())
    print(f"Spark regParam {reg_param:.3e}; JVM start-up {setup['jvm_s']:.1f} s, read and "
          f"cache {setup['read_s']:.1f} s, a 2-iteration warm-up fit {setup['warm_s']:.1f} s "
          f"(subprocess wall {spark_wall:.1f} s)")
    print(f"best objective {best:.6f}; within {args.gap:g}: the fit's time")
    reached = {}
    for name, (seconds, model) in fits.items():
        gap = (objectives[name] - best) / abs(best)
        nonzeros = int(np.count_nonzero(model.w))
        mark = "yes" if gap <= args.gap else "no"
        print(f"  {name:45s} {seconds:7.2f} s  objective {objectives[name]:.6f}  "
              f"gap {gap:.1e} ({mark})  nnz(w) {nonzeros}")
        family = name.split(",")[0].split(" tol")[0]
        if gap <= args.gap:
            reached[family] = min(reached.get(family, np.inf), seconds)
    for family, seconds in reached.items():
        print(f"  time to within {args.gap:g}: {family}: {seconds:.2f} s")
    stats = spread.fit_stats
    full_rounds = stats["rounds"] - stats["support_rounds"]
    measured = (stats["bytes_to_workers"] + stats["bytes_from_workers"]
                - stats["support_bytes"]) / full_rounds
    print(f"OWL-QN rounds: {stats['rounds']} for every K (an exact map-reduced gradient), "
          f"{stats['support_rounds']} of them on the support only; measured "
          f"{measured / 1e3:.0f} kB a full round measured (fit_stats) at K={args.workers}; "
          f"on paper, w on each worker's occurring columns out and its gradient back, "
          f"summed over K contiguous row blocks:")
    K = 2
    while K <= args.max_k:
        full = _bytes_per_round(problem, K)
        print(f"  K={K:3d}: {stats['rounds']} rounds, {full / 1e3:8.0f} kB a full round, "
              f"{stats['rounds'] * full / 1e6:7.1f} MB a fit (all rounds full)")
        K *= 2


if __name__ == "__main__":
    main()
