"""Deterministic synthetic data shaped like a click log (Criteo's display-advertising layout).

`make_click_like(n_samples)` returns a `Problem` with the wide, hashed shape of click-through
data: 13 count features (columns 1-13 in a LIBSVM file) and 26 categorical fields whose
values are hashed into one space of 2**hash_bits columns (2**24 = 16.8M by default), so a
row has 39 nonzeros (fewer where two of its values hash to one column, about one row in
100,000). Each field draws its values from its own vocabulary, sized as Criteo's fields are
(from 3 to about 10 million values), with a heavy head (see _heavy_head_ranks): a few
values occur in most rows and most values in few, and only a small share of the hashed
columns occurs at all (about a ninth of 2**24 in 3.2 million rows), as in the real logs.

Labels are clicks (+1) and non-clicks (-1) from a planted linear model: each categorical
value and each count bucket has a fixed weight derived from its hash, the score is their sum
plus noise, and about a quarter of the rows are clicks, so logistic regression learns the
problem well but not perfectly.

Determinism: every random number comes from a PCG64 stream keyed by
`SeedSequence(seed, spawn_key=(purpose, block))` for a fixed block of ROWS_PER_BLOCK rows,
and only integer draws, integer hashing and IEEE additions in a fixed order are used, so the
same arguments give bit-identical arrays on any machine, however many rows are drawn at once.
"""
from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

from ..data.libsvm_reader import Problem
from ..errors import DlinearError

# Rows drawn from one random stream. Fixed: changing it changes every data set.
ROWS_PER_BLOCK = 1 << 16

N_COUNT_FEATURES = 13
# Distinct values of each categorical field (the value counts of Criteo's 26 fields, in
# field order); a field's ranks are drawn from this many values.
FIELD_CARDINALITIES = (1460, 583, 10131227, 2202608, 305, 24, 12517, 633, 3, 93145, 5683,
                       8351593, 3194, 27, 14992, 5461306, 10, 5652, 2173, 4, 7046547, 18,
                       15, 286181, 105, 142572)
N_FIELDS = len(FIELD_CARDINALITIES)
CLICK_NONZEROS_PER_ROW = N_COUNT_FEATURES + N_FIELDS      # at most; fewer where two collide
DEFAULT_HASH_BITS = 24

# A count is 2**k - 1 + a uniform integer below 2**k, k uniform in [0, COUNT_OCTAVES): a
# heavy-tailed count (as clicks, impressions and dwell times are), stored as its bucket
# k + 1 (small exact integers: short text, no logarithm whose last bits vary by CPU).
COUNT_OCTAVES = 12
BUCKET_MEAN = (COUNT_OCTAVES + 1) / 2

# The planted model: a categorical value's weight is uniform in +-CATEGORICAL_WEIGHT, a
# count bucket's slope uniform in +-COUNT_WEIGHT; the noise is a sum of NOISE_TERMS
# uniforms in +-NOISE_HALF_WIDTH; the rows scoring in the top CLICK_RATE are clicks.
CATEGORICAL_WEIGHT = 0.5
COUNT_WEIGHT = 0.1
NOISE_TERMS = 4
NOISE_HALF_WIDTH = 0.5
CLICK_RATE = 0.25

_TRAIN, _TEST, _CALIBRATION = 0, 1, 2


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer: a bijection of uint64 that spreads every input bit."""
    x = x.astype(np.uint64, copy=True)
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


def _salt(seed: int, odd_constant: int) -> int:
    """A per-seed offset of the hashes' inputs (so seeds plant different models)."""
    return (seed * odd_constant) & 0xFFFFFFFFFFFFFFFF


def _unit_interval(bits: np.ndarray) -> np.ndarray:
    """Doubles uniform in [-1, 1) from the top 53 bits of uint64 hashes (exact)."""
    return (bits >> np.uint64(11)).astype(np.float64) * (2.0 ** -52) - 1.0


