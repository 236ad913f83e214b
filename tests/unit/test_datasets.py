"""The rcv1-like generator: determinism, CSR invariants, text-like statistics, learnability,
the command line, and the shipped example files."""
import shlex
from pathlib import Path

import numpy as np
import pytest
from sklearn.svm import LinearSVC

from dlinear.data.libsvm_reader import read_libsvm
from dlinear.datasets.rcv1_like import (ROWS_PER_BLOCK, main, make_rcv1_like, make_rcv1_like_split,
                              round_values)
from dlinear.errors import DlinearError

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"


def assert_same_problem(a, b):
    assert a.n_features == b.n_features
    for name in ("indptr", "indices", "data", "y"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and x.shape == y.shape, name
        assert x.tobytes() == y.tobytes(), name          # bit for bit


def row_ids(problem):
    return np.repeat(np.arange(problem.n_samples), np.diff(problem.indptr))


def test_same_arguments_give_bit_identical_data():
    kwargs = dict(n_features=3000, nnz_per_row=30, seed=3)
    assert_same_problem(make_rcv1_like(1500, **kwargs), make_rcv1_like(1500, **kwargs))
    other_seed = make_rcv1_like(1500, n_features=3000, nnz_per_row=30, seed=4)
    assert not np.array_equal(other_seed.y, make_rcv1_like(1500, **kwargs).y)


def test_rows_do_not_depend_on_how_many_are_drawn():
    # rows come in fixed blocks with their own streams: a longer draw extends a shorter one
    kwargs = dict(n_features=1000, nnz_per_row=10, seed=5)
    short = make_rcv1_like(ROWS_PER_BLOCK, **kwargs)
    longer = make_rcv1_like(ROWS_PER_BLOCK + 700, **kwargs)
    assert_same_problem(short, longer.subset(np.arange(ROWS_PER_BLOCK)))
    # train part of a split == make_rcv1_like; test rows do not move with n_train
    train, test = make_rcv1_like_split(300, 200, **kwargs)
    assert_same_problem(train, make_rcv1_like(300, **kwargs))
    assert_same_problem(test, make_rcv1_like_split(50, 200, **kwargs)[1])


@pytest.mark.parametrize("n_classes", [2, 5])
def test_csr_shape_dtypes_sorted_distinct_columns_and_unit_rows(n_classes):
    n_rows, n_features, nnz_per_row = 2500, 4000, 40
    p = make_rcv1_like(n_rows, n_features=n_features, n_classes=n_classes,
                       nnz_per_row=nnz_per_row, seed=7)
    assert p.n_samples == n_rows and p.n_features == n_features
    assert p.indptr.dtype == np.int64 and p.indptr.shape == (n_rows + 1,) and p.indptr[0] == 0
    assert p.indices.dtype == np.int32 and p.data.dtype == np.float64
    assert p.y.dtype == np.float64 and p.y.shape == (n_rows,)
    assert p.indices.shape == p.data.shape == (p.nnz,)
    lengths = np.diff(p.indptr)
    assert lengths.min() >= 1
    assert abs(lengths.mean() - nnz_per_row) < 0.1 * nnz_per_row
    assert lengths.std() > 0.3 * nnz_per_row                   # rows vary in length
    assert p.indices.min() >= 0 and p.indices.max() < n_features
    rows = row_ids(p)
    same_row = rows[1:] == rows[:-1]
    assert np.all(np.diff(p.indices.astype(np.int64))[same_row] > 0)
    assert np.all(p.data > 0) and np.all(np.isfinite(p.data))
    norms = np.sqrt(np.bincount(rows, weights=p.data ** 2, minlength=n_rows))
    np.testing.assert_allclose(norms, 1.0, rtol=0, atol=1e-12)


def test_binary_labels_are_plus_minus_one_and_balanced():
    y = make_rcv1_like(3000, n_features=3000, nnz_per_row=30, seed=8).y
    assert set(np.unique(y)) == {-1.0, 1.0}
    assert 0.1 < np.mean(y == 1.0) < 0.9


def test_multiclass_labels_cover_one_to_k():
    k = 5
    y = make_rcv1_like(3000, n_features=3000, n_classes=k, nnz_per_row=30, seed=9).y
    assert set(np.unique(y)) == set(float(c) for c in range(1, k + 1))
    shares = np.bincount(y.astype(np.int64), minlength=k + 1)[1:] / len(y)
    assert shares.min() > 0.5 / k


def test_label_noise_flips_that_fraction_and_leaves_x_alone():
    kwargs = dict(n_features=2000, nnz_per_row=20, seed=10)
    clean = make_rcv1_like(4000, label_noise=0.0, **kwargs)
    noisy = make_rcv1_like(4000, label_noise=0.1, **kwargs)
    assert clean.data.tobytes() == noisy.data.tobytes()
    assert clean.indices.tobytes() == noisy.indices.tobytes()
    assert 0.08 < np.mean(clean.y != noisy.y) < 0.12


def test_feature_frequencies_follow_a_power_law():
    p = make_rcv1_like(2000, seed=0)                     # rcv1's 47,236 features
    document_frequency = np.sort(np.bincount(p.indices, minlength=p.n_features))[::-1]
    top_one_percent = document_frequency[:p.n_features // 100].sum() / p.nnz
    assert top_one_percent > 0.2
    # ... while the median feature is rare
    assert np.median(document_frequency) < 0.01 * p.n_samples


def svm_test_accuracy(train, test):
    clf = LinearSVC(C=1.0).fit(train.to_scipy(), train.y)
    return clf.score(test.to_scipy(), test.y)


def test_binary_problem_is_learnable_but_not_trivial():
    accuracy = svm_test_accuracy(*make_rcv1_like_split(3000, 2000, seed=1))
    assert 0.8 < accuracy < 0.995


def test_four_class_problem_is_learnable():
    accuracy = svm_test_accuracy(*make_rcv1_like_split(3000, 2000, n_classes=4, seed=2))
    assert accuracy > 0.6                                   # chance is 0.25


@pytest.mark.parametrize("bad", [
    dict(n_samples=-1), dict(n_samples=1.5), dict(n_features=0), dict(n_classes=1),
    dict(nnz_per_row=0), dict(nnz_per_row=20, n_features=10), dict(label_noise=1.5),
    dict(seed=-3),
])
def test_bad_arguments_raise_dlinear_error(bad):
    kwargs = dict(n_samples=10, n_features=100, nnz_per_row=5)
    kwargs.update(bad)
    with pytest.raises(DlinearError):
        make_rcv1_like(**kwargs)


def test_tiny_vocabularies_and_empty_sets_work():
    p = make_rcv1_like(50, n_features=3, nnz_per_row=3, seed=0)
    lengths = np.diff(p.indptr)                            # capped at the vocabulary
    assert lengths.min() >= 1 and lengths.max() == 3
    empty_train, empty_test = make_rcv1_like_split(0, 0, n_features=100, nnz_per_row=5)
    assert empty_train.n_samples == 0 and empty_test.nnz == 0


def test_command_line_writes_train_and_test(tmp_path, capsys):
    prefix = tmp_path / "toy"
    args = [str(prefix), "--rows", "120", "--test-rows", "30", "--features", "500",
            "--classes", "3", "--nnz-per-row", "12", "--seed", "4"]
    assert main(args) == 0
    train, test = make_rcv1_like_split(120, 30, n_features=500, n_classes=3, nnz_per_row=12,
                                       seed=4)
    for path, expected in ((f"{prefix}.train", train), (f"{prefix}.test", test)):
        read_back = read_libsvm(path, n_features=500)
        assert_same_problem(read_back, expected)        # full precision: exact round trip

    assert main([str(tmp_path / "no_test"), "--rows", "5", "--features", "50",
                 "--nnz-per-row", "4"]) == 0
    assert (tmp_path / "no_test.train").exists() and not (tmp_path / "no_test.test").exists()

    assert main([str(tmp_path / "bad"), "--rows", "5", "--classes", "1"]) == 1
    assert "n_classes" in capsys.readouterr().err


def recorded_example_command():
    """The arguments of the make-data line in examples/README.md."""
    for line in (EXAMPLES / "README.md").read_text().splitlines():
        words = shlex.split(line)
        if len(words) > 4 and words[:4] == ["python", "-m", "dlinear", "make-data"]:
            return words[4:]
    raise AssertionError("examples/README.md records no make-data command")


def test_shipped_examples_equal_the_recorded_command(tmp_path):
    args = recorded_example_command()
    assert args[0] == "examples/rcv1_small"
    assert main([str(tmp_path / "rcv1_small")] + args[1:]) == 0
    for suffix in ("train", "test"):
        shipped = EXAMPLES / f"rcv1_small.{suffix}"
        assert shipped.stat().st_size < 500_000
        assert_same_problem(read_libsvm(shipped), read_libsvm(tmp_path / f"rcv1_small.{suffix}"))


def test_shipped_examples_are_a_reasonable_learning_problem():
    train = read_libsvm(EXAMPLES / "rcv1_small.train")
    test = read_libsvm(EXAMPLES / "rcv1_small.test", n_features=train.n_features)
    assert set(np.unique(train.y)) == {-1.0, 1.0}
    assert 0.85 <= svm_test_accuracy(train, test) <= 0.98


def test_round_values_keeps_values_positive_and_short():
    p = make_rcv1_like(200, n_features=500, nnz_per_row=10, seed=1)
    r = round_values(p, 2)
    assert np.all(r.data >= 0.01) and np.all(np.abs(r.data - p.data) <= 0.005 + 1e-15)
    assert np.array_equal(r.indices, p.indices) and np.array_equal(r.y, p.y)
    with pytest.raises(DlinearError):
        round_values(p, 0)


@pytest.mark.parametrize("shape,rows,dtype", [("rcv1", 20000, np.float64),
                                              ("rcv1", 20000, np.float32),
                                              ("click", 140000, np.float32)])
def test_binary_output_holds_the_text_outputs_rows_written_part_by_part(tmp_path, monkeypatch,
                                                                        shape, rows, dtype):
    """make-data --binary draws and writes a part at a time (a set larger than memory):
    the dataset holds the rows the text holds, in several parts, values as --float32
    reads them from the cast float64."""
    from dlinear.data import binary_format
    monkeypatch.setattr(binary_format, "PART_TEXT_BYTES", 1 << 20)
    prefix = str(tmp_path / "set")
    common = [prefix, "--shape", shape, "--rows", str(rows), "--test-rows", "3000"]
    assert main(common) == 0
    assert main(common + ["--binary"] + (["--float32"] if dtype == np.float32 else [])) == 0
    for name in ("train", "test"):
        text = read_libsvm(f"{prefix}.{name}")
        header = binary_format.read_header(f"{prefix}.{name}.bin")
        data = binary_format.read_binary(f"{prefix}.{name}.bin")
        assert len(header.parts) > 1 or name == "test"
        np.testing.assert_array_equal(data.indptr, text.indptr)
        np.testing.assert_array_equal(data.indices, text.indices)
        np.testing.assert_array_equal(data.y, text.y)
        np.testing.assert_array_equal(data.data, text.data.astype(dtype))
        assert data.data.dtype == dtype
        assert data.n_features == text.n_features
        narrow = dtype == np.float32 and shape == "rcv1"
        assert data.indices.dtype == (np.uint16 if narrow else np.int32)


def test_float32_without_binary_is_a_one_line_error(tmp_path, capsys):
    assert main([str(tmp_path / "x"), "--rows", "5", "--float32"]) == 1
    assert "--float32 applies to --binary" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())
