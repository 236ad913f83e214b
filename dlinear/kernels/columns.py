"""The columns a CSR block uses, and its column indices renumbered into that space.

The columns seen are bits of a bitmap (n/8 bytes: 2 MB for 2^24 columns, which stays in
cache while the indices pass by in random order), and a column's new number is its rank
among the set bits: the count before its 64-bit word plus the set bits below it there.
"""
import numpy as np
from numba import njit

_ONE = np.uint64(1)
_SIX = np.uint64(6)
_LOW6 = np.uint64(63)


@njit(cache=True, nogil=True, inline="always")
def _popcount(x):
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return (x * np.uint64(0x0101010101010101)) >> np.uint64(56)


@njit(cache=True, nogil=True)
def mark_columns(indices, n_columns):
    """A bitmap over n_columns (uint64 words): bit j set where column j occurs."""
    words = np.zeros((n_columns + 63) // 64, dtype=np.uint64)
    for k in range(indices.shape[0]):
        j = np.uint64(indices[k])
        words[j >> _SIX] |= _ONE << (j & _LOW6)
    return words


@njit(cache=True, nogil=True)
def count_marked(words):
    """The number of set bits of a bitmap (the columns mark_columns found)."""
    m = 0
    for w in range(words.shape[0]):
        m += np.int64(_popcount(words[w]))
    return m


@njit(cache=True, nogil=True)
def used_columns(words):
    """(the set columns in increasing order, int32; the number of set bits before each
    word, int32)."""
    before = np.empty(words.shape[0], dtype=np.int32)
    m = 0
    for w in range(words.shape[0]):
        before[w] = m
        m += np.int64(_popcount(words[w]))
    used = np.empty(m, dtype=np.int32)
    k = 0
    for w in range(words.shape[0]):
        x = words[w]
        b = 0
        while x:
            if x & _ONE:
                used[k] = w * 64 + b
                k += 1
            x >>= _ONE
            b += 1
    return used, before


@njit(cache=True, nogil=True)
def renumber_into(indices, words, before, out):
    """Each index's rank among the set columns, written to `out` (of the indices' type:
    int32, or uint16, a rank being below the index's column count), which may be
    `indices` itself (each index is read before its rank is written there) where the
    caller owns the indices; blocks from Dask may be read-only."""
    for k in range(indices.shape[0]):
        j = np.uint64(indices[k])
        w = j >> _SIX
        below = words[w] & ((_ONE << (j & _LOW6)) - _ONE)
        out[k] = before[w] + np.int32(_popcount(below))