def _heavy_head_ranks(rng: np.random.Generator, cardinality: np.ndarray, shape) -> np.ndarray:
    """Ranks below each column's cardinality with a heavy head: an octave k, the smaller
    of two uniform among those the vocabulary reaches (so low octaves are likelier), then
    a rank uniform in [2**k - 1, 2**(k+1) - 1). The two-draw head makes the occurring
    columns what click logs show: about 1.8M of 2**24 in 3.2M rows."""
    octaves = np.array([int(c).bit_length() for c in cardinality], dtype=np.int64)
    k = np.minimum(rng.integers(0, 1 << 62, size=shape, dtype=np.int64) % octaves,
                   rng.integers(0, 1 << 62, size=shape, dtype=np.int64) % octaves)
    k = k.astype(np.uint64)
    start = (np.uint64(1) << k) - np.uint64(1)
    offset = rng.integers(0, 1 << 62, size=shape, dtype=np.int64).astype(np.uint64) \
        & ((np.uint64(1) << k) - np.uint64(1))
    return (start + offset) % cardinality.astype(np.uint64)


def _block(seed: int, purpose: int, block: int, hash_bits: int):
    """(rows x 39 column ids, values, scores) of one block of ROWS_PER_BLOCK rows."""
    n_rows = ROWS_PER_BLOCK
    rng = np.random.Generator(np.random.PCG64(
        np.random.SeedSequence(seed, spawn_key=(purpose, block))))
    fields = np.arange(N_FIELDS, dtype=np.uint64)
    ranks = _heavy_head_ranks(rng, np.asarray(FIELD_CARDINALITIES, dtype=np.int64),
                              (n_rows, N_FIELDS))
    value_hash = _mix(ranks * np.uint64(N_FIELDS) + fields
                      + np.uint64(_salt(seed, 0x9E3779B97F4A7C15)))
    n_hashed = np.uint64((1 << hash_bits) - N_COUNT_FEATURES)
    categorical_columns = N_COUNT_FEATURES + (value_hash % n_hashed).astype(np.int64)
    categorical_weights = CATEGORICAL_WEIGHT * _unit_interval(_mix(value_hash))

    octave = rng.integers(0, COUNT_OCTAVES, size=(n_rows, N_COUNT_FEATURES), dtype=np.int64)
    bucket = (octave + 1).astype(np.float64)
    count_slopes = COUNT_WEIGHT * _unit_interval(_mix(
        np.arange(N_COUNT_FEATURES, dtype=np.uint64) + np.uint64(_salt(seed, 0xD6E8FEB86659FD93))))

    score = np.zeros(n_rows)
    for j in range(N_FIELDS):                        # fixed order: the same sums everywhere
        score += categorical_weights[:, j]
    for j in range(N_COUNT_FEATURES):
        score += count_slopes[j] * (bucket[:, j] - BUCKET_MEAN)
    for _ in range(NOISE_TERMS):
        bits = rng.integers(0, 1 << 62, size=n_rows, dtype=np.int64).astype(np.uint64)
        score += NOISE_HALF_WIDTH * _unit_interval(bits << np.uint64(2))

    count_columns = np.broadcast_to(np.arange(N_COUNT_FEATURES, dtype=np.int64),
                                    (n_rows, N_COUNT_FEATURES))
    columns = np.hstack([count_columns, categorical_columns])
    values = np.hstack([bucket, np.ones((n_rows, N_FIELDS))])
    return columns, values, score


def _click_threshold(seed: int, hash_bits: int) -> float:
    """The score above which CLICK_RATE of a calibration block's rows lie (the planted
    weights of the head values shift the scores by seed, so a fixed threshold would not
    keep the click rate)."""
    score = np.sort(_block(seed, _CALIBRATION, 0, hash_bits)[2])
    return float(score[int((1.0 - CLICK_RATE) * len(score))])


