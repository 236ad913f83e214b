"""The binary dataset format: `python -m dlinear convert`, read_binary, its parts, and the
commands that take either format."""
import json
import os
import subprocess
import sys

import numba
import numpy as np
import pytest

from dlinear import Params, train
from dlinear.data.binary_format import (HEADER_NAME, convert_libsvm, is_binary_dataset,
                                   read_binary, read_binary_part, read_dataset,
                                   read_header, read_part_columns)
from dlinear.data.libsvm_reader import read_libsvm, write_libsvm
from dlinear.errors import DlinearError
from tests.support.cli import run_in_process
from tests.support.problems import assert_same_problem, concatenate, same_bits


def run(*args):
    return subprocess.run([sys.executable, "-m", "dlinear", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def text_file(tmp_path_factory, multiclass_split):
    path = tmp_path_factory.mktemp("binary") / "data.train"
    write_libsvm(path, multiclass_split[0])
    return path


@pytest.fixture(scope="module")
def dataset(text_file):
    """The text file converted in parts of about 20 kB of text (several parts)."""
    target = text_file.parent / "data.ds"
    convert_libsvm(text_file, target, part_text_bytes=20_000)
    return target


def test_round_trip_is_the_text_reader_bit_for_bit(text_file, dataset):
    text = read_libsvm(text_file)
    binary = read_binary(dataset)
    assert_same_problem(binary, text)
    assert binary.sample_weight is None
    h = read_header(dataset)
    assert len(h.parts) > 3
    assert (h.rows, h.nnz, h.n_features) == (text.n_samples, text.nnz, text.n_features)
    assert h.occurring_columns == len(np.unique(text.indices))
    assert h.labels == [int(v) for v in dict.fromkeys(text.y.tolist())]
    # every part is its rows, with the sorted columns that occur in them
    parts = [read_binary_part(dataset, i) for i in range(len(h.parts))]
    assert_same_problem(concatenate(parts), text)
    for i, part in enumerate(parts):
        assert np.array_equal(read_part_columns(h, i), np.unique(part.indices))
        assert h.parts[i].labels == [int(v) for v in dict.fromkeys(part.y.tolist())]


def test_arrays_are_mapped_and_writeable_as_the_text_reader_makes_them(dataset, text_file):
    """Mapped copy-on-write: the Numba types of the text reader's arrays, so no kernel is
    compiled again for read-only arrays."""
    binary, text = read_binary(dataset), read_libsvm(text_file)
    for name in ("indptr", "indices", "data", "y"):
        a, b = getattr(binary, name), getattr(text, name)
        assert isinstance(a, np.memmap)
        assert numba.typeof(a) == numba.typeof(b)


def _specializations():
    import dlinear.kernels as kernels
    count = 0
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith(kernels.__name__ + "."):
            for value in vars(module).values():
                if isinstance(value, numba.core.registry.CPUDispatcher):
                    count += len(value.signatures)
    return count


@pytest.mark.parametrize("params", [Params(solver_type=0, eps=0.01),
                                    Params(solver_type=1, bias=1)])
def test_training_from_it_is_training_from_text_with_no_new_compile(params, dataset,
                                                                    text_file):
    expected = train(read_libsvm(text_file), params, n_threads=1)
    before = _specializations()
    model = train(read_binary(dataset), params, n_threads=1)
    assert _specializations() == before
    assert same_bits(model.w, expected.w)


def test_weights_are_stored_and_trained_with(text_file, tmp_path, multiclass_split):
    n = multiclass_split[0].n_samples
    weights = np.random.default_rng(0).uniform(0.5, 2.0, n)
    convert_libsvm(text_file, tmp_path / "w.ds", weights=weights, part_text_bytes=30_000)
    problem = read_binary(tmp_path / "w.ds")
    assert same_bits(problem.sample_weight, weights)
    assert same_bits(read_binary_part(tmp_path / "w.ds", 1).sample_weight,
                     weights[read_header(tmp_path / "w.ds").parts[1].rows[0]:][
                         :read_binary_part(tmp_path / "w.ds", 1).n_samples])
    text = read_libsvm(text_file)
    text.sample_weight = weights
    params = Params(solver_type=0)
    assert same_bits(train(problem, params, n_threads=1).w, train(text, params, n_threads=1).w)
    with pytest.raises(DlinearError, match="but 3 weights"):
        convert_libsvm(text_file, tmp_path / "bad.ds", weights=weights[:3])
    assert not os.path.exists(tmp_path / "bad.ds")


def test_real_labels_and_reading_either_format(tmp_path):
    path = tmp_path / "r.train"
    path.write_text("0.5 1:1 3:2\n-1.25 2:0.5\n")
    convert_libsvm(path, tmp_path / "r.ds")
    h = read_header(tmp_path / "r.ds")
    assert h.label_type == "real" and h.labels is None and h.parts[0].labels is None
    assert is_binary_dataset(tmp_path / "r.ds") and not is_binary_dataset(path)
    assert_same_problem(read_dataset(tmp_path / "r.ds"), read_dataset(path))
    with pytest.raises(DlinearError, match="larger than n_features=2"):
        read_binary(tmp_path / "r.ds", n_features=2)
    assert read_binary(tmp_path / "r.ds", n_features=9).n_features == 9


def test_an_fsspec_url_is_read_by_byte_ranges(dataset):
    """memory:// stands in for an object store: the reads go through fsspec, by range."""
    fsspec = pytest.importorskip("fsspec")
    fs = fsspec.filesystem("memory")
    for name in os.listdir(dataset):
        fs.pipe(f"/bf/{name}", (dataset / name).read_bytes())
    url = "memory://bf"
    assert is_binary_dataset(url)
    assert_same_problem(read_binary(url), read_binary(dataset))
    h = read_header(url)
    for i in (0, len(h.parts) - 1):
        assert_same_problem(read_binary_part(url, i), read_binary_part(dataset, i))


def test_convert_replaces_a_dataset_but_nothing_else(text_file, tmp_path):
    target = tmp_path / "x.ds"
    convert_libsvm(text_file, target)
    convert_libsvm(text_file, target)            # a dataset is replaced whole
    assert_same_problem(read_binary(target), read_libsvm(text_file))
    other = tmp_path / "keep"
    other.mkdir()
    with pytest.raises(DlinearError, match="exists and is not a dlinear binary dataset"):
        convert_libsvm(text_file, other)
    assert sorted(os.listdir(tmp_path)) == ["keep", "x.ds"]   # no temporary left behind


def _copy(dataset, tmp_path):
    import shutil
    target = tmp_path / "c.ds"
    shutil.copytree(dataset, target)
    return target


def _truncate(path):
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) - 8)


