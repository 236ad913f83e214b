"""Numba kernels that write CSR arrays as LIBSVM text (reading: dlinear.kernels.libsvm).

The reader's idea backwards: a value x is printed as the decimal m / 10**k with the
smallest k for which that quotient, computed exactly by Clinger's fast path, is x again;
the few values with no such short form are formatted by Python's `repr`.
"""
import numpy as np
from numba import njit

from .libsvm import _MAX_EXACT_INT, _POW10, _POW10_INT


@njit(cache=True, nogil=True)
def plan_decimals(values):
    """For each value x, the shortest (k, m) with |x| == m / 10**k exactly, k <= 22 and
    m < 2**53, so that printing m with k decimals reads back as x. k = -1 when there is
    no such form (e.g. 17-digit values, huge or tiny ones): those go through repr."""
    decimals = np.empty(values.shape[0], dtype=np.int8)
    mantissas = np.empty(values.shape[0], dtype=np.int64)
    for i in range(values.shape[0]):
        magnitude = abs(values[i])
        decimals[i] = -1
        mantissas[i] = 0
        if not np.isfinite(magnitude):
            continue
        for k in range(23):
            scale = _POW10[k]
            scaled = magnitude * scale
            if scaled >= _MAX_EXACT_INT:
                break
            nearest = np.int64(scaled + 0.5)
            # scaled is rounded, so the right m may be one off the nearest integer.
            found = -1
            for candidate in (nearest, nearest - 1, nearest + 1):
                if candidate >= 0 and candidate / scale == magnitude:
                    found = candidate
                    break
            if found >= 0:
                while k > 0 and found % 10 == 0:
                    found //= 10
                    k -= 1
                decimals[i] = k
                mantissas[i] = found
                break
    return decimals, mantissas


@njit(cache=True, nogil=True)
def _write_uint(out, pos, value):
    n_digits = 1
    rest = value
    while rest >= 10:
        rest //= 10
        n_digits += 1
    for j in range(n_digits - 1, -1, -1):
        out[pos + j] = 48 + value % 10
        value //= 10
    return pos + n_digits


@njit(cache=True, nogil=True)
def _write_number(out, pos, value, k, mantissa, fallback_text, fallback_pos):
    """Write value as planned by plan_decimals; returns (pos, fallback_pos)."""
    if k < 0:
        # Copy the next repr() token of the fallback text (tokens end with a space).
        while fallback_text[fallback_pos] != 32:
            out[pos] = fallback_text[fallback_pos]
            pos += 1
            fallback_pos += 1
        return pos, fallback_pos + 1
    if value < 0 or (value == 0 and np.signbit(value)):
        out[pos] = 45
        pos += 1
    if k >= 16:  # mantissa < 2**53 < 10**16: no integer part
        integer_part = 0
        fraction = mantissa
    else:
        integer_part = mantissa // _POW10_INT[k]
        fraction = mantissa - integer_part * _POW10_INT[k]
    pos = _write_uint(out, pos, integer_part)
    if k > 0:
        out[pos] = 46
        pos += 1
        for j in range(k - 1, -1, -1):
            out[pos + j] = 48 + fraction % 10
            fraction //= 10
        pos += k
    return pos, fallback_pos


# Longest text of one feature (" 2147483647:" + a 25-byte number) and of one label + '\n'.
MAX_FEATURE_BYTES = 40
MAX_LABEL_BYTES = 28


@njit(cache=True, nogil=True)
def format_rows(indptr, indices, data, y, row_start, row_end,
                value_decimals, value_mantissas, value_fallback,
                label_decimals, label_mantissas, label_fallback, out):
    """Write rows [row_start, row_end) as LIBSVM lines into out; returns the byte count,
    or -1 - row if that row's indices are not strictly increasing. value_* and label_*
    come from plan_decimals over data[indptr[row_start]:indptr[row_end]] and
    y[row_start:row_end]; the *_fallback buffers hold the repr() texts of the values
    planned as -1, in order, each followed by a space."""
    pos = 0
    value_fallback_pos = 0
    label_fallback_pos = 0
    first_nonzero = indptr[row_start]
    for row in range(row_start, row_end):
        r = row - row_start
        pos, label_fallback_pos = _write_number(out, pos, y[row], label_decimals[r],
                                                label_mantissas[r], label_fallback,
                                                label_fallback_pos)
        previous = -1
        for k in range(indptr[row], indptr[row + 1]):
            index = indices[k]
            if index <= previous:
                return -1 - row
            previous = index
            out[pos] = 32
            pos = _write_uint(out, pos + 1, np.int64(index) + 1)
            out[pos] = 58
            pos += 1
            c = k - first_nonzero
            pos, value_fallback_pos = _write_number(out, pos, data[k], value_decimals[c],
                                                    value_mantissas[c], value_fallback,
                                                    value_fallback_pos)
        out[pos] = 10
        pos += 1
    return pos
