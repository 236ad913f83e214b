"""The binary dataset format: LIBSVM text parsed once, then read many times without parsing.

A dataset is a directory of NumPy `.npy` arrays and a JSON header (HEADER_NAME):

    indptr.npy   int64, rows + 1   CSR row pointers of all rows
    indices.npy  int32, nnz        0-based column ids, strictly increasing within a row
                                   (uint16 in a float32 dataset of at most 65,536 columns)
    data.npy     float64, nnz      the values (float32: `convert --float32`)
    y.npy        float64, rows     labels or regression targets
    weights.npy  float64, rows     instance weights (only if the header says so)
    columns.npy  int32             each part's sorted occurring columns, part after part

The parts are consecutive row ranges of the one CSR (about PART_TEXT_BYTES of text each),
not separate arrays: in process the whole set is memory-mapped and reaches the kernels
without a copy, and a Dask worker maps (or, at an fsspec URL, reads by byte ranges) only
the rows of its parts. The header holds the format version, the shape (rows, nonzeros,
features, occurring columns), the types of the values and indices, each part's row,
nonzero and column ranges, the label type and the labels in order of first appearance.
The bias of `-B` is never stored. Version 1 (no types: float64 values, int32 indices)
still reads; a reader refuses a version it does not know, and ignores keys it does not
know, so that later versions can add to the header.

Arrays are mapped copy-on-write (`mmap_mode="c"`): writeable arrays, the Numba type the
text reader produces, so no kernel is compiled a second time for read-only arrays (the
kernels never write into their inputs, and a write would stay in this process).
"""
from __future__ import annotations

import itertools
import json
import math
import os
import struct
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from .libsvm_reader import (Problem, line_start_bounds, parse_range, read_libsvm,
                            renumbered_error)
from ..errors import DlinearError
from ..problem import data_dtype, index_dtype
from .fileio import atomic_directory, sync_to_disk
from .input_files import is_url, open_input, read_into
from ..kernels import csr_check as _check
from ..threads import PassPool, available_cores

HEADER_NAME = "dlinear-dataset.json"
FORMAT_NAME = "dlinear binary dataset"
FORMAT_VERSION = 2
READABLE_VERSIONS = (1, 2)
# A part holds about this many bytes of LIBSVM text: the size of the cluster's text blocks
# (cluster.dataset.DEFAULT_BLOCK_BYTES), a few MB of CSR for a worker to map or read.
PART_TEXT_BYTES = 32 << 20
# The integer labels are listed in the header (in order of first appearance) up to this
# many distinct ones (more: integer regression targets, not listed).
MAX_HEADER_LABELS = 4096

ARRAY_DTYPES = {"indptr": np.int64, "indices": np.int32, "data": np.float64,
                "y": np.float64, "weights": np.float64, "columns": np.int32}
# the arrays whose type the header records (version 2), and the types they may have
STORED_DTYPES = {"data": ("float64", "float32"), "indices": ("int32", "uint16")}

# Every .npy file starts with a header of this many bytes (a multiple of 64, as NumPy
# aligns them), written before the length is known and rewritten at the end.
_NPY_HEADER_BYTES = 128


@dataclass(frozen=True)
class Part:
    rows: tuple        # [start, end) in the whole set's rows
    nnz: tuple         # [start, end) in indices / data
    columns: tuple     # [start, end) in columns.npy
    labels: list | None


@dataclass(frozen=True)
class Header:
    path: str
    rows: int
    nnz: int
    n_features: int
    occurring_columns: int
    label_type: str        # "integer" or "real"
    labels: list | None    # first appearance order; None: real, or too many to list
    weights: bool
    parts: tuple
    dtypes: tuple = ()     # (array, dtype name) where not ARRAY_DTYPES' (version 2)

    def file(self, array: str) -> str:
        return _join(self.path, f"{array}.npy")

    def dtype(self, array: str) -> np.dtype:
        return np.dtype(dict(self.dtypes).get(array, ARRAY_DTYPES[array]))


def _join(path: str, name: str) -> str:
    return path.rstrip("/") + "/" + name if is_url(path) else os.path.join(path, name)


def _fs(path: str, storage_options):
    from fsspec.core import url_to_fs
    return url_to_fs(path, **(storage_options or {}))


