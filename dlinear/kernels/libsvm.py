"""Numba kernels that read LIBSVM/svmlight text: bytes -> CSR arrays (writing:
dlinear.kernels.libsvm_format).

Reading works on a `np.uint8` buffer that starts at a line start and ends at a line end
(or EOF), so Dask workers can parse byte ranges of one file independently. The kernels
never raise: they return an error code, the 0-based line number inside the buffer and the
byte span of the offending text, and `dlinear.data` turns that into a `DlinearError`.

Numbers are parsed exactly (the double Python's `float()` gives): a token whose decimal
mantissa fits in 53 bits and whose power-of-ten exponent is at most 22 in magnitude is
converted with one correctly rounded IEEE multiply or divide (Clinger's fast path); any
other is converted by the Eisel-Lemire algorithm (a 128-bit product with a power of
five). The few tokens neither can decide (a product too close to a rounding boundary,
more than 18 significant digits whose truncation changes the double, overflow) are
reported back by position ("slow tokens") and converted by `float()` afterwards.

Two kernels share one source: parse_fast_path_into reads the common text (plain
`index:value` features, fast-path numbers) and stops at the first line with anything else,
where parse_libsvm_into (every number, `qid:`, the errors) goes on. Numba compiles a kernel
when it is first called, so a file of ordinary text compiles neither Eisel-Lemire nor the
error paths on a first run.
"""
import numpy as np
from numba import njit

from . import kernel_only
from .decimal import eisel_lemire

# What a byte means to the tokenizer: ordinary text, a separator inside a line,
# a line end, or the start of a comment.
_TEXT, _BLANK, _NEWLINE, _HASH = 0, 1, 2, 3
_BYTE_CLASS = np.zeros(256, dtype=np.uint8)
_BYTE_CLASS[ord(" ")] = _BLANK
_BYTE_CLASS[ord("\t")] = _BLANK
_BYTE_CLASS[ord("\r")] = _BLANK  # CRLF files: the CR is just trailing blank space
_BYTE_CLASS[ord("\n")] = _NEWLINE
_BYTE_CLASS[ord("#")] = _HASH

# Error codes returned by the parsing kernels (0 means success).
OK = 0
ERR_LABEL_NOT_NUMBER = 1
ERR_VALUE_NOT_NUMBER = 2
ERR_INDEX_BELOW_ONE = 3
ERR_INDEX_NOT_INTEGER = 4
ERR_INDEX_NOT_INCREASING = 5
ERR_LABEL_NOT_FINITE = 6
ERR_VALUE_NOT_FINITE = 7
ERR_MISSING_COLON = 8
ERR_INDEX_TOO_LARGE = 9
ERR_QID_MISPLACED = 10
ERR_QID_NOT_INTEGER = 11
# Not an error: parse_fast_path_into stopped at text for parse_libsvm_into.
NEEDS_GENERAL = 100

# What _scan_number found.
_NUM_EXACT, _NUM_SLOW, _NUM_INVALID, _NUM_NAN_INF = 0, 1, 2, 3

# Powers of ten that are exact doubles (10**22 is the largest) and exact int64s.
_POW10 = np.array([float(10**k) for k in range(23)], dtype=np.float64)
_POW10_INT = np.array([10**k for k in range(19)], dtype=np.int64)
_MAX_EXACT_INT = 2**53  # every integer up to here is an exact double
_MAX_MANTISSA_DIGITS = 18  # an 18-digit decimal mantissa always fits in int64

# Columns of the slow-token table.
SLOW_START, SLOW_END, SLOW_TARGET, SLOW_LINE = 0, 1, 2, 3


@njit(cache=True, nogil=True)
def count_newlines_and_colons(buf):
    """Upper bounds for the output: rows <= newlines + 1, nonzeros <= colons."""
    n_newlines = 0
    n_colons = 0
    for i in range(buf.shape[0]):
        c = buf[i]
        if c == 10:
            n_newlines += 1
        elif c == 58:
            n_colons += 1
    return n_newlines, n_colons


