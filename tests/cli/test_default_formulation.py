"""dlinear-train without -s: the squared hinge as dual CD or its Newton primal, by the
data's scale (dlinear.planning.formulation); an explicit -s 1 is LIBLINEAR's."""
import pytest

from dlinear import Params, save_model, train
from dlinear.data.libsvm_reader import write_libsvm
from dlinear.datasets.click_like import make_click_like
from dlinear.datasets.rcv1_like import make_rcv1_like
from tests.support.cli import run_in_process


@pytest.fixture
def run(capsys):
    """dlinear-train in this process: what it chooses, prints and writes is the check."""
    return lambda *args: run_in_process(capsys, "train", *args)


@pytest.fixture(scope="module")
def sets(tmp_path_factory):
    d = tmp_path_factory.mktemp("formulation")
    write_libsvm(d / "click.train", make_click_like(3000, hash_bits=16))
    write_libsvm(d / "text.train", make_rcv1_like(400, n_features=3000, nnz_per_row=30))
    return d


def solver_line(model_file):
    return model_file.read_text().splitlines()[0]


def test_click_shaped_data_trains_the_primal_and_says_so(sets, tmp_path, run):
    r = run("--workers", "0", sets / "click.train", tmp_path / "default.model")
    assert r.returncode == 0, r.stderr
    line, = [s for s in r.stderr.splitlines() if s.startswith("dlinear: -s")]
    assert line.startswith("dlinear: -s 2 (the primal of the default -s 1: the same model) "
                           "by Newton: C*lambda ")
    assert "reaching max number of iterations" not in r.stdout
    assert solver_line(tmp_path / "default.model") == "solver_type L2R_L2LOSS_SVC"
    named = run("--workers", "0", "-s", "2", sets / "click.train", tmp_path / "s2.model")
    assert named.returncode == 0 and "dlinear: -s" not in named.stderr
    assert (tmp_path / "default.model").read_bytes() == (tmp_path / "s2.model").read_bytes()


def test_an_explicit_s1_is_liblinears_dual_bit_for_bit(sets, tmp_path, run):
    r = run("--workers", "0", "-s", "1", sets / "click.train", tmp_path / "s1.model")
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""                      # no formulation line: -s was named
    assert solver_line(tmp_path / "s1.model") == "solver_type L2R_L2LOSS_SVC_DUAL"
    from dlinear.data.libsvm_reader import read_libsvm
    save_model(tmp_path / "api.model", train(read_libsvm(sets / "click.train"), Params()))
    assert (tmp_path / "s1.model").read_bytes() == (tmp_path / "api.model").read_bytes()


def test_text_shaped_data_keeps_the_dual(sets, tmp_path, run):
    r = run("--workers", "0", sets / "text.train", tmp_path / "default.model")
    assert r.returncode == 0, r.stderr
    assert r.stderr.startswith("dlinear: -s 1 (dual CD, LIBLINEAR's default): C*lambda ")
    assert solver_line(tmp_path / "default.model") == "solver_type L2R_L2LOSS_SVC_DUAL"
    named = run("--workers", "0", "-s", "1", sets / "text.train", tmp_path / "s1.model")
    assert (tmp_path / "default.model").read_bytes() == (tmp_path / "s1.model").read_bytes()


def test_quiet_says_nothing_and_dual_only_options_keep_the_dual(sets, tmp_path, run):
    r = run("-q", "--workers", "0", sets / "click.train", tmp_path / "q.model")
    assert r.returncode == 0 and r.stderr == "" and r.stdout == ""
    assert solver_line(tmp_path / "q.model") == "solver_type L2R_L2LOSS_SVC"
    r = run("--workers", "0", "--cd-block", "2", sets / "click.train", tmp_path / "b.model")
    assert r.returncode == 0, r.stderr
    assert solver_line(tmp_path / "b.model") == "solver_type L2R_L2LOSS_SVC_DUAL"
