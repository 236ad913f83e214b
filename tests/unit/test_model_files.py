"""LIBLINEAR model files: read LIBLINEAR's, write what LIBLINEAR reads, atomically."""
import os

import numpy as np
import pytest
from liblinear import liblinearutil

from dlinear import DlinearError, Params, decision_values, load_model, predict, save_model, train
from tests.support.liblinear_oracle import liblinear_decision_values, liblinear_train


# every LIBLINEAR solver: the reader must handle each one's file (nr_w, label, rho lines)
@pytest.mark.parametrize("options", [
    "-s 0", "-s 1 -B 1", "-s 2", "-s 3", "-s 4", "-s 4 -B 1", "-s 5", "-s 6 -B 1", "-s 7",
    "-s 11", "-s 12 -B 1", "-s 13", "-s 21",
])
@pytest.mark.parametrize("split", ["binary_split", "multiclass_split"])
def test_liblinear_model_files_load_and_predict_identically(options, split, request, tmp_path):
    train_set, test_set = request.getfixturevalue(split)
    lib, _ = liblinear_train(train_set, options)
    path = tmp_path / "lib.model"
    liblinearutil.save_model(str(path), lib)

    model = load_model(path)
    lib_labels, lib_values = liblinear_decision_values(lib, test_set)
    ours = decision_values(model, test_set)
    # LIBLINEAR's Python binding returns one value for any 2-class model, even -s 4's two
    np.testing.assert_allclose(ours[:, :lib_values.shape[1]], lib_values, rtol=0, atol=1e-10)
    np.testing.assert_array_equal(predict(model, test_set), lib_labels)

    # and dlinear writes the very same file back
    again = tmp_path / "again.model"
    save_model(again, model)
    assert again.read_text() == path.read_text()


@pytest.mark.parametrize("solver,bias", [(1, -1.0), (3, 1.0)])
@pytest.mark.parametrize("split", ["binary_split", "multiclass_split"])
def test_dlinear_model_files_load_in_liblinear(solver, bias, split, request, tmp_path):
    train_set, test_set = request.getfixturevalue(split)
    model = train(train_set, Params(solver_type=solver, bias=bias))
    path = tmp_path / "ours.model"
    save_model(path, model)

    lib = liblinearutil.load_model(str(path))
    lib_labels, lib_values = liblinear_decision_values(lib, test_set)
    np.testing.assert_allclose(decision_values(model, test_set), lib_values, rtol=0, atol=1e-10)
    np.testing.assert_array_equal(predict(model, test_set), lib_labels)
    reloaded = load_model(path)
    np.testing.assert_array_equal(reloaded.w, model.w)   # %.17g round-trips exactly


def test_test_data_with_more_features_than_training(binary_split, tmp_path):
    train_set, test_set = binary_split
    model = train(train_set, Params(bias=1))
    wider = test_set.subset(np.arange(test_set.n_samples))
    wider.n_features += 10
    wider.indices = wider.indices.copy()
    wider.indices[wider.indptr[1] - 1] = wider.n_features - 1   # a feature the model lacks
    path = tmp_path / "m"
    save_model(path, model)
    lib = liblinearutil.load_model(str(path))
    _, lib_values = liblinear_decision_values(lib, wider)
    np.testing.assert_allclose(decision_values(model, wider), lib_values, atol=1e-10)