@njit(cache=True, nogil=True)
def end_of_last_line(buf, n):
    """The index just after the last newline in buf[:n], 0 if there is none."""
    for i in range(n - 1, -1, -1):
        if buf[i] == 10:
            return i + 1
    return 0


@kernel_only
def _token_end(buf, pos, n):
    while pos < n and _BYTE_CLASS[buf[pos]] == _TEXT:
        pos += 1
    return pos


@kernel_only
def _skip_to_newline(buf, pos, n):
    while pos < n and buf[pos] != 10:
        pos += 1
    return pos


@kernel_only
def _is_word(buf, pos, n, word):
    """Whether buf[pos:] starts with `word` (lowercase ASCII bytes), ignoring case."""
    if pos + len(word) > n:
        return False
    for j in range(len(word)):
        if (buf[pos + j] | 32) != word[j]:
            return False
    return True


_NAN = np.frombuffer(b"nan", dtype=np.uint8).copy()
_INF = np.frombuffer(b"inf", dtype=np.uint8).copy()
_INFINITY = np.frombuffer(b"infinity", dtype=np.uint8).copy()
_QID = np.frombuffer(b"qid:", dtype=np.uint8).copy()


def _named_variant(func, general):
    """func named for its variant (`parse_into_general`, `parse_into_fast_path`). Numba
    names a kernel's machine code and its environment after the function's qualified name
    and a per-process counter, so two closures of one factory compiled in different runs
    (the general one later, on the first text that needs it) got the same symbols: loaded
    from the cache into one process, one returned its arrays through the other's
    environment ("'descr' is NULL", then a SystemError)."""
    suffix = "_general" if general else "_fast_path"
    func.__name__ += suffix
    func.__qualname__ += suffix
    return func


def _number_scanner(general):
    """The kernel that scans `[+-]?(digits[.digits*]|.digits)([eE][+-]?digits)?` at pos:
    with `general`, every number; without, only those the fast path converts (anything
    else is _NUM_SLOW or _NUM_INVALID), so that it compiles neither Eisel-Lemire nor the
    words nan and inf."""
    def scan_number(buf, pos, n):
        """Returns (kind, value, end): end is the first byte not consumed; the caller
        checks that it is a separator. `value` is only meaningful for _NUM_EXACT."""
        negative = False
        if pos < n:
            c = buf[pos]
            if c == 45:  # '-'
                negative = True
                pos += 1
            elif c == 43:  # '+'
                pos += 1
        # value = (mantissa + a fraction, nonzero when `truncated`) * 10**exponent: the
        # mantissa keeps the first _MAX_MANTISSA_DIGITS significant digits (`kept`)
        mantissa = 0
        kept = 0
        exponent = 0
        truncated = False
        digits_start = pos
        while pos < n and buf[pos] == 48:  # leading zeros
            pos += 1
        while pos < n:
            d = np.int64(buf[pos]) - 48
            if d < 0 or d > 9:
                break
            if kept < _MAX_MANTISSA_DIGITS:
                mantissa = mantissa * 10 + d
                kept += 1
            else:
                exponent += 1
                truncated |= d != 0
            pos += 1
        n_digits = pos - digits_start
        if pos < n and buf[pos] == 46:  # '.'
            pos += 1
            fraction_start = pos
            if kept == 0:  # zeros before the first significant digit
                while pos < n and buf[pos] == 48:
                    pos += 1
                exponent -= pos - fraction_start
            while pos < n:
                d = np.int64(buf[pos]) - 48
                if d < 0 or d > 9:
                    break
                if kept < _MAX_MANTISSA_DIGITS:
                    mantissa = mantissa * 10 + d
                    kept += 1
                    exponent -= 1
                else:
                    truncated |= d != 0
                pos += 1
            n_digits += pos - fraction_start
        if n_digits == 0:
            if not general:
                return _NUM_INVALID, 0.0, pos
            # No digits: only "nan", "inf" and "infinity" are numbers (and not allowed).
            if _is_word(buf, pos, n, _INFINITY):
                return _NUM_NAN_INF, 0.0, pos + 8
            if _is_word(buf, pos, n, _NAN) or _is_word(buf, pos, n, _INF):
                return _NUM_NAN_INF, 0.0, pos + 3
            return _NUM_INVALID, 0.0, pos
        if pos < n and (buf[pos] | 32) == 101:  # 'e' or 'E'
            pos += 1
            exponent_negative = False
            if pos < n:
                c = buf[pos]
                if c == 45:
                    exponent_negative = True
                    pos += 1
                elif c == 43:
                    pos += 1
            n_exponent_digits = 0
            exponent_value = 0
            while pos < n:
                d = np.int64(buf[pos]) - 48
                if d < 0 or d > 9:
                    break
                if exponent_value < 100_000_000:  # saturate: far beyond any double anyway
                    exponent_value = exponent_value * 10 + d
                n_exponent_digits += 1
                pos += 1
            if n_exponent_digits == 0:
                return _NUM_INVALID, 0.0, pos
            exponent += -exponent_value if exponent_negative else exponent_value

        if mantissa == 0:
            value = 0.0
        elif truncated or mantissa > _MAX_EXACT_INT:
            if not general:
                return _NUM_SLOW, 0.0, pos
            # the value lies in (mantissa, mantissa + 1) * 10**exponent: when both ends round
            # to the same double, so does the value
            ok, value = eisel_lemire(mantissa, exponent)
            if truncated and ok:
                ok, upper = eisel_lemire(mantissa + 1, exponent)
                ok = ok and upper == value
            if not ok:
                return _NUM_SLOW, 0.0, pos
        elif 0 <= exponent <= 22:
            value = float(mantissa) * _POW10[exponent]
        elif -22 <= exponent < 0:
            value = float(mantissa) / _POW10[-exponent]
        elif 22 < exponent <= 22 + 15 and mantissa <= _MAX_EXACT_INT // _POW10_INT[exponent - 22]:
            # Move the excess exponent into the mantissa while it stays exact.
            value = float(mantissa * _POW10_INT[exponent - 22]) * _POW10[22]
        else:
            if not general:
                return _NUM_SLOW, 0.0, pos
            ok, value = eisel_lemire(mantissa, exponent)
            if not ok:
                return _NUM_SLOW, 0.0, pos
        if negative:
            value = -value
        return _NUM_EXACT, value, pos
    return kernel_only(_named_variant(scan_number, general))


