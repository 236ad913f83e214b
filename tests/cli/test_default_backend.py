"""dlinear-train's default backend (BENCHMARKS.md, "The default backend by a cost model"): a
local cluster only for a single Newton training the cost model predicts faster there, on
the data's shape read from a binary dataset's header or a timed sample of the text."""
import pytest

from dlinear.data.binary_format import convert_libsvm
from dlinear.cli.inputs import input_shape
from dlinear.cli.train_predict import _backend, parse_train_args
from dlinear.data.libsvm_reader import read_libsvm, write_libsvm
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.planning.modes import Data, Mode

# rcv1-shaped, 677k rows, its text parsed in 40 s on one core: the cluster pays
BIG = Data(677000, 47_400_000, n_problems=1, n_features=47236, read_s=40.0)


@pytest.fixture
def small(tmp_path):
    path = tmp_path / "small.train"
    path.write_text("1 1:1\n")
    return path


@pytest.mark.parametrize("options, on_cluster", [
    ("-s 0", True), ("-s 2", True), ("-s 11", True),
    ("-s 1", False), ("-s 3", False), ("-s 5", False), ("-s 4", False), ("-s 21", False),
    ("-s 2 --primal-cd", False), ("-s 0 -v 5", False), ("-s 0 -C", False),
    ("-s 0 --workers 0", False), ("-s 1 --workers 2", True),
])
def test_default_backend_by_solver_family_and_shape(small, monkeypatch, options,
                                                    on_cluster):
    monkeypatch.delenv("DLINEAR_SCHEDULER", raising=False)
    monkeypatch.setattr("dlinear.cli.inputs.input_shape", lambda *args: BIG)
    params, opts, train_file, _ = parse_train_args(options.split() + [str(small)])
    choice = _backend(opts, params, train_file)
    assert (choice.mode is Mode.CLUSTER) == on_cluster
    if on_cluster and "--workers" not in options:      # said why, in one line
        assert "predicted" in choice.describe() and "\n" not in choice.describe()
    monkeypatch.undo()
    monkeypatch.delenv("DLINEAR_SCHEDULER", raising=False)
    params, opts, train_file, _ = parse_train_args(options.split() + [str(small)])
    assert (_backend(opts, params, train_file).mode is Mode.CLUSTER) == (
        "--workers 2" in options)


def test_the_shape_from_a_sample_of_text_and_from_a_binary_header(tmp_path):
    problem = make_rcv1_like(4000, n_features=3000, n_classes=3, nnz_per_row=20, seed=5)
    write_libsvm(tmp_path / "d.train", problem)
    whole = input_shape(tmp_path / "d.train")          # the file is smaller than a sample
    assert (whole.n_samples, whole.nnz, whole.problems()) == (4000, problem.nnz, 3)
    assert whole.n_features == read_libsvm(tmp_path / "d.train").n_features
    assert whole.read_s > 0
    # the whole file sampled: its occurring columns counted, not extrapolated
    assert whole.occurring_columns == len(set(problem.indices.tolist()))
    assert 0.0 <= whole.columns_growth <= 1.0
    from dlinear.data.text_sample import sample_libsvm
    part = sample_libsvm(tmp_path / "d.train", sample_bytes=50_000)
    assert 0.8 * 4000 < part.problem.n_samples * part.scale < 1.2 * 4000
    convert_libsvm(tmp_path / "d.train", tmp_path / "d.ds")
    header = input_shape(tmp_path / "d.ds")
    assert (header.n_samples, header.nnz, header.problems()) == (4000, problem.nnz, 3)
    assert header.occurring_columns == len(set(problem.indices.tolist()))
    assert input_shape(tmp_path / "missing").n_samples is None
