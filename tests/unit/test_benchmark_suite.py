"""The benchmark suite's own rules: every module imports as a package module (no sys.path
edits, nothing from tests/), the shapes' disk cache returns what the generators make, and
a runnable benchmark's report is machine-readable."""
import importlib
import json
import pathlib

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts"
SOURCES = sorted((SCRIPTS / "benchmarks").glob("*.py")) + sorted((SCRIPTS / "tools").glob("*.py"))


@pytest.fixture
def on_root(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_module_imports_without_path_edits_or_tests(path, on_root):
    text = path.read_text()
    assert "sys.path" not in text
    assert "liblinear_oracle" not in text and "from tests" not in text
    importlib.import_module(f"scripts.{path.parent.name}.{path.stem}")


def test_cached_shape_equals_a_fresh_one(on_root, monkeypatch, tmp_path):
    monkeypatch.setenv("DLINEAR_BENCH_CACHE", str(tmp_path))
    monkeypatch.setenv("DLINEAR_BENCH_ROWS", "60")
    shapes = importlib.import_module("scripts.benchmarks.shapes")
    for name in ("rcv1", "rcv1_regression", "few"):
        fresh = shapes._generate(name)
        first, second = shapes.split(name), shapes.split(name)      # written, then read
        assert len(list(tmp_path.iterdir())) >= 1
        for a, b, c in zip(fresh, first, second):
            assert a.n_samples == 60 or a.n_samples == shapes.spec(name)["test_rows"]
            for field in ("indptr", "indices", "data", "y"):
                assert np.array_equal(getattr(a, field), getattr(b, field))
                assert np.array_equal(getattr(a, field), getattr(c, field))
            assert a.n_features == b.n_features == c.n_features


def test_report_writes_its_rows_as_json(on_root, tmp_path, capsys):
    harness = importlib.import_module("scripts.benchmarks.harness")

    class Args:
        json = str(tmp_path / "out.json")

    report = harness.Report("example", Args())
    report.add(run="a", seconds=np.float64(1.5), rounds=np.int64(3))
    path = report.finish(["run", "seconds", "rounds"])
    data = json.loads(pathlib.Path(path).read_text())
    assert data["benchmark"] == "example"
    assert data["rows"] == [{"run": "a", "seconds": 1.5, "rounds": 3}]
    assert "| a | 1.5 | 3 |" in capsys.readouterr().out


def test_only_benchmarks_carry_asv_prefixes(on_root):
    """asv collects every module-level function and method named time_*, track_*,
    peakmem_*, mem_* or timeraw_*: a helper so named would run as a benchmark."""
    import inspect
    prefixes = ("time_", "track_", "peakmem_", "mem_", "timeraw_")
    for path in sorted((SCRIPTS / "benchmarks").glob("*.py")):
        module = importlib.import_module(f"scripts.benchmarks.{path.stem}")
        for name, value in vars(module).items():
            if inspect.isfunction(value) and value.__module__ == module.__name__:
                assert not name.startswith(prefixes), f"{path.name}: {name}"


def test_spark_peer_reg_param_scales_sparks_objective_to_dlinears(on_root):
    """Spark's (1/n) sum loss + regParam ||w||_1 at regParam = spark_reg_param(C, n) is
    dlinear's -s 6 objective divided by C n at every w (so the same minimizer), with Spark's
    coefficients signed for dlinear's first label."""
    from dlinear import Params, train
    from dlinear.datasets.rcv1_like import make_rcv1_like
    from dlinear.solvers.primal_objective_values import primal_objective
    from scripts.benchmarks.spark_peer import _with_weights, spark_reg_param

    problem = make_rcv1_like(300, n_features=200, seed=3)
    params = Params(solver_type=6, C=0.7, bias=-1)
    model = train(problem, params, n_threads=1)
    X, n = problem.to_scipy(), problem.n_samples
    reg = spark_reg_param(params.C, n)
    for seed in range(3):
        coefficients = np.random.default_rng(seed).normal(size=problem.n_features)
        spark_y = np.where(problem.y > 0, 1.0, -1.0)       # Spark's label 1 is the positive
        spark = np.log1p(np.exp(-spark_y * (X @ coefficients))).mean() \
            + reg * np.abs(coefficients).sum()
        dlinear = primal_objective(problem, params, _with_weights(model, coefficients))
        assert dlinear == pytest.approx(params.C * n * spark, rel=1e-12)
