"""Benchmark: dlinear.data.read_libsvm against sklearn's load_svmlight_file.

Generates (once, then reuses) a ~100 MB random LIBSVM file shaped like rcv1: about 75
nonzeros per row over 47,236 features, values with ~10 significant digits such as
0.0123456789, labels +1/-1. Times both readers on it (best of N runs) and prints MB/s.

    python scripts/bench_parse.py [--path bench-data/parse.svm] [--size-mb 100] [--repeat 3]
"""
import argparse
import os
import sys
import tempfile
import time

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from dlinear.data import Problem, read_libsvm, write_libsvm  # noqa: E402

RCV1_FEATURES = 47_236
NONZEROS_PER_ROW = 75
BYTES_PER_ROW = 1_400  # measured on the generated text: ~18.5 bytes per feature


def rcv1_like(n_rows: int, seed: int = 0) -> Problem:
    rng = np.random.default_rng(seed)
    counts = np.clip(rng.poisson(NONZEROS_PER_ROW, n_rows), 1, None)
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    # Distinct sorted columns per row: sample with replacement, then drop duplicates.
    columns = rng.integers(0, RCV1_FEATURES, indptr[-1])
    X = sp.csr_matrix((np.ones(indptr[-1]), columns, indptr), shape=(n_rows, RCV1_FEATURES))
    X.sum_duplicates()
    # Ten significant digits, tf-idf-like magnitudes: 0.0100000000 .. 0.0999999999.
    X.data = rng.integers(1_000_000_000, 10_000_000_000, X.nnz) / 1e11
    y = np.where(rng.random(n_rows) < 0.5, 1.0, -1.0)
    return Problem.from_arrays(X, y, RCV1_FEATURES)


def ensure_file(path: str, size_mb: float) -> None:
    if os.path.exists(path):
        return
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    problem = rcv1_like(int(size_mb * 1e6 / BYTES_PER_ROW))
    t = time.perf_counter()
    write_libsvm(path, problem)
    seconds = time.perf_counter() - t
    size = os.path.getsize(path)
    print(f"generated {path}: {size / 1e6:.1f} MB, {problem.n_samples} rows, {problem.nnz} "
          f"nonzeros; write_libsvm {seconds:.2f} s = {size / 1e6 / seconds:.0f} MB/s")


def best_time(function, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", default="bench-data/parse.svm")
    parser.add_argument("--size-mb", type=float, default=100.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    ensure_file(args.path, args.size_mb)
    size_mb = os.path.getsize(args.path) / 1e6

    # Compile (or load cached) Numba kernels outside the timing.
    with tempfile.TemporaryDirectory() as tmp:
        warm = os.path.join(tmp, "warm.svm")
        write_libsvm(warm, rcv1_like(5))
        read_libsvm(warm)

    from sklearn.datasets import load_svmlight_file

    ours = best_time(lambda: read_libsvm(args.path), args.repeat)
    theirs = best_time(lambda: load_svmlight_file(args.path, zero_based=False), args.repeat)
    print(f"file: {args.path} ({size_mb:.1f} MB), best of {args.repeat}")
    print(f"dlinear read_libsvm:        {ours:7.3f} s  {size_mb / ours:7.1f} MB/s")
    print(f"sklearn load_svmlight_file: {theirs:7.3f} s  {size_mb / theirs:7.1f} MB/s")
    print(f"ratio (sklearn time / dlinear time): {theirs / ours:.2f}x")


if __name__ == "__main__":
    main()