def is_binary_dataset(path, storage_options: dict | None = None) -> bool:
    """Whether path is a directory holding a binary dataset's header."""
    name = os.fspath(path)
    if not (is_url(name) or storage_options):
        return os.path.isfile(os.path.join(name, HEADER_NAME))
    try:
        fs, fs_path = _fs(name, storage_options)
        return fs.isfile(fs_path.rstrip("/") + "/" + HEADER_NAME)
    except Exception:
        return False


# ----------------------------------------------------------------- header

def read_header(path, storage_options: dict | None = None) -> Header:
    """The header of the dataset directory path; a missing, unreadable or inconsistent
    header is a one-line DlinearError naming the file."""
    name = os.fspath(path)
    header_file = _join(name, HEADER_NAME)
    with open_input(header_file, storage_options) as (f, _):
        raw = f.read()
    try:
        h = json.loads(raw)
        if h.get("format") != FORMAT_NAME:
            raise ValueError("not a dlinear binary dataset header")
        if h.get("version") not in READABLE_VERSIONS:
            raise ValueError(f"format version {h.get('version')}, this dlinear reads "
                             f"versions {', '.join(map(str, READABLE_VERSIONS))}")
        parts = tuple(Part(tuple(p["rows"]), tuple(p["nnz"]), tuple(p["columns"]),
                           p.get("labels")) for p in h["parts"])
        dtypes = h.get("dtypes", {}) if h["version"] >= 2 else {}
        for array, dtype in dtypes.items():
            if dtype not in STORED_DTYPES.get(array, ()):
                raise ValueError(f"{array} of type {dtype!r}")
        header = Header(name, int(h["rows"]), int(h["nnz"]), int(h["n_features"]),
                        int(h["occurring_columns"]), str(h["label_type"]), h.get("labels"),
                        bool(h["weights"]), parts, tuple(sorted(dtypes.items())))
    except (ValueError, KeyError, TypeError) as e:
        raise DlinearError(f"{header_file}: corrupt header: {e}") from None
    _check_parts(header, header_file)
    return header


def _check_parts(h: Header, header_file: str) -> None:
    """The parts tile the rows, nonzeros and column lists in order."""
    ends = {"rows": 0, "nnz": 0, "columns": 0}
    for i, part in enumerate(h.parts):
        for key in ends:
            a, b = getattr(part, key)
            if a != ends[key] or b < a:
                raise DlinearError(f"{header_file}: corrupt header: part {i} {key} "
                                   f"[{a}, {b}) does not follow [.., {ends[key]})")
            ends[key] = b
    if ends["rows"] != h.rows or ends["nnz"] != h.nnz:
        raise DlinearError(f"{header_file}: corrupt header: the parts hold {ends['rows']} "
                           f"rows and {ends['nnz']} nonzeros, the header says {h.rows} and "
                           f"{h.nnz}")
    if h.n_features < 0 or h.label_type not in ("integer", "real"):
        raise DlinearError(f"{header_file}: corrupt header: n_features {h.n_features}, "
                           f"label type {h.label_type!r}")


# ----------------------------------------------------------------- reading

def _npy_layout(f, file_name: str):
    """(dtype, length, offset of the first value) of a 1-D .npy file open at its start."""
    try:
        version = np.lib.format.read_magic(f)
        reader = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                  else np.lib.format.read_array_header_2_0)
        shape, fortran, dtype = reader(f)
    except Exception as e:
        raise DlinearError(f"{file_name}: not a .npy array ({e})") from None
    if len(shape) != 1:
        raise DlinearError(f"{file_name}: not a 1-D array (shape {shape})")
    return dtype, int(shape[0]), f.tell()


def _open_array(h: Header, array: str, storage_options=None):
    """The whole array `array` of the dataset, checked against the header: a
    copy-on-write memory map of a local file, or read into memory from a URL."""
    return read_range(h, array, 0, None, storage_options)


def _expected_length(h: Header, array: str) -> int:
    return {"indptr": h.rows + 1, "indices": h.nnz, "data": h.nnz, "y": h.rows,
            "weights": h.rows, "columns": h.parts[-1].columns[1] if h.parts else 0}[array]


