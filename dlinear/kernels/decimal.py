"""Decimal to double, correctly rounded, for the LIBSVM reader (dlinear.kernels.libsvm):
the Eisel-Lemire algorithm (Lemire, "Number Parsing at a Gigabyte per Second", 2021)."""
import math

import numpy as np

from . import kernel_only

# w * 10**q for 10**-342 <= 10**q <= 10**308 from a 128-bit product of w with 5**q
# scaled to [2**127, 2**128) (truncated; for -27 <= q < 0 the reciprocal of 5**-q
# rounded up, as the paper's table). Numba has no 128-bit integers: products of
# 32-bit halves.
_LEMIRE_MIN_Q, _LEMIRE_MAX_Q = -342, 308


def _powers_of_five_128():
    high = np.empty(_LEMIRE_MAX_Q - _LEMIRE_MIN_Q + 1, dtype=np.uint64)
    low = np.empty_like(high)
    for q in range(_LEMIRE_MIN_Q, _LEMIRE_MAX_Q + 1):
        if q >= 0:
            c = 5**q
            c = c << (128 - c.bit_length()) if c.bit_length() < 128 else c >> (c.bit_length() - 128)
        else:
            p = 5**-q
            z = p.bit_length()                  # 2**(z-1) < p < 2**z
            c = (1 << (z + 127 if q >= -27 else 2 * z + 128)) // p + 1
            c >>= max(c.bit_length() - 128, 0)
        high[q - _LEMIRE_MIN_Q] = c >> 64
        low[q - _LEMIRE_MIN_Q] = c & (2**64 - 1)
    return high, low


_POW5_HIGH, _POW5_LOW = _powers_of_five_128()
_U32_MASK = np.uint64(0xFFFFFFFF)
_U64_MAX = np.uint64(2**64 - 1)
_U0, _U1, _U3 = np.uint64(0), np.uint64(1), np.uint64(3)
_U32, _U63 = np.uint64(32), np.uint64(63)
_U2_53 = np.uint64(2**53)
_LOW_9_BITS = np.uint64(0x1FF)


@kernel_only
def _multiply_64x64(a, b):
    """The 128-bit product of two uint64s as (high, low) uint64 halves."""
    a_low, a_high = a & _U32_MASK, a >> _U32
    b_low, b_high = b & _U32_MASK, b >> _U32
    low_low = a_low * b_low
    low_high = a_low * b_high
    high_low = a_high * b_low
    middle = (low_low >> _U32) + (low_high & _U32_MASK) + (high_low & _U32_MASK)
    low = (middle << _U32) | (low_low & _U32_MASK)
    high = a_high * b_high + (low_high >> _U32) + (high_low >> _U32) + (middle >> _U32)
    return high, low


@kernel_only
def eisel_lemire(w, q):
    """The double nearest to w * 10**q (0 < w < 2**63) as (ok, value); ok is False for
    the rare products too close to a rounding boundary to decide, and for overflow."""
    if q < _LEMIRE_MIN_Q:       # below half the smallest subnormal even for w < 10**19
        return True, 0.0
    if q > _LEMIRE_MAX_Q:
        return False, 0.0
    u = np.uint64(w)
    zeros = 0                   # leading zero bits of u, shifted out
    for step in (32, 16, 8, 4, 2, 1):
        if u >> np.uint64(64 - step) == _U0:
            u <<= np.uint64(step)
            zeros += step
    i = q - _LEMIRE_MIN_Q
    high, low = _multiply_64x64(u, _POW5_HIGH[i])
    if high & _LOW_9_BITS == _LOW_9_BITS:   # the truncated bits may carry: add the rest
        more_high, _ = _multiply_64x64(u, _POW5_LOW[i])
        low += more_high
        if low < more_high:
            high += _U1
        if low == _U64_MAX and (q < -27 or q > 55):
            return False, 0.0
    upper_bit = np.int64(high >> _U63)
    mantissa = high >> np.uint64(upper_bit + 9)
    # biased binary exponent: floor(log2(10**q)) + 63 + upper_bit - zeros + 1023
    power2 = ((217706 * q) >> 16) + 63 + upper_bit - zeros + 1023
    if power2 <= 0:             # subnormal (or zero)
        if 1 - power2 >= 64:
            return True, 0.0
        mantissa >>= np.uint64(1 - power2)
        mantissa = (mantissa + (mantissa & _U1)) >> _U1
        return True, math.ldexp(float(mantissa), -1074)
    # exactly halfway (possible only for these q): round to even, not up
    if (low <= _U1 and -4 <= q <= 23 and mantissa & _U3 == _U1
            and mantissa << np.uint64(upper_bit + 9) == high):
        mantissa -= _U1
    mantissa = (mantissa + (mantissa & _U1)) >> _U1
    if mantissa >= _U2_53:
        mantissa >>= _U1
        power2 += 1
    if power2 >= 0x7FF:
        return False, 0.0
    return True, math.ldexp(float(mantissa), power2 - 1075)