@pytest.mark.parametrize("text,fragment", [
    ("solver_type L2R_L2LOSS_SVC_DUAL\nnr_class 2\nlabel 1 -1\nnr_feature 2\nbias -1\nw\n1\n",
     "expected 2 weights"),
    ("solver_type NOPE\nnr_class 2\nlabel 1 -1\nnr_feature 1\nbias -1\nw\n1\n",
     "line 1: unknown solver type NOPE"),
    ("solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature x\nbias -1\nw\n1\n",
     "line 4: 'nr_feature' has a bad value"),
    ("solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 1\nbias -1\nw\n1 2\n",
     "expected 1 weights"),
    ("solver_type L2R_LR\nnr_class 2\nnr_feature 1\nbias -1\nw\n1\n", "needs a 'label' line"),
    ("solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 1\nbias -1\n", "no 'w' line"),
    ("__import__('os')\n", "line 1: unknown text in model file"),
    ("solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 1\nbias -1\nw\nabc\n",
     "not all numbers"),
])
def test_bad_model_files_are_clear_errors(text, fragment, tmp_path):
    path = tmp_path / "bad.model"
    path.write_text(text)
    with pytest.raises(DlinearError, match=fragment) as info:
        load_model(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_missing_model_file(tmp_path):
    with pytest.raises(DlinearError, match="can't open model file"):
        load_model(tmp_path / "nothing")


def test_save_is_atomic(binary_split, tmp_path, monkeypatch):
    train_set, _ = binary_split
    model = train(train_set, Params())
    path = tmp_path / "m.model"
    path.write_text("old contents\n")

    real_replace = os.replace

    def failing_replace(src, dst):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(DlinearError, match="can't save model"):
        save_model(path, model)
    monkeypatch.setattr(os, "replace", real_replace)
    assert path.read_text() == "old contents\n"
    assert os.listdir(tmp_path) == ["m.model"]        # no temporary file left behind
    with pytest.raises(DlinearError, match="can't save model"):
        save_model(tmp_path / "no-such-dir" / "m.model", model)


def test_saved_model_is_readable_by_others(binary_split, tmp_path):
    # a model written by a worker's user on shared storage must be readable by the rest
    train_set, _ = binary_split
    umask = os.umask(0o022)
    try:
        save_model(tmp_path / "m.model", train(train_set, Params()))
    finally:
        os.umask(umask)
    assert (tmp_path / "m.model").stat().st_mode & 0o777 == 0o644


def test_a_model_saved_a_block_of_rows_at_a_time_is_the_one_text(tmp_path, monkeypatch):
    """save_model formats the weights in blocks of rows (its peak memory): the file is
    the text of all rows at once, bit for bit, also for a multi-column model."""
    import dataclasses

    import dlinear.model as model_module
    rng = np.random.default_rng(3)
    X = rng.random((30, 1001))
    for n_classes, nr_w in ((2, 1), (3, 3)):
        model = train(X, Params(solver_type=2), y=np.arange(30) % n_classes)
        w = rng.standard_normal((1001, nr_w)) * 10.0 ** rng.integers(-300, 300, (1001, nr_w))
        w[::7] = 0.0
        model = dataclasses.replace(model, w=w)
        save_model(tmp_path / "whole", model)
        monkeypatch.setattr(model_module, "_SAVE_BLOCK_ROWS", 100)
        save_model(tmp_path / "blocks", model)
        monkeypatch.undo()
        whole = (tmp_path / "whole").read_bytes()
        assert whole == (tmp_path / "blocks").read_bytes()
        rows = whole.split(b"\nw\n", 1)[1].splitlines()
        assert len(rows) == 1001 and all(len(r.split()) == nr_w for r in rows)
        assert float(rows[500].split()[-1]) == w[500, -1]
        np.testing.assert_array_equal(load_model(tmp_path / "blocks").w, w)


def test_weights_read_in_bulk_are_the_numbers_of_the_file(tmp_path):
    # the tokens "0" are found in bulk, every other token goes through float: "-0",
    # "0.0", "00", exponents and 17 digits are each their own number
    tokens = ["0", "-0", "0.0", "00", "1e-300", "-2.5", "0.10000000000000001", "0", "7",
              "0", "3", "0"]
    lines = [" ".join(tokens[3 * i:3 * i + 3]) + " \n" for i in range(3)]
    path = tmp_path / "m.model"
    path.write_text("solver_type L2R_L2LOSS_SVC_DUAL\nnr_class 3\nlabel 1 2 3\n"
                    "nr_feature 3\nbias 1\nw\n" + "".join(lines) + "\t".join(tokens[9:]))
    w = load_model(path).w
    assert w.shape == (4, 3)
    np.testing.assert_array_equal(w.ravel(), [float(t) for t in tokens])
    assert np.signbit(w[0, 1]) and not np.signbit(w[0, 0])
