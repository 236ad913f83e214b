"""A Numba scan of a LIBLINEAR model file's weights (dlinear.model.load_model).

A model of hashed columns is millions of lines, most of them "0": the scan finds the
tokens and which of them are something else, and only those are converted by Python's
float (correctly rounded, as the file was written with %.17g)."""
import numpy as np
from numba import njit


@njit(cache=True, nogil=True, inline="always")
def _is_space(c):
    return c == 32 or 9 <= c <= 13         # ' ', \t, \n, \v, \f, \r


@njit(cache=True, nogil=True)
def nonzero_tokens(buf):
    """(number of whitespace-separated tokens in buf, and for each token other than "0"
    its index among them, its start and its end in buf)."""
    n = len(buf)
    count = 0
    others = 0
    pos = 0
    for _ in range(2):                      # pass 1 counts, pass 2 records
        if _ == 1:
            index = np.empty(others, dtype=np.int64)
            starts = np.empty(others, dtype=np.int64)
            ends = np.empty(others, dtype=np.int64)
            count = 0
            others = 0
        pos = 0
        while pos < n:
            if _is_space(buf[pos]):
                pos += 1
                continue
            start = pos
            while pos < n and not _is_space(buf[pos]):
                pos += 1
            if not (pos - start == 1 and buf[start] == 48):     # "0"
                if _ == 1:
                    index[others] = count
                    starts[others] = start
                    ends[others] = pos
                others += 1
            count += 1
    return count, index, starts, ends