def read_range(h: Header, array: str, start: int, stop, storage_options=None) -> np.ndarray:
    """array[start:stop] of the dataset (stop None: to the end): a writeable view of a
    copy-on-write map for local files, an array read by byte range for URLs."""
    name = h.file(array)
    dtype = h.dtype(array)
    length = _expected_length(h, array)
    stop = length if stop is None else stop
    with open_input(name, storage_options) as (f, size):
        found, n, offset = _npy_layout(f, name)
        if found != dtype or n != length:
            raise DlinearError(f"{name}: holds {n} values of {found}, the header says "
                               f"{length} of {dtype}")
        if size is not None and size < offset + length * dtype.itemsize:
            raise DlinearError(f"{name}: truncated ({size} bytes, {array} needs "
                               f"{offset + length * dtype.itemsize})")
        if not is_url(name) and not storage_options:
            whole = np.memmap(name, dtype=dtype, mode="c", offset=offset, shape=(length,)) \
                if length else np.empty(0, dtype)
            return whole[start:stop]
        out = np.empty(stop - start, dtype=dtype)
        f.seek(offset + start * dtype.itemsize)
        if read_into(f, out.view(np.uint8)) != out.nbytes:
            raise DlinearError(f"{name}: truncated")
        return out


# Rows checked per task when the check of a large set is split over the cores.
_CHECK_ROWS = 1 << 16


def _check_csr(indptr, indices, n_features):
    """check_csr_rows over all rows, split over one thread per core for large sets."""
    n_rows = len(indptr) - 1
    if indptr[0] != 0 or indptr[n_rows] != len(indices):
        return _check.ROW_POINTERS_DECREASE, 0
    bounds = list(range(0, n_rows, _CHECK_ROWS)) + [n_rows]
    tasks = [(indptr, indices, n_features, a, b) for a, b in zip(bounds[:-1], bounds[1:])]
    pool = PassPool(min(available_cores(), len(tasks)), "check")
    try:
        faults = [r for r in pool.run(_check.check_csr_rows, tasks) if r[0] != _check.OK]
    finally:
        pool.close()
    return faults[0] if faults else (_check.OK, -1)


def _checked_problem(h: Header, indptr, indices, data, y, weights, n_features, where):
    """A Problem of arrays read from h, after the check every kernel relies on."""
    code, row = _check_csr(indptr, indices, h.n_features)
    if code != _check.OK:
        what = {_check.ROW_POINTERS_DECREASE: "row pointers out of order",
                _check.INDEX_OUT_OF_RANGE: f"a column outside [0, {h.n_features})",
                _check.INDEX_NOT_INCREASING: "column ids not increasing"}[code]
        raise DlinearError(f"{h.file('indices' if code != 1 else 'indptr')}: corrupt: "
                           f"{what} in row {where + row + 1}")
    if not np.all(np.isfinite(y)):
        raise DlinearError(f"{h.file('y')}: corrupt: a label is NaN or infinity")
    if weights is not None and not (np.all(np.isfinite(weights)) and np.all(weights >= 0)):
        raise DlinearError(f"{h.file('weights')}: corrupt: a weight is negative or not "
                           "finite")
    return Problem(indptr=indptr, indices=indices, data=data, y=y, n_features=n_features,
                   sample_weight=weights)


def _feature_count(h: Header, n_features) -> int:
    if n_features is None:
        return h.n_features
    if int(n_features) < h.n_features:
        raise DlinearError(f"{h.path}: feature index {h.n_features} is larger than "
                           f"n_features={n_features}")
    return int(n_features)


def read_binary(path, n_features: int | None = None,
                storage_options: dict | None = None) -> Problem:
    """The binary dataset at path (a directory from ``python -m dlinear convert``, local or
    an fsspec URL) as a Problem: read_libsvm's counterpart. Local arrays are memory-mapped
    (no copy, no parse); a damaged directory is a one-line DlinearError naming the file."""
    h = read_header(path, storage_options)
    n = _feature_count(h, n_features)
    arrays = {a: _open_array(h, a, storage_options)
              for a in ("indptr", "indices", "data", "y")}
    weights = _open_array(h, "weights", storage_options) if h.weights else None
    return _checked_problem(h, arrays["indptr"], arrays["indices"], arrays["data"],
                            arrays["y"], weights, n, 0)


