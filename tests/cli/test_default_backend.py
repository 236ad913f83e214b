"""dlinear-train's default backend (BENCHMARKS.md, "Default backend"): a local cluster only
for a single Newton training of a large file."""
import pytest

from dlinear.cli import _backend, parse_train_args
from dlinear.modes import NEWTON_CLUSTER_BYTES, Mode


@pytest.fixture
def files(tmp_path):
    big = tmp_path / "big.train"
    with open(big, "wb") as f:           # sparse: no disk space used
        f.truncate(NEWTON_CLUSTER_BYTES)
    small = tmp_path / "small.train"
    small.write_text("1 1:1\n")
    return big, small


@pytest.mark.parametrize("options, on_cluster", [
    ("-s 0", True), ("-s 2", True), ("-s 11", True),
    ("-s 1", False), ("-s 3", False), ("-s 5", False), ("-s 4", False), ("-s 21", False),
    ("-s 2 --primal-cd", False), ("-s 0 -v 5", False), ("-s 0 -C", False),
    ("-s 0 --workers 0", False), ("-s 1 --workers 2", True),
])
def test_default_backend_by_solver_family_and_size(files, monkeypatch, options, on_cluster):
    monkeypatch.delenv("DLINEAR_SCHEDULER", raising=False)
    big, small = files
    params, opts, train_file, _ = parse_train_args(options.split() + [str(big)])
    assert (_backend(opts, params, train_file).mode is Mode.CLUSTER) == on_cluster
    params, opts, train_file, _ = parse_train_args(options.split() + [str(small)])
    assert (_backend(opts, params, train_file).mode is Mode.CLUSTER) == (
        "--workers 2" in options)
