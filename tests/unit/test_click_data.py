"""The click-log-shaped generator: its shape, determinism and learnability."""

import numpy as np
import pytest

from dlinear import Params, train
from dlinear.datasets.click_like import (N_COUNT_FEATURES, N_FIELDS, ROWS_PER_BLOCK, make_click_like,
                                make_click_like_split)
from dlinear.data.libsvm_reader import read_libsvm
from dlinear.errors import DlinearError
from dlinear.predict import predict
from tests.support.cli import run_in_process


def test_shape_is_counts_plus_hashed_fields():
    p = make_click_like(5000, hash_bits=20, seed=3)
    assert p.n_features == 1 << 20
    row_lengths = np.diff(p.indptr)
    assert row_lengths.max() == N_COUNT_FEATURES + N_FIELDS
    assert row_lengths.mean() > N_COUNT_FEATURES + N_FIELDS - 0.01      # collisions are rare
    # the counts sit in the first 13 columns of every row, as bucket numbers 1..12
    first = p.indices[p.indptr[:-1, None] + np.arange(N_COUNT_FEATURES)]
    assert np.array_equal(first, np.broadcast_to(np.arange(N_COUNT_FEATURES), first.shape))
    counts = p.data[p.indptr[:-1, None] + np.arange(N_COUNT_FEATURES)]
    assert counts.min() == 1 and counts.max() == 12 and np.all(counts == np.round(counts))
    for r in range(0, 5000, 997):                        # strictly increasing columns
        assert np.all(np.diff(p.indices[p.indptr[r]:p.indptr[r + 1]]) > 0)
    assert 0.2 < np.mean(p.y > 0) < 0.3


def test_a_heavy_head_leaves_most_columns_unused():
    p = make_click_like(100_000, seed=0)
    used = len(np.unique(p.indices))
    # 2.6M values drawn, but the heads repeat: under 200k of 16.8M columns occur (183k)
    assert 100_000 < used < 250_000


def test_rows_do_not_depend_on_how_many_are_drawn():
    more = make_click_like(ROWS_PER_BLOCK + 300, hash_bits=18, seed=1)
    fewer = make_click_like(ROWS_PER_BLOCK + 7, hash_bits=18, seed=1)
    n = fewer.nnz
    assert np.array_equal(more.indices[:n], fewer.indices)
    assert np.array_equal(more.data[:n], fewer.data)
    assert np.array_equal(more.y[:fewer.n_samples], fewer.y)
    other_seed = make_click_like(ROWS_PER_BLOCK + 7, hash_bits=18, seed=2)
    assert not np.array_equal(other_seed.indices, fewer.indices)


def test_logistic_regression_learns_it():
    tr, te = make_click_like_split(20_000, 5_000, hash_bits=18, seed=0)
    accuracy = np.mean(predict(train(tr, Params(solver_type=0)), te) == te.y)
    majority = max(np.mean(te.y > 0), np.mean(te.y < 0))
    assert accuracy > majority + 0.05


@pytest.mark.parametrize("kwargs", [dict(n_samples=-1), dict(n_samples=10, hash_bits=40),
                                    dict(n_samples=1.5)])
def test_bad_arguments(kwargs):
    with pytest.raises(DlinearError):
        make_click_like(**kwargs)


def test_make_data_writes_a_click_file(tmp_path, capsys):
    out = tmp_path / "click"
    # in this process: the files it writes are the check
    done = run_in_process(capsys, "make-data", "--shape", "click", "--hash-bits", "16",
                          "--rows", "300", "--test-rows", "50", out)
    assert done.returncode == 0, done.stderr
    read = read_libsvm(str(out) + ".train")
    expected = make_click_like(300, hash_bits=16)
    assert np.array_equal(read.indices, expected.indices)
    assert np.array_equal(read.y, expected.y)
    assert read_libsvm(str(out) + ".test").n_samples == 50
