"""The command line's edges: help and version of `python -m dlinear`, what make-data says,
bad input in one line, the scheduler's connect timeout (Ctrl-C during a cluster run:
tests/cluster/test_cli_edges_cluster.py)."""
import os
import socket
import subprocess
import sys

import pytest

import dlinear
from dlinear.cli.train_predict import train_main
from dlinear.cli.main import MAIN_USAGE, main
from dlinear.datasets.rcv1_like import make_rcv1_like


def run(*args, **kwargs):
    return subprocess.run([sys.executable, "-m", "dlinear", *map(str, args)],
                          capture_output=True, text=True, timeout=120, **kwargs)


def test_main_help_and_version():
    r = run("-h")
    assert r.returncode == 0 and r.stderr == ""
    assert r.stdout.startswith("usage: python -m dlinear {train,predict,convert,make-data}")
    assert [line.split()[0] for line in r.stdout.splitlines()[1:5]] == [
        "train", "predict", "convert", "make-data"]
    r = run("--version")
    assert r.returncode == 0 and r.stderr == "" and r.stdout == f"dlinear {dlinear.__version__}\n"
    r = run("bogus")
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == ("dlinear: unknown command 'bogus' (python -m dlinear -h lists the "
                        "commands)\n")
    r = run()
    assert r.returncode == 1 and r.stdout == "" and r.stderr == MAIN_USAGE


def test_make_data_says_what_it_wrote(tmp_path, capsys):
    assert main(["make-data", "--rows", "50", "--test-rows", "10", "--features", "30", "--nnz-per-row", "5",
                 str(tmp_path / "d")]) == 0
    out, err = capsys.readouterr()
    train = dlinear.read_libsvm(tmp_path / "d.train")
    assert err == ""
    assert out.splitlines() == [
        f"wrote {tmp_path / 'd.train'}: 50 rows, {train.n_features} features, "
        f"{train.nnz} nonzeros",
        f"wrote {tmp_path / 'd.test'}: 10 rows, "
        f"{dlinear.read_libsvm(tmp_path / 'd.test').n_features} features, "
        f"{dlinear.read_libsvm(tmp_path / 'd.test').nnz} nonzeros"]


@pytest.mark.parametrize("options", [[], ["-v", "2"], ["-s", "2", "-C"]])
def test_bad_labels_are_one_line_without_q(tmp_path, capsys, options):
    """The label check runs as training starts: the note saying where dlinear trains
    comes only after it, so stderr holds the error alone."""
    train = tmp_path / "t"
    train.write_text("1 1:1\n0.5 2:1\n1 1:2\n")
    assert train_main(options + [str(train), str(tmp_path / "m")]) == 1
    _, err = capsys.readouterr()
    assert err.splitlines() == [f"ERROR: {train}: label 0.5 of instance 2 is not an integer; "
                                "classification needs integer labels (-s 11, 12, 13 do "
                                "regression)"]
    assert sorted(os.listdir(tmp_path)) == ["t"]


@pytest.mark.parametrize("command, where", [
    ("train", "dlinear.data.binary_format.read_dataset"), ("predict", "dlinear.model.load_model"),
    ("convert", "dlinear.cli.main.convert_libsvm"),
    ("make-data", "dlinear.datasets.rcv1_like.make_rcv1_like_split")])
def test_every_command_answers_ctrl_c_and_errors_alike(tmp_path, capsys, monkeypatch,
                                                        command, where):
    """Each command of python -m dlinear turns a Ctrl-C into one line and exit 130, and a
    user error into one line and exit 1 (cli_exit.exit_status), whatever it was doing."""
    args = {"train": ["--workers", "0", "t", "m"], "predict": ["t", "m", "out"],
            "convert": ["t", "d"], "make-data": ["--rows", "10", str(tmp_path / "d")]}
    for raised, status, line in [(KeyboardInterrupt, 130, "dlinear: interrupted"),
                                 (dlinear.DlinearError("t: line 3: bad"), 1,
                                  "ERROR: t: line 3: bad")]:
        def fail(*args, **kwargs):
            raise raised
        monkeypatch.setattr(where, fail)
        code = main([command] + args[command])
        out, err = capsys.readouterr()
        if command == "make-data" and status == 1:     # its own wording: the program's name
            line = "dlinear make-data: t: line 3: bad"
        assert (code, err.splitlines()) == (status, [line]) and out == ""


def test_the_note_comes_before_training_output(tmp_path, capsys):
    train = tmp_path / "t"
    train.write_text("1 1:1\n-1 2:1\n")
    assert train_main(["-s", "2", str(train), str(tmp_path / "m")]) == 0
    out, err = capsys.readouterr()
    # one line: where it trains, the cost model's predictions, and how to choose otherwise
    assert err.startswith("dlinear: training in this process (")
    assert "(--workers n starts a local cluster); memory budget " in err
    assert err.count("\n") == 1
    assert out.startswith("init f ")


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("command", ["train", "submit", "status"])
def test_an_unreachable_scheduler_fails_after_the_connect_timeout(tmp_path, capsys, command):
    from dlinear.cli.jobs import status_main, submit_main
    train = tmp_path / "t"
    train.write_text("1 1:1\n-1 2:1\n")
    address = f"tcp://127.0.0.1:{_closed_port()}"
    common = ["--scheduler", address, "--connect-timeout", "0.5"]
    if command == "train":
        code = train_main(common + [str(train), str(tmp_path / "m")])
    elif command == "submit":
        code = submit_main(["--name", "j"] + common + [str(train), str(tmp_path / "m")])
    else:
        code = status_main(["j"] + common)
    _, err = capsys.readouterr()
    assert code == (3 if command == "status" else 1)
    assert err.splitlines() == [f"ERROR: can't connect to the Dask scheduler at {address}: "
                                f"Timed out trying to connect to {address} after 0.5 s"]
    assert sorted(os.listdir(tmp_path)) == ["t"]


@pytest.mark.parametrize("value", ["0", "-1", "x"])
def test_connect_timeout_needs_positive_seconds(tmp_path, capsys, value):
    from dlinear.cli.jobs import status_main
    assert train_main(["--connect-timeout", value, str(tmp_path / "t")]) == 1
    assert status_main(["j", "--scheduler", "tcp://127.0.0.1:1", "--connect-timeout",
                        value]) == 3
    _, err = capsys.readouterr()
    lines = err.splitlines()
    assert lines[0].startswith("ERROR: option --connect-timeout needs") or \
        lines[0].startswith("ERROR: --connect-timeout needs")
    assert "--connect-timeout" in lines[-1] and "Traceback" not in err


def test_cross_validation_prints_each_folds_training(tmp_path, capsys):
    """-v prints each fold's training log, fold after fold, as LIBLINEAR's train does,
    then the accuracy; -q none of it."""
    train = tmp_path / "t"
    dlinear.write_libsvm(train, make_rcv1_like(300, n_features=50, nnz_per_row=8, seed=2))
    assert train_main(["-v", "3", "-s", "2", str(train)]) == 0
    out, _ = capsys.readouterr()
    lines = out.splitlines()
    assert [i for i, line in enumerate(lines) if line.startswith("init f ")][0] == 0
    assert sum(line.startswith("init f ") for line in lines) == 3
    assert all(line.startswith(("init f ", "iter ")) for line in lines[:-1]), lines
    assert lines[-1].startswith("Cross Validation Accuracy = ")
    assert train_main(["-q", "-v", "3", "-s", "2", str(train)]) == 0
    out, _ = capsys.readouterr()
    assert out.splitlines() == [lines[-1]]


