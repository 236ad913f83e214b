"""The data shapes every benchmark draws from, generated once and cached on disk.

    rcv1             binary rcv1-shaped text (dlinear.datasets.rcv1_like.make_rcv1_like: 47,236
                     features, ~75 nonzeros per row, unit-norm tf-idf rows), with a test set
    rcv1_regression  the same rows, targets X w + noise (for -s 11/12/13)
    few              dense rows of 20 Gaussian features, planted labels with 5% flipped: the
                     many-rows/few-features case where primal methods tend to win
    few_regression   the same rows, targets X w + noise
    multiclass       k-class rcv1-shaped text (one-vs-rest, -s 4, multinomial)
    parse_file       a LIBSVM text file shaped like rcv1 with 10 significant digits a value

Sizes: `DLINEAR_BENCH_SIZE=small` (the default: the suite runs in minutes) or `full` (the
sizes of the figures in BENCHMARKS.md); `DLINEAR_BENCH_ROWS=N` sets the rows of every
shape. Files go to `DLINEAR_BENCH_CACHE` (default bench-data/shapes/ in the repository), one
per shape and size; the generators are deterministic, so a cached file equals a fresh one.
"""
from __future__ import annotations

import os

import numpy as np
import scipy.sparse as sp

from dlinear import Problem
from dlinear.data.libsvm_reader import write_libsvm
from dlinear.datasets.rcv1_like import make_rcv1_like_split

from .harness import REPO

SIZES = ("small", "full")

# name -> {size: keyword arguments of its generator}
SPECS = {
    "rcv1": {"small": dict(rows=5_000, test_rows=1_000, features=47_236, nnz=75, seed=0),
             "full": dict(rows=200_000, test_rows=20_000, features=47_236, nnz=75, seed=0)},
    "few": {"small": dict(rows=20_000, test_rows=2_000, features=20, seed=2),
            "full": dict(rows=200_000, test_rows=20_000, features=20, seed=2)},
    "multiclass": {"small": dict(rows=3_000, test_rows=1_000, features=20_000, nnz=40,
                                 classes=10, seed=1),
                   "full": dict(rows=48_949, test_rows=10_000, features=297_063, nnz=95,
                                classes=35, seed=1)},
    "parse_file": {"small": dict(megabytes=5.0, seed=0),
                   "full": dict(megabytes=100.0, seed=0)},
}
REGRESSION_OF = {"rcv1_regression": "rcv1", "few_regression": "few"}


def size() -> str:
    value = os.environ.get("DLINEAR_BENCH_SIZE", "small")
    if value not in SIZES:
        raise ValueError(f"DLINEAR_BENCH_SIZE must be one of {SIZES}, got {value!r}")
    return value


def spec(name: str) -> dict:
    """The generator's arguments of shape `name` at the current size."""
    out = dict(SPECS[REGRESSION_OF.get(name, name)][size()])
    if os.environ.get("DLINEAR_BENCH_ROWS") and "rows" in out:
        out["rows"] = int(os.environ["DLINEAR_BENCH_ROWS"])
    return out


def cache_dir() -> str:
    return os.environ.get("DLINEAR_BENCH_CACHE") or os.path.join(REPO, "bench-data", "shapes")


def _cache_path(name: str, suffix: str) -> str:
    key = "-".join(f"{k}{v}" for k, v in sorted(spec(name).items()))
    return os.path.join(cache_dir(), f"{name}-{key}.{suffix}")


def _save(path: str, problems) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    arrays = {}
    for i, p in enumerate(problems):
        arrays.update({f"{i}_indptr": p.indptr, f"{i}_indices": p.indices,
                       f"{i}_data": p.data, f"{i}_y": p.y,
                       f"{i}_n_features": np.array(p.n_features)})
    tmp = f"{path}.{os.getpid()}.tmp.npz"
    np.savez(tmp, **arrays)
    os.replace(tmp, path)          # whole or absent, if two processes race


def _load(path: str, count: int):
    with np.load(path) as f:
        return tuple(Problem(f[f"{i}_indptr"], f[f"{i}_indices"], f[f"{i}_data"],
                             f[f"{i}_y"], int(f[f"{i}_n_features"])) for i in range(count))


