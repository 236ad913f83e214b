"""The inputs the fuzzer (test_fuzz_inputs.py) found mishandled, one case each: exit 0 with
a usable model, or exit 1 with one line naming the file or option."""
import os

import numpy as np
import pytest

from dlinear.cli.train_predict import predict_main, train_main
from dlinear.model import load_model


def run(capsys, main, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def error_line(err):
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ERROR: "), err
    return lines[0]


@pytest.mark.parametrize("options", [["-s", "0"], ["-s", "1"], ["-s", "4"], ["-s", "5"],
                                     ["-s", "0", "--multinomial"], ["-s", "11"],
                                     ["-s", "2", "-C"], ["-s", "11", "-C"], ["-s", "1", "-C"]])
def test_a_training_set_without_features(tmp_path, capsys, options):
    """Every row only a label: was a reshape error in assemble_model (and 1 / 0 in
    calc_start_C under -C); LIBLINEAR trains a model of nr_feature 0."""
    train = tmp_path / "t"
    train.write_text("1\n-1\n1\n-1\n")
    model = tmp_path / "m"
    code, out, err = run(capsys, train_main, ["-q"] + options + [str(train), str(model)])
    assert code == 0, err
    if "-C" in options:
        assert "Best C" in out
        return
    assert load_model(model).w.shape[0] == 0
    code, _, err = run(capsys, predict_main, ["-q", str(train), str(model),
                                              str(tmp_path / "out")])
    assert code == 0, err
    assert len((tmp_path / "out").read_text().splitlines()) == 4


def test_a_real_label_for_classification_names_the_file(tmp_path, capsys):
    train = tmp_path / "t"
    train.write_text("0.5 1:1\n1 2:1\n")
    code, _, err = run(capsys, train_main, ["-q", "-s", "0", str(train), str(tmp_path / "m")])
    assert code == 1
    assert error_line(err) == (f"ERROR: {train}: label 0.5 of instance 1 is not an integer; "
                               "classification needs integer labels (-s 11, 12, 13 do "
                               "regression)")
    assert os.listdir(tmp_path) == ["t"]


def test_a_label_beyond_int64_is_one_line(tmp_path, capsys):
    """1e300 as a class label: numpy's "invalid value encountered in cast" warning came
    before the error."""
    import warnings
    train = tmp_path / "t"
    train.write_text("1e300 1:1\n1 2:1\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        code, _, err = run(capsys, train_main, ["-q", str(train), str(tmp_path / "m")])
    assert code == 1
    assert error_line(err).startswith(f"ERROR: {train}: label 1e+300 of instance 1 is not")


def test_probabilities_of_a_huge_decision_value(tmp_path, capsys):
    """-b 1 with a decision value of -1e300: exp overflowed with numpy's warning."""
    import warnings
    model, test = tmp_path / "m", tmp_path / "t"
    model.write_text("solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 1\nbias -1\nw\n"
                     "-1e300\n")
    test.write_text("1 1:1\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        code, _, err = run(capsys, predict_main, ["-b", "1", str(test), str(model),
                                                  str(tmp_path / "out")])
    assert code == 0, err
    assert (tmp_path / "out").read_text().splitlines()[1] == "-1 0 1"


@pytest.mark.parametrize("options", [["-v", "3"], ["-s", "2", "-C"]])
def test_cross_validation_of_one_instance_names_the_file(tmp_path, capsys, options):
    """One row: a fold trained on nothing ("the training set is empty", no file)."""
    train = tmp_path / "t"
    train.write_text("1 1:1\n")
    code, _, err = run(capsys, train_main, ["-q"] + options + [str(train)])
    assert code == 1
    assert error_line(err) == (f"ERROR: {train}: cross validation needs at least 2 "
                               "instances, the training set has 1")


def test_search_without_solver_errs_in_one_line(tmp_path, capsys):
    """-C without -s: LIBLINEAR's note came before the error line."""
    train = tmp_path / "t"
    train.write_text("1 1:1\n-1 2:1\n")
    code, _, err = run(capsys, train_main, ["-C", "-c", "x", str(train)])
    assert code == 1
    assert error_line(err).startswith("ERROR: option -c needs a number")


@pytest.mark.parametrize("option,value,message", [
    ("--seed", "-1", "seed < 0"),
    ("--max-iter", "99999999999999999999", "max_iter or max_updates > 9223372036854775807"),
])
def test_integers_the_kernels_cannot_take(tmp_path, capsys, option, value, message):
    """A negative seed (numpy's SeedSequence raised) and a cap beyond int64 (Numba
    raised) were tracebacks."""
    train = tmp_path / "t"
    train.write_text("1 1:1\n-1 2:1\n")
    code, _, err = run(capsys, train_main, ["-q", "-s", "3", option, value, str(train),
                                            str(tmp_path / "m")])
    assert code == 1 and error_line(err) == f"ERROR: {message}"
    assert os.listdir(tmp_path) == ["t"]


@pytest.mark.parametrize("quiet", [[], ["-q"]])
def test_an_unknown_weight_label_is_liblinears_line_only(tmp_path, capsys, quiet):
    """-w5 for labels 1, -1: LIBLINEAR's WARNING line, on stderr as LIBLINEAR's train
    writes it (also with -q), not also Python's warning display (file, line number and
    source)."""
    train = tmp_path / "t"
    train.write_text("1 1:1\n-1 2:1\n")
    code, out, err = run(capsys, train_main, quiet + ["-w5", "2", str(train),
                                                      str(tmp_path / "m")])
    assert code == 0
    warning = "WARNING: class label 5 specified in weight is not found"
    assert warning in err.splitlines() and warning not in out
    assert "Warning" not in err and "UserWarning" not in err
    assert np.isfinite(load_model(tmp_path / "m").w).all()
    if quiet:
        assert out == "" and err == warning + "\n"


@pytest.mark.parametrize("options,weights", [([], 1_500_001), (["-B", "1"], 1_500_002),
                                             (["-s", "4"], 3_000_002)])
def test_a_model_too_large_for_memory_is_one_line(tmp_path, capsys, monkeypatch, options,
                                                  weights):
    """A feature index near 2**31 made a model of that many weights (LIBLINEAR does too):
    a MemoryError traceback, or a process killed for memory. Now: refused before training
    when the run would not fit in the memory available (here made 100 MiB)."""
    import dlinear.cli.inputs as cli
    monkeypatch.setattr(cli, "available_memory", lambda: 100 * 2**20)
    train = tmp_path / "t"
    train.write_text("1 1:1\n-1 2:1 1500001:0.5\n")
    code, out, err = run(capsys, train_main, options + [str(train), str(tmp_path / "m")])
    assert code == 1 and out == ""
    needed = cli.BYTES_PER_WEIGHT * weights / 2**30
    assert error_line(err) == (
        f"ERROR: {train}: feature index 1500001 of instance 2 makes a model of {weights} "
        f"weights, which needs about {needed:.1f} GiB to train and save; 0.1 GiB of memory "
        "is available")
    assert os.listdir(tmp_path) == ["t"]
    monkeypatch.setattr(cli, "available_memory", lambda: 100 * 2**30)
    code, _, err = run(capsys, train_main, ["-q"] + options + [str(train), str(tmp_path / "m")])
    assert code == 0, err
    assert load_model(tmp_path / "m").nr_feature == 1500001


def test_an_index_beyond_int32_names_the_line(tmp_path, capsys):
    """LIBLINEAR reads indices as int: 2**31 - 1 and beyond are refused with the line."""
    train = tmp_path / "t"
    train.write_text("1 1:1\n-1 2147483647:1\n")
    code, _, err = run(capsys, train_main, ["-q", str(train), str(tmp_path / "m")])
    assert code == 1
    assert error_line(err) == (f"ERROR: {train}: line 2: feature index 2147483647 is larger "
                               "than 2147483646")
    assert os.listdir(tmp_path) == ["t"]
