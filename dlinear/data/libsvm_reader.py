"""LIBSVM text I/O into and out of a Problem (dlinear.problem, re-exported here)."""
from __future__ import annotations

import os

import numpy as np

from ..errors import DlinearError
from ..kernels import libsvm as _libsvm
from .libsvm_writer import write_libsvm  # noqa: F401  (imported from here too)
from ..problem import Problem, arrays_nbytes, data_dtype  # noqa: F401  (imported from here too)
from ..problem import NARROW_INDEX_COLUMNS, index_dtype
from .input_files import READ_CHUNK_BYTES, open_input, read_into
from ..threads import PassPool


# ------------------------------------------------------------------ LIBSVM text I/O
#
# The byte-level work is in dlinear.kernels.libsvm (Numba); these functions open files,
# resolve the rare tokens the kernel leaves to Python's float(), and word the errors as
# "{file}: line {N}: {problem}".

MAX_FEATURE_INDEX = 2**31 - 2  # 1-based; 0-based indices must fit int32 with room for the bias


def _readonly_bytes(buf) -> np.ndarray:
    """A read-only uint8 view (one Numba specialization for files, mmaps and bytes)."""
    if isinstance(buf, np.ndarray):
        if buf.dtype != np.uint8 or buf.ndim != 1:
            raise DlinearError("the buffer to parse must be a 1-D uint8 array")
        view = np.ascontiguousarray(buf).view()
    else:
        view = np.frombuffer(buf, dtype=np.uint8).view()
    view.flags.writeable = False
    return view


def _token_text(buf: np.ndarray, start: int, end: int) -> str:
    text = bytes(buf[start:end]).decode("utf-8", "backslashreplace")
    return text if len(text) <= 40 else text[:40] + "..."


def _describe_parse_error(code: int, token: str, aux: int, n_features: int | None) -> str:
    k = _libsvm
    if code == k.ERR_LABEL_NOT_NUMBER:
        return f"label {token!r} is not a number"
    if code == k.ERR_VALUE_NOT_NUMBER:
        return f"value {token!r} of feature {aux} is not a number"
    if code == k.ERR_LABEL_NOT_FINITE:
        return f"label {token!r} is NaN or infinity"
    if code == k.ERR_VALUE_NOT_FINITE:
        return f"value {token!r} of feature {aux} is NaN or infinity"
    if code == k.ERR_INDEX_BELOW_ONE:
        return f"feature index {token} is less than 1 (indices are 1-based)"
    if code == k.ERR_INDEX_NOT_INTEGER:
        return f"feature index {token!r} is not an integer"
    if code == k.ERR_INDEX_NOT_INCREASING:
        return f"feature index {int(token)} is not larger than the previous index {aux}"
    if code == k.ERR_MISSING_COLON:
        return f"feature {token!r} has no ':' (expected index:value)"
    if code == k.ERR_INDEX_TOO_LARGE:
        if n_features is not None and n_features < MAX_FEATURE_INDEX:
            return f"feature index {token} is larger than n_features={n_features}"
        return f"feature index {token} is larger than {MAX_FEATURE_INDEX}"
    if code == k.ERR_QID_MISPLACED:
        return f"{token!r}: qid must come right after the label"
    if code == k.ERR_QID_NOT_INTEGER:
        return f"{token!r} is not an integer qid"
    return f"parse error {code}"  # unreachable unless the kernel gains a code


class _LineError(DlinearError):
    """A parse error at `line` of a file or of a part of one (renumbered by the caller)."""

    def __init__(self, name, line, problem):
        super().__init__(f"{name}: line {line}: {problem}")
        self.name, self.line, self.problem = name, line, problem

    def __reduce__(self):       # travels (e.g. from a Dask worker) as a plain DlinearError
        return DlinearError, (str(self),)