_scan_number = _number_scanner(True)
_scan_fast_path_number = _number_scanner(False)


@kernel_only
def _push_slow(slow, n_slow, start, end, target, line):
    """Append a token for Python's float(); target >= 0 is a data slot, -1-row a label."""
    if n_slow == slow.shape[0]:
        bigger = np.empty((2 * slow.shape[0], 4), dtype=np.int64)
        # element by element: a slice assignment compiles Numba's shape-mismatch error
        # message (string formatting), seconds on a cold first run
        for i in range(n_slow):
            for j in range(4):
                bigger[i, j] = slow[i, j]
        slow = bigger
    slow[n_slow, SLOW_START] = start
    slow[n_slow, SLOW_END] = end
    slow[n_slow, SLOW_TARGET] = target
    slow[n_slow, SLOW_LINE] = line
    return slow, n_slow + 1


@kernel_only
def _unusual_index_token(buf, pos, n, first_in_row):
    """A feature token that is not plain `digits:`. Returns (code, index, end) where code
    is OK with end at the ':' (a '+' sign), -1 for a consumed `qid:N` token, or an error
    code with end at the end of the offending text."""
    if _is_word(buf, pos, n, _QID):
        end = _token_end(buf, pos, n)
        if not first_in_row:
            return ERR_QID_MISPLACED, 0, end
        value_pos = pos + 4
        if value_pos < n and (buf[value_pos] == 43 or buf[value_pos] == 45):
            value_pos += 1
        if value_pos == end:
            return ERR_QID_NOT_INTEGER, 0, end
        for j in range(value_pos, end):
            if buf[j] < 48 or buf[j] > 57:
                return ERR_QID_NOT_INTEGER, 0, end
        return -1, 0, end
    end = _token_end(buf, pos, n)
    colon = pos
    while colon < end and buf[colon] != 58:
        colon += 1
    if colon == end:
        return ERR_MISSING_COLON, 0, end
    start = pos
    negative = False
    if buf[start] == 43 or buf[start] == 45:
        negative = buf[start] == 45
        start += 1
    if start == colon:
        return ERR_INDEX_NOT_INTEGER, 0, colon
    index = 0
    for j in range(start, colon):
        d = np.int64(buf[j]) - 48
        if d < 0 or d > 9:
            return ERR_INDEX_NOT_INTEGER, 0, colon
        if index < 10_000_000_000:  # saturate: already above any allowed index
            index = index * 10 + d
    if negative:
        return ERR_INDEX_BELOW_ONE, -index, colon
    return OK, index, colon



