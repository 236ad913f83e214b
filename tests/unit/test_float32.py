"""float32 data: read, kept and solved as float32 (sums in float64), with objectives
within 1e-6 relative of the float64 fit."""
import importlib
import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from dlinear import Params, load_model, train
from dlinear.data.libsvm_reader import Problem, read_libsvm
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.errors import DlinearError
from dlinear.solvers.primal_objective_values import primal_objective
from tests.support.cli import run_in_process

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "rcv1_small.train")
PARITY = 1e-6      # relative objective difference to the float64 model


@pytest.fixture
def solver_data(monkeypatch):
    """The dtypes of the data arrays every fit in this process hands to its solver."""
    module = importlib.import_module("dlinear.in_process.train")
    seen = []
    real = module.train_one

    def spy(task, params):
        seen.append(task.problem.data)
        return real(task, params)

    monkeypatch.setattr(module, "train_one", spy)
    return seen


def test_read_float32_is_the_float64_read_rounded(tmp_path):
    text = ("1 1:0.1 3:2.5e-3 7:1.2345678901234567890123\n"   # the last: a slow token
            "-1 2:-7 5:3.4e38\n"
            "1 4:1e-45 6:123456789.125\n")
    path = tmp_path / "f.txt"
    path.write_text(text)
    p64 = read_libsvm(path)
    p32 = read_libsvm(path, dtype=np.float32, chunk_bytes=8)    # several chunks
    assert p32.data.dtype == np.float32 and p32.y.dtype == np.float64
    assert p32.indices.dtype == np.uint16      # at most 65,536 columns (test_narrow_indices.py)
    np.testing.assert_array_equal(p32.data, p64.data.astype(np.float32))
    np.testing.assert_array_equal(p32.indices, p64.indices)
    np.testing.assert_array_equal(p32.indptr, p64.indptr)
    np.testing.assert_array_equal(p32.y, p64.y)


def test_a_value_beyond_float32_is_an_error_naming_the_line(tmp_path):
    path = tmp_path / "big.txt"
    path.write_text("1 1:1\n-1 2:1e39\n")
    assert read_libsvm(path).data[1] == 1e39
    with pytest.raises(DlinearError, match=r"big.txt: line 2: value '1e39' of feature 2 is NaN"):
        read_libsvm(path, dtype=np.float32)


def test_only_float64_and_float32():
    with pytest.raises(DlinearError, match="dtype must be float64 or float32"):
        read_libsvm(EXAMPLE, dtype=np.float16)
    with pytest.raises(DlinearError, match="dtype must be float64 or float32"):
        Problem.from_arrays(np.eye(2), [1, -1], dtype=int)


def test_from_arrays_keeps_float32_without_a_copy():
    X = sp.random(50, 20, density=0.3, format="csr", dtype=np.float32, random_state=0)
    p = Problem.from_arrays(X, np.arange(50) % 2)
    assert p.data.dtype == np.float32 and np.shares_memory(p.data, X.data)
    assert Problem.from_arrays(X.toarray(), np.arange(50) % 2).data.dtype == np.float32
    assert Problem.from_arrays(X.astype(np.int64), np.arange(50) % 2).data.dtype == np.float64
    assert Problem.from_arrays(X, np.arange(50) % 2, dtype=np.float64).data.dtype == np.float64
    assert p.subset(np.arange(10)).data.dtype == np.float32


def _synthetic():
    p = make_rcv1_like(1500, n_features=3000, nnz_per_row=40, seed=3)
    return p, Problem.from_arrays(p.to_scipy(), p.y, dtype=np.float32)


@pytest.mark.parametrize("data", ["example", "synthetic"])
@pytest.mark.parametrize("solver", [0, 1, 2, 3, 5, 6, 7, 11, 12, 13])
def test_float32_fit_objective_within_1e6_of_float64(data, solver, solver_data):
    if data == "example":
        p64, p32 = read_libsvm(EXAMPLE), read_libsvm(EXAMPLE, dtype=np.float32)
    else:
        p64, p32 = _synthetic()
    if solver >= 11:        # regression: real-valued targets
        p64.y = p32.y = np.asarray(p64.to_scipy() @ np.linspace(-1, 1, p64.n_features)
                                   + np.cos(np.arange(p64.n_samples)))
    params = Params(solver_type=solver, C=0.5, bias=1)
    m64 = train(p64, params)
    solver_data.clear()
    m32 = train(p32, params)
    assert solver_data and all(d.dtype == np.float32 for d in solver_data)
    assert all(np.shares_memory(d, p32.data) for d in solver_data)
    f64 = primal_objective(p64, params, m64)
    f32 = primal_objective(p64, params, m32)
    assert abs(f32 - f64) <= PARITY * abs(f64), (f32, f64)