def read_binary_part(path, index: int, n_features: int | None = None,
                     storage_options: dict | None = None, header: Header | None = None
                     ) -> Problem:
    """Part `index` of the binary dataset at path: its rows, mapped or read by byte
    ranges (a Dask worker reads only its own parts)."""
    h = header or read_header(path, storage_options)
    if not 0 <= index < len(h.parts):
        raise DlinearError(f"{h.path}: no part {index} (the dataset has {len(h.parts)})")
    part = h.parts[index]
    (r0, r1), (z0, z1) = part.rows, part.nnz
    indptr = np.asarray(read_range(h, "indptr", r0, r1 + 1, storage_options)) - z0
    if indptr[0] != 0 or indptr[-1] != z1 - z0:
        raise DlinearError(f"{h.file('indptr')}: corrupt: part {index}'s row pointers do "
                           "not match the header")
    indices = read_range(h, "indices", z0, z1, storage_options)
    data = read_range(h, "data", z0, z1, storage_options)
    y = read_range(h, "y", r0, r1, storage_options)
    weights = read_range(h, "weights", r0, r1, storage_options) if h.weights else None
    return _checked_problem(h, indptr, indices, data, y, weights,
                            _feature_count(h, n_features), r0)


def read_part_columns(h: Header, index: int, storage_options: dict | None = None):
    """The sorted columns that occur in part `index` (int32)."""
    a, b = h.parts[index].columns
    return read_range(h, "columns", a, b, storage_options)


def read_dataset(path, n_features: int | None = None,
                 storage_options: dict | None = None, dtype=np.float64,
                 n_threads: int | None = None) -> Problem:
    """A training or test set from a LIBSVM file (parsed on n_threads threads, default one
    per core) or a binary dataset directory (its values as stored: dtype float32 asks for
    a float32 dataset, from `convert --float32`)."""
    if is_binary_dataset(path, storage_options):
        check_binary_dtype(read_header(path, storage_options), dtype)
        return read_binary(path, n_features, storage_options)
    return read_libsvm(path, n_features, storage_options=storage_options, dtype=dtype,
                       n_threads=n_threads)


def check_binary_dtype(header: Header, dtype) -> None:
    """float32 values (--float32) come from LIBSVM text or a float32 dataset; a dataset
    trains with the values it stores (float32 ones without --float32 too)."""
    if np.dtype(dtype) == np.float32 and header.dtype("data") != np.float32:
        raise DlinearError(f"{header.path}: a binary dataset of float64 values; --float32 "
                           "reads LIBSVM text or a dataset from `convert --float32`")


# ----------------------------------------------------------------- writing

def _npy_header(dtype, length: int) -> bytes:
    text = repr({"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)),
                 "fortran_order": False, "shape": (int(length),)}).encode("latin1")
    pad = _NPY_HEADER_BYTES - 10 - len(text) - 1
    return (b"\x93NUMPY\x01\x00" + struct.pack("<H", _NPY_HEADER_BYTES - 10) + text
            + b" " * pad + b"\n")


# values converted at a time when a file's type widens
_WIDEN_PIECE = 1 << 22


class _NpyAppender:
    """A 1-D .npy file written in pieces; its header gets the length at close."""

    def __init__(self, path: str, dtype):
        self.path, self.dtype, self.length = path, np.dtype(dtype), 0
        self.file = open(path, "wb")
        self.file.write(b"\0" * _NPY_HEADER_BYTES)

    def append(self, values) -> None:
        values = np.ascontiguousarray(values, dtype=self.dtype)
        self.file.write(values.data)
        self.length += len(values)

    def widen(self, dtype) -> None:
        """Store `dtype` from here on, the values written so far converted (a piece at a
        time: memory stays one piece)."""
        self.file.close()
        narrow_path = self.path + ".narrow"
        os.replace(self.path, narrow_path)
        narrow = (np.memmap(narrow_path, dtype=self.dtype, mode="r", offset=_NPY_HEADER_BYTES,
                            shape=(self.length,)) if self.length else np.empty(0, self.dtype))
        self.dtype = np.dtype(dtype)
        self.file = open(self.path, "wb")
        self.file.write(b"\0" * _NPY_HEADER_BYTES)
        for a in range(0, self.length, _WIDEN_PIECE):
            self.file.write(np.ascontiguousarray(narrow[a:a + _WIDEN_PIECE], self.dtype).data)
        del narrow
        os.remove(narrow_path)

    def close(self) -> None:
        self.file.seek(0)
        self.file.write(_npy_header(self.dtype, self.length))
        self.file.flush()
        sync_to_disk(self.file.fileno())
        self.file.close()


