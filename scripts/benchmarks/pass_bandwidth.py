"""Each kernel's pass over CSR X as a fraction of this machine's read bandwidth, measured
in the same run, one thread, on float64 and float32 values.

    python -m scripts.benchmarks.pass_bandwidth [--rows 300000] [--repeat 3]

- bandwidth: a read-only reduction over a float64 array of at least 4x the last-level
  cache (lscpu's, via os.sysconf; 32 MB assumed when unknown), bytes read a second of
  CPU time, best of --repeat: a vectorised Numba sum, the faster of it and numpy's (np.sum
  is reported too: its pairwise sum is bound by its adds, not the memory, on some CPUs);
- passes, on rcv1-shaped rows (dlinear.datasets.rcv1_like, 75 nonzeros a row, 47,236
  columns): X s (primal_ops.xv), X^T v (primal_ops.grad_precond, the Newton gradient
  pass: X^T of the loss derivatives with the preconditioner), H v (primal_ops.hess_vec
  over every row: x_i (x_i . s), a row read twice, the second time from the cache; and
  over a random tenth of the rows, as an L2 loss's index set late in a fit) and
  a dual CD sweep (dual_cd_svc, -s 1 without shrinking: a second sweep's time, the
  difference of 3 and 1 sweeps over 2). Bytes are those a pass must bring from memory:
  the CSR arrays once (indptr 8, indices 4, values 8 or 4 bytes) and the per-row arrays
  it streams (z, y, C, the Hessian's rows and weights, the dual's 32-byte records and
  order); the n-vectors (w, s, the gradient) stay in the cache and are not counted.
  fraction = (bytes / best seconds) / bandwidth.
- where the rest goes (float32 and float64, ns a nonzero, same run): the CSR arrays
  streamed by a vectorised reduction touching no n-vector (the floor of any pass over
  them), and X s with the column ids folded into the first 4096 (w's lines then stay in
  L1): their gaps to X s are the cost of gathering w from L2 and of the serial row dot.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import time

import numpy as np
from numba import njit

from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.kernels import primal_ops as P
from dlinear.kernels.dual_cd_svc import NO_TRACE, dual_cd_svc
from dlinear.threads import stop_flag

from . import harness

FALLBACK_LLC_BYTES = 32 << 20


def last_level_cache_bytes() -> int:
    """The largest cache lscpu reports (L3, else L2), in bytes."""
    for name in ("SC_LEVEL3_CACHE_SIZE", "SC_LEVEL2_CACHE_SIZE"):
        try:
            size = os.sysconf(name)
        except (ValueError, OSError):
            size = 0
        if size and size > 0:
            return int(size)
    try:
        out = subprocess.run(["lscpu", "-B"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("L3 cache:"):
                return int(line.split()[2])
    except (OSError, ValueError, IndexError):
        pass
    return FALLBACK_LLC_BYTES


def best_seconds(fn, repeat: int) -> float:
    """The least CPU time of `repeat` calls after one untimed (on a shared machine the
    wall clock counts other processes' turns; every figure here is taken alike)."""
    fn()
    best = np.inf
    for _ in range(repeat):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


@njit(cache=True, nogil=True, fastmath=True)
def _vector_sum(a):
    """sum(a), reassociated so that LLVM vectorises it: a reduction bound by the reads."""
    s = 0.0
    for k in range(a.shape[0]):
        s += a[k]
    return s


@njit(cache=True, nogil=True, fastmath=True)
def _csr_stream(indices, data):
    """A reduction over a CSR's column ids and values that reads no n-vector."""
    s = 0.0
    for k in range(indices.shape[0]):
        s += indices[k] * data[k]
    return s


def read_bandwidth(llc: int, repeat: int) -> tuple[float, float, int]:
    """(bytes read a second by the faster of a vectorised sum and np.sum over >= 4x the
    last-level cache, np.sum's alone, the array's size)."""
    a = np.ones(max(4 * llc, 128 << 20) // 8)
    numpy_rate = a.nbytes / best_seconds(lambda: a.sum(), repeat)
    vector_rate = a.nbytes / best_seconds(lambda: _vector_sum(a), repeat)
    return max(numpy_rate, vector_rate), numpy_rate, a.nbytes


def passes(problem, dtype, repeat: int) -> dict:
    """{pass name: (bytes, best seconds, nonzeros read)} on X with values of `dtype`."""
    indptr, indices = problem.indptr, problem.indices
    data = problem.data.astype(dtype)
    n, l, nnz = problem.n_features, problem.n_samples, problem.nnz
    csr_bytes = indptr.nbytes + indices.nbytes + data.nbytes
    rng = np.random.default_rng(0)
    y = np.where(problem.y > 0, 1.0, -1.0)
    C = np.ones(l)
    s = rng.standard_normal(n)
    z = np.empty(l)
    s_hs = np.zeros((n, 2))
    s_hs[:, 0] = s
    gm = np.zeros((n, 2))
    rows, coef = np.empty(l, dtype=np.int64), np.empty(l)
    P.xv(indptr, indices, data, n, -1.0, 0.01 * s, z)     # margins inside the hinge

    def grad():
        return P.grad_precond(P.L2SVC, indptr, indices, data, n, -1.0, y, C, z, 0.0, gm,
                              rows, coef)
    k = grad()
    result = {
        "X s": (csr_bytes + z.nbytes,
                best_seconds(lambda: P.xv(indptr, indices, data, n, -1.0, s, z), repeat), nnz),
        "X^T v (gradient pass)": (csr_bytes + 3 * 8 * l + 16 * k,
                                  best_seconds(grad, repeat), nnz),
        "H v": (csr_bytes + 16 * k,
                best_seconds(lambda: P.hess_vec(indptr, indices, data, n, -1.0, rows, coef,
                                                k, s_hs), repeat), nnz),
    }
    # an L2 loss's index set late in a fit: a scattered few rows
    few = np.sort(rng.choice(l, l // 10, replace=False)).astype(rows.dtype)
    few_nnz = int((indptr[few + 1] - indptr[few]).sum())
    few_bytes = few_nnz * (indices.itemsize + data.itemsize) + (16 + 16) * len(few)
    result["H v, 10% of rows"] = (
        few_bytes, best_seconds(lambda: P.hess_vec(indptr, indices, data, n, -1.0, few, coef,
                                                   len(few), s_hs), repeat), few_nnz)
    w = np.zeros(n)

    def sweeps(count):
        alpha = np.zeros(l)
        return best_seconds(lambda: dual_cd_svc(indptr, indices, data, n, -1.0, y, C, True,
                                                1e-300, count, 1, alpha, w, stop_flag(), False,
                                                NO_TRACE),
                            repeat)
    one_sweep = max((sweeps(3) - sweeps(1)) / 2.0, 1e-9)
    result["dual CD sweep"] = (csr_bytes + (32 + 8) * l, one_sweep, nnz)
    return result


def floors(problem, dtype, repeat: int) -> dict:
    """{name: (bytes, best seconds, nonzeros)} of the reference loops of "where the rest goes"."""
    indptr, indices = problem.indptr, problem.indices
    data = problem.data.astype(dtype)
    s = np.random.default_rng(0).standard_normal(problem.n_features)
    z = np.empty(problem.n_samples)
    folded = indices & 4095
    csr_bytes = indptr.nbytes + indices.nbytes + data.nbytes
    return {
        "CSR streamed, no gather": (indices.nbytes + data.nbytes,
                                    best_seconds(lambda: _csr_stream(indices, data), repeat),
                                    problem.nnz),
        "X s, w in L1 (ids mod 4096)": (
            csr_bytes + z.nbytes,
            best_seconds(lambda: P.xv(indptr, folded, data, problem.n_features, -1.0, s, z),
                         repeat), problem.nnz),
    }


class PassBandwidth:
    """asv: each pass's fraction of the read bandwidth measured in the same setup."""
    params = (["float64", "float32"], ["X s", "X^T v (gradient pass)", "H v", "H v, 10% of rows",
                                       "dual CD sweep"])
    param_names = ["values", "kernel"]
    timeout = 600

    def setup_cache(self):
        bandwidth, _, _ = read_bandwidth(last_level_cache_bytes(), 3)
        problem = make_rcv1_like(300_000, seed=0)
        return {np.dtype(t).name: {name: nbytes / seconds / bandwidth for name, (nbytes, seconds, _)
                                   in passes(problem, t, 3).items()}
                for t in (np.float64, np.float32)}

    def track_fraction_of_read_bandwidth(self, fractions, values, kernel):
        return fractions[values][kernel]
    track_fraction_of_read_bandwidth.unit = "pass bytes/s / np.sum bytes/s"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=300_000)
    parser.add_argument("--repeat", type=int, default=3)
    harness.add_output_arguments(parser)
    args = parser.parse_args(argv)
    report = harness.Report("pass_bandwidth", args)
    llc = last_level_cache_bytes()
    problem = make_rcv1_like(args.rows, seed=0)
    report.note(f"{problem.n_samples} rows, {problem.n_features} columns, {problem.nnz} "
                f"nonzeros; last-level cache {llc >> 20} MB; one thread")
    with harness.benchmark_lock(args.lock):
        bandwidth, numpy_rate, size = read_bandwidth(llc, args.repeat)
        report.note(f"read bandwidth (a vectorised sum over {size >> 20} MB): "
                    f"{bandwidth / 1e9:.2f} GB/s; np.sum: {numpy_rate / 1e9:.2f} GB/s")
        for dtype in (np.float64, np.float32):
            timed = passes(problem, dtype, args.repeat)
            timed.update(floors(problem, dtype, args.repeat))
            for name, (nbytes, seconds, nonzeros) in timed.items():
                report.add(values=np.dtype(dtype).name, kernel=name, mbytes=nbytes / 1e6,
                           seconds=seconds, ns_per_nonzero=seconds / nonzeros * 1e9,
                           gb_per_s=nbytes / seconds / 1e9,
                           fraction_of_read_bandwidth=nbytes / seconds / bandwidth)
    report.finish(["values", "kernel", "mbytes", "seconds", "ns_per_nonzero", "gb_per_s",
                   "fraction_of_read_bandwidth"])


if __name__ == "__main__":
    main()