def test_float64_is_untouched_by_float32_fits():
    """A float32 fit compiles its own specializations: the float64 model stays the same to
    the bit after one."""
    p64 = read_libsvm(EXAMPLE)
    before = train(p64, Params(solver_type=1)).w
    train(read_libsvm(EXAMPLE, dtype=np.float32), Params(solver_type=1))
    np.testing.assert_array_equal(train(p64, Params(solver_type=1)).w, before)


def test_cli_float32_end_to_end(tmp_path, capsys):
    def run(*args):
        # dlinear-train in this process: the models it writes are the check
        r = run_in_process(capsys, "train", "-q", *args)
        assert r.returncode == 0, r.stderr

    run("--float32", "-s", "3", EXAMPLE, tmp_path / "f32.model")
    run("-s", "3", EXAMPLE, tmp_path / "f64.model")
    got = load_model(tmp_path / "f32.model")
    params = Params(solver_type=3)
    want32 = train(read_libsvm(EXAMPLE, dtype=np.float32), params)
    want64 = train(read_libsvm(EXAMPLE), params)
    # the float32 model of the API to the last digit the model file keeps, not the float64 one
    np.testing.assert_allclose(got.w, want32.w, rtol=1e-15, atol=1e-16)
    assert not np.allclose(got.w, want64.w, rtol=1e-12, atol=0)
    p64 = read_libsvm(EXAMPLE)
    f32 = primal_objective(p64, params, got)
    f64 = primal_objective(p64, params, load_model(tmp_path / "f64.model"))
    assert abs(f32 - f64) <= PARITY * abs(f64)


@pytest.mark.parametrize("dense", [False, True])
def test_estimators_keep_float32_without_a_copy(dense, solver_data):
    from dlinear.estimators import LinearSVC, LogisticRegression
    p = read_libsvm(EXAMPLE, dtype=np.float32)
    X = p.to_scipy().toarray() if dense else p.to_scipy()
    for Estimator in (LogisticRegression, LinearSVC):
        solver_data.clear()
        est = Estimator().fit(X, p.y)
        assert solver_data and all(d.dtype == np.float32 for d in solver_data)
        if not dense:
            assert all(np.shares_memory(d, X.data) for d in solver_data)
        expected = Estimator().fit(X.astype(np.float64), p.y)
        np.testing.assert_allclose(est.decision_function(X), expected.decision_function(X),
                                   rtol=1e-4, atol=1e-5)


def test_a_float64_run_compiles_no_float32_specialization():
    """float32 kernels (and those for float32 data's uint16 indices) are compiled (or
    loaded) only when float32 data is used: the default path's cold start pays nothing
    for them."""
    code = f"""
import importlib, pkgutil
import numpy as np
import dlinear.kernels
from numba.core.registry import CPUDispatcher
from dlinear import Params, train
from dlinear.data.libsvm_reader import read_libsvm
p = read_libsvm({EXAMPLE!r})
for s in (0, 1, 3):
    train(p, Params(solver_type=s), log=lambda line: None)
signatures = []
for info in pkgutil.iter_modules(dlinear.kernels.__path__):
    module = importlib.import_module("dlinear.kernels." + info.name)
    for value in vars(module).values():
        if isinstance(value, CPUDispatcher):
            signatures += [str(s) for s in value.signatures]
assert signatures, "no kernel ran"
print(sum("float32" in s or "uint16" in s for s in signatures))
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "0"


@pytest.mark.parametrize("solver", [0, 1, 2, 3, 5, 11])
def test_float32_kernels_compute_in_float64(solver):
    """A float32 fit is the float64 fit of the values rounded to float32, to round-off:
    only the storage is float32; the arithmetic adds no difference of its own."""
    p32 = read_libsvm(EXAMPLE, dtype=np.float32)
    rounded = read_libsvm(EXAMPLE)
    rounded.data = p32.data.astype(np.float64)
    if solver >= 11:
        p32.y = rounded.y = np.cos(np.arange(rounded.n_samples))
    params = Params(solver_type=solver, C=64.0, eps=1e-9 if solver in (1, 3) else 1e-12,
                    max_iter=100000)
    w32 = train(p32, params).w
    w64 = train(rounded, params).w
    np.testing.assert_allclose(w32, w64, rtol=1e-10, atol=1e-12)