def _garble_header(path):
    path.write_text("{not json")


def _drop_a_part(path):
    h = json.loads(path.read_text())
    h["parts"].pop(1)
    path.write_text(json.dumps(h))


def _column_out_of_range(path):
    a = np.load(path, mmap_mode="r+")
    a[5] = 1 << 30
    a.flush()


def _rows_out_of_order(path):
    a = np.load(path, mmap_mode="r+")
    a[3] = a[2] - 1
    a.flush()


def _wrong_dtype(path):
    np.save(path, np.load(path).astype(np.int64))


@pytest.mark.parametrize("file, damage, message", [
    ("indices.npy", _truncate, "indices.npy: truncated"),
    ("data.npy", _truncate, "data.npy: truncated"),
    (HEADER_NAME, _garble_header, f"{HEADER_NAME}: corrupt header"),
    (HEADER_NAME, _drop_a_part, f"{HEADER_NAME}: corrupt header: part 1"),
    ("indices.npy", _column_out_of_range, "indices.npy: corrupt: a column outside"),
    ("indptr.npy", _rows_out_of_order, "indptr.npy: corrupt: row pointers out of order"),
    ("indices.npy", _wrong_dtype, "indices.npy: holds .* of int64, the header says"),
    ("y.npy", os.remove, "can't open input file .*y.npy"),
])
def test_a_damaged_dataset_is_a_one_line_error_naming_the_file(dataset, tmp_path, file,
                                                               damage, message):
    target = _copy(dataset, tmp_path)
    damage(target / file)
    with pytest.raises(DlinearError, match=message):
        read_binary(target)
    r = run("train", "-q", "--workers", "0", target, tmp_path / "m")
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.startswith("ERROR: ") and r.stderr.count("\n") == 1, r.stderr
    assert file in r.stderr
    assert not os.path.exists(tmp_path / "m")


def test_cli_convert_train_predict(text_file, tmp_path, multiclass_split, capsys):
    # the commands in this process (what they write is the check); the usage error below
    # stays a process of its own
    weight_file = tmp_path / "w.txt"
    weights = np.linspace(0.5, 1.5, multiclass_split[0].n_samples)
    weight_file.write_text("".join(f"{v!r}\n" for v in weights.tolist()))
    r = run_in_process(capsys, "convert", "-W", weight_file, text_file, tmp_path / "d.ds")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"{tmp_path / 'd.ds'}: 3000 rows, ")
    for source in (tmp_path / "d.ds", text_file):
        extra = ["-W", weight_file] if source == text_file else []
        r = run_in_process(capsys, "train", "-s", "0", "--workers", "0", *extra, source,
                           tmp_path / "m")
        assert r.returncode == 0, r.stderr
        os.rename(tmp_path / "m", tmp_path / f"m.{source.suffix}")
        r = run_in_process(capsys, "predict", "-b", "1", source, tmp_path / f"m.{source.suffix}",
                           tmp_path / f"p.{source.suffix}")
        assert r.returncode == 0, r.stderr
    assert (tmp_path / "m..ds").read_bytes() == (tmp_path / "m..train").read_bytes()
    assert (tmp_path / "p..ds").read_bytes() == (tmp_path / "p..train").read_bytes()
    r = run("convert", text_file)
    assert r.returncode == 1 and "expected: libsvm_file dataset_directory" in r.stderr