def split(name: str) -> tuple[Problem, Problem]:
    """(train, test) of shape `name`, from the cache or generated into it."""
    path = _cache_path(name, "npz")
    if not os.path.exists(path):
        _save(path, _generate(name))
    return _load(path, 2)


def load(name: str) -> Problem:
    """The training rows of shape `name`."""
    return split(name)[0]


def _generate(name: str) -> tuple[Problem, Problem]:
    s = spec(name)
    if name in ("rcv1", "multiclass"):
        return make_rcv1_like_split(s["rows"], s["test_rows"], n_features=s["features"],
                                    n_classes=s.get("classes", 2), nnz_per_row=s["nnz"],
                                    seed=s["seed"])
    if name == "rcv1_regression":
        train, test = split("rcv1")
        return tuple(with_targets(p, np.random.default_rng(s["seed"] + 100)
                                  .normal(size=p.n_features), s["seed"] + 101 + i)
                     for i, p in enumerate((train, test)))
    if name == "few":
        return few_features(s["rows"], s["test_rows"], s["features"], s["seed"])
    if name == "few_regression":
        return few_features(s["rows"], s["test_rows"], s["features"], s["seed"],
                            regression=True)
    raise KeyError(name)


def with_targets(problem: Problem, w: np.ndarray, seed: int) -> Problem:
    """The rows of `problem` with regression targets X w + 0.1 noise."""
    rng = np.random.default_rng(seed)
    y = problem.to_scipy() @ w + 0.1 * rng.normal(size=problem.n_samples)
    return Problem(problem.indptr, problem.indices, problem.data, np.asarray(y, np.float64),
                   problem.n_features)


def few_features(rows: int, test_rows: int, n_features: int, seed: int,
                 regression: bool = False, offset: float = 0.0) -> tuple[Problem, Problem]:
    """Dense Gaussian rows; labels sign(X w + offset + 0.5 noise) with 5% flipped, or
    targets X w + 0.1 noise."""
    rng = np.random.default_rng(seed)
    n = rows + test_rows
    X = rng.normal(size=(n, n_features))
    w = rng.normal(size=n_features)
    if regression:
        y = X @ w + 0.1 * rng.normal(size=n)
    else:
        y = np.where(X @ w + offset + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
        y[rng.random(n) < 0.05] *= -1
    Xs = sp.csr_matrix(X)
    return (Problem.from_arrays(Xs[:rows], y[:rows], n_features),
            Problem.from_arrays(Xs[rows:], y[rows:], n_features))


# ~1,400 bytes a row of parse_file's text (~18.5 bytes a nonzero), measured
_BYTES_PER_ROW = 1_400


def parse_file() -> str:
    """Path of the LIBSVM text file of the parsing benchmarks: rcv1's shape (75 nonzeros a
    row over 47,236 features), values 0.0100000000 .. 0.0999999999 (ten significant
    digits, as tf-idf text files hold), labels +1/-1; written once."""
    s = spec("parse_file")
    path = _cache_path("parse_file", "svm")
    if not os.path.exists(path):
        rows = int(s["megabytes"] * 1e6 / _BYTES_PER_ROW)
        rng = np.random.default_rng(s["seed"])
        counts = np.clip(rng.poisson(75, rows), 1, None)
        indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        columns = rng.integers(0, 47_236, indptr[-1])
        X = sp.csr_matrix((np.ones(indptr[-1]), columns, indptr), shape=(rows, 47_236))
        X.sum_duplicates()             # distinct sorted columns per row
        X.data = rng.integers(1_000_000_000, 10_000_000_000, X.nnz) / 1e11
        y = np.where(rng.random(rows) < 0.5, 1.0, -1.0)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        write_libsvm(tmp, Problem.from_arrays(X, y, 47_236))
        os.replace(tmp, path)
    return path


def dense_planted(rows: int, n_features: int, seed: int) -> Problem:
    """Dense Gaussian rows, labels sign(X w) with 5% flipped, no score noise: the dense set
    of the block dual CD study (scripts/tools/plot_convergence.py --block-cd)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows, n_features))
    y = np.where(X @ rng.normal(size=n_features) > 0, 1.0, -1.0)
    y[rng.random(rows) < 0.05] *= -1
    return Problem.from_arrays(X, y)