def _resolve_slow_tokens(buf, slow, indices, data, y, name, first_line):
    """Convert the tokens outside the exact fast path with Python's float() (correctly
    rounded) and store them; a token that overflows to infinity is an error."""
    starts = np.ascontiguousarray(slow[:, _libsvm.SLOW_START])
    ends = np.ascontiguousarray(slow[:, _libsvm.SLOW_END])
    targets = slow[:, _libsvm.SLOW_TARGET]
    text = _libsvm.gather_tokens(buf, starts, ends).tobytes()
    values = np.fromiter(map(float, text.split()), dtype=np.float64, count=len(slow))
    finite = np.isfinite(values)
    if data.dtype != np.float64:    # a value beyond float32's range is infinite there
        with np.errstate(over="ignore"):
            finite &= (targets < 0) | np.isfinite(values.astype(data.dtype))
    not_finite = np.flatnonzero(~finite)
    if not_finite.size:
        i = not_finite[0]
        token = _token_text(buf, starts[i], ends[i])
        line = first_line + int(slow[i, _libsvm.SLOW_LINE])
        if targets[i] < 0:
            problem = f"label {token!r} is NaN or infinity"
        else:
            problem = f"value {token!r} of feature {int(indices[targets[i]]) + 1} is NaN or infinity"
        raise _LineError(name, line, problem)
    is_label = targets < 0
    y[-1 - targets[is_label]] = values[is_label]
    data[targets[~is_label]] = values[~is_label]


def parse_libsvm_bytes(buf, name: str, first_line: int = 1, *, n_features: int | None = None,
                       allow_empty: bool = False) -> Problem:
    """Parse LIBSVM text held in memory (a uint8 array, or bytes) into a Problem.

    The buffer must hold whole lines (e.g. a byte range from line_aligned_ranges);
    `name` and `first_line` (the 1-based line number of its first line in the file) make
    the error messages. n_features=None means the largest index seen; a given
    n_features must be at least that. With allow_empty, a buffer without data lines
    gives a Problem with no rows instead of an error (for blocks of a larger file).
    """
    buf = _readonly_bytes(buf)
    if n_features is not None and int(n_features) < 0:
        raise DlinearError(f"{name}: n_features must not be negative, got {n_features}")
    max_index = MAX_FEATURE_INDEX if n_features is None else min(int(n_features), MAX_FEATURE_INDEX)
    parser = _ChunkedParser(name, first_line, max_index, len(buf), len(buf))
    parser.parse(buf)
    if parser.n_rows == 0 and not allow_empty:
        raise DlinearError(f"{name}: line {first_line}: file has no data")
    return parser.result(n_features)


# When the arrays sized from the first chunk are too small, they grow by at least this
# fraction (in place where the allocator can: numpy's resize reallocates).
_GROWTH = 0.125

# An input of up to this many bytes counts its newlines and colons with NumPy (about 8 ms
# for 16 MB) instead of the kernel (5x faster, but 0.1 s to compile on a first run).
_NUMPY_COUNT_BYTES = 16 << 20


def read_libsvm(path, n_features: int | None = None, start: int = 0, end: int | None = None,
                first_line: int = 1, *, allow_empty: bool = False,
                chunk_bytes: int = READ_CHUNK_BYTES, storage_options: dict | None = None,
                dtype=np.float64, n_threads: int | None = None) -> Problem:
    """Read a LIBSVM/svmlight file, or its byte range [start, end), into a Problem.

    The text is read and parsed ``chunk_bytes`` at a time into arrays that grow as
    needed, so memory beyond the result stays about one chunk (a thread). A large file
    (or range) is split at line starts into parts parsed on ``n_threads`` threads and
    joined in order: the same arrays, bit for bit.

    Parameters
    ----------
    path : str or os.PathLike
        A local path or an fsspec URL (``s3://``, ``gs://``, ``hdfs://``, ``http(s)://``).
        Files ending in ``.gz``, ``.bz2``, ``.xz`` (``.zst`` with zstandard installed)
        are decompressed while reading, and only as a whole (no byte range).
    n_features : int, optional
        The number of columns; an index above it is an error. Default: the largest
        index in the file.
    start, end : int, optional
        The byte range to read; it must start at a line start and end at a line end or
        at the end of the file. Default: the whole file.
    first_line : int, default 1
        The 1-based line number of the range's first line, for error messages.
    allow_empty : bool, default False
        Return an empty Problem for a file (or range) without rows instead of raising.
    chunk_bytes : int, optional
        How much text is parsed at a time (4 MB).
    storage_options : dict, optional
        Options for fsspec's filesystem (credentials, ``endpoint_url``, ...).
    dtype : {numpy.float64, numpy.float32}, default numpy.float64
        The type of the stored values. float32 values are parsed straight into a float32
        array (no float64 copy at any time); labels stay float64. With float32 values in
        at most 65,536 columns the column indices are stored as uint16 (6 bytes a nonzero
        instead of 8; :func:`dlinear.problem.index_dtype`).
    n_threads : int, optional
        Threads to parse with (default: one per core). A compressed file is read on one.

    Returns
    -------
    Problem

    Raises
    ------
    DlinearError
        For a file that cannot be read or parsed; the message names the file and line.
    """
    name = os.fspath(path)
    dtype = data_dtype(dtype)
    if n_features is not None and int(n_features) < 0:
        raise DlinearError(f"{name}: n_features must not be negative, got {n_features}")
    max_index = MAX_FEATURE_INDEX if n_features is None else min(int(n_features), MAX_FEATURE_INDEX)
    with open_input(name, storage_options) as (f, size):
        if size is None:          # compressed: no random access
            if start != 0 or end is not None:
                raise DlinearError(f"{name}: a compressed file can only be read whole, "
                                   "not by byte range")
            remaining = None
        else:
            stop = size if end is None else end
            if not 0 <= start <= stop <= size:
                raise DlinearError(f"{name}: byte range [{start}, {stop}) is not inside the "
                                   f"file of {size} bytes")
            remaining = stop - start
            # The byte before the range must end a line, and the range's last byte too.
            if start > 0:
                f.seek(start - 1)
                if f.read(1) != b"\n":
                    raise DlinearError(f"{name}: byte range [{start}, {stop}) does not start "
                                       "at a line start")
            if stop < size and stop > start:
                f.seek(stop - 1)
                if f.read(1) != b"\n":
                    raise DlinearError(f"{name}: byte range [{start}, {stop}) does not end "
                                       "at a line end")
            f.seek(start)
        threads = (os.cpu_count() or 1) if n_threads is None else max(int(n_threads), 1)
        n_parts = read_parts(remaining, threads)
        if n_parts > 1:
            parsers = _parse_parts(name, storage_options, f, start, stop, n_parts, first_line,
                                   (max_index, int(chunk_bytes), dtype), threads)
        else:
            parsers = [_ChunkedParser(name, first_line, max_index, remaining
                                      if remaining is not None else 4 * _size_hint(f),
                                      int(chunk_bytes), dtype)]
            parsers[0].run(f, remaining)
    problem = _joined(parsers).result(n_features)
    if problem.n_samples == 0 and not allow_empty:
        raise DlinearError(f"{name}: line {first_line}: file has no data")
    return problem