def _libsvm_parser(general):
    """The kernel parse_libsvm_into (general) or parse_fast_path_into (not general). The
    latter parses the common text only: plain `index:value` features and numbers in
    Clinger's fast path. At the first line holding anything else (an error other than
    an index beyond max_index, which it reports as the general one does; `qid:`, a
    sign before an index, nan or inf, a number that needs Eisel-Lemire or float()) it
    stops and returns NEEDS_GENERAL with that line's start in error_start, the rows
    before it parsed; the general kernel goes on from there. A first run on such text
    compiles neither Eisel-Lemire nor the error paths."""
    def parse_into(buf, max_index, indptr, indices, data, y, first_row, slow):
        """Parse a whole number of LIBSVM lines, appending rows to CSR arrays from row
        first_row on (indptr[first_row] holds the nonzeros before it), so that a file can
        be parsed a chunk at a time into one set of arrays. The caller guarantees room: at
        least newlines + 1 more rows and colons more nonzeros than buf holds.

        Returns (error, line, error_start, error_end, error_aux, n_rows, nnz,
        largest_index, slow, n_slow): n_rows and nnz are the totals including the rows
        before first_row. `line` is the 0-based line inside buf of an error (the number of
        lines in buf when there is none); error_start/end span the offending text in buf;
        error_aux is the feature index (or the previous index for
        ERR_INDEX_NOT_INCREASING). `slow` (grown when full, returned) lists the tokens left
        to Python's float(), with positions in buf and targets in the arrays.
        `largest_index` is the largest 1-based feature index in buf; indices above
        max_index fail.
        """
        n = buf.shape[0]
        # np.int64(0), not 0: a loop variable that starts as a literal makes Numba compile
        # the helpers it is passed to once more, for Literal[int](0)
        n_slow = np.int64(0)
        n_rows = first_row
        nnz = indptr[first_row]
        line = np.int64(0)
        largest_index = 0
        error = OK
        error_start = 0
        error_end = 0
        error_aux = 0
        pos = 0
        line_start = 0
        while pos < n:
            while pos < n and _BYTE_CLASS[buf[pos]] == _BLANK:
                pos += 1
            if pos >= n:
                break
            kind = _BYTE_CLASS[buf[pos]]
            if kind == _NEWLINE:  # blank line
                pos += 1
                line += 1
                continue
            if kind == _HASH:  # comment-only line
                pos = _skip_to_newline(buf, pos, n)
                continue
            line_start = pos

            # The label.
            token_start = pos
            if general:
                number_kind, value, pos = _scan_number(buf, pos, n)
            else:
                number_kind, value, pos = _scan_fast_path_number(buf, pos, n)
            if pos < n and _BYTE_CLASS[buf[pos]] == _TEXT:
                number_kind = _NUM_INVALID
            if number_kind != _NUM_EXACT:
                if not general:
                    error = NEEDS_GENERAL
                    break
                if number_kind == _NUM_SLOW:
                    slow, n_slow = _push_slow(slow, n_slow, token_start, pos, -1 - n_rows,
                                              line)
                else:
                    error = (ERR_LABEL_NOT_FINITE if number_kind == _NUM_NAN_INF
                             else ERR_LABEL_NOT_NUMBER)
                    error_start = token_start
                    error_end = _token_end(buf, pos, n)
                    break
            y[n_rows] = value

            # The features.
            previous_index = 0
            row_start = nnz
            while True:
                while pos < n and _BYTE_CLASS[buf[pos]] == _BLANK:
                    pos += 1
                if pos >= n:
                    break
                kind = _BYTE_CLASS[buf[pos]]
                if kind == _NEWLINE:
                    break
                if kind == _HASH:
                    pos = _skip_to_newline(buf, pos, n)
                    break
                token_start = pos
                index = 0
                while pos < n:
                    d = np.int64(buf[pos]) - 48
                    if d < 0 or d > 9:
                        break
                    if index < 10_000_000_000:
                        index = index * 10 + d
                    pos += 1
                if pos == token_start or pos >= n or buf[pos] != 58:
                    if not general:
                        error = NEEDS_GENERAL
                        break
                    code, index, pos = _unusual_index_token(buf, token_start, n,
                                                            nnz == row_start)
                    if code == -1:  # qid:N, ignored
                        continue
                    if code != OK:
                        error = code
                        error_start = token_start
                        error_end = pos
                        error_aux = index
                        break
                if index < 1:
                    error = ERR_INDEX_BELOW_ONE
                elif index > max_index:
                    error = ERR_INDEX_TOO_LARGE
                elif index <= previous_index:
                    error = ERR_INDEX_NOT_INCREASING
                if error != OK:
                    error_start = token_start
                    error_end = pos
                    error_aux = previous_index if error == ERR_INDEX_NOT_INCREASING else index
                    break
                pos += 1  # the ':'
                value_start = pos
                if general:
                    number_kind, value, pos = _scan_number(buf, pos, n)
                else:
                    number_kind, value, pos = _scan_fast_path_number(buf, pos, n)
                if pos < n and _BYTE_CLASS[buf[pos]] == _TEXT:
                    number_kind = _NUM_INVALID
                if number_kind != _NUM_EXACT:
                    if not general:
                        error = NEEDS_GENERAL
                        break
                    if number_kind == _NUM_SLOW:
                        slow, n_slow = _push_slow(slow, n_slow, value_start, pos, nnz, line)
                    else:
                        error = (ERR_VALUE_NOT_FINITE if number_kind == _NUM_NAN_INF
                                 else ERR_VALUE_NOT_NUMBER)
                        error_start = value_start
                        error_end = _token_end(buf, pos, n)
                        error_aux = index
                        break
                indices[nnz] = index - 1
                data[nnz] = value
                if data[nnz] - data[nnz] != 0:     # beyond float32's range in a float32 array
                    error = ERR_VALUE_NOT_FINITE
                    error_start = value_start
                    error_end = pos
                    error_aux = index
                    break
                nnz += 1
                previous_index = index
            if error != OK:
                break
            if previous_index > largest_index:
                largest_index = previous_index
            n_rows += 1
            indptr[n_rows] = nnz
        if error != OK and error != ERR_INDEX_TOO_LARGE and not general:
            # the line's rows and nonzeros are the general kernel's to write (an index
            # beyond max_index is reported as it is: the caller widens 2-byte indices and
            # parses the text again with this kernel, or reports the error)
            return (NEEDS_GENERAL, line, line_start, line_start, 0, n_rows, indptr[n_rows],
                    largest_index, slow, n_slow)
        return (error, line, error_start, error_end, error_aux, n_rows, nnz, largest_index,
                slow, n_slow)
    return njit(cache=True, nogil=True)(_named_variant(parse_into, general))


parse_libsvm_into = _libsvm_parser(True)
parse_fast_path_into = _libsvm_parser(False)


@njit(cache=True, nogil=True)
def gather_tokens(buf, starts, ends):
    """Copy the byte spans [starts[i], ends[i]) into one buffer, separated by spaces."""
    total = 0
    for i in range(starts.shape[0]):
        total += ends[i] - starts[i] + 1
    out = np.empty(total, dtype=np.uint8)
    pos = 0
    for i in range(starts.shape[0]):
        for j in range(starts[i], ends[i]):
            out[pos] = buf[j]
            pos += 1
        out[pos] = 32
        pos += 1
    return out
