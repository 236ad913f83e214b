"""The reader's numbers are Python's float() bit for bit, and the kernel converts them
itself (Clinger's fast path or Eisel-Lemire), leaving float() only the rare undecidable
tokens."""
import math
import random
import struct
from pathlib import Path

import numpy as np
import pytest

from dlinear.data.libsvm_reader import parse_libsvm_bytes, read_libsvm
from dlinear.kernels import libsvm as kernel
from tests.support.problems import same_bits

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def kernel_parse(tokens):
    """(data, n_slow) of one row per 30 tokens, parsed by the kernel alone."""
    rows = [tokens[i:i + 30] for i in range(0, len(tokens), 30)]
    text = "".join("0 " + " ".join(f"{j + 1}:{t}" for j, t in enumerate(row)) + "\n"
                   for row in rows).encode()
    buf = np.frombuffer(text, dtype=np.uint8)
    n_rows, nnz = len(rows), len(tokens)
    indptr = np.zeros(n_rows + 2, dtype=np.int64)
    data = np.empty(nnz)
    result = kernel.parse_libsvm_into(buf, 2**31 - 2, indptr, np.empty(nnz, dtype=np.int32),
                                      data, np.empty(n_rows + 1), 0,
                                      np.empty((64, 4), dtype=np.int64))
    assert result[0] == kernel.OK and result[5:7] == (n_rows, nnz)
    return data, result[9], text


def random_double(rng):
    while True:
        x = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
        if np.isfinite(x):
            return x


def edge_doubles(rng):
    """Doubles near the subnormal range, the smallest normal, the largest double and
    powers of ten and two."""
    out = []
    for base in (5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 1e-300, 1e300,
                 1e22, 1e23, 2.0**53, 2.0**63, 2.0**64, 1.0):
        x = base
        for _ in range(20):
            out.append(float(x))
            x = math.nextafter(x, math.inf if rng.random() < 0.5 else 0.0)
    for _ in range(2000):
        bits = rng.getrandbits(52) | (rng.choice([0, 1, 2, 2045, 2046]) << 52)
        out.append(struct.unpack("<d", struct.pack("<Q", bits))[0])
    return [x for x in out if np.isfinite(x)]


def tokens_of(x, rng):
    """Texts of x: repr, '%.Ng' for N = 1..20, with '+' and leading zeros sometimes."""
    texts = [repr(x)] + ["%.*g" % (n, x) for n in range(1, 21)]
    out = []
    for t in texts:
        if t[0] != "-" and rng.random() < 0.1:
            t = "+" + t
        if rng.random() < 0.1:
            sign = t[0] if t[0] in "+-" else ""
            t = sign + "000" + t[len(sign):]
        out.append(t)
    return out


def test_random_and_edge_doubles_in_every_precision_equal_python_float():
    rng = random.Random(11)
    values = [random_double(rng) for _ in range(3000)] + edge_doubles(rng)
    tokens = [t for x in values for t in tokens_of(x, rng)]
    tokens = [t for t in tokens if np.isfinite(float(t))]      # '%.1g' of 1.79e308 is inf
    data, n_slow, text = kernel_parse(tokens)
    # float() only for the few the kernel cannot decide (some 19- and 20-digit tokens)
    assert n_slow < 0.02 * len(tokens)
    p = parse_libsvm_bytes(text, "sweep")
    assert same_bits(p.data, [float(t) for t in tokens])


def test_seventeen_digit_reprs_never_need_python_float():
    rng = random.Random(5)
    tokens = [repr(random_double(rng)) for _ in range(20000)]
    tokens += [repr(rng.random()) for _ in range(20000)]          # as make-data writes
    data, n_slow, _ = kernel_parse(tokens)
    assert n_slow == 0
    assert same_bits(data, [float(t) for t in tokens])


def test_long_mantissas_and_extreme_exponents_equal_python_float():
    rng = random.Random(3)
    tokens = []
    for _ in range(20000):
        digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 45)))
        point = rng.randint(0, len(digits))
        tokens.append(rng.choice(["", "-", "+"]) + "0" * rng.randint(0, 3) + digits[:point]
                      + "." + digits[point:] + "e" + str(rng.randint(-360, 320)))
        tokens.append(f"{rng.getrandbits(rng.randint(1, 64))}e{rng.randint(-345, 310)}")
    tokens = [t for t in tokens if np.isfinite(float(t))]
    data, n_slow, text = kernel_parse(tokens)
    assert n_slow < 0.05 * len(tokens)
    assert same_bits(parse_libsvm_bytes(text, "long").data, [float(t) for t in tokens])


@pytest.mark.parametrize("token", ["1e309", "-2e308", "17976931348623159e292"])
def test_overflow_is_still_an_error(token):
    with pytest.raises(Exception, match="line 1: value .* is NaN or infinity"):
        parse_libsvm_bytes(f"1 1:{token}\n".encode(), "big")


def test_rcv1_small_reads_as_python_float_parses_it():
    path = EXAMPLES / "rcv1_small.train"
    p = read_libsvm(path)
    labels, values, columns = [], [], []
    for line in path.read_text().splitlines():
        label, *features = line.split()
        labels.append(float(label))
        for f in features:
            index, value = f.split(":")
            columns.append(int(index) - 1)
            values.append(float(value))
    assert same_bits(p.y, labels)
    assert same_bits(p.data, values)
    assert np.array_equal(p.indices, columns)
