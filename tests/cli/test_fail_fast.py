"""Failing fast and answering the user (issue 39): an output path that cannot be written
fails before any data is read, compressed input is known by its first bytes, an unknown
command is named, and Ctrl-C at any point is one line and exit 130."""
import os

import pytest

from dlinear.cli import train_predict
from dlinear.cli.main import main


def _never_read(*args, **kwargs):
    raise AssertionError("the data was read before the output path was checked")


@pytest.mark.parametrize("where, reason", [("no-such-dir/m", "No such file or directory"),
                                           ("t/m", "Not a directory"),
                                           (".", "Is a directory")])
def test_an_unwritable_model_path_fails_before_the_data_is_read(tmp_path, capsys, monkeypatch,
                                                                where, reason):
    """LIBLINEAR's order (its `can't open output file`): the model path is checked first,
    so a long read and training are not wasted; one line, exit 1, nothing written."""
    train = tmp_path / "t"
    train.write_text("1 1:1\n-1 2:1\n")
    monkeypatch.setattr(train_predict, "read_dataset", _never_read)
    monkeypatch.setattr(train_predict, "sample_libsvm", _never_read)
    model = tmp_path / where
    assert main(["train", str(train), str(model)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err == f"ERROR: can't save model to file {model}: {reason}\n"
    assert os.listdir(tmp_path) == ["t"]


def test_cross_validation_writes_no_model_so_checks_none(tmp_path, capsys):
    train = tmp_path / "t"
    train.write_text("1 1:1\n-1 2:1\n1 1:2\n-1 2:2\n")
    assert main(["train", "-q", "-v", "2", str(train), str(tmp_path / "no-such-dir" / "m")]) == 0
    assert capsys.readouterr().out.startswith("Cross Validation Accuracy = ")


def test_an_unwritable_prediction_output_fails_before_the_model_and_data(tmp_path, capsys,
                                                                         monkeypatch):
    """dlinear-predict checks its output file before it reads the model or the test file,
    with LIBLINEAR predict's words."""
    monkeypatch.setattr(train_predict, "read_dataset", _never_read)
    monkeypatch.setattr("dlinear.model.load_model", _never_read)
    output = tmp_path / "no-such-dir" / "out"
    assert main(["predict", "t", "m", str(output)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err == (f"ERROR: can't open output file {output}: "
                                 "No such file or directory\n")
    assert os.listdir(tmp_path) == []


def test_a_gzip_file_named_without_gz_trains(tmp_path, capsys):
    """Compression is known by the file's first bytes, not its name."""
    import gzip
    text = b"".join(b"%d 1:%d 2:1\n" % (1 if i % 2 else -1, i % 2) for i in range(40))
    (tmp_path / "plain").write_bytes(text)
    (tmp_path / "zipped").write_bytes(gzip.compress(text))
    for name in ("plain", "zipped"):
        assert main(["train", "-q", "--workers", "0", str(tmp_path / name),
                     str(tmp_path / f"{name}.model")]) == 0
    assert capsys.readouterr() == ("", "")
    assert (tmp_path / "zipped.model").read_text() == (tmp_path / "plain.model").read_text()