def _labels_in_order(y: np.ndarray):
    """y's distinct labels by first appearance (a list of ints), None if one is not an
    integer."""
    with np.errstate(invalid="ignore"):
        as_int = y.astype(np.int64)
    if not np.array_equal(as_int, y):
        return None
    distinct, first = np.unique(as_int, return_index=True)
    return distinct[np.argsort(first, kind="stable")].tolist()


def _sorted_unique(values: np.ndarray) -> np.ndarray:
    """The distinct values, sorted (by a sort: numpy's hashing unique was 100x slower on
    millions of int32 columns)."""
    values = np.sort(values, kind="stable")
    if len(values) < 2:
        return values
    keep = np.empty(len(values), dtype=bool)
    keep[0] = True
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    return values[keep]


def _occurring(part: Problem) -> np.ndarray:
    """The sorted columns of part's nonzeros (int32): by a mark per column where that is
    not much more than the nonzeros, else by sorting."""
    if part.n_features <= 16 * part.nnz:
        seen = np.zeros(part.n_features, dtype=bool)
        seen[part.indices] = True
        return np.flatnonzero(seen).astype(np.int32)
    return _sorted_unique(part.indices.astype(np.int32))


def _check_replaceable(target: str) -> None:
    """A dataset may replace only an older dataset of its name, never other files."""
    if os.path.exists(target) and not is_binary_dataset(target):
        raise DlinearError(f"can't write output directory {target}: it exists and is not a "
                           "dlinear binary dataset")


def convert_libsvm(source, target, weights: np.ndarray | None = None,
                   part_text_bytes: int = PART_TEXT_BYTES,
                   storage_options: dict | None = None, dtype=np.float64,
                   n_threads: int | None = None) -> Header:
    """Parse the LIBSVM file `source` once and write it as a binary dataset directory
    `target` (local), with instance weights if given (one per row). The parts are parsed
    on n_threads threads (default one per core) while this thread writes them in order
    (memory: a few parts besides the output files); the directory appears whole or not at
    all, and replaces an older dataset of that name. dtype float32 stores the values in 4
    bytes and, where the columns fit (dlinear.problem.index_dtype), the column indices in
    2, as read_libsvm(dtype=np.float32) holds them."""
    dtype = data_dtype(dtype)
    name, target = os.fspath(source), os.path.abspath(os.fspath(target))
    _check_replaceable(target)
    size = open_input_size(name, storage_options)
    n_parts = max(1, math.ceil((size or part_text_bytes) / part_text_bytes))
    bounds = line_start_bounds(name, n_parts, storage_options)
    threads = available_cores() if n_threads is None else max(1, int(n_threads))
    with atomic_directory(target) as work:
        _write_parts(name, work, _parsed_parts(name, bounds, storage_options, dtype, threads),
                     weights, dtype)
    return read_header(target)


def write_binary_dataset(target, parts, dtype=np.float64) -> Header:
    """Writes the Problems `parts` (an iterable of consecutive runs of rows, as a
    generator makes them) as the binary dataset directory `target`, holding one part at a
    time: values stored as `dtype` and column indices as the reader holds them for it
    (index_dtype). The directory appears whole or not at all, as convert_libsvm's."""
    dtype = data_dtype(dtype)
    target = os.path.abspath(os.fspath(target))
    _check_replaceable(target)

    def stored():
        for part in parts:
            part = Problem(indptr=part.indptr,
                           indices=part.indices.astype(index_dtype(part.n_features, dtype),
                                                       copy=False),
                           data=part.data.astype(dtype, copy=False), y=part.y,
                           n_features=part.n_features)
            yield part, _occurring(part)

    with atomic_directory(target) as work:
        _write_parts(target, work, stored(), None, dtype)
    return read_header(target)


def open_input_size(name, storage_options):
    with open_input(name, storage_options) as (_, size):
        return size