# A file (or range) is parsed in parts of at least this many bytes, up to this many parts
# a thread (so the threads finish together, and joining the parts holds one part beyond
# the result).
_MIN_PART_BYTES = 16 << 20
_PARTS_PER_THREAD = 4


def read_parts(n_bytes: int | None, threads: int) -> int:
    """How many parts read_libsvm parses n_bytes of plain text in, on `threads` threads
    (None: a compressed input's unknown size, read in one)."""
    if n_bytes is None or threads <= 1:
        return 1
    return int(min(threads * _PARTS_PER_THREAD, max(n_bytes // _MIN_PART_BYTES, 1)))


def _split_targets(start: int, stop: int, n_parts: int) -> list:
    """Where the n_parts byte ranges of [start, stop) should begin (after the first):
    each range begins at the first line start after target - 1 (line_aligned_ranges and
    the threaded reader cut alike)."""
    return (start + np.arange(1, int(n_parts), dtype=np.int64) * (stop - start)
            // int(n_parts)).tolist()


def _line_start_after(f, target: int, stop: int) -> int:
    """The first line start at or after target (the byte after the first newline at or
    after target - 1), or stop if there is none before it."""
    pos = target - 1
    f.seek(pos)
    while pos < stop:
        raw = f.read(min(1 << 16, stop - pos))
        if not raw:
            break
        i = raw.find(b"\n")
        if i >= 0:
            return pos + i + 1
        pos += len(raw)
    return stop


def _parse_parts(name, storage_options, f, start, stop, n_parts, first_line, how, n_threads):
    """Parse [start, stop) in n_parts line-aligned parts on n_threads threads: their
    parsers in file order. An error names its line in the file (the first in file order)."""
    try:
        cuts = [_line_start_after(f, t, stop) for t in _split_targets(start, stop, n_parts)]
    except OSError as e:
        raise DlinearError(f"{name}: read error: {e}") from None
    bounds = sorted(set([start, stop] + cuts))

    def parse(part_start, part_stop):
        parser = _ChunkedParser(name, 1, how[0], part_stop - part_start, how[1], how[2])
        with open_input(name, storage_options) as (part_file, _):
            part_file.seek(part_start)
            try:
                parser.run(part_file, part_stop - part_start)
            except _LineError as e:     # numbered from the part's start: renumbered below
                return parser, e
        return parser, None

    pool = PassPool(n_threads, "read")
    try:
        results = pool.run(parse, zip(bounds[:-1], bounds[1:]))
    finally:
        pool.close()
    line = first_line               # the file's line number of the current part's first line
    for parser, error in results:
        if error is not None:
            raise _LineError(name, line - 1 + error.line, error.problem) from None
        line += parser.line - 1
    return [parser for parser, _ in results]


# A part's values and indices are joined this many bytes at a time (_move_into)
_JOIN_PIECE_BYTES = 8 << 20


def _move_into(target, source, n):
    """target[:n] = source[:n], a piece at a time from the end, `source` shrunk after each
    (in place: realloc gives the pages back), so the copy holds one piece beyond target,
    not a part's array (a float64 part's values are tens of MB)."""
    step = max(_JOIN_PIECE_BYTES // source.itemsize, 1)
    while n > 0:
        lo = max(n - step, 0)
        target[lo:n] = source[lo:n]
        n = lo
        source.resize(n, refcheck=False)


def _joined(parsers):
    """The parsers' rows in order, in new arrays filled part by part, each part's arrays
    given back as they are copied (numpy's resize would write zeros over all of the
    grown arrays)."""
    head = parsers[0]
    if head.indptr is None:
        head._ensure_room(0, 0, 1)
    if len(parsers) == 1:
        return head
    parts = [p for p in parsers if p.indptr is not None]
    n_rows = sum(p.n_rows for p in parts)
    nnz = sum(int(p.indptr[p.n_rows]) for p in parts)
    indptr = np.empty(n_rows + 1, dtype=np.int64)
    indptr[0] = 0
    y = np.empty(n_rows, dtype=np.float64)
    indices = np.empty(nnz, dtype=np.result_type(*(p.indices.dtype for p in parts)))
    data = np.empty(nnz, dtype=head.data.dtype)
    row = k = 0
    for p in parts:
        rows, part_nnz = p.n_rows, int(p.indptr[p.n_rows])
        np.add(p.indptr[1:rows + 1], k, out=indptr[row + 1:row + rows + 1])
        y[row:row + rows] = p.y[:rows]
        p.indptr = p.y = None
        _move_into(indices[k:k + part_nnz], p.indices, part_nnz)
        _move_into(data[k:k + part_nnz], p.data, part_nnz)
        p.indices = p.data = None
        row, k = row + rows, k + part_nnz
        head.largest_index = max(head.largest_index, p.largest_index)
    head.indptr, head.y, head.indices, head.data, head.n_rows = indptr, y, indices, data, row
    return head


def _size_hint(f) -> int:
    """Compressed input: the compressed size, to size the arrays from (they grow anyway)."""
    raw = getattr(f, "fileobj", None) or getattr(f, "_fp", None)
    return int(getattr(raw, "size", 0) or 0) or READ_CHUNK_BYTES


class _ChunkedParser:
    """Parses text a chunk at a time into CSR arrays that grow as needed. float32 values
    get uint16 indices (index_dtype) until an index beyond NARROW_INDEX_COLUMNS: the
    indices read so far are then widened to int32, once, and the chunk parsed again."""

    def __init__(self, name, first_line, max_index, expected_bytes, chunk_bytes,
                 dtype=np.float64):
        self.name = name
        self.dtype = dtype
        self.line = first_line          # 1-based file line of the next chunk's first line
        self.max_index = max_index
        # no n_features (max_index = MAX_FEATURE_INDEX): narrow until an index says otherwise
        self.index_type = index_dtype(NARROW_INDEX_COLUMNS if max_index >= MAX_FEATURE_INDEX
                                      else max_index, dtype)
        self.expected_bytes = max(int(expected_bytes), 1)
        self.chunk_bytes = max(chunk_bytes, 1)
        self.n_rows = 0
        self.largest_index = 0
        self.indptr = self.y = self.indices = self.data = None
        self.slow = np.empty((64, 4), dtype=np.int64)
        self.general = False        # whether some text needed the general kernel

    def run(self, f, remaining):
        buf = np.empty(self.chunk_bytes, dtype=np.uint8)
        carry = 0               # bytes of a line not yet complete, at the start of buf
        while True:
            want = len(buf) - carry if remaining is None else min(len(buf) - carry, remaining)
            try:
                got = read_into(f, buf[carry:carry + want])
            except OSError as e:
                raise DlinearError(f"{self.name}: read error: {e}") from None
            if remaining is not None:
                if got != want:
                    raise DlinearError(f"{self.name}: file changed while reading")
                remaining -= got
                at_end = remaining == 0
            else:
                at_end = got < want
            filled = carry + got
            cut = filled if at_end else _libsvm.end_of_last_line(buf, filled)
            if cut == 0 and not at_end:    # a line longer than the buffer: read more of it
                buf = np.concatenate([buf, np.empty(len(buf), dtype=np.uint8)])
                carry = filled
                continue
            self.parse(_readonly_bytes(buf[:cut]))
            if at_end:
                return
            carry = filled - cut
            buf[:carry] = buf[cut:filled]

    def _ensure_room(self, rows, nnz, text_bytes):
        """Room for rows more rows and nnz more nonzeros; the first chunk sizes the arrays
        for the whole input by its density (never-touched room costs no memory)."""
        if self.indptr is None:
            scale = max(self.expected_bytes / max(text_bytes, 1), 1.0)
            row_cap = int(rows * scale * 1.05) + 16
            nnz_cap = int(nnz * scale * 1.05) + 16
            self.indptr = np.empty(row_cap + 1, dtype=np.int64)
            self.indptr[0] = 0
            self.y = np.empty(row_cap, dtype=np.float64)
            self.indices = np.empty(nnz_cap, dtype=self.index_type)
            self.data = np.empty(nnz_cap, dtype=self.dtype)
            return
        need_rows = self.n_rows + rows
        if need_rows > len(self.y):
            cap = max(need_rows, int(len(self.y) * (1 + _GROWTH)))
            self.y.resize(cap, refcheck=False)
            self.indptr.resize(cap + 1, refcheck=False)
        need_nnz = int(self.indptr[self.n_rows]) + nnz
        if need_nnz > len(self.data):
            cap = max(need_nnz, int(len(self.data) * (1 + _GROWTH)))
            self.indices.resize(cap, refcheck=False)
            self.data.resize(cap, refcheck=False)

    def parse(self, text):
        """Parse `text` (whole lines) into the arrays, after the rows parsed so far."""
        if self.expected_bytes <= _NUMPY_COUNT_BYTES:
            n_newlines = int(np.count_nonzero(text == 10))
            n_colons = int(np.count_nonzero(text == 58))
        else:
            n_newlines, n_colons = _libsvm.count_newlines_and_colons(text)
        self._ensure_room(n_newlines + 1, n_colons, len(text))
        if not self.general:
            # the fast-path kernel; at the first line it cannot parse, the general one
            # (compiled only when some text needs it) goes on from that line's start
            stopped = self._parse_with(_libsvm.parse_fast_path_into, text)
            if stopped is None:
                return
            self.general = True
            text = text[stopped:]
        self._parse_with(_libsvm.parse_libsvm_into, text)

    def _parse_with(self, kernel, text):
        """Run one parsing kernel on text; the start of the line it stopped at for the
        general kernel, else None."""
        narrow = self.index_type is np.uint16
        max_index = min(self.max_index, NARROW_INDEX_COLUMNS) if narrow else self.max_index
        (error, line, error_start, error_end, error_aux, n_rows, nnz, largest_index,
         self.slow, n_slow) = kernel(text, max_index, self.indptr, self.indices,
                                     self.data, self.y, self.n_rows, self.slow)
        if narrow and error == _libsvm.ERR_INDEX_TOO_LARGE and error_aux <= self.max_index:
            # a column beyond 2-byte indices: this text again, into int32 indices
            self._widen_indices()
            return self._parse_with(kernel, text)
        if n_slow:
            _resolve_slow_tokens(text, self.slow[:n_slow], self.indices, self.data, self.y,
                                 self.name, self.line)
        self.n_rows = n_rows
        self.largest_index = max(self.largest_index, int(largest_index))
        self.line += line
        if error == _libsvm.NEEDS_GENERAL:
            return error_start
        if error != _libsvm.OK:
            token = _token_text(text, error_start, error_end)
            n_features = None if self.max_index == MAX_FEATURE_INDEX else self.max_index
            problem = _describe_parse_error(error, token, error_aux, n_features)
            raise _LineError(self.name, self.line, problem)
        return None

    def _widen_indices(self):
        """int32 indices from here on: the rows parsed so far copied, the room untouched."""
        filled = int(self.indptr[self.n_rows])
        wide = np.empty(len(self.indices), dtype=np.int32)
        wide[:filled] = self.indices[:filled]
        self.indices, self.index_type = wide, np.int32

    def result(self, n_features) -> Problem:
        if self.indptr is None:       # no text at all
            self._ensure_room(0, 0, 1)
        n_rows, nnz = self.n_rows, int(self.indptr[self.n_rows])
        # Give back the room never used (in place: numpy's resize reallocates).
        self.indptr.resize(n_rows + 1, refcheck=False)
        self.y.resize(n_rows, refcheck=False)
        self.indices.resize(nnz, refcheck=False)
        self.data.resize(nnz, refcheck=False)
        return Problem(indptr=self.indptr, indices=self.indices, data=self.data, y=self.y,
                       n_features=int(self.largest_index if n_features is None else n_features))


def line_start_bounds(path, n_parts: int, storage_options: dict | None = None):
    """The byte bounds [0, b1, ..., size] of at most n_parts line-aligned ranges of a
    plain file, cut where line_aligned_ranges cuts, found by seeking near each cut (no
    pass over the text, no line numbers); None for a compressed file (no byte ranges)."""
    name = os.fspath(path)
    with open_input(name, storage_options) as (f, size):
        if size is None:
            return None
        try:
            cuts = [_line_start_after(f, t, size) for t in _split_targets(0, size, n_parts)]
        except OSError as e:
            raise DlinearError(f"{name}: read error: {e}") from None
    return sorted(set([0, size] + cuts))


def parse_range(path, start: int, stop: int, storage_options: dict | None = None,
                dtype=np.float64) -> tuple[Problem, int]:
    """The line-aligned byte range [start, stop) of a plain file parsed on this thread:
    (its rows, its number of lines). A parse error is numbered from the range's first
    line, as line 1: the caller, knowing the lines before, renumbers it
    (renumbered_error)."""
    name = os.fspath(path)
    parser = _ChunkedParser(name, 1, MAX_FEATURE_INDEX, stop - start, READ_CHUNK_BYTES,
                            data_dtype(dtype))
    with open_input(name, storage_options) as (f, _):
        f.seek(start)
        parser.run(f, stop - start)
    lines = parser.line - 1
    return parser.result(None), lines


def renumbered_error(error: DlinearError, lines_before: int) -> DlinearError:
    """A parse error of parse_range numbered in the whole file; other errors as they are."""
    if isinstance(error, _LineError):
        return _LineError(error.name, lines_before + error.line, error.problem)
    return error


# Bytes read at a time when looking for line starts: memory stays bounded on huge files.
_ALIGN_CHUNK_BYTES = 64 << 20


def line_aligned_ranges(path, n_parts: int, storage_options: dict | None = None
                        ) -> list[tuple[int, int, int]]:
    """Split a file into at most n_parts non-empty byte ranges of about equal size, each
    starting at a line start: [(start, end, first_line), ...] covering the whole file,
    with first_line the 1-based line number of the range's first line (for
    read_libsvm(path, start=start, end=end, first_line=first_line)). `path` may be an
    fsspec URL (see read_libsvm); a compressed file has no byte ranges and gives one
    range (0, None, 1): read it whole.

    The file is read in chunks, counting newlines with NumPy (no memory map: a mapped
    buffer still referenced elsewhere cannot be closed)."""
    name = os.fspath(path)
    if int(n_parts) < 1:
        raise DlinearError(f"the number of parts must be at least 1, got {n_parts}")
    with open_input(name, storage_options) as (f, size):
        if size is None:
            return [(0, None, 1)]
        if size == 0:
            return [(0, 0, 1)]
        targets = _split_targets(0, size, n_parts)
        starts, firsts = [], []
        newlines_before = 0      # newlines in the bytes before the current chunk
        chunk_start = 0
        try:
            while targets:
                raw = f.read(_ALIGN_CHUNK_BYTES)
                if not raw:
                    break
                newline_at = np.flatnonzero(np.frombuffer(raw, dtype=np.uint8) == 10)
                newline_at += chunk_start
                while targets:
                    # a line starts right after the first newline at or after target - 1
                    j = int(np.searchsorted(newline_at, targets[0] - 1))
                    if j == len(newline_at):
                        break                      # in a later chunk
                    starts.append(int(newline_at[j]) + 1)
                    firsts.append(newlines_before + j + 2)
                    targets.pop(0)
                newlines_before += len(newline_at)
                chunk_start += len(raw)
        except OSError as e:
            raise DlinearError(f"{name}: read error: {e}") from None
    starts += [size] * len(targets)            # no line starts after these targets
    firsts += [newlines_before + 1] * len(targets)
    bounds = [0] + starts + [size]
    firsts = [1] + firsts
    return [(bounds[i], bounds[i + 1], firsts[i])
            for i in range(len(firsts)) if bounds[i] < bounds[i + 1]]
