"""`python -m dlinear convert`: its parts parsed on threads, errors numbered in the file;
--float32: 4-byte values and, where the columns fit, 2-byte
indices, read back by read_binary and the part reader as read_libsvm(dtype=float32) reads
the text; version-1 datasets (no types in the header) still read."""
import json

import numpy as np
import pytest

from dlinear import Params, train
from dlinear.data.binary_format import (HEADER_NAME, convert_libsvm, read_binary,
                                        read_binary_part, read_dataset, read_header)
from dlinear.data.libsvm_reader import read_libsvm, write_libsvm
from dlinear.errors import DlinearError
from dlinear.problem import NARROW_INDEX_COLUMNS
from tests.support.cli import run_in_process
from tests.support.problems import assert_same_problem, concatenate, same_bits


@pytest.fixture(scope="module")
def text_file(tmp_path_factory, multiclass_split):
    path = tmp_path_factory.mktemp("binary32") / "data.train"
    write_libsvm(path, multiclass_split[0])
    return path


def _check_read_back(text_file, target, index_type):
    text = read_libsvm(text_file, dtype=np.float32)
    assert text.indices.dtype == index_type
    binary = read_binary(target)
    assert (binary.data.dtype, binary.indices.dtype) == (np.float32, index_type)
    assert_same_problem(binary, text)
    h = read_header(target)
    assert (h.dtype("data"), h.dtype("indices")) == (np.float32, index_type)
    parts = [read_binary_part(target, i) for i in range(len(h.parts))]
    assert all(p.data.dtype == np.float32 and p.indices.dtype == index_type for p in parts)
    assert_same_problem(concatenate(parts), text)
    assert_same_problem(read_dataset(target, dtype=np.float32), text)


def test_narrow_columns_get_uint16_indices(text_file, tmp_path):
    target = tmp_path / "d32.ds"
    convert_libsvm(text_file, target, part_text_bytes=20_000, dtype=np.float32)
    assert len(read_header(target).parts) > 3
    _check_read_back(text_file, target, np.uint16)
    # 6 bytes a nonzero on disk instead of 12
    assert (target / "data.npy").stat().st_size < 0.55 * 8 * read_header(target).nnz
    assert (target / "indices.npy").stat().st_size < 0.55 * 4 * read_header(target).nnz


def test_a_wide_column_after_narrow_parts_widens_the_indices(tmp_path):
    """The first parts fit uint16; a later row's column beyond 65,536 widens what was
    written to int32, as the text reader widens its indices."""
    lines = [f"{1 + i % 2} {1 + i % 7}:0.5 {100 + i}:0.25" for i in range(3000)]
    lines.append(f"1 3:1.5 {NARROW_INDEX_COLUMNS + 5}:2")
    lines += [f"2 {2 + i % 9}:0.125" for i in range(200)]
    text_file = tmp_path / "wide.train"
    text_file.write_text("\n".join(lines) + "\n")
    target = tmp_path / "wide.ds"
    convert_libsvm(text_file, target, part_text_bytes=8_000, dtype=np.float32)
    assert len(read_header(target).parts) > 3
    _check_read_back(text_file, target, np.int32)


@pytest.mark.parametrize("solver", [1, 2, 0])
def test_models_from_it_are_those_of_the_text_with_float32(text_file, tmp_path, capsys,
                                                           solver):
    # the commands in this process: what they write is the check, not the process
    r = run_in_process(capsys, "convert", "--float32", text_file, tmp_path / "d.ds")
    assert r.returncode == 0, r.stderr
    assert "float32 values, uint16 indices" in r.stdout
    for source, extra in ((text_file, ["--float32"]), (tmp_path / "d.ds", []),
                          (tmp_path / "d.ds", ["--float32"])):
        model = tmp_path / f"m{len(extra)}{source.suffix}"
        r = run_in_process(capsys, "train", "-q", "-s", solver, "--workers", "0", *extra,
                           source, model)
        assert r.returncode == 0, r.stderr
    text_model = (tmp_path / "m1.train").read_bytes()
    assert (tmp_path / "m0.ds").read_bytes() == text_model
    assert (tmp_path / "m1.ds").read_bytes() == text_model
    # and in Python
    params = Params(solver_type=solver)
    assert same_bits(train(read_binary(tmp_path / "d.ds"), params).w,
                     train(read_libsvm(text_file, dtype=np.float32), params).w)


def test_float64_datasets_refuse_float32_and_version_1_still_reads(text_file, tmp_path):
    target = tmp_path / "d64.ds"
    convert_libsvm(text_file, target)
    h = json.loads((target / HEADER_NAME).read_text())
    assert h["version"] == 2 and h["dtypes"] == {"data": "float64", "indices": "int32"}
    with pytest.raises(DlinearError, match="a binary dataset of float64 values; --float32"):
        read_dataset(target, dtype=np.float32)
    # a dataset written before the header had types
    del h["dtypes"]
    h["version"] = 1
    (target / HEADER_NAME).write_text(json.dumps(h))
    assert_same_problem(read_binary(target), read_libsvm(text_file))
    # a type this version does not store, and a version it does not know
    h["version"], h["dtypes"] = 2, {"data": "float16"}
    (target / HEADER_NAME).write_text(json.dumps(h))
    with pytest.raises(DlinearError, match=r"corrupt header: data of type 'float16'"):
        read_binary(target)
    h["version"] = 99
    (target / HEADER_NAME).write_text(json.dumps(h))
    with pytest.raises(DlinearError, match="format version 99, this dlinear reads versions"):
        read_binary(target)


def _dataset_bytes(path):
    return {f.name: f.read_bytes() for f in sorted(path.iterdir())}


def test_parts_parsed_on_threads_write_the_same_dataset(text_file, tmp_path):
    """Parsed ahead on threads, written in order: the bytes of a one-thread conversion;
    a gzip file (no byte ranges, one part) holds the same rows."""
    import gzip
    convert_libsvm(text_file, tmp_path / "one.ds", part_text_bytes=20_000, n_threads=1)
    convert_libsvm(text_file, tmp_path / "three.ds", part_text_bytes=20_000, n_threads=3)
    assert _dataset_bytes(tmp_path / "one.ds") == _dataset_bytes(tmp_path / "three.ds")
    zipped = tmp_path / "data.train.gz"
    zipped.write_bytes(gzip.compress(text_file.read_bytes()))
    convert_libsvm(zipped, tmp_path / "gz.ds", part_text_bytes=20_000)
    assert len(read_header(tmp_path / "gz.ds").parts) == 1
    assert_same_problem(read_binary(tmp_path / "gz.ds"), read_binary(tmp_path / "one.ds"))


@pytest.mark.parametrize("n_threads", [1, 2])
def test_a_parse_error_in_a_later_part_names_its_line_in_the_file(tmp_path, n_threads):
    lines = [f"{1 + i % 2} {1 + i % 7}:0.5 {100 + i}:0.25" for i in range(3000)]
    lines[2500] = "1 3:x"
    text_file = tmp_path / "bad.train"
    text_file.write_text("\n".join(lines) + "\n")
    with pytest.raises(DlinearError, match=rf"^{text_file}: line 2501: "):
        convert_libsvm(text_file, tmp_path / "bad.ds", part_text_bytes=8_000,
                       n_threads=n_threads)
    assert not (tmp_path / "bad.ds").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["bad.train"]
