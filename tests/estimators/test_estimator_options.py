"""The estimators' LIBLINEAR model files (through liblinear-official's own predict), the
scikit-learn extra, n_jobs, verbose, client= and dask DataFrames."""
import os
import subprocess
import sys

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV

import dlinear
import dlinear.estimators.base as estimator_base
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.estimators import LinearSVC, LinearSVR, LogisticRegression

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def rows():
    problem = make_rcv1_like(1200, n_features=150, n_classes=3, nnz_per_row=15, seed=41)
    return problem.to_scipy(), problem.y.astype(np.int64)


def liblinear_predict(path, X):
    from liblinear import liblinearutil
    model = liblinearutil.load_model(str(path))
    labels, _, _ = liblinearutil.predict(np.zeros(X.shape[0]), X, model, "-q")
    return np.asarray(labels)


@pytest.mark.parametrize("classes", [(-1, 1), (3, 7, 10)])
def test_save_liblinear_writes_the_users_classes(tmp_path, rows, classes, make=LinearSVC):
    X, y = rows
    y = np.asarray(classes)[y % len(classes)]
    est = make().fit(X, y)
    path = tmp_path / "est.model"
    est.save_liblinear(path)
    header = path.read_text().split("\nw\n")[0]
    label_line = [line for line in header.splitlines() if line.startswith("label ")][0]
    assert sorted(int(v) for v in label_line.split()[1:]) == sorted(classes)
    # LIBLINEAR's own predict prints the user's labels, the estimator's predictions
    np.testing.assert_array_equal(liblinear_predict(path, X), est.predict(X))
    # dlinear.save_model takes the estimator too; dlinear.predict reads the same labels
    dlinear.save_model(tmp_path / "same.model", est)
    assert (tmp_path / "same.model").read_text() == path.read_text()
    np.testing.assert_array_equal(dlinear.predict(dlinear.load_model(path), X), est.predict(X))
    loaded = LinearSVC.load_liblinear(path)
    np.testing.assert_array_equal(loaded.classes_, np.sort(classes))
    np.testing.assert_array_equal(loaded.predict(X), est.predict(X))
    np.testing.assert_allclose(loaded.coef_, est.coef_, rtol=0, atol=0)


def test_load_liblinear_reads_liblinear_official_models(tmp_path, rows):
    from liblinear import liblinearutil
    X, y = rows
    y = np.where(y % 2 == 0, -1, 1)
    lib = liblinearutil.train(y.astype(float), X, "-s 0 -B 1 -q")
    path = tmp_path / "lib.model"
    liblinearutil.save_model(str(path), lib)
    est = LogisticRegression.load_liblinear(path)
    assert est.fit_intercept and est.intercept_scaling == 1.0 and est.solver == 0
    lib_labels, _, lib_proba = liblinearutil.predict(y.astype(float), X, lib, "-b 1 -q")
    np.testing.assert_array_equal(est.predict(X), lib_labels)
    order = np.searchsorted(est.classes_, lib.get_labels())
    np.testing.assert_allclose(est.predict_proba(X)[:, order], lib_proba, rtol=1e-12)
    with pytest.raises(ValueError, match="cannot be loaded as LinearSVR"):
        LinearSVR.load_liblinear(path)


def test_non_integer_classes_cannot_be_saved(tmp_path, rows):
    X, y = rows
    est = LinearSVC().fit(X, np.array(["ant", "bee", "cat"])[y % 3])
    with pytest.raises(ValueError, match="integer class labels"):
        est.save_liblinear(tmp_path / "x.model")
    with pytest.raises(ValueError, match="integer class labels"):
        LinearSVC().fit(X, y % 2 == 0).save_liblinear(tmp_path / "y.model")
    assert not os.listdir(tmp_path)


def test_estimators_without_scikit_learn_say_how_to_install_it():
    code = ("import sys; sys.modules['sklearn'] = None\n"
            "import dlinear\n"
            "dlinear.Params(); dlinear.LinearSVC")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 1
    assert 'pip install "scikit-learn>=1.6"' in run.stderr.splitlines()[-1]


@pytest.fixture
def thread_counts(monkeypatch):
    """The n_threads of every dlinear.train call the estimators make."""
    seen = []
    real = estimator_base.train

    def spy(*args, **kwargs):
        seen.append(kwargs["n_threads"])
        return real(*args, **kwargs)

    monkeypatch.setattr(estimator_base, "train", spy)
    return seen


def test_n_jobs_sets_the_threads(rows, thread_counts):
    X, y = rows
    one = LinearSVC().fit(X, y)
    two = LinearSVC(n_jobs=2).fit(X, y)
    LinearSVC(n_jobs=-1).fit(X, y)
    assert thread_counts == [1, 2, os.cpu_count()]
    np.testing.assert_array_equal(one.coef_, two.coef_)     # classes are independent tasks
    with pytest.raises(ValueError, match="n_jobs"):
        LinearSVC(n_jobs=0).fit(X, y)


@pytest.mark.slow
def test_grid_search_with_jobs_fits_on_one_thread_each(rows, thread_counts):
    X, y = rows
    GridSearchCV(LinearSVC(), {"C": [0.5, 1.0]}, cv=2, n_jobs=2).fit(X, y)
    assert thread_counts and set(thread_counts) == {1}


def test_verbose_prints_liblinears_lines_to_stderr(rows, capsys):
    X, y = rows
    LinearSVC(dual=True).fit(X, y)
    assert capsys.readouterr() == ("", "")
    LinearSVC(dual=True, verbose=1).fit(X, y)
    out, err = capsys.readouterr()
    assert out == ""
    assert "optimization finished" in err and "nSV" in err


