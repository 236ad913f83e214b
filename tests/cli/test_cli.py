"""dlinear-train / dlinear-predict end to end: train then predict, and the default model name,
as separate processes; the errors, help and outputs of a command through the same main in
this process (tests.support.cli)."""
import re
import subprocess
import sys

import numpy as np
import pytest
from liblinear import liblinearutil

from dlinear import Params, load_model, predict, train
from dlinear.data.libsvm_reader import read_libsvm, write_libsvm
from tests.support.cli import run_in_process
from tests.support.liblinear_oracle import liblinear_train, seed_liblinear


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "dlinear", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def files(tmp_path_factory, multiclass_split):
    d = tmp_path_factory.mktemp("cli")
    train_set, test_set = multiclass_split
    write_libsvm(d / "data.train", train_set)
    write_libsvm(d / "data.test", test_set)
    return d


def test_train_then_predict(files, tmp_path):
    r = run("train", "-c", "0.5", "-B", "1", files / "data.train", tmp_path / "m.model")
    assert r.returncode == 0, r.stderr
    assert "optimization finished, #iter =" in r.stdout
    # stdout is what LIBLINEAR's train prints; dlinear's own line goes to stderr
    assert "dlinear" not in r.stdout
    # dlinear's own lines go to stderr: where it trains, and the formulation without -s
    where, how = r.stderr.splitlines()
    assert where.startswith("dlinear: training in this process")
    assert how.startswith("dlinear: -s ")
    # the CLI's model is the API's model, to the last digit
    train_set = read_libsvm(files / "data.train")
    api_model = train(train_set, Params(C=0.5, bias=1))
    np.testing.assert_array_equal(load_model(tmp_path / "m.model").w, api_model.w)

    r = run("predict", files / "data.test", tmp_path / "m.model", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    test_set = read_libsvm(files / "data.test")
    expected = predict(api_model, test_set)
    written = np.loadtxt(tmp_path / "out")
    np.testing.assert_array_equal(written, expected)
    correct = int(np.sum(expected == test_set.y))
    assert r.stdout.strip() == (f"Accuracy = {100 * correct / len(expected):g}% "
                                f"({correct}/{len(expected)})")


def test_default_model_name_and_quiet(files, tmp_path):
    r = run("train", "-q", files / "data.train", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout == "" and r.stderr == ""
    assert (tmp_path / "data.train.model").exists()


def test_cross_validation_output(files, multiclass_split, capsys):
    """-v 3 prints LIBLINEAR's line; the accuracy is LIBLINEAR's -v 3 accuracy up to the
    folds (LIBLINEAR draws them with the C library's rand(), dlinear from --seed: on this
    set the two differ by up to 0.6 points over seeds)."""
    r = run_in_process(capsys, "train", "-v", "3", "-q", files / "data.train")
    assert r.returncode == 0, r.stderr
    line = r.stdout.strip()
    assert re.fullmatch(r"Cross Validation Accuracy = [0-9.]+%", line), line
    train_set, _ = multiclass_split
    seed_liblinear()
    lib_accuracy = liblinearutil.train(train_set.y, train_set.to_scipy(), "-v 3 -q")
    assert abs(float(line.split("= ")[1].rstrip("%")) - lib_accuracy) <= 1.5


@pytest.mark.slow
@pytest.mark.parametrize("content,line_no", [
    ("1 1:0.5\n-1 3:abc\n", 2),
    ("1 1:0.5\n1 2:1 2:3\n-1 1:1\n", 2),
    ("1 1:0.5\n\n-1 0:1\n", 3),
    ("1 1:nan\n", 1),
])
def test_bad_training_file_exits_1_without_a_model(content, line_no, tmp_path, capsys):
    bad = tmp_path / "bad.svm"
    bad.write_text(content)
    r = run_in_process(capsys, "train", bad, tmp_path / "bad.model")
    assert r.returncode == 1
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert str(bad) in r.stderr and f"line {line_no}" in r.stderr
    assert not (tmp_path / "bad.model").exists()


@pytest.mark.slow
@pytest.mark.parametrize("args,fragment", [
    (["-s", "99"], "unknown solver type"),
    (["-x", "1"], "unknown option: -x"),
    (["-c", "abc"], "option -c needs a number"),
    (["-c", "0"], "C <= 0"),
    (["-e", "-1"], "eps <= 0"),
    (["-v", "1"], "n-fold cross validation: n must >= 2"),
    (["-R"], "To not regularize bias, must specify -B 1 along with -R"),
])
def test_bad_options_exit_1(args, fragment, files, tmp_path, capsys):
    r = run_in_process(capsys, "train", *args, files / "data.train", tmp_path / "m.model")
    assert r.returncode == 1 and fragment in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "m.model").exists()


def test_missing_files(tmp_path, capsys):
    r = run_in_process(capsys, "train", tmp_path / "nope.svm")
    assert r.returncode == 1 and "can't open input file" in r.stderr
    r = run_in_process(capsys, "predict", tmp_path / "nope.svm", tmp_path / "nope.model",
                       tmp_path / "out")
    assert r.returncode == 1 and not (tmp_path / "out").exists()


def test_version(capsys):
    import dlinear
    for command in ("train", "predict"):
        r = run_in_process(capsys, command, "--version")
        assert r.returncode == 0 and r.stderr == ""
        assert r.stdout == f"dlinear-{command} (dlinear) {dlinear.__version__}\n"


def test_usage_and_help(capsys):
    r = run_in_process(capsys, "train")
    assert r.returncode == 1 and "Usage: dlinear-train" in r.stderr
    r = run_in_process(capsys, "train", "-h")
    assert r.returncode == 0 and "-s type : set type of solver" in r.stdout


def test_probability_output_matches_liblinear(files, multiclass_split, tmp_path, capsys):
    train_set, test_set = multiclass_split
    lib, _ = liblinear_train(train_set, "-s 0")
    liblinearutil.save_model(str(tmp_path / "lr.model"), lib)
    r = run_in_process(capsys, "predict", "-b", "1", files / "data.test",
                       tmp_path / "lr.model", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    lines = (tmp_path / "out").read_text().splitlines()
    assert lines[0] == "labels " + " ".join(str(v) for v in lib.get_labels())
    got = np.array([[float(t) for t in line.split()] for line in lines[1:]])
    labels, _, probs = liblinearutil.predict(test_set.y, test_set.to_scipy(), lib, "-b 1 -q")
    np.testing.assert_array_equal(got[:, 0], labels)
    np.testing.assert_allclose(got[:, 1:], probs, rtol=1e-5)   # printed with %g


def test_probability_needs_logistic_regression(files, tmp_path, capsys):
    assert run_in_process(capsys, "train", "-q", files / "data.train",
                          tmp_path / "m").returncode == 0
    r = run_in_process(capsys, "predict", "-b", "1", files / "data.test", tmp_path / "m",
                       tmp_path / "out")
    assert r.returncode == 1
    assert "probability output is only supported for logistic regression" in r.stderr
    assert not (tmp_path / "out").exists()


def test_regression_model_prints_mse(binary_split, tmp_path, capsys):
    train_set, test_set = binary_split
    write_libsvm(tmp_path / "t", test_set)
    lib, _ = liblinear_train(train_set, "-s 11")
    liblinearutil.save_model(str(tmp_path / "svr.model"), lib)
    r = run_in_process(capsys, "predict", tmp_path / "t", tmp_path / "svr.model",
                       tmp_path / "out")
    assert r.returncode == 0, r.stderr
    _, (acc, mse, scc), _ = liblinearutil.predict(test_set.y, test_set.to_scipy(), lib, "-q")
    assert r.stdout.splitlines() == [f"Mean squared error = {mse:g} (regression)",
                                     f"Squared correlation coefficient = {scc:g} (regression)"]