def _parsed_parts(name, bounds, storage_options, dtype, n_threads):
    """Yields each part of the text in order as (rows, occurring columns): the ranges
    between `bounds` parsed ahead on n_threads threads, at most n_threads + 1 parts held
    at a time; a parse error names its line in the whole file. bounds None (a compressed
    file): the whole file, read as one part."""
    if bounds is None:
        part = read_libsvm(name, allow_empty=True, storage_options=storage_options,
                           dtype=dtype)
        yield part, _occurring(part)
        return

    def parse(start, stop):
        part, lines = parse_range(name, start, stop, storage_options, dtype)
        return part, _occurring(part), lines

    ranges = iter(zip(bounds[:-1], bounds[1:]))
    pending, lines_before = deque(), 0
    with ThreadPoolExecutor(n_threads, thread_name_prefix="dlinear-convert") as pool:
        try:
            for start, stop in itertools.islice(ranges, n_threads + 1):
                pending.append(pool.submit(parse, start, stop))
            while pending:
                try:
                    part, columns, lines = pending.popleft().result()
                except DlinearError as e:
                    raise renumbered_error(e, lines_before) from None
                lines_before += lines
                for start, stop in itertools.islice(ranges, 1):
                    pending.append(pool.submit(parse, start, stop))
                yield part, columns
        finally:
            for future in pending:
                future.cancel()


def _write_parts(name, work, parsed, weights, dtype) -> dict:
    arrays = ["indptr", "indices", "data", "y", "columns"] + (["weights"]
                                                                if weights is not None else [])
    # float32: uint16 indices until a part holds a wider column (index_dtype's rule)
    stored = {"data": dtype, "indices": index_dtype(0, dtype)}
    out = {a: _NpyAppender(os.path.join(work, f"{a}.npy"), stored.get(a, ARRAY_DTYPES[a]))
           for a in arrays}
    out["indptr"].append(np.zeros(1, dtype=np.int64))
    parts, n_features, occurring = [], 0, np.empty(0, dtype=np.int32)
    label_order, labels_seen, integer = [], set(), True
    rows = nnz = n_columns = 0
    for part, columns in parsed:
        if part.n_samples == 0:
            continue
        if part.indices.itemsize > out["indices"].dtype.itemsize:
            out["indices"].widen(part.indices.dtype)
        occurring = _sorted_unique(np.concatenate([occurring, columns]))
        labels = _labels_in_order(part.y) if integer else None
        integer = labels is not None
        for v in labels or []:
            if v not in labels_seen:
                labels_seen.add(v)
                label_order.append(v)
        out["indptr"].append(part.indptr[1:] + nnz)
        for a, values in (("indices", part.indices), ("data", part.data), ("y", part.y),
                          ("columns", columns)):
            out[a].append(values)
        if weights is not None:
            piece = weights[rows:rows + part.n_samples]
            out["weights"].append(piece)
        parts.append({"rows": [rows, rows + part.n_samples], "nnz": [nnz, nnz + part.nnz],
                      "columns": [n_columns, n_columns + len(columns)],
                      "labels": labels})
        rows, nnz, n_columns = rows + part.n_samples, nnz + part.nnz, n_columns + len(columns)
        n_features = max(n_features, part.n_features)
    if rows == 0:
        raise DlinearError(f"{name}: line 1: file has no data")
    if weights is not None and len(weights) != rows:
        raise DlinearError(f"{name} has {rows} instances but {len(weights)} weights")
    for appender in out.values():
        appender.close()
    listed = integer and len(label_order) <= MAX_HEADER_LABELS
    if not listed:
        for p in parts:
            p["labels"] = None
    header = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "rows": rows, "nnz": nnz,
              "n_features": n_features, "occurring_columns": int(len(occurring)),
              "label_type": "integer" if integer else "real",
              "labels": label_order if listed else None,
              "weights": weights is not None, "bias_free": True,
              "dtypes": {a: out[a].dtype.name for a in STORED_DTYPES}, "parts": parts}
    with open(os.path.join(work, HEADER_NAME), "w") as f:    # last: its presence marks a
        json.dump(header, f, indent=1)                       # complete directory
        f.write("\n")
        f.flush()
        sync_to_disk(f.fileno())
    return header