def _check(n_samples, hash_bits, seed):
    for name, value in (("n_samples", n_samples), ("hash_bits", hash_bits), ("seed", seed)):
        if not isinstance(value, numbers.Integral) or isinstance(value, bool):
            raise DlinearError(f"{name} must be an integer, got {value!r}")
    if n_samples < 0:
        raise DlinearError(f"n_samples must be >= 0, got {n_samples}")
    if not 6 <= hash_bits <= 30:
        raise DlinearError(f"hash_bits must be in [6, 30], got {hash_bits}")
    if seed < 0:
        raise DlinearError(f"seed must be >= 0, got {seed}")


def _draw(n_samples: int, hash_bits: int, seed: int, purpose: int, blocks=None) -> Problem:
    """Rows of the first n_samples, those of `blocks` (a range of block numbers; default
    all)."""
    _check(n_samples, hash_bits, seed)
    n_columns = 1 << int(hash_bits)
    threshold = _click_threshold(int(seed), int(hash_bits))
    if blocks is None:
        blocks = range(-(-int(n_samples) // ROWS_PER_BLOCK))
    parts = []
    for block in blocks:
        n_rows = min(ROWS_PER_BLOCK, int(n_samples) - block * ROWS_PER_BLOCK)
        # a whole block is drawn, so that its first rows never depend on how many are kept
        columns, values, score = (a[:n_rows] for a in
                                  _block(int(seed), purpose, block, int(hash_bits)))
        labels = np.where(score > threshold, 1.0, -1.0)
        rows = np.repeat(np.arange(n_rows), columns.shape[1])
        # a row whose two values hash to one column gets their sum there (sorted, summed)
        X = sp.csr_matrix((values.ravel(), (rows, columns.ravel())), shape=(n_rows, n_columns))
        X.sum_duplicates()
        parts.append((X, labels))
    if not parts:
        return Problem(indptr=np.zeros(1, np.int64), indices=np.zeros(0, np.int32),
                       data=np.zeros(0), y=np.zeros(0), n_features=n_columns)
    X = sp.vstack([x for x, _ in parts], format="csr")
    return Problem(indptr=X.indptr.astype(np.int64), indices=X.indices.astype(np.int32),
                   data=X.data.astype(np.float64),
                   y=np.concatenate([y for _, y in parts]), n_features=n_columns)


def make_click_like(n_samples: int, hash_bits: int = DEFAULT_HASH_BITS,
                    seed: int = 0) -> Problem:
    """A click-log-shaped training set of `n_samples` rows and 2**hash_bits columns (see
    the module text)."""
    return _draw(n_samples, hash_bits, seed, _TRAIN)


def click_like_parts(n_train: int, n_test: int, part_rows: int,
                     hash_bits: int = DEFAULT_HASH_BITS, seed: int = 0) -> tuple:
    """(train parts, test parts): make_click_like_split's rows as two iterators of Problems
    of about `part_rows` rows each (whole blocks of ROWS_PER_BLOCK), drawn as they are
    taken."""
    _check(n_train, hash_bits, seed)
    _check(n_test, hash_bits, seed)
    per_part = max(1, int(part_rows) // ROWS_PER_BLOCK)

    def parts(purpose, n_rows):
        n_blocks = -(-int(n_rows) // ROWS_PER_BLOCK)
        for first in range(0, n_blocks, per_part):
            yield _draw(n_rows, hash_bits, seed, purpose,
                        range(first, min(n_blocks, first + per_part)))
    return parts(_TRAIN, n_train), parts(_TEST, n_test)


def make_click_like_split(n_train: int, n_test: int, hash_bits: int = DEFAULT_HASH_BITS,
                          seed: int = 0) -> tuple[Problem, Problem]:
    """(train, test) of one planted model; the train part equals make_click_like(n_train),
    the test rows come from a stream of their own."""
    return (_draw(n_train, hash_bits, seed, _TRAIN), _draw(n_test, hash_bits, seed, _TEST))
